internal import Foundation

/// Broken receipts, each with the error code a verifier must report for it.
public enum MintReceiptDefect: String, Sendable, CaseIterable {
    /// A byte of the signed content changed after signing: `bad_signature`.
    case payload
    /// A byte of the RSA signature changed: `bad_signature`.
    case signature
    /// Bytes after the ContentInfo: `receipt_malformed_container`.
    case trailing
    /// Two SignerInfos: `receipt_malformed_container`.
    case twoSigners = "two-signers"
    /// Signed content of type digestedData instead of id-data: `receipt_malformed_container`.
    case contentType = "content-type"
    /// MD5 named as the digest: `receipt_unsupported_algorithm`.
    case md5
    /// No certificates at all: `receipt_signer_not_found`.
    case noCertificates = "no-certificates"
    /// The intermediate left out: `untrusted_chain`.
    case noIntermediate = "no-intermediate"
    /// A certificate of another chain added: `untrusted_chain`.
    case extraCertificate = "extra-certificate"
    /// Attribute 2 twice, correctly signed: `receipt_duplicate_attribute`.
    case duplicateAttribute = "duplicate-attribute"
    /// A signed payload that is not an attribute set: `receipt_malformed_payload`.
    case notAttributes = "not-attributes"

    /// The code a verifier must report.
    public var expectedCode: String {
        switch self {
        case .payload, .signature: "bad_signature"
        case .trailing, .twoSigners, .contentType: "receipt_malformed_container"
        case .md5: "receipt_unsupported_algorithm"
        case .noCertificates: "receipt_signer_not_found"
        case .noIntermediate, .extraCertificate: "untrusted_chain"
        case .duplicateAttribute: "receipt_duplicate_attribute"
        case .notAttributes: "receipt_malformed_payload"
        }
    }
}

extension MintReceiptSigner {
    /// A receipt of `content` with `defect`. Chain defects need an App Store style authority.
    public func sign(_ content: MintReceiptContent, digest: Digest = .sha256, defect: MintReceiptDefect)
        throws(MintError) -> [UInt8]
    {
        var content = content
        switch defect {
        case .duplicateAttribute:
            content.extraAttributes.append((2, ReceiptDER.utf8String(content.bundleId + ".other")))
            return try sign(content, digest: digest)
        case .notAttributes:
            return try sign(
                payload: Array("<?xml version=\"1.0\"?><plist><dict/></plist>".utf8), digest: digest,
                ber: content.xcodeStyle)
        default:
            break
        }
        var parts = try parts(payload: content.encoded(), digest: digest, ber: content.xcodeStyle)
        switch defect {
        case .payload:
            parts.payload[parts.payload.count - 1] ^= 0x01
        case .signature:
            parts.signature[parts.signature.count - 1] ^= 0x01
        case .trailing:
            return parts.encoded() + [0x00, 0x00]
        case .twoSigners:
            parts.extraSigner = true
        case .contentType:
            parts.contentType = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x05]
        case .md5:
            parts.digestAlgorithmOID = oidMD5
        case .noCertificates:
            parts.certificates = []
        case .noIntermediate:
            guard parts.certificates.count == 3 else {
                throw MintError(.unsupported, "an Xcode receipt has no intermediate")
            }
            parts.certificates.remove(at: 1)
        case .extraCertificate:
            let other = try MintReceiptAuthority.generateXcode(
                validity: MintValidity(
                    notBefore: content.receiptCreationDate.addingTimeInterval(-86_400),
                    notAfter: content.receiptCreationDate.addingTimeInterval(86_400)))
            parts.certificates.append(try other.anchorCertificate())
        case .duplicateAttribute, .notAttributes:
            break
        }
        return parts.encoded()
    }
}
