package import VouchOpenSSL

/// ES256 (RFC 7518 §3.4): ECDSA P-256 with SHA-256, signature as raw `r‖s`.
package enum ES256 {
    /// Verifies a 64-byte `r‖s` signature over `message` with `key`. High-S signatures are
    /// valid, as JOSE does not require low-S. Any other length is rejected before any
    /// computation.
    package static func verify(signature: some Collection<UInt8>, message: UnsafeRawBufferPointer, key: PublicKey)
        -> Bool
    {
        check(signature: signature, message: message, key: key) == true
    }

    /// As ``verify(signature:message:key:)``, but `nil` when no verification context could be
    /// had (an allocation failure): no verdict on the signature.
    package static func check(signature: some Collection<UInt8>, message: UnsafeRawBufferPointer, key: PublicKey)
        -> Bool?
    {
        guard signature.count == 64 else { return false }
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBytes { SHA256Digest.hash(message, into: $0) }
        return check(signature: signature, digest: digest, key: key)
    }

    /// The same, given the SHA-256 digest of the message.
    package static func verify(signature: some Collection<UInt8>, digest: [UInt8], key: PublicKey) -> Bool {
        check(signature: signature, digest: digest, key: key) == true
    }

    /// The same, given the SHA-256 digest of the message; `nil` when no verification context
    /// could be had.
    package static func check(signature: some Collection<UInt8>, digest: [UInt8], key: PublicKey) -> Bool? {
        digest.withUnsafeBytes { check(signature: signature, digest: $0, key: key) }
    }

    /// The same, the digest given in place.
    package static func check(signature: some Collection<UInt8>, digest: UnsafeRawBufferPointer, key: PublicKey)
        -> Bool?
    {
        guard signature.count == 64, digest.count == 32 else { return false }
        var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var der = (
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
            UInt64(0), UInt64(0)
        )
        return withUnsafeMutableBytes(of: &raw) { raw -> Bool? in
            _ = raw.initializeMemory(as: UInt8.self, from: signature)
            return withUnsafeMutableBytes(of: &der) { der -> Bool? in
                let derLength = derSignature(raw: UnsafeRawBufferPointer(raw), into: der)
                return key.verify(
                    derSignature: UnsafeRawBufferPointer(rebasing: der[..<derLength]), sha256Digest: digest)
            }
        }
    }

    package static func verify(signature: some Collection<UInt8>, message: some Collection<UInt8>, key: PublicKey)
        -> Bool
    {
        Array(message).withUnsafeBytes { verify(signature: signature, message: $0, key: key) }
    }

    /// Writes DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` for the two 32-byte
    /// unsigned big-endian halves of `raw` into `output` (at least 72 bytes); returns its length.
    static func derSignature(raw: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        var length = 2
        for half in [raw[0..<32], raw[32..<64]] {
            var start = half.startIndex
            while start < half.endIndex - 1, raw[start] == 0 { start += 1 }
            let pad = raw[start] & 0x80 != 0 ? 1 : 0
            let count = half.endIndex - start + pad
            output[length] = 0x02
            output[length + 1] = UInt8(count)
            length += 2
            if pad == 1 {
                output[length] = 0
                length += 1
            }
            for index in start..<half.endIndex {
                output[length] = raw[index]
                length += 1
            }
        }
        output[0] = 0x30
        output[1] = UInt8(length - 2)
        return length
    }
}
