// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vouch",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Vouch", targets: ["Vouch"]),
        .library(name: "VouchReceipts", targets: ["VouchReceipts"]),
        .library(name: "VouchBatch", targets: ["VouchBatch"]),
        .library(name: "VouchMint", targets: ["VouchMint"]),
        .library(name: "VouchMintPKI", targets: ["VouchMintPKI"]),
        .library(name: "VouchEntitlements", targets: ["VouchEntitlements"]),
        .library(name: "VouchSigning", targets: ["VouchSigning"]),
        .library(name: "VouchStripe", targets: ["VouchStripe"]),
        .library(name: "VouchServer", targets: ["VouchServer"]),
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
        // The ledger's store: the system's SQLite 3.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The ledger's PostgreSQL connection: libpq, PostgreSQL's client library.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // `vouch serve`'s HTTP server: GNU libmicrohttpd.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // Owns every OpenSSL object (certificates, keys, the trust store, the fixed-key P-256 tables,
        // SHA-256 midstates) for Vouch and VouchMint: the only Swift importer of the C crypto modules.
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
            dependencies: ["VouchOpenSSL", "CVouchBase64"]
        ),
        // Legacy app receipts (PKCS #7 SignedData, RSA) on Vouch's trust: the container and
        // payload readers, the receipt verifier and its JSON.
        .target(
            name: "VouchReceipts",
            dependencies: ["Vouch", "VouchOpenSSL"]
        ),
        // Stripe webhook deliveries verified offline (HMAC-SHA256 through VouchOpenSSL, errors
        // and JSON of Vouch) and their events read.
        .target(
            name: "VouchStripe",
            dependencies: ["Vouch", "VouchOpenSSL"]
        ),
        // Many tokens at once: line reading (plain or gzip), the ordered pipeline, the batch
        // verifier and its JSON Lines records.
        .target(
            name: "VouchBatch",
            dependencies: ["Vouch", "VouchReceipts", "VouchStripe", "CZlib"]
        ),
        // The entitlement ledger (keyed, in memory) and its durable stores (SQLite, PostgreSQL).
        .target(
            name: "VouchEntitlements",
            dependencies: [
                "Vouch", "VouchReceipts", "VouchStripe", "VouchBatch", "VouchOpenSSL", "CSQLite", "CLibPQ", "CZlib",
            ]
        ),
        // The test PKI: Apple-shaped authorities (token and receipt), In-App Purchase keys, the
        // signers of tokens, receipts and Stripe deliveries, and their tampered forms.
        .target(
            name: "VouchMintPKI",
            dependencies: ["Vouch", "VouchOpenSSL", "VouchStripe"]
        ),
        // Test data built on the PKI: payloads from a seed, per-account histories, Stripe stories
        // and accounts on both channels. Re-exports VouchMintPKI.
        .target(
            name: "VouchMint",
            dependencies: ["VouchMintPKI", "Vouch", "VouchStripe"]
        ),
        // What a server signs with its App Store Connect key: offer signatures, request JWS, API tokens.
        .target(
            name: "VouchSigning",
            dependencies: ["Vouch", "VouchOpenSSL"]
        ),
        // The ledger over HTTP (`vouch serve`): webhooks of the App Store and Stripe in, a
        // backend's questions answered, on libmicrohttpd's threads.
        .target(
            name: "VouchServer",
            dependencies: ["Vouch", "VouchReceipts", "VouchStripe", "VouchBatch", "VouchEntitlements", "CMicroHTTPD"]
        ),
        .executableTarget(
            name: "VouchCLI",
            dependencies: [
                "Vouch", "VouchReceipts", "VouchBatch", "VouchMint", "VouchEntitlements", "VouchSigning", "VouchStripe",
                "VouchServer",
            ]
        ),
        // What the test targets share: the vector loader, the JWS splitter, minted fixtures,
        // the seeded generator, an independent OpenSSL check of ES256 signatures, SQLite itself
        // on a store's file.
        .target(
            name: "VouchTestSupport",
            dependencies: ["Vouch", "VouchMint", "COpenSSL", "CSQLite"],
            path: "Tests/VouchTestSupport"
        ),
        // One test target per library target; the command's tests (minting included) run the
        // built binary or the registry in-process.
        .testTarget(
            name: "VouchOpenSSLTests",
            dependencies: ["VouchOpenSSL", "Vouch", "VouchMint", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchTests",
            dependencies: ["Vouch", "VouchMint", "VouchMintPKI", "VouchOpenSSL", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchReceiptsTests",
            dependencies: ["VouchReceipts", "Vouch", "VouchMint", "VouchMintPKI", "VouchOpenSSL", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchBatchTests",
            dependencies: ["VouchBatch", "Vouch", "VouchReceipts", "VouchStripe", "VouchMint", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchMintPKITests",
            dependencies: ["VouchMintPKI", "Vouch", "VouchOpenSSL", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchMintTests",
            dependencies: ["VouchMint", "VouchMintPKI", "Vouch", "VouchOpenSSL", "VouchStripe", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchEntitlementsTests",
            dependencies: [
                "VouchEntitlements", "Vouch", "VouchReceipts", "VouchStripe", "VouchMint", "VouchTestSupport",
                "VouchOpenSSL", "CSQLite",
            ]
        ),
        .testTarget(
            name: "VouchSigningTests",
            dependencies: ["VouchSigning", "Vouch", "VouchReceipts", "VouchMint", "VouchOpenSSL", "VouchTestSupport"],
            // Run by AppleLibraryComparisonTests with Apple's Python library.
            exclude: ["apple_reference.py"]
        ),
        .testTarget(
            name: "VouchStripeTests",
            dependencies: ["VouchStripe", "Vouch", "VouchOpenSSL", "VouchMint", "VouchTestSupport"]
        ),
        .testTarget(
            name: "VouchCLITests",
            dependencies: [
                "Vouch", "VouchReceipts", "VouchBatch", "VouchMint", "VouchMintPKI", "VouchEntitlements",
                "VouchOpenSSL", "VouchCLI", "CSQLite",
                "VouchTestSupport", "VouchSigning", "VouchStripe",
            ],
            // Run by ServeCommandTests against the built `vouch serve`.
            exclude: ["Serve"]
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
