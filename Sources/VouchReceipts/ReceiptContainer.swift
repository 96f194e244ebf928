internal import Vouch
internal import VouchOpenSSL

/// The parts of a receipt's PKCS #7 / CMS SignedData (RFC 5652) that verification needs, read
/// strictly: one ContentInfo of type signedData and nothing after it, SignedData version 1, the
/// content of type id-data, at most ``maximumCertificates`` certificates, no CRLs, exactly one
/// SignerInfo (version 1, issuer and serial number, no signed or unsigned attributes), and a
/// digest and signature algorithm Apple uses.
struct ReceiptContainer {
    enum Digest: String, Sendable {
        case sha1 = "SHA-1"
        case sha256 = "SHA-256"

        /// The DER DigestInfo prefix of PKCS #1 v1.5 (RFC 8017 §9.2 note 1), parameters NULL.
        var digestInfoPrefix: [UInt8] {
            switch self {
            case .sha1: [0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A, 0x05, 0x00, 0x04, 0x14]
            case .sha256:
                [
                    0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05,
                    0x00, 0x04, 0x20,
                ]
            }
        }

        var crypto: ReceiptCrypto.Digest { self == .sha1 ? .sha1 : .sha256 }
    }

    static let maximumCertificates = 8

    let bytes: [UInt8]
    /// The signed content (the payload), as segments of `bytes`.
    let content: [Range<Int>]
    /// The `certificates` field as encoded: what the signer cache compares.
    let certificateSet: Range<Int>
    /// Each certificate's TLV.
    let certificates: [Range<Int>]
    /// The SignerInfo's issuer Name and serial number TLVs.
    let signerIssuer: Range<Int>
    let signerSerial: Range<Int>
    let digest: Digest
    let signature: [UInt8]
    /// Whether any length is indefinite (BER, as Xcode writes it).
    let usesIndefiniteLengths: Bool

    /// Parses `bytes`; throws `VerificationError.Code.receiptNotAReceipt` when they are not a
    /// PKCS #7 SignedData at all, `VerificationError.Code.receiptMalformedContainer` when the
    /// SignedData breaks a rule.
    init(_ bytes: [UInt8]) throws(VerificationError) {
        self.bytes = bytes
        let layout = try bytes.withUnsafeBufferPointer { buffer throws(VerificationError) in
            try Self.layout(of: buffer, bytes)
        }
        content = layout.content
        certificateSet = layout.certificateSet
        certificates = layout.certificates
        signerIssuer = layout.signerIssuer
        signerSerial = layout.signerSerial
        digest = layout.digest
        signature = layout.signature
        usesIndefiniteLengths = layout.usesIndefiniteLengths
    }

    /// What ``init(_:)`` keeps, read from `buffer` (the bytes of `bytes`) in one borrow.
    private struct Layout {
        var content: [Range<Int>] = []
        var certificateSet = 0..<0
        var certificates: [Range<Int>] = []
        var signerIssuer = 0..<0
        var signerSerial = 0..<0
        var digest = Digest.sha256
        var signature: [UInt8] = []
        var usesIndefiniteLengths = false
    }

    private static func layout(
        of buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8]
    ) throws(VerificationError) -> Layout {
        var layout = Layout()
        var outer = BERCursor(buffer, range: 0..<buffer.count)
        let contentInfo: BERReader.Element
        var fields: BERCursor
        do throws(BERReader.Failure) {
            contentInfo = try outer.read(0x30, "ContentInfo")
            fields = try outer.children(of: contentInfo)
            let type = try fields.read(0x06, "contentType")
            guard buffer[type.contents].elementsEqual(Self.oidSignedData) else {
                throw BERReader.Failure("not signedData")
            }
        } catch {
            throw Self.notAReceipt(bytes, error.message)
        }
        do throws(BERReader.Failure) {
            try outer.requireEnd("the ContentInfo")
            var indefinite = contentInfo.indefinite
            let explicit = try fields.read(0xA0, "content [0]")
            try fields.requireEnd("content [0]")
            var inner = try fields.children(of: explicit)
            let signedData = try inner.read(0x30, "SignedData")
            try inner.requireEnd("SignedData")
            indefinite = indefinite || explicit.indefinite || signedData.indefinite

            var signed = try fields.children(of: signedData)
            let version = try signed.integer(try signed.read(0x02, "SignedData version"))
            guard version == 1 else { throw BERReader.Failure("SignedData version \(version); 1 is required") }
            let digestSet = try signed.read(0x31, "digestAlgorithms")
            var digests = try signed.children(of: digestSet)
            var declaredDigests: [Digest] = []
            while let algorithm = try digests.next() {
                declaredDigests.append(try Self.digest(algorithm, in: digests))
            }

            let encapsulated = try signed.read(0x30, "encapContentInfo")
            var encapsulatedFields = try signed.children(of: encapsulated)
            let contentType = try encapsulatedFields.read(0x06, "eContentType")
            guard buffer[contentType.contents].elementsEqual(Self.oidData) else {
                throw BERReader.Failure("the signed content is not of type id-data")
            }
            let eContentWrapper = try encapsulatedFields.read(0xA0, "eContent")
            try encapsulatedFields.requireEnd("eContent")
            var eContentReader = try encapsulatedFields.children(of: eContentWrapper)
            guard let eContent = try eContentReader.next() else { throw BERReader.Failure("eContent is empty") }
            try eContentReader.requireEnd("eContent")
            layout.content = try eContentReader.octetStringSegments(eContent)
            indefinite = indefinite || encapsulated.indefinite || eContentWrapper.indefinite || eContent.indefinite

            guard let certificateField = try signed.readIfPresent(0xA0) else {
                throw BERReader.Failure("the receipt carries no certificates", code: .receiptSignerNotFound)
            }
            layout.certificateSet = certificateField.whole
            var certificateReader = try signed.children(of: certificateField)
            while let certificate = try certificateReader.next() {
                guard certificate.tag == 0x30 else { throw BERReader.Failure("a certificate that is not a SEQUENCE") }
                layout.certificates.append(certificate.whole)
                guard layout.certificates.count <= Self.maximumCertificates else {
                    throw BERReader.Failure("more than \(Self.maximumCertificates) certificates")
                }
            }
            indefinite = indefinite || certificateField.indefinite
            guard try signed.readIfPresent(0xA1) == nil else { throw BERReader.Failure("the SignedData carries CRLs") }

            let signerSet = try signed.read(0x31, "signerInfos")
            try signed.requireEnd("signerInfos")
            var signers = try signed.children(of: signerSet)
            let signerInfo = try signers.read(0x30, "SignerInfo")
            guard signers.isAtEnd else { throw BERReader.Failure("more than one SignerInfo") }
            indefinite = indefinite || signerSet.indefinite || signerInfo.indefinite

            var signer = try signers.children(of: signerInfo)
            let signerVersion = try signer.integer(try signer.read(0x02, "SignerInfo version"))
            guard signerVersion == 1 else {
                throw BERReader.Failure("SignerInfo version \(signerVersion); 1 is required")
            }
            let sid = try signer.read(0x30, "issuerAndSerialNumber")
            var sidFields = try signer.children(of: sid)
            layout.signerIssuer = try sidFields.read(0x30, "the signer's issuer").whole
            layout.signerSerial = try sidFields.read(0x02, "the signer's serial number").whole
            try sidFields.requireEnd("issuerAndSerialNumber")
            let digestAlgorithm = try signer.read(0x30, "digestAlgorithm")
            layout.digest = try Self.digest(digestAlgorithm, in: signer)
            guard declaredDigests == [layout.digest] else {
                throw BERReader.Failure("digestAlgorithms does not list exactly the signer's digest")
            }
            guard try signer.readIfPresent(0xA0) == nil else {
                throw BERReader.Failure("the SignerInfo has signed attributes; receipts have none")
            }
            let signatureAlgorithm = try signer.read(0x30, "signatureAlgorithm")
            try Self.checkSignatureAlgorithm(signatureAlgorithm, digest: layout.digest, in: signer)
            let signature = try signer.read(0x04, "signature")
            layout.signature = Array(buffer[signature.contents])
            try signer.requireEnd("the signature (unsigned attributes are not allowed)")
            layout.usesIndefiniteLengths = indefinite
        } catch {
            throw VerificationError(error.code ?? .receiptMalformedContainer, "receipt container: \(error.message)")
        }
        return layout
    }

    /// The DER of the certificate at `index`.
    func certificateDER(_ index: Int) -> [UInt8] { Array(bytes[certificates[index]]) }

    private static func notAReceipt(_ bytes: [UInt8], _ detail: String) -> VerificationError {
        let text = bytes.prefix(256).filter { !$0.isASCIIWhitespace }
        if text.first == UInt8(ascii: "{"),
            String(decoding: text, as: UTF8.self).contains("\"signature\"")
                || String(decoding: bytes.prefix(4096), as: UTF8.self).contains("purchase-info")
        {
            return VerificationError(
                .receiptNotAReceipt,
                "this is an iOS 6 style transaction receipt (an old-style plist with \"signature\" and \"purchase-info\"), not an app receipt"
            )
        }
        return VerificationError(.receiptNotAReceipt, "not a PKCS #7 SignedData app receipt (\(detail))")
    }

    private static func digest(_ algorithm: BERReader.Element, in parent: BERCursor) throws(BERReader.Failure) -> Digest
    {
        let (oid, _) = try algorithmIdentifier(algorithm, in: parent)
        if oid.elementsEqual(oidSHA1) { return .sha1 }
        if oid.elementsEqual(oidSHA256) { return .sha256 }
        throw BERReader.Failure("the digest algorithm is neither SHA-1 nor SHA-256", code: .receiptUnsupportedAlgorithm)
    }

    private static func checkSignatureAlgorithm(
        _ algorithm: BERReader.Element, digest: Digest, in parent: BERCursor
    ) throws(BERReader.Failure) {
        let (oid, _) = try algorithmIdentifier(algorithm, in: parent)
        // Apple signs with rsaEncryption; Xcode with sha256WithRSAEncryption. A combined
        // algorithm must name the SignerInfo's own digest.
        if oid.elementsEqual(oidRSAEncryption) { return }
        if digest == .sha256, oid.elementsEqual(oidSHA256WithRSA) { return }
        if digest == .sha1, oid.elementsEqual(oidSHA1WithRSA) { return }
        throw BERReader.Failure(
            "the signature algorithm is not RSA PKCS #1 v1.5 with the SignerInfo's digest (\(digest.rawValue))",
            code: .receiptUnsupportedAlgorithm)
    }

    /// An AlgorithmIdentifier's OID; parameters must be absent or NULL.
    private static func algorithmIdentifier(
        _ element: BERReader.Element, in parent: BERCursor
    ) throws(BERReader.Failure) -> (Slice<UnsafeBufferPointer<UInt8>>, Bool) {
        guard element.tag == 0x30 else { throw BERReader.Failure("an AlgorithmIdentifier that is not a SEQUENCE") }
        var fields = try parent.children(of: element)
        let oid = try fields.read(0x06, "an algorithm OID")
        var hasNull = false
        if let parameters = try fields.next() {
            guard parameters.tag == 0x05, parameters.contents.isEmpty else {
                throw BERReader.Failure("algorithm parameters other than NULL")
            }
            hasNull = true
        }
        try fields.requireEnd("an AlgorithmIdentifier")
        return (parent.bytes[oid.contents], hasNull)
    }

    static let oidSignedData: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let oidData: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    static let oidSHA1: [UInt8] = [0x2B, 0x0E, 0x03, 0x02, 0x1A]
    static let oidSHA256: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
    static let oidRSAEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    static let oidSHA1WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05]
    static let oidSHA256WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]
}
