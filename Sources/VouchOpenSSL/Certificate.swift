internal import COpenSSL

/// One DER X.509 certificate, owned: the `X509` is freed when the last reference goes.
///
/// Immutable after init, so it is shared across threads; OpenSSL only reads it.
package final class Certificate: @unchecked Sendable {
    private let pointer: OpaquePointer
    package let der: [UInt8]

    /// Parses exactly one DER certificate; trailing bytes are an error (`d2i_X509` would
    /// silently ignore them).
    package init?(der: [UInt8]) {
        guard let parsed = DER.parseWhole(der, with: { d2i_X509(nil, $0, $1) }, free: X509_free) else { return nil }
        self.pointer = parsed
        self.der = der
    }

    /// Takes over `x509`, a complete certificate (freed here even when encoding fails).
    init(taking x509: OpaquePointer) throws(OpenSSLError) {
        self.pointer = x509
        let length = i2d_X509(x509, nil)
        guard length > 0 else {
            self.der = []
            throw OpenSSLError("i2d_X509")
        }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        self.der = bytes
        guard written == length else { throw OpenSSLError("i2d_X509") }
    }

    deinit {
        X509_free(pointer)
    }

    /// Runs `body` with the `X509`, borrowed for the call: `body` must not free it or keep it
    /// (OpenSSL calls that keep it take their own reference).
    package func withUnsafePointer<Result, Failure: Error>(
        _ body: (OpaquePointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(pointer)
    }

    /// The PEM encoding ("BEGIN CERTIFICATE").
    package func pem() throws(OpenSSLError) -> [UInt8] {
        let bio = try MemoryBIO()
        try bio.withUnsafePointer { bio throws(OpenSSLError) in
            guard PEM_write_bio_X509(bio, pointer) == 1 else { throw OpenSSLError("PEM_write_bio_X509") }
        }
        return bio.contents
    }

    /// Whether `key` is the private half of this certificate's public key.
    package func matches(_ key: PrivateKey) -> Bool {
        defer { OpenSSLError.drain() }
        return key.withUnsafePointer { X509_check_private_key(pointer, $0) == 1 }
    }

    /// Whether both hold the same certificate.
    package func isSame(as other: Certificate) -> Bool {
        X509_cmp(pointer, other.pointer) == 0
    }

    /// RFC 5280 version number (1 or 3), as OpenSSL reports it plus one.
    package var version: Int { Int(X509_get_version(pointer)) + 1 }

    /// Whether this is a CA certificate: OpenSSL considers it one (basicConstraints CA with
    /// keyCertSign allowed, or a v1 self-signed certificate), or its basicConstraints say CA at
    /// all. `X509_check_ca` alone answers no for `CA:TRUE` with a keyUsage lacking keyCertSign,
    /// and an end-entity must not claim to be a CA either way (RFC 5280 §4.2.1.9).
    package var isCA: Bool {
        X509_check_ca(pointer) != 0 || X509_get_extension_flags(pointer) & UInt32(EXFLAG_CA) != 0
    }

    package func hasExtension(_ oid: ASN1ObjectIdentifier) -> Bool {
        oid.withUnsafePointer { X509_get_ext_by_OBJ(pointer, $0, -1) >= 0 }
    }

    /// The public key; shares ownership through OpenSSL's reference count.
    package var publicKey: PublicKey? {
        // X509_get_pubkey returns a new reference that PublicKey takes over.
        guard let key = X509_get_pubkey(pointer) else { return nil }
        return PublicKey(owning: key)
    }

    /// Seconds since 1970 of notBefore / notAfter.
    package var notBefore: Int64? { Self.seconds(X509_get0_notBefore(pointer)) }
    package var notAfter: Int64? { Self.seconds(X509_get0_notAfter(pointer)) }

    package var subject: String { Self.oneLine(X509_get_subject_name(pointer)) }
    package var issuer: String { Self.oneLine(X509_get_issuer_name(pointer)) }

    /// The subject's commonName, if any.
    package var commonName: String? {
        let name = X509_get_subject_name(pointer)
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry), let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        let length = Int(ASN1_STRING_length(data))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    package var sha256: [UInt8] { SHA256Digest.hash(der) }

    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var broken = tm()
        guard ASN1_TIME_to_tm(time, &broken) == 1 else { return nil }
        return Int64(timegm(&broken))
    }

    private static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name, let text = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { vouch_OPENSSL_free(text) }
        return String(cString: text)
    }
}
