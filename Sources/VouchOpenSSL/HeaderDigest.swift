internal import COpenSSL

/// SHA-256 over a cached header segment and its ".", kept as a midstate: a token's digest then
/// hashes only its payload segment. The header (with its three certificates) is most of a
/// token's signing input.
package final class HeaderDigest: @unchecked Sendable {
    /// Owned; only read (copied from) after `init`.
    private let context: OpaquePointer?

    package init(segment: [UInt8]) {
        var context = EVP_MD_CTX_new()
        let dot: [UInt8] = [UInt8(ascii: ".")]
        if let prepared = context,
            EVP_DigestInit_ex(prepared, EVP_sha256(), nil) != 1
                || EVP_DigestUpdate(prepared, segment, segment.count) != 1 || EVP_DigestUpdate(prepared, dot, 1) != 1
        {
            EVP_MD_CTX_free(prepared)
            ERR_clear_error()
            context = nil
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// SHA-256 of `segment ‖ "." ‖ payload`, the signing input; from scratch should OpenSSL fail.
    package func digest(payload: UnsafeRawBufferPointer, signingInput: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        if let context, let copy = EVP_MD_CTX_new() {
            defer { EVP_MD_CTX_free(copy) }
            var length: UInt32 = 0
            if EVP_MD_CTX_copy_ex(copy, context) == 1, EVP_DigestUpdate(copy, payload.baseAddress, payload.count) == 1,
                EVP_DigestFinal_ex(copy, &digest, &length) == 1, length == 32
            {
                return digest
            }
            ERR_clear_error()
        }
        _ = SHA256(signingInput.bindMemory(to: UInt8.self).baseAddress, signingInput.count, &digest)
        return digest
    }
}
