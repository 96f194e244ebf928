internal import VouchOpenSSL

/// Signs receipt payloads into PKCS #7 SignedData with a ``MintReceiptAuthority``: exactly the
/// container Apple's App Store writes (DER, SignedData version 1, one SignerInfo without signed
/// attributes, signature algorithm rsaEncryption) or, in BER, the one Xcode writes (indefinite
/// lengths, content in a constructed OCTET STRING, sha256WithRSAEncryption).
public struct MintReceiptSigner: Sendable {
    /// The digest of the signature: SHA-1 as the App Store signs, SHA-256 as Xcode does.
    public enum Digest: String, Sendable, CaseIterable {
        /// SHA-1 or SHA-256.
        case sha1, sha256
    }

    /// The authority whose leaf key signs.
    public let authority: MintReceiptAuthority

    /// A signer with `authority`'s signing key.
    public init(authority: MintReceiptAuthority) {
        self.authority = authority
    }

    /// The parts of one SignedData, each already encoded, so a defect can replace one.
    struct Parts {
        var digest: Digest
        var ber: Bool
        var payload: [UInt8]
        var contentType: [UInt8] = oidData
        var certificates: [[UInt8]]
        var issuer: [UInt8]
        var serial: [UInt8]
        var digestAlgorithmOID: [UInt8]
        var signature: [UInt8]
        var extraSigner = false

        func encoded() -> [UInt8] {
            let digestAlgorithm = ReceiptDER.sequence([ReceiptDER.oid(digestAlgorithmOID), ReceiptDER.null])
            // Xcode names sha256WithRSAEncryption; Apple names rsaEncryption.
            let signatureOID = ber && digest == .sha256 ? oidSHA256WithRSA : oidRSAEncryption
            let content: [UInt8]
            if ber {
                // A constructed OCTET STRING of 1,000-byte segments, as BER encoders write.
                var segments: [[UInt8]] = []
                var start = 0
                repeat {
                    segments.append(ReceiptDER.octetString(Array(payload[start..<min(start + 1000, payload.count)])))
                    start += 1000
                } while start < payload.count
                content = ReceiptDER.tlv(0x24, segments.flatMap { $0 }, ber: true)
            } else {
                content = ReceiptDER.octetString(payload)
            }
            let signerInfo = ReceiptDER.sequence(
                [
                    ReceiptDER.integer(1), ReceiptDER.sequence([issuer, serial], ber: ber), digestAlgorithm,
                    ReceiptDER.sequence([ReceiptDER.oid(signatureOID), ReceiptDER.null]),
                    ReceiptDER.octetString(signature),
                ], ber: ber)
            let signedData = ReceiptDER.sequence(
                [
                    ReceiptDER.integer(1), ReceiptDER.set([digestAlgorithm], ber: ber),
                    ReceiptDER.sequence(
                        [ReceiptDER.oid(contentType), ReceiptDER.tlv(0xA0, content, ber: ber)], ber: ber),
                    ReceiptDER.tlv(0xA0, certificates.flatMap { $0 }, ber: ber),
                    ReceiptDER.set(extraSigner ? [signerInfo, signerInfo] : [signerInfo], ber: ber),
                ], ber: ber)
            return ReceiptDER.sequence(
                [ReceiptDER.oid(oidSignedData), ReceiptDER.tlv(0xA0, signedData, ber: ber)], ber: ber)
        }
    }

    /// Signs `payload` (the receipt attribute set) and returns the receipt's bytes.
    public func sign(payload: [UInt8], digest: Digest = .sha256, ber: Bool = false) throws(MintError) -> [UInt8] {
        try parts(payload: payload, digest: digest, ber: ber).encoded()
    }

    /// Signs a receipt of `content`; Xcode-style content is written in BER.
    public func sign(_ content: MintReceiptContent, digest: Digest = .sha256) throws(MintError) -> [UInt8] {
        try sign(payload: content.encoded(), digest: digest, ber: content.xcodeStyle)
    }

    func parts(payload: [UInt8], digest: Digest, ber: Bool) throws(MintError) -> Parts {
        let leaf = authority.certificates[0]
        let (issuer, serial) = try MintError.openSSL { () throws(OpenSSLError) in try leaf.issuerAndSerialNumber() }
        return Parts(
            digest: digest, ber: ber, payload: payload, certificates: authority.certificates.map(\.der), issuer: issuer,
            serial: serial, digestAlgorithmOID: digest == .sha1 ? oidSHA1 : oidSHA256,
            signature: try MintError.openSSL { () throws(OpenSSLError) in
                try ReceiptCrypto.signRSA(payload, digest: digest == .sha1 ? .sha1 : .sha256, key: authority.keys[0])
            })
    }

    static func digest(_ digest: Digest, _ bytes: [UInt8]) -> [UInt8] {
        ReceiptCrypto.hash(digest == .sha1 ? .sha1 : .sha256, of: bytes, segments: [0..<bytes.count])
    }
}

let oidSignedData: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
let oidData: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
let oidSHA1: [UInt8] = [0x2B, 0x0E, 0x03, 0x02, 0x1A]
let oidSHA256: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
let oidMD5: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x05]
let oidRSAEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
let oidSHA256WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]
