internal import COpenSSL
package import Foundation
internal import Testing
package import Vouch
package import VouchMint

/// Shared fixtures: fixed instants, temporary directories, the `openssl` tool, JWS pieces.
package enum MintTestSupport {
    package static let validity = MintValidity(
        notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
    /// An instant inside ``validity``.
    package static let signingDate = MintDate.parse("2025-06-01T12:00:00Z")!

    /// One authority for the whole test run: P-384 key generation is not free.
    package static let authority: MintAuthority = try! MintAuthority.generate(MintAuthorityOptions(validity: validity))
    package static let signer: MintSigner = try! MintSigner(authority: authority)
    package static let xcodeAuthority: MintAuthority = try! MintAuthority.generateXcode(validity: validity)
    package static let xcodeSigner: MintSigner = try! MintSigner(authority: xcodeAuthority)

    /// Runs `body` with a fresh empty directory, removed afterwards.
    package static func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-mint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }

    /// Runs `/usr/bin/openssl` and returns its exit status and combined output.
    package static func openssl(_ arguments: [String], in directory: URL? = nil) throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The three segments of a compact JWS, decoded.
    package typealias Token = DecodedJWS

    /// Verifies a raw `r‖s` ES256 signature over `input` with the key of a DER certificate,
    /// through OpenSSL's EVP interface (the signature converted to a DER ECDSA-Sig-Value).
    package static func verifyES256(signature: [UInt8], input: [UInt8], certificate: [UInt8]) throws -> Bool {
        guard signature.count == 64 else { return false }
        let x509: OpaquePointer = try #require(
            certificate.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                return d2i_X509(nil, &cursor, buffer.count)
            })
        defer { X509_free(x509) }
        // get0: the key stays owned by the certificate.
        let key = try #require(X509_get0_pubkey(x509))

        let sig = try #require(ECDSA_SIG_new())
        defer { ECDSA_SIG_free(sig) }
        let r = BN_bin2bn(signature, 32, nil)
        let s = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        // set0 takes ownership of r and s only when it succeeds.
        guard ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return false
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        var der = [UInt8](repeating: 0, count: Int(length))
        _ = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }

        let context = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let result = EVP_DigestVerify(context, der, der.count, input, input.count)
        ERR_clear_error()
        return result == 1
    }

    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}

extension DecodedJWS {
    /// Whether the ES256 signature verifies with `x5c[0]`'s public key.
    package var signatureVerifies: Bool {
        get throws {
            try MintTestSupport.verifyES256(signature: signature, input: signingInput, certificate: try chain[0])
        }
    }
}

/// The seeded generator of every test that needs random data: the same seed gives the same
/// data, so a failure can be replayed. Its numbers are those of the generator `VouchMint` mints
/// payloads with (SplitMix64).
package struct SeededRandom {
    private var generator: SplitMix64

    package init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    package mutating func next() -> UInt64 { generator.next() }
    /// A value in `0..<bound`.
    package mutating func below(_ bound: Int) -> Int { generator.below(bound) }
    /// A value in `range`.
    package mutating func int(in range: ClosedRange<Int>) -> Int { generator.int(in: range) }
    /// One element, chosen uniformly.
    package mutating func pick<T>(_ elements: [T]) -> T { generator.pick(elements) }
    /// `count` bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] { generator.bytes(count) }
}

extension Verifier {
    /// The code a token is rejected with, or `nil` when it verifies.
    package func rejection(_ token: String, as kind: PayloadKind? = nil) -> VerificationError? {
        do {
            _ = try verify(token, as: kind)
            return nil
        } catch {
            return error
        }
    }
}
