internal import COpenSSL

/// Owns one OpenSSL `EVP_PKEY` holding an EC key pair.
///
/// Signing only reads the key, so one instance is shared by every thread that signs; each
/// signature uses its own `EVP_MD_CTX`.
package final class PrivateKey: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// Takes ownership of `pointer`, any key type (reading a PEM file takes what it finds).
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Takes over an RSA key (receipt minting).
    init(takingRSA pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Runs `body` with the `EVP_PKEY`, borrowed for the call.
    package func withUnsafePointer<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        try body(pointer)
    }

    /// A fresh key pair on `curve`, from OpenSSL's random generator.
    package static func generate(_ curve: Curve) throws(OpenSSLError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw OpenSSLError("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, curve.groupName) == 1 else {
            throw OpenSSLError("EVP_PKEY_CTX_set_group_name")
        }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_generate") }
        return PrivateKey(taking: key)
    }

    /// Reads a PEM private key (PKCS #8 or the traditional EC form), unencrypted; `nil` when
    /// `pem` holds none, or one that is not an EC key.
    package static func load(pem: [UInt8]) throws(OpenSSLError) -> PrivateKey? {
        do {
            return try read(pem: pem)
        } catch .openSSL(let failure) {
            throw failure
        } catch {
            return nil
        }
    }

    /// The private key as PKCS #8 PEM ("BEGIN PRIVATE KEY"), unencrypted.
    package func privateKeyPEM() throws(OpenSSLError) -> [UInt8] {
        let bio = try MemoryBIO()
        try bio.withUnsafePointer { bio throws(OpenSSLError) in
            guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
                throw OpenSSLError("PEM_write_bio_PrivateKey")
            }
        }
        return bio.contents
    }

    /// The key's curve, or `nil` when it is none of ``Curve``.
    package var curve: Curve? { Curve(of: pointer) }

    /// The ECDSA signature of SHA-256(`input`) as fixed-width `r‖s` (ES256 when the key is
    /// P-256: 64 bytes).
    package func signatureOfSHA256(_ input: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        let der = try derSignatureOfSHA256(input)
        let width = (Int(EVP_PKEY_get_bits(pointer)) + 7) / 8
        return try Self.rawSignature(fromDER: der, width: width)
    }

    /// The ECDSA signature of SHA-256(`input`) as a DER ECDSA-Sig-Value, as OpenSSL makes it.
    package func derSignatureOfSHA256(_ input: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        // The context takes its own reference to the key; this object keeps ours.
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            throw OpenSSLError("EVP_DigestSignInit")
        }
        // A DER ECDSA-Sig-Value on P-384 takes at most 104 bytes.
        var der = [UInt8](repeating: 0, count: 112)
        var length = der.count
        guard EVP_DigestSign(context, &der, &length, input, input.count) == 1 else {
            throw OpenSSLError("EVP_DigestSign")
        }
        return Array(der[0..<length])
    }

    /// Converts a DER ECDSA-Sig-Value to fixed-width `r‖s`.
    package static func rawSignature(fromDER der: [UInt8], width: Int) throws(OpenSSLError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw OpenSSLError("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer? = nil
        var s: OpaquePointer? = nil
        // get0: r and s stay owned by `parsed`.
        ECDSA_SIG_get0(parsed, &r, &s)
        var raw = [UInt8](repeating: 0, count: 2 * width)
        let ok = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, Int32(width)) == width
                && BN_bn2binpad(s, buffer.baseAddress! + width, Int32(width)) == width
        }
        guard ok else { throw OpenSSLError("BN_bn2binpad") }
        return raw
    }
}

/// The EC curves Vouch knows by name.
package enum Curve: String, Sendable {
    case p256 = "P-256"
    case p384 = "P-384"
    case p521 = "P-521"

    /// OpenSSL's group name for the curve.
    package var groupName: String { rawValue }

    /// The curve of an EC `EVP_PKEY`; `nil` for another key type or curve.
    init?(of key: OpaquePointer) {
        // OpenSSL reports SEC names for these curves.
        switch Self.groupName(of: key) {
        case "prime256v1", "P-256": self = .p256
        case "secp384r1", "P-384": self = .p384
        case "secp521r1", "P-521": self = .p521
        default: return nil
        }
    }

    /// The SEC name of an EC `EVP_PKEY`'s group ("prime256v1", "brainpoolP256r1"), any curve;
    /// `nil` for another key type.
    static func groupName(of key: OpaquePointer) -> String? {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return nil }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else {
            OpenSSLError.drain()
            return nil
        }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
