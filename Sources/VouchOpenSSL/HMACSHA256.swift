internal import COpenSSL

/// HMAC-SHA256 with one key: an OpenSSL MAC context keyed once (the key's inner and outer
/// pads hashed), duplicated for each message, so a message costs its own hashing only.
///
/// The keyed context is only read (duplicated) after `init`, so one key serves every thread.
package final class HMACSHA256: @unchecked Sendable {
    /// Owned: the keyed `EVP_MAC_CTX`, freed in `deinit`.
    private let keyed: OpaquePointer

    /// A MAC with `key` (any length, empty included).
    package init(key: [UInt8]) throws(OpenSSLError) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw OpenSSLError("EVP_MAC_fetch") }
        // The context takes its own reference to the algorithm.
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw OpenSSLError("EVP_MAC_CTX_new") }
        let initialized = "digest".withCString { name in
            "SHA256".withCString { digest in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0),
                    OSSL_PARAM_construct_end(),
                ]
                // A zero-length key still needs a valid pointer.
                let bytes = key.isEmpty ? [0] : key
                return EVP_MAC_init(context, bytes, key.count, &parameters)
            }
        }
        guard initialized == 1 else {
            EVP_MAC_CTX_free(context)
            throw OpenSSLError("EVP_MAC_init")
        }
        keyed = context
    }

    deinit { EVP_MAC_CTX_free(keyed) }

    /// The MAC of the concatenation of `parts`, or `nil` when OpenSSL fails (no memory).
    package func authenticate(_ parts: UnsafeRawBufferPointer...) -> SIMD32<UInt8>? {
        guard let context = EVP_MAC_CTX_dup(keyed) else {
            OpenSSLError.drain()
            return nil
        }
        defer { EVP_MAC_CTX_free(context) }
        for part in parts where part.count > 0 {
            guard EVP_MAC_update(context, part.baseAddress!.assumingMemoryBound(to: UInt8.self), part.count) == 1
            else {
                OpenSSLError.drain()
                return nil
            }
        }
        var mac = SIMD32<UInt8>()
        var length = 0
        let finished = withUnsafeMutableBytes(of: &mac) {
            EVP_MAC_final(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, 32)
        }
        guard finished == 1, length == 32 else {
            OpenSSLError.drain()
            return nil
        }
        return mac
    }

    /// Whether `a` and `b` hold the same bytes, in time that depends on their length only
    /// (OpenSSL's `CRYPTO_memcmp`): comparing a secret-derived value must not tell how many
    /// leading bytes matched.
    package static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
    }
}
