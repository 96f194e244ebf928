// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vouch",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Vouch", targets: ["Vouch"]),
        .library(name: "VouchBatch", targets: ["VouchBatch"]),
        .library(name: "VouchMint", targets: ["VouchMint"]),
        .library(name: "VouchEntitlements", targets: ["VouchEntitlements"]),
        .library(name: "VouchSigning", targets: ["VouchSigning"]),
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
        // Owns every OpenSSL object (certificates, keys, the trust store) for Vouch and VouchMint.
        .target(
            name: "VouchOpenSSL",
            dependencies: ["COpenSSL", "CVouchECDSA"]
        ),
        // Fixed-key ECDSA P-256 verification on OpenSSL's BN/EC API; SHA-256 midstates.
        .target(
            name: "CVouchECDSA",
            dependencies: ["COpenSSL"],
            linkerSettings: [.linkedLibrary("crypto")]
        ),
        // Base64 decoding of long runs with SSSE3 byte shuffles.
        .target(name: "CVouchBase64"),
        .target(
            name: "Vouch",
            dependencies: ["VouchOpenSSL", "CVouchECDSA", "CVouchBase64"]
        ),
        // Many tokens at once: line reading (plain or gzip), the ordered pipeline, the batch
        // verifier and its JSON Lines records.
        .target(
            name: "VouchBatch",
            dependencies: ["Vouch", "CZlib"]
        ),
        .target(
            name: "VouchEntitlements",
            dependencies: ["Vouch"]
        ),
        .target(
            name: "VouchMint",
            dependencies: ["Vouch", "VouchOpenSSL"]
        ),
        // What a server signs with its App Store Connect key: offer signatures, request JWS, API tokens.
        .target(
            name: "VouchSigning",
            dependencies: ["Vouch", "VouchOpenSSL"]
        ),
        .executableTarget(
            name: "VouchCLI",
            dependencies: ["Vouch", "VouchBatch", "VouchMint", "VouchEntitlements", "VouchSigning"]
        ),
        .executableTarget(
            name: "VouchBench",
            dependencies: ["Vouch", "VouchBatch", "VouchMint", "VouchEntitlements", "COpenSSL", "CVouchECDSA"]
        ),
        .target(
            name: "VouchTestSupport",
            dependencies: ["Vouch"],
            path: "Tests/VouchTestSupport"
        ),
        .testTarget(
            name: "VouchTests",
            dependencies: ["Vouch", "VouchBatch", "VouchMint", "VouchOpenSSL", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchMintTests",
            dependencies: ["VouchMint", "Vouch", "VouchOpenSSL", "VouchCLI", "COpenSSL", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchEntitlementsTests",
            dependencies: ["VouchEntitlements", "Vouch", "VouchMint"]
        ),
        .testTarget(
            name: "VouchSigningTests",
            dependencies: ["VouchSigning", "Vouch", "VouchMint", "VouchOpenSSL", "VouchTestSupport"],
            // Run by AppleLibraryComparisonTests with Apple's Python library.
            exclude: ["apple_reference.py"]
        ),
        .testTarget(
            name: "VouchCLITests",
            dependencies: [
                "Vouch", "VouchBatch", "VouchMint", "VouchOpenSSL", "VouchCLI", "VouchSigning", "VouchTestSupport",
            ]
        ),
    ]
)

// The same strict settings for every Swift target (CVouchECDSA and CVouchBase64 are C).
for target in package.targets where target.type != .system && !target.name.hasPrefix("CVouch") {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
