internal import Foundation
package import VouchOpenSSL

/// The three segments of a compact JWS, located in the received bytes without copying.
///
/// Only the shape is checked here: size bound first, then exactly two dots and three
/// non-empty segments. The signing input is `bytes[..<signature.lowerBound - 1]`, exactly as
/// received.
package struct CompactJWS {
    package let header: Range<Int>
    package let payload: Range<Int>
    package let signature: Range<Int>

    /// The `header.payload` bytes the signature covers.
    package var signingInput: Range<Int> { header.lowerBound..<payload.upperBound }

    package init(locatingIn bytes: UnsafeBufferPointer<UInt8>, maximumSize: Int) throws(VerificationError) {
        guard bytes.count <= maximumSize else {
            throw VerificationError(.tokenTooLarge, "the token is \(bytes.count) bytes; the limit is \(maximumSize)")
        }
        let base = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
        func dot(after start: Int) -> Int? {
            guard start < bytes.count, let found = memchr(base + start, 0x2E, bytes.count - start) else { return nil }
            return UnsafeRawPointer(found) - base
        }
        guard let first = dot(after: 0), let second = dot(after: first + 1), dot(after: second + 1) == nil else {
            let count = bytes.reduce(0) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) }
            throw VerificationError(
                .malformedToken, "a compact JWS has 3 segments separated by dots; found \(count + 1)")
        }
        let dots = (first, second)
        header = 0..<dots.0
        payload = dots.0 + 1..<dots.1
        signature = dots.1 + 1..<bytes.count
        for (name, range) in [("header", header), ("payload", payload), ("signature", signature)] where range.isEmpty {
            throw VerificationError(.malformedToken, "the \(name) segment is empty")
        }
    }
}

/// The protected header of an App Store JWS, checked: `alg` is ES256, no `crit`, and `x5c`
/// holds DER certificates that parse completely.
package struct ProtectedHeader: @unchecked Sendable {
    package let json: JSONObject
    package let certificates: [Certificate]
    package let keyIdentifier: String?

    package static let maximumSegmentSize = 16 * 1024
    package static let maximumCertificates = 3
    /// DER bytes per `x5c` certificate; Apple's are about 1 KiB, its G3 root 583 bytes.
    static let maximumCertificateSize = 4 * 1024

    /// Decodes a header segment and makes the checks every ES256 token's header must pass,
    /// whether it carries `x5c` or is signed with a known key: the size bound, canonical
    /// base64url, a strict JSON object at most 4 levels deep, `alg` ES256, no `crit`.
    package static func decode(segment: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> JSONObject {
        guard segment.count <= Self.maximumSegmentSize else {
            throw VerificationError(
                .tokenTooLarge, "the header is \(segment.count) bytes; the limit is \(Self.maximumSegmentSize)")
        }
        guard let bytes = Base64.decodeURL(segment) else {
            throw VerificationError(.badBase64URL, "the header segment is not canonical unpadded base64url")
        }
        let json: JSONObject
        do {
            json = try StrictJSON.parseObject(bytes, limits: .init(maximumDepth: 4))
        } catch {
            throw VerificationError(error.isNestingTooDeep ? .jsonTooDeep : .badHeaderJSON, "header: \(error)")
        }
        guard let algorithm = json["alg"] else {
            throw VerificationError(.unsupportedAlgorithm, "the header has no alg; only ES256 is accepted")
        }
        guard algorithm == .string("ES256") else {
            let shown = algorithm.stringValue.map { "\"\($0)\"" } ?? JSONWriter.string(algorithm)
            throw VerificationError(.unsupportedAlgorithm, "alg is \(shown); only ES256 is accepted")
        }
        if json["crit"] != nil {
            throw VerificationError(.critPresent, "the header carries crit, which this verifier does not accept")
        }
        return json
    }

    /// Parses a header segment (base64url text).
    package init(segment: UnsafeBufferPointer<UInt8>) throws(VerificationError) {
        let json = try Self.decode(segment: segment)
        guard let x5c = json["x5c"] else {
            throw VerificationError(.missingX5C, "the header has no x5c certificate chain")
        }
        guard let entries = x5c.arrayValue else {
            throw VerificationError(.badHeaderJSON, "x5c is not an array")
        }
        guard entries.count <= Self.maximumCertificates else {
            throw VerificationError(
                .wrongChainLength, "x5c holds \(entries.count) certificates; exactly 3 are required")
        }
        var certificates: [Certificate] = []
        for (index, entry) in entries.enumerated() {
            guard let text = entry.stringValue else {
                throw VerificationError(.badHeaderJSON, "x5c[\(index)] is not a string")
            }
            guard let der = Base64.decodeStandard(text.utf8) else {
                throw VerificationError(.badCertificateEncoding, "x5c[\(index)] is not canonical padded base64")
            }
            guard der.count <= Self.maximumCertificateSize else {
                throw VerificationError(
                    .certificateTooLarge,
                    "x5c[\(index)] is \(der.count) bytes; the limit is \(Self.maximumCertificateSize)")
            }
            guard let certificate = Certificate(der: der) else {
                throw VerificationError(.badCertificateEncoding, "x5c[\(index)] is not exactly one DER certificate")
            }
            certificates.append(certificate)
        }
        if let kid = json["kid"], kid.stringValue == nil {
            throw VerificationError(.badHeaderJSON, "kid is not a string")
        }
        self.json = json
        self.certificates = certificates
        self.keyIdentifier = json["kid"]?.stringValue
    }
}
