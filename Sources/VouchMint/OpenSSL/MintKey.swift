internal import COpenSSL

/// Owns one OpenSSL `EVP_PKEY` (an EC key pair).
///
/// Signing only reads the key, so one instance is shared by every thread that signs; each
/// signature uses its own `EVP_MD_CTX`.
final class MintKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// The curve of an EC key, by OpenSSL group name.
    enum Curve: String {
        case p256 = "P-256"
        case p384 = "P-384"
    }

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// A fresh key pair on `curve`, from OpenSSL's random generator.
    static func generate(_ curve: Curve) throws(MintError) -> MintKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw .openSSL("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .openSSL("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, curve.rawValue) == 1 else {
            throw .openSSL("EVP_PKEY_CTX_set_group_name")
        }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw .openSSL("EVP_PKEY_generate") }
        return MintKey(taking: key)
    }

    /// Reads a PEM private key (PKCS #8 or the traditional EC form), unencrypted.
    static func load(pem: [UInt8], name: String) throws(MintError) -> MintKey {
        guard !pem.isEmpty else { throw MintError(.invalidInput, "\(name) is empty") }
        let key = try MemoryBIO.reading(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        guard let key else {
            ERR_clear_error()
            throw MintError(.invalidInput, "\(name) is not an unencrypted PEM private key")
        }
        let minted = MintKey(taking: key)
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else {
            throw MintError(.invalidInput, "\(name) is not an EC key")
        }
        return minted
    }

    /// The private key as PKCS #8 PEM ("BEGIN PRIVATE KEY"), unencrypted.
    func privateKeyPEM() throws(MintError) -> [UInt8] {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw .openSSL("PEM_write_bio_PrivateKey")
        }
        return bio.contents
    }

    /// The curve's OpenSSL group name ("P-256", "P-384"), or `nil` when unknown.
    var curveName: String? {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &buffer, buffer.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        let name = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // OpenSSL reports the SEC names; map them to the NIST names used everywhere else here.
        switch name {
        case "prime256v1": return Curve.p256.rawValue
        case "secp384r1": return Curve.p384.rawValue
        default: return name
        }
    }
}
