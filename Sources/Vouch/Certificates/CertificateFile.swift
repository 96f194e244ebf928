internal import VouchOpenSSL

/// Reading certificate files as users have them: DER, or PEM with one or more certificates.
package enum CertificateFile {
    /// The DER of each certificate in `bytes`; empty when none parses.
    package static func certificates(in bytes: [UInt8]) -> [[UInt8]] {
        let blocks = PEM.blocks(labelled: "CERTIFICATE", in: bytes)
        let candidates = blocks.isEmpty ? [bytes] : blocks
        let parsed = candidates.filter { Certificate(der: $0) != nil }
        return parsed.count == candidates.count ? parsed : []
    }
}
