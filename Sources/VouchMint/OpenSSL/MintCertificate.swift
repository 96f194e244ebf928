internal import COpenSSL
import Foundation

/// Owns one OpenSSL `X509` certificate.
final class MintCertificate: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }

    /// Parses one DER certificate that must fill `der` exactly.
    convenience init(der: [UInt8], name: String) throws(MintError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            // d2i_X509 accepts trailing bytes: insist that it consumed the whole file.
            guard cursor == base + buffer.count else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            ERR_clear_error()
            throw MintError(.invalidInput, "\(name) is not one DER certificate")
        }
        self.init(taking: parsed)
    }

    /// The DER encoding.
    func der() throws(MintError) -> [UInt8] {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { throw .openSSL("i2d_X509") }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(pointer, &cursor)
        }
        guard written == length else { throw .openSSL("i2d_X509") }
        return bytes
    }

    /// The PEM encoding ("BEGIN CERTIFICATE").
    func pem() throws(MintError) -> [UInt8] {
        let bio = try MemoryBIO()
        guard PEM_write_bio_X509(bio.pointer, pointer) == 1 else { throw .openSSL("PEM_write_bio_X509") }
        return bio.contents
    }

    // get0: the times stay owned by the certificate and are only read.
    var notBefore: Date? { Self.date(X509_get0_notBefore(pointer)) }
    var notAfter: Date? { Self.date(X509_get0_notAfter(pointer)) }

    /// Whether `key` is the private half of this certificate's public key.
    func matches(_ key: MintKey) -> Bool {
        defer { ERR_clear_error() }
        return X509_check_private_key(pointer, key.pointer) == 1
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        let seconds = UTCCalendar.seconds(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

/// What a new certificate says about its subject and how it is signed.
struct CertificateProfile {
    enum Digest {
        case sha256, sha384
    }

    /// An X.509 v3 extension in OpenSSL's configuration syntax, such as
    /// `("basicConstraints", "critical,CA:TRUE")` or `("1.2.3.4", "DER:05:00")`.
    struct Extension {
        var name: String
        var value: String
    }

    /// Relative distinguished names, most significant last as OpenSSL prints them reversed:
    /// listed here in encoding order, e.g. `[("CN", …), ("OU", …), ("O", …), ("C", "US")]`.
    var subject: [(field: String, value: String)]
    var notBefore: Date
    var notAfter: Date
    /// `nil` draws a random positive 127-bit serial number.
    var serialNumber: UInt64?
    var extensions: [Extension]
    var digest: Digest
}

extension MintCertificate {
    /// Issues a certificate for `subjectKey` signed by `issuerKey`. `issuer` is the issuing
    /// certificate, or `nil` for a self-signed one (then `issuerKey` must be `subjectKey`).
    static func issue(
        _ profile: CertificateProfile, subjectKey: MintKey, issuer: MintCertificate?, issuerKey: MintKey
    ) throws(MintError) -> MintCertificate {
        guard let x509 = X509_new() else { throw .openSSL("X509_new") }
        // Owned from here on: a throw below frees it.
        let certificate = MintCertificate(taking: x509)
        guard X509_set_version(x509, Int(X509_VERSION_3)) == 1 else { throw .openSSL("X509_set_version") }
        try setSerialNumber(profile.serialNumber, of: x509)

        guard let name = X509_NAME_new() else { throw .openSSL("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for (field, value) in profile.subject {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw .openSSL("X509_NAME_add_entry_by_txt")
            }
        }
        // set_subject_name copies `name`; the certificate owns its copy.
        guard X509_set_subject_name(x509, name) == 1 else { throw .openSSL("X509_set_subject_name") }
        // get_subject_name borrows the issuer's name (get0); set_issuer_name copies it.
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? name
        guard X509_set_issuer_name(x509, issuerName) == 1 else { throw .openSSL("X509_set_issuer_name") }

        // getm returns the certificate's own ASN1_TIME; ASN1_TIME_set rewrites it in place and
        // picks UTCTime before 2050, GeneralizedTime after, as RFC 5280 requires.
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(profile.notBefore.timeIntervalSince1970.rounded(.down))) != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), time_t(profile.notAfter.timeIntervalSince1970.rounded(.down))) != nil
        else { throw .openSSL("ASN1_TIME_set") }

        // set_pubkey takes its own reference to the key; `subjectKey` keeps ours.
        guard X509_set_pubkey(x509, subjectKey.pointer) == 1 else { throw .openSSL("X509_set_pubkey") }

        // The context borrows both certificates for the `hash` (SKI) and `keyid` (AKI) values.
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.pointer ?? x509, x509, nil, nil, 0)
        for item in profile.extensions {
            guard let extensionValue = X509V3_EXT_nconf(nil, &context, item.name, item.value) else {
                throw .openSSL("extension \(item.name)=\(item.value)")
            }
            defer { X509_EXTENSION_free(extensionValue) }
            // add_ext copies the extension; ours is freed by the defer above.
            guard X509_add_ext(x509, extensionValue, -1) == 1 else { throw .openSSL("X509_add_ext") }
        }

        let digest = profile.digest == .sha384 ? EVP_sha384() : EVP_sha256()
        guard X509_sign(x509, issuerKey.pointer, digest) > 0 else { throw .openSSL("X509_sign") }
        return certificate
    }

    private static func setSerialNumber(_ fixed: UInt64?, of x509: OpaquePointer) throws(MintError) {
        // get_serialNumber borrows the certificate's own ASN1_INTEGER, rewritten in place.
        let serial = X509_get_serialNumber(x509)
        if let fixed {
            guard ASN1_INTEGER_set_uint64(serial, fixed) == 1 else { throw .openSSL("ASN1_INTEGER_set_uint64") }
            return
        }
        guard let number = BN_new() else { throw .openSSL("BN_new") }
        defer { BN_free(number) }
        // 127 bits with the top one set: 16 content bytes, positive, never zero.
        guard BN_rand(number, 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1,
            BN_to_ASN1_INTEGER(number, serial) != nil
        else { throw .openSSL("serial number") }
    }
}
