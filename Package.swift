// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vouch",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Vouch", targets: ["Vouch"]),
        .executable(name: "vouch", targets: ["VouchCLI"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "Vouch",
            dependencies: ["COpenSSL", "CZlib"]
        ),
        .executableTarget(
            name: "VouchCLI",
            dependencies: ["Vouch"]
        ),
        .testTarget(
            name: "VouchTests",
            dependencies: ["Vouch"],
            resources: []
        ),
        .testTarget(
            name: "VouchCLITests",
            dependencies: ["Vouch"]
        ),
    ]
)

// The same strict settings for every target.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
