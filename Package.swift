// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vouch",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Vouch", targets: ["Vouch"]),
        .library(name: "VouchMint", targets: ["VouchMint"]),
        .executable(name: "vouch", targets: ["VouchCLI"]),
        .executable(name: "vouch-bench", targets: ["VouchBench"]),
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
        .target(
            name: "VouchMint",
            dependencies: ["Vouch", "COpenSSL"]
        ),
        .executableTarget(
            name: "VouchCLI",
            dependencies: ["Vouch", "VouchMint"]
        ),
        .executableTarget(
            name: "VouchBench",
            dependencies: ["Vouch", "VouchMint", "COpenSSL"]
        ),
        .testTarget(
            name: "VouchTests",
            dependencies: ["Vouch", "VouchMint"]
        ),
        .testTarget(
            name: "VouchMintTests",
            dependencies: ["VouchMint", "Vouch", "VouchCLI", "COpenSSL"]
        ),
        .testTarget(
            name: "VouchCLITests",
            dependencies: ["Vouch", "VouchMint", "VouchCLI"]
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
