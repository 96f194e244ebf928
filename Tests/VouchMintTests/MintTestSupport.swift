import COpenSSL
import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMint

/// Shared fixtures: fixed instants, temporary directories, the `openssl` tool, JWS pieces.
enum MintTestSupport {
    static let validity = MintValidity(
        notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
    /// An instant inside ``validity``.
    static let signingDate = MintDate.parse("2025-06-01T12:00:00Z")!

    /// One authority for the whole test run: P-384 key generation is not free.
    static let authority: MintAuthority = try! MintAuthority.generate(MintAuthorityOptions(validity: validity))
    static let signer: MintSigner = try! MintSigner(authority: authority)
    static let xcodeAuthority: MintAuthority = try! MintAuthority.generateXcode(validity: validity)
    static let xcodeSigner: MintSigner = try! MintSigner(authority: xcodeAuthority)

    /// Runs `body` with a fresh empty directory, removed afterwards.
    static func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-mint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }

    /// Runs `/usr/bin/openssl` and returns its exit status and combined output.
    static func openssl(_ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, output: String) {
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
    typealias Token = DecodedJWS

    /// Verifies a raw `r‖s` ES256 signature over `input` with the key of a DER certificate,
    /// through OpenSSL's EVP interface (the signature converted to a DER ECDSA-Sig-Value).
    static func verifyES256(signature: [UInt8], input: [UInt8], certificate: [UInt8]) throws -> Bool {
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

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}

extension DecodedJWS {
    /// Whether the ES256 signature verifies with `x5c[0]`'s public key.
    var signatureVerifies: Bool {
        get throws {
            try MintTestSupport.verifyES256(signature: signature, input: signingInput, certificate: try chain[0])
        }
    }
}
