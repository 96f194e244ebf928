import Vouch

/// Readable lines for a certificate that was not validated, as `vouch inspect` and
/// `vouch receipt inspect` print each certificate they find.
enum CertificateText {
    /// `heading`, then the certificate's subject, issuer, validity, key, Apple marker extensions
    /// and SHA-256, each line after `indent`; for `nil`, a line saying it does not parse.
    static func describe(
        _ certificate: Inspection.CertificateInfo?, heading: String, indent: String, into lines: inout [String]
    ) {
        lines.append("\(indent)\(heading)")
        guard let certificate else {
            lines.append("\(indent)  (not a DER certificate)")
            return
        }
        let when = { (instant: Timestamp?) in instant?.iso8601 ?? "?" }
        lines.append("\(indent)  subject: \(certificate.subject)")
        lines.append("\(indent)  issuer: \(certificate.issuer)")
        lines.append("\(indent)  valid: \(when(certificate.notBefore)) to \(when(certificate.notAfter))")
        lines.append("\(indent)  key: \(certificate.key)\(certificate.isCA ? ", CA" : "")")
        let markers = certificate.appleMarkers.isEmpty ? "none" : certificate.appleMarkers.joined(separator: ", ")
        lines.append("\(indent)  apple markers: \(markers)")
        lines.append("\(indent)  sha256: \(certificate.sha256)")
    }
}
