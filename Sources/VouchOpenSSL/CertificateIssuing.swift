internal import COpenSSL
package import Foundation

/// What a new certificate says about its subject and how it is signed.
package struct CertificateProfile {
    package enum Digest {
        case sha256, sha384
    }

    /// An X.509 v3 extension in OpenSSL's configuration syntax, such as
    /// `("basicConstraints", "critical,CA:TRUE")` or `("1.2.3.4", "DER:05:00")`.
    package struct Extension {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Relative distinguished names, most significant last as OpenSSL prints them reversed:
    /// listed here in encoding order, e.g. `[("CN", …), ("OU", …), ("O", …), ("C", "US")]`.
    package var subject: [(field: String, value: String)]
    package var notBefore: Date
    package var notAfter: Date
    /// `nil` draws a random positive 127-bit serial number.
    package var serialNumber: UInt64?
    package var extensions: [Extension]
    package var digest: Digest

    package init(
        subject: [(field: String, value: String)], notBefore: Date, notAfter: Date, serialNumber: UInt64?,
        extensions: [Extension], digest: Digest
    ) {
        self.subject = subject
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.serialNumber = serialNumber
        self.extensions = extensions
        self.digest = digest
    }
}

extension Certificate {
    /// Issues a certificate for `subjectKey` signed by `issuerKey`. `issuer` is the issuing
    /// certificate, or `nil` for a self-signed one (then `issuerKey` must be `subjectKey`).
    package static func issue(
        _ profile: CertificateProfile, subjectKey: PrivateKey, issuer: Certificate?, issuerKey: PrivateKey
    ) throws(OpenSSLError) -> Certificate {
        guard let x509 = X509_new() else { throw OpenSSLError("X509_new") }
        // Ours until the certificate takes it over at the end: a throw below frees it.
        var owned: OpaquePointer? = x509
        defer { if let owned { X509_free(owned) } }
        guard X509_set_version(x509, Int(X509_VERSION_3)) == 1 else { throw OpenSSLError("X509_set_version") }
        try setSerialNumber(profile.serialNumber, of: x509)

        guard let name = X509_NAME_new() else { throw OpenSSLError("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for (field, value) in profile.subject {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw OpenSSLError("X509_NAME_add_entry_by_txt")
            }
        }
        // set_subject_name copies `name`; the certificate owns its copy.
        guard X509_set_subject_name(x509, name) == 1 else { throw OpenSSLError("X509_set_subject_name") }
        // get_subject_name borrows the issuer's name (get0); set_issuer_name copies it.
        let issuerName: OpaquePointer? = issuer.flatMap { $0.withUnsafePointer { X509_get_subject_name($0) } } ?? name
        guard X509_set_issuer_name(x509, issuerName) == 1 else { throw OpenSSLError("X509_set_issuer_name") }

        // getm returns the certificate's own ASN1_TIME; ASN1_TIME_set rewrites it in place and
        // picks UTCTime before 2050, GeneralizedTime after, as RFC 5280 requires.
        guard
            ASN1_TIME_set(X509_getm_notBefore(x509), time_t(profile.notBefore.timeIntervalSince1970.rounded(.down)))
                != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), time_t(profile.notAfter.timeIntervalSince1970.rounded(.down)))
                != nil
        else { throw OpenSSLError("ASN1_TIME_set") }

        // set_pubkey takes its own reference to the key; `subjectKey` keeps ours.
        guard subjectKey.withUnsafePointer({ X509_set_pubkey(x509, $0) }) == 1 else {
            throw OpenSSLError("X509_set_pubkey")
        }

        // The context borrows both certificates for the `hash` (SKI) and `keyid` (AKI) values.
        var context = X509V3_CTX()
        // The issuer outlives the context: `issuer` is held until this function returns.
        defer { withExtendedLifetime(issuer) {} }
        let issuerPointer: OpaquePointer = issuer.map { $0.withUnsafePointer { $0 } } ?? x509
        X509V3_set_ctx(&context, issuerPointer, x509, nil, nil, 0)
        for item in profile.extensions {
            guard let extensionValue = X509V3_EXT_nconf(nil, &context, item.name, item.value) else {
                throw OpenSSLError("extension \(item.name)=\(item.value)")
            }
            defer { X509_EXTENSION_free(extensionValue) }
            // add_ext copies the extension; ours is freed by the defer above.
            guard X509_add_ext(x509, extensionValue, -1) == 1 else { throw OpenSSLError("X509_add_ext") }
        }

        let digest = profile.digest == .sha384 ? EVP_sha384() : EVP_sha256()
        guard issuerKey.withUnsafePointer({ X509_sign(x509, $0, digest) }) > 0 else { throw OpenSSLError("X509_sign") }
        owned = nil
        return try Certificate(taking: x509)
    }

    private static func setSerialNumber(_ fixed: UInt64?, of x509: OpaquePointer) throws(OpenSSLError) {
        // get_serialNumber borrows the certificate's own ASN1_INTEGER, rewritten in place.
        let serial = X509_get_serialNumber(x509)
        if let fixed {
            guard ASN1_INTEGER_set_uint64(serial, fixed) == 1 else { throw OpenSSLError("ASN1_INTEGER_set_uint64") }
            return
        }
        guard let number = BN_new() else { throw OpenSSLError("BN_new") }
        defer { BN_free(number) }
        // 127 bits with the top one set: 16 content bytes, positive, never zero.
        guard BN_rand(number, 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1,
            BN_to_ASN1_INTEGER(number, serial) != nil
        else { throw OpenSSLError("serial number") }
    }
}
