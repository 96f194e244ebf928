public import Vouch
internal import VouchOpenSSL

/// A receipt decoded without trusting anything: for a look at a receipt that does not verify.
/// The container is read with the verifier's strict rules (so a malformed one is still an
/// error), but neither the signature nor the chain is checked.
public struct ReceiptInspection: Sendable {
    /// `SHA-1` or `SHA-256`.
    public let digestAlgorithm: String
    /// Whether the container uses BER indefinite lengths (as Xcode's receipts do).
    public let usesIndefiniteLengths: Bool
    /// The length of the signature in bytes.
    public let signatureLength: Int
    /// Each certificate the receipt carries, in its order; `nil` where one does not parse.
    public let certificates: [Inspection.CertificateInfo?]
    /// The decoded payload, or why it does not decode.
    public let receipt: Result<AppReceipt, VerificationError>

    /// Reads the receipt `bytes`; throws when the container itself is malformed.
    public init(receipt bytes: [UInt8]) throws(VerificationError) {
        let container = try ReceiptContainer(bytes)
        digestAlgorithm = container.digest.rawValue
        usesIndefiniteLengths = container.usesIndefiniteLengths
        signatureLength = container.signature.count
        certificates = container.certificates.indices.map { index in
            Certificate(der: container.certificateDER(index)).map(Inspection.CertificateInfo.init)
        }
        let payload = container.content.flatMap { bytes[$0] }
        receipt = Result { () throws(VerificationError) in try AppReceipt(payload: payload) }
    }
}
