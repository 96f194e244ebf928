internal import COpenSSL

/// An `EVP_PKEY` public key, owned. OpenSSL 3 keys are safe to use from many threads for
/// verification once built, so one instance is shared.
final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer
    /// A context initialised for verification, never used itself: each verification works on
    /// a duplicate, which is far cheaper than a fresh context. Only read after init, so
    /// duplicating it from several threads at once is safe.
    private let template: OpaquePointer?

    /// Takes over one reference to `key`.
    init(owning key: OpaquePointer) {
        self.pointer = key
        if let context = EVP_PKEY_CTX_new(key, nil), EVP_PKEY_verify_init(context) == 1 {
            template = context
        } else {
            ERR_clear_error()
            template = nil
        }
    }

    /// A new context ready for `EVP_PKEY_verify`; the caller frees it.
    func verificationContext() -> OpaquePointer? {
        if let template, let copy = EVP_PKEY_CTX_dup(template) { return copy }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            ERR_clear_error()
            return nil
        }
        return context
    }

    /// Parses a DER SubjectPublicKeyInfo.
    convenience init?(subjectPublicKeyInfo der: [UInt8]) {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            guard cursor == buffer.baseAddress! + buffer.count else {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else {
            ERR_clear_error()
            return nil
        }
        self.init(owning: key)
    }

    deinit {
        EVP_PKEY_CTX_free(template)
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
