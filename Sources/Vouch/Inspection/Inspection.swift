package import VouchOpenSSL

/// What a token says about itself, decoded without trusting anything: for looking at data that
/// does not verify. Nothing here is authenticated.
public struct Inspection: Sendable {
    /// What one `x5c` certificate says about itself (not validated).
    public struct CertificateInfo: Sendable {
        /// The subject, one line (`CN = …, O = …`).
        public let subject: String
        /// The issuer, one line.
        public let issuer: String
        /// The start of the validity period (whole seconds).
        public let notBefore: Timestamp?
        /// The end of the validity period (whole seconds).
        public let notAfter: Timestamp?
        /// "EC P-256", "EC P-384", "RSA 2048", ….
        public let key: String
        /// Whether the certificate claims to be a CA (basic constraints, or OpenSSL's CA check).
        public let isCA: Bool
        /// Apple marker extensions present: "1.2.840.113635.100.6.11.1 (receipt signing)", ….
        public let appleMarkers: [String]
        /// Lower-case hex SHA-256 of the DER.
        public let sha256: String
    }

    /// The protected header.
    public let header: JSONObject
    /// One entry per `x5c` element; `nil` where it is not a certificate.
    public let certificates: [CertificateInfo?]
    /// The payload, when it is a JSON object; notification payloads have their nested tokens'
    /// payloads in ``nested``.
    public let payload: JSONObject?
    /// The kind told from the payload's members, if any.
    public let kind: PayloadKind?
    /// The length of the decoded signature in bytes (64 for ES256), or `nil` when it is not base64url.
    public let signatureLength: Int?
    /// Payloads of the tokens nested in a notification, by member path.
    public let nested: [(field: NestedTokenField, inspection: Inspection)]

    /// Decodes what can be decoded. Throws when the token is not even a JWS with a JSON header.
    public init(token: String) throws(VerificationError) {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty }) else {
            throw VerificationError(.malformedToken, "a compact JWS has 3 non-empty segments; found \(segments.count)")
        }
        guard let headerBytes = Base64.decodeURL(segments[0].utf8) else {
            throw VerificationError(.badBase64URL, "the header segment is not canonical unpadded base64url")
        }
        do {
            header = try StrictJSON.parseObject(headerBytes)
        } catch {
            throw VerificationError(error.isNestingTooDeep ? .jsonTooDeep : .badHeaderJSON, "header: \(error)")
        }
        certificates = (header["x5c"]?.arrayValue ?? []).map { entry in
            guard let text = entry.stringValue, let der = Base64.decodeStandard(text.utf8),
                let certificate = Certificate(der: der)
            else { return nil }
            return CertificateInfo(certificate)
        }
        payload = Base64.decodeURL(segments[1].utf8).flatMap { try? StrictJSON.parseObject($0) }
        kind = payload.flatMap(PayloadKind.detect(in:))
        signatureLength = Base64.decodeURL(segments[2].utf8)?.count
        var nested: [(NestedTokenField, Inspection)] = []
        if kind == .notification, let payload {
            for field in NestedTokenField.allCases {
                if let inner = payload[field.parent]?.objectValue?[field.member]?.stringValue,
                    let inspection = try? Inspection(token: inner)
                {
                    nested.append((field, inspection))
                }
            }
        }
        self.nested = nested
    }
}

extension Inspection.CertificateInfo {
    package init(_ certificate: Certificate) {
        subject = certificate.subject
        issuer = certificate.issuer
        notBefore = certificate.notBefore.map { Timestamp(seconds: $0) }
        notAfter = certificate.notAfter.map { Timestamp(seconds: $0) }
        key = certificate.publicKey?.summary ?? "unreadable"
        isCA = certificate.isCA
        var markers: [String] = []
        if certificate.hasExtension(.appleReceiptSigning) {
            markers.append("\(ASN1ObjectIdentifier.appleReceiptSigning.dotted) (App Store receipt signing)")
        }
        if certificate.hasExtension(.appleWWDRIntermediate) {
            markers.append("\(ASN1ObjectIdentifier.appleWWDRIntermediate.dotted) (Apple WWDR intermediate)")
        }
        appleMarkers = markers
        sha256 = certificate.sha256.hexString
    }
}
