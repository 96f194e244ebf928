internal import COpenSSL

/// An `EVP_PKEY` public key, owned. OpenSSL 3 keys are safe to use from many threads for
/// verification once built, so one instance is shared.
package final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Verification contexts ready for reuse: `EVP_PKEY_verify` leaves a context initialised,
    /// so each thread borrows one instead of building a new one per signature.
    private let contexts = Locked<[Context]>([])

    /// An `EVP_PKEY_CTX` owned by the pool while it sits there, by one thread while borrowed.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }
    private static let pooledContexts = 64

    /// Takes over one reference to `key`.
    init(owning key: OpaquePointer) {
        self.pointer = key
    }

    /// Runs `body` with a context initialised for `EVP_PKEY_verify` on this key, borrowed from
    /// the pool (or new); `nil` when OpenSSL cannot make one.
    func withVerificationContext<Result>(_ body: (OpaquePointer?) -> Result) -> Result {
        var context = contexts.withLock { $0.popLast() }?.pointer
        if context == nil, let fresh = EVP_PKEY_CTX_new(pointer, nil) {
            if EVP_PKEY_verify_init(fresh) == 1 {
                context = fresh
            } else {
                EVP_PKEY_CTX_free(fresh)
                ERR_clear_error()
            }
        }
        defer {
            if let context {
                let kept = contexts.withLock { pool in
                    guard pool.count < Self.pooledContexts else { return false }
                    pool.append(Context(pointer: context))
                    return true
                }
                if !kept { EVP_PKEY_CTX_free(context) }
            }
        }
        return body(context)
    }

    /// Whether `signature` (a DER ECDSA-Sig-Value) verifies over the 32-byte `digest` with
    /// this key, through a pooled `EVP_PKEY_verify` context; `nil` when no context could be
    /// had (an allocation failure): no verdict.
    package func verify(derSignature signature: UnsafeRawBufferPointer, sha256Digest digest: UnsafeRawBufferPointer)
        -> Bool?
    {
        withVerificationContext { context -> Bool? in
            guard let context else { return nil }
            let result = EVP_PKEY_verify(
                context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
                digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count)
            if result != 1 { ERR_clear_error() }
            return result == 1
        }
    }

    /// Parses a DER SubjectPublicKeyInfo.
    package convenience init?(subjectPublicKeyInfo der: [UInt8]) {
        guard let key = DER.parseWhole(der, with: { d2i_PUBKEY(nil, $0, $1) }, free: EVP_PKEY_free) else { return nil }
        self.init(owning: key)
    }

    deinit {
        for context in contexts.withLock({ $0 }) { EVP_PKEY_CTX_free(context.pointer) }
        EVP_PKEY_free(pointer)
    }

    /// The key's curve, or `nil` when it is none of ``Curve`` (or not an EC key).
    package var curve: Curve? { Curve(of: pointer) }

    package var isP256: Bool { curve == .p256 }

    /// The EC public point in X9.62 encoding, as OpenSSL holds it; `nil` for other keys.
    package var encodedPoint: [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 160)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pointer, "pub", &buffer, buffer.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        return Array(buffer.prefix(length))
    }

    /// A short description: "EC P-256", "EC P-384", "RSA 2048", ….
    package var summary: String {
        let bits = EVP_PKEY_get_bits(pointer)
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_EC:
            if let curve { return "EC \(curve.rawValue)" }
            return Curve.groupName(of: pointer).map { "EC \($0)" } ?? "EC"
        case EVP_PKEY_RSA: return "RSA \(bits)"
        case EVP_PKEY_DSA: return "DSA \(bits)"
        case EVP_PKEY_ED25519: return "Ed25519"
        default: return "key type \(EVP_PKEY_get_base_id(pointer)) (\(bits) bits)"
        }
    }
}
