internal import COpenSSL

/// ES256 (RFC 7518 §3.4): ECDSA P-256 with SHA-256, signature as raw `r‖s`.
enum ES256 {
    /// Verifies a 64-byte `r‖s` signature over `message` with `key`. High-S signatures are
    /// valid, as JOSE does not require low-S. Any other length is rejected before any
    /// computation.
    static func verify(signature: some Collection<UInt8>, message: UnsafeRawBufferPointer, key: PublicKey) -> Bool {
        guard signature.count == 64 else { return false }
        let raw = Array(signature)
        let der = derSignature(r: raw[0..<32], s: raw[32..<64])
        var digest = [UInt8](repeating: 0, count: 32)
        _ = SHA256(message.bindMemory(to: UInt8.self).baseAddress, message.count, &digest)
        guard let context = EVP_PKEY_CTX_new(key.pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_verify_init(context) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = EVP_PKEY_verify(context, der, der.count, digest, digest.count)
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    static func verify(signature: some Collection<UInt8>, message: some Collection<UInt8>, key: PublicKey) -> Bool {
        Array(message).withUnsafeBytes { verify(signature: signature, message: $0, key: key) }
    }

    /// DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` from two 32-byte unsigned
    /// big-endian integers.
    static func derSignature(r: ArraySlice<UInt8>, s: ArraySlice<UInt8>) -> [UInt8] {
        let r = derInteger(r), s = derInteger(s)
        return [0x30, UInt8(r.count + s.count)] + r + s
    }

    private static func derInteger(_ magnitude: ArraySlice<UInt8>) -> [UInt8] {
        var bytes = magnitude.drop(while: { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        let body = bytes.first! & 0x80 != 0 ? [0] + bytes : Array(bytes)
        return [0x02, UInt8(body.count)] + body
    }
}
