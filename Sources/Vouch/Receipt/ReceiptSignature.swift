internal import COpenSSL

/// Digests and RSA PKCS #1 v1.5 verification for receipts.
enum ReceiptDigest {
    /// Message digests fetched once: an implicit fetch per call costs more than a short hash.
    private final class Algorithm: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ name: String) { pointer = EVP_MD_fetch(nil, name, nil)! }
    }
    private static let sha1Algorithm = Algorithm("SHA1")
    private static let sha256Algorithm = Algorithm("SHA256")

    static func hash(_ digest: ReceiptContainer.Digest, of bytes: [UInt8], segments: [Range<Int>]) -> [UInt8] {
        let algorithm = digest == .sha1 ? sha1Algorithm : sha256Algorithm
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestInit_ex(context, algorithm.pointer, nil)
        bytes.withUnsafeBufferPointer { buffer in
            for segment in segments {
                EVP_DigestUpdate(context, buffer.baseAddress! + segment.lowerBound, segment.count)
            }
        }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }

    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        hash(.sha1, of: bytes, segments: [0..<bytes.count])
    }

    /// Checks an RSA PKCS #1 v1.5 signature over a digest: the recovered block must be exactly
    /// the DER DigestInfo of that digest (OpenSSL compares the whole block when the context has
    /// no digest set), so the verifier's pooled contexts serve SHA-1 and SHA-256 alike.
    static func verifyRSA(signature: [UInt8], digest: ReceiptContainer.Digest, hash: [UInt8], key: PublicKey) -> Bool {
        let digestInfo = digest.digestInfoPrefix + hash
        let verified = key.withVerificationContext { context -> Bool in
            guard let context else { return false }
            return EVP_PKEY_verify(context, signature, signature.count, digestInfo, digestInfo.count) == 1
        }
        if !verified { ERR_clear_error() }
        return verified
    }
}

extension PublicKey {
    var isRSA: Bool { EVP_PKEY_get_base_id(pointer) == EVP_PKEY_RSA }
    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }
}
