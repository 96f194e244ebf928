@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// The protected header: the input is the header's JSON text, encoded as the base64url segment
/// a token would carry, so that mutations explore JSON structure, `alg`, `crit` and `x5c`.
///
/// Properties: only the header codes come out; an accepted header says `alg` ES256, has no
/// `crit`, and holds at most three certificates, each parsed from its `x5c` text.
func fuzzHeader(_ input: UnsafeRawBufferPointer) {
    let segment = Base64.encodeURL(Array(input))
    let allowed: Set<VerificationError.Code> = [
        .tokenTooLarge, .badHeaderJSON, .jsonTooDeep, .unsupportedAlgorithm, .critPresent, .missingX5C,
        .wrongChainLength, .badCertificateEncoding, .certificateTooLarge,
    ]
    segment.withUnsafeBufferPointer { segment in
        do throws(VerificationError) {
            let header = try ProtectedHeader(segment: segment)
            require(header.json["alg"] == .string("ES256"), "accepted alg \(String(describing: header.json["alg"]))")
            require(header.json["crit"] == nil, "accepted crit")
            let entries = header.json["x5c"]?.arrayValue ?? []
            require(header.certificates.count == entries.count && entries.count <= 3, "x5c count")
            for (certificate, entry) in zip(header.certificates, entries) {
                require(entry.stringValue.flatMap { Base64.decodeStandard($0.utf8) } == certificate.der, "x5c entry")
            }
        } catch {
            require(allowed.contains(error.code), "header gave \(error.code)")
        }
    }
}
