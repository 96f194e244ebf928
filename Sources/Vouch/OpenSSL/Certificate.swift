internal import COpenSSL

/// One DER X.509 certificate, owned: the `X509` is freed when the last reference goes.
///
/// Immutable after init, so it is shared across threads; OpenSSL only reads it.
final class Certificate: @unchecked Sendable {
    let pointer: OpaquePointer
    let der: [UInt8]

    /// Parses exactly one DER certificate; trailing bytes are an error (`d2i_X509` would
    /// silently ignore them).
    init?(der: [UInt8]) {
        guard let parsed = DER.parseWhole(der, with: { d2i_X509(nil, $0, $1) }, free: X509_free) else { return nil }
        self.pointer = parsed
        self.der = der
    }

    /// Parses a DER or PEM file's contents (PEM: the first `CERTIFICATE` block).
    convenience init?(derOrPEM bytes: [UInt8]) {
        if let der = PEM.firstBlock(labelled: "CERTIFICATE", in: bytes) {
            self.init(der: der)
        } else {
            self.init(der: bytes)
        }
    }

    /// Every certificate in a DER or PEM file's contents: the one DER certificate, or each
    /// PEM `CERTIFICATE` block. Empty when any of them does not parse.
    static func all(inDERorPEM bytes: [UInt8]) -> [Certificate] {
        let blocks = PEM.blocks(labelled: "CERTIFICATE", in: bytes)
        let parsed = (blocks.isEmpty ? [bytes] : blocks).map { Certificate(der: $0) }
        return parsed.contains(where: { $0 == nil }) ? [] : parsed.compactMap { $0 }
    }

    deinit {
        X509_free(pointer)
    }

    /// RFC 5280 version number (1 or 3), as OpenSSL reports it plus one.
    var version: Int { Int(X509_get_version(pointer)) + 1 }

    /// Whether this is a CA certificate: OpenSSL considers it one (basicConstraints CA with
    /// keyCertSign allowed, or a v1 self-signed certificate), or its basicConstraints say CA at
    /// all. `X509_check_ca` alone answers no for `CA:TRUE` with a keyUsage lacking keyCertSign,
    /// and an end-entity must not claim to be a CA either way (RFC 5280 §4.2.1.9).
    var isCA: Bool {
        X509_check_ca(pointer) != 0 || X509_get_extension_flags(pointer) & UInt32(EXFLAG_CA) != 0
    }

    func hasExtension(_ oid: ObjectIdentifier) -> Bool {
        X509_get_ext_by_OBJ(pointer, oid.pointer, -1) >= 0
    }

    /// The public key; shares ownership through OpenSSL's reference count.
    var publicKey: PublicKey? {
        // X509_get_pubkey returns a new reference that PublicKey takes over.
        guard let key = X509_get_pubkey(pointer) else { return nil }
        return PublicKey(owning: key)
    }

    /// Seconds since 1970 of notBefore / notAfter.
    var notBefore: Int64? { Self.seconds(X509_get0_notBefore(pointer)) }
    var notAfter: Int64? { Self.seconds(X509_get0_notAfter(pointer)) }

    var subject: String { Self.oneLine(X509_get_subject_name(pointer)) }
    var issuer: String { Self.oneLine(X509_get_issuer_name(pointer)) }

    /// The subject's commonName, if any.
    var commonName: String? {
        let name = X509_get_subject_name(pointer)
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry), let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        let length = Int(ASN1_STRING_length(data))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    var sha256: [UInt8] { SHA256Digest.hash(der) }

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

/// A parsed ASN.1 object identifier, kept for the life of the process.
final class ObjectIdentifier: @unchecked Sendable {
    let pointer: OpaquePointer
    let dotted: String

    init(_ dotted: String) {
        // OBJ_txt2obj with no_name = 1 reads the dotted form only; the object is ours.
        self.pointer = OBJ_txt2obj(dotted, 1)!
        self.dotted = dotted
    }

    deinit {
        ASN1_OBJECT_free(pointer)
    }

    /// 1.2.840.113635.100.6.11.1: Apple's Mac App Store receipt signing leaf marker.
    static let appleReceiptSigning = ObjectIdentifier("1.2.840.113635.100.6.11.1")
    /// 1.2.840.113635.100.6.2.1: Apple Worldwide Developer Relations intermediate marker.
    static let appleWWDRIntermediate = ObjectIdentifier("1.2.840.113635.100.6.2.1")
}

/// Minimal PEM reading: the base64 body between `-----BEGIN label-----` and `-----END label-----`.
enum PEM {
    static func firstBlock(labelled label: String, in bytes: [UInt8]) -> [UInt8]? {
        blocks(labelled: label, in: bytes).first
    }

    static func blocks(labelled label: String, in bytes: [UInt8]) -> [[UInt8]] {
        guard let text = String(validating: bytes, as: UTF8.self) else { return [] }
        let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
        var result: [[UInt8]] = []
        var rest = Substring(text)
        while let start = rest.firstRange(of: begin), let stop = rest[start.upperBound...].firstRange(of: end) {
            let body = rest[start.upperBound..<stop.lowerBound].utf8.filter { !$0.isASCIIWhitespace }
            guard let der = Base64.decodeStandard(body) else { return result }
            result.append(der)
            rest = rest[stop.upperBound...]
        }
        return result
    }
}

extension UInt8 {
    var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}

/// Reading certificate files as users have them: DER, or PEM with one or more certificates.
public enum CertificateFile {
    /// The DER of each certificate in `bytes`; empty when none parses.
    public static func certificates(in bytes: [UInt8]) -> [[UInt8]] {
        let blocks = PEM.blocks(labelled: "CERTIFICATE", in: bytes)
        let candidates = blocks.isEmpty ? [bytes] : blocks
        let parsed = candidates.filter { Certificate(der: $0) != nil }
        return parsed.count == candidates.count ? parsed : []
    }
}
