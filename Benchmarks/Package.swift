// swift-tools-version:6.0
import PackageDescription

// vouch-bench: the Vouch libraries and the `vouch` binary measured against OpenSSL's raw
// rates in one run. A package of its own, so that it reaches the libraries only through their
// products' public API, as a user would.
let package = Package(
    name: "vouch-benchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vouch-bench", targets: ["VouchBench"])
    ],
    dependencies: [
        .package(name: "vouch", path: "..")
    ],
    targets: [
        // OpenSSL itself, for the reference rates every figure is divided by.
        .systemLibrary(
            name: "CBenchOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .executableTarget(
            name: "VouchBench",
            dependencies: [
                "CBenchOpenSSL",
                .product(name: "Vouch", package: "vouch"),
                .product(name: "VouchBatch", package: "vouch"),
                .product(name: "VouchMint", package: "vouch"),
                .product(name: "VouchEntitlements", package: "vouch"),
                .product(name: "VouchStripe", package: "vouch"),
                // The server of `vouch serve`, run in-process for `--serve`.
                .product(name: "VouchServer", package: "vouch"),
                // Built beside vouch-bench, which runs it.
                .product(name: "vouch", package: "vouch"),
            ]
        ),
    ]
)

// The library's strict settings.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
