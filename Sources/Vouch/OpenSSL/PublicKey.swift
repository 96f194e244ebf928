internal import COpenSSL

/// An `EVP_PKEY` public key, owned. OpenSSL 3 keys are safe to use from many threads for
/// verification once built, so one instance is shared.
final class PublicKey: @unchecked Sendable {
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

    /// Parses a DER SubjectPublicKeyInfo.
    convenience init?(subjectPublicKeyInfo der: [UInt8]) {
        guard let key = DER.parseWhole(der, with: { d2i_PUBKEY(nil, $0, $1) }, free: EVP_PKEY_free) else { return nil }
        self.init(owning: key)
    }

    deinit {
        for context in contexts.withLock({ $0 }) { EVP_PKEY_CTX_free(context.pointer) }
        EVP_PKEY_free(pointer)
    }

    /// The curve name for EC keys ("prime256v1", "secp384r1"), `nil` for other key types.
    var curveName: String? {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else { return nil }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &buffer, buffer.count, &length) == 1 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var isP256: Bool { curveName == "prime256v1" }

    /// A short description: "EC P-256", "EC P-384", "RSA 2048", ….
    var summary: String {
        let bits = EVP_PKEY_get_bits(pointer)
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_EC:
            switch curveName {
            case "prime256v1": return "EC P-256"
            case "secp384r1": return "EC P-384"
            case "secp521r1": return "EC P-521"
            case let name?: return "EC \(name)"
            case nil: return "EC"
            }
        case EVP_PKEY_RSA: return "RSA \(bits)"
        case EVP_PKEY_DSA: return "DSA \(bits)"
        case EVP_PKEY_ED25519: return "Ed25519"
        default: return "key type \(EVP_PKEY_get_base_id(pointer)) (\(bits) bits)"
        }
    }
}
