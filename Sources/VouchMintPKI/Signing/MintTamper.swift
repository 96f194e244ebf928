import Foundation
public import Vouch

/// A deliberate defect in a minted token, with the error code a verifier must report for it.
public enum MintTamper: String, CaseIterable, Sendable {
    /// One bit of the signature's `s` flipped.
    case signature
    /// The payload changed after signing (the last digit of its first top-level number).
    case payload
    /// The header changed after signing but still valid and acceptable: `"typ":"JWT"` added
    /// (App Store style), or the `typ` member removed (Xcode style).
    case header
    /// Signed by a leaf from another, freshly generated root, put in front of this
    /// authority's intermediate and root (Xcode style: another self-signed certificate). The
    /// signature matches `x5c[0]`; the chain does not reach the trusted root.
    case chain
    /// The header says `"alg":"HS256"` (the signature is still ES256).
    case alg

    /// The verification error code the token must produce.
    public var expectedErrorCode: String {
        switch self {
        case .signature, .payload, .header: return "bad_signature"
        case .chain: return "untrusted_chain"
        case .alg: return "unsupported_algorithm"
        }
    }
}

/// Mints tokens broken in one known way each (see ``MintTamper``), to check that a verifier
/// rejects them with the right error.
public final class MintTamperer: Sendable {
    /// The signer of the genuine tokens that each tampering starts from.
    public let signer: MintSigner
    private let foreignSigner: MintSigner
    private let headerSigner: MintSigner
    private let algorithmSigner: MintSigner

    /// Prepares the broken headers and generates the foreign certificate the `chain` defect
    /// needs, valid over the same window as `signer`'s signing certificate.
    public init(signer: MintSigner) throws(MintError) {
        self.signer = signer
        let authority = signer.authority

        var header = signer.header
        if header["typ"] == nil {
            header.members.insert(.init("typ", "JWT"), at: min(1, header.members.count))
        } else {
            header["typ"] = nil
        }
        headerSigner = MintSigner(authority: authority, header: header)

        var algorithmHeader = signer.header
        algorithmHeader["alg"] = "HS256"
        algorithmSigner = MintSigner(authority: authority, header: algorithmHeader)

        let validity = authority.signingValidity ?? MintValidity(notBefore: .distantPast, notAfter: .distantFuture)
        let foreign: MintAuthority
        switch authority.style {
        case .appStore:
            let stranger = try MintAuthority.generate(MintAuthorityOptions(validity: validity))
            // The stranger's leaf (and its key) in front of this authority's own CA certificates.
            foreign = MintAuthority(
                style: .appStore, certificates: [stranger.certificates[0]] + authority.certificates.dropFirst(),
                keys: [stranger.keys[0]] + authority.certificates.dropFirst().map { _ in nil })
        case .xcode:
            foreign = try MintAuthority.generateXcode(validity: validity)
        }
        foreignSigner = try MintSigner(authority: foreign)
    }

    /// `payload` signed, then broken as `tamper` says.
    public func token(_ tamper: MintTamper, payload: JSONObject) throws(MintError) -> String {
        switch tamper {
        case .signature:
            let token = try signer.sign(payload: payload)
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard var signature = Base64.decodeURL(Array(parts[2].utf8)), signature.count == 64 else {
                throw MintError(.openSSLFailure, "a fresh signature did not decode")
            }
            signature[63] ^= 0x01
            return parts[0] + "." + parts[1] + "." + String(decoding: Base64.encodeURL(signature), as: UTF8.self)
        case .payload:
            let token = try signer.sign(payload: payload)
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            let changed = String(
                decoding: Base64.encodeURL(JSONWriter.encode(.object(Self.altered(payload)))), as: UTF8.self)
            return parts[0] + "." + changed + "." + parts[2]
        case .header:
            let genuine = try signer.sign(payload: payload)
            let forged = try headerSigner.sign(payload: payload)
            // The genuine signature under the changed header.
            let signature = genuine.split(separator: ".", omittingEmptySubsequences: false)[2]
            let parts = forged.split(separator: ".", omittingEmptySubsequences: false)
            return parts[0] + "." + parts[1] + "." + signature
        case .chain:
            return try foreignSigner.sign(payload: payload)
        case .alg:
            return try algorithmSigner.sign(payload: payload)
        }
    }

    /// `payload` with the last digit of its first top-level number changed, or with a member
    /// `"tampered":true` added when it has no number.
    static func altered(_ payload: JSONObject) -> JSONObject {
        var changed = payload
        for (index, member) in payload.members.enumerated() {
            guard case .number(let text) = member.value, let last = text.utf8.last else { continue }
            let digit = last - UInt8(ascii: "0")
            let replacement = UInt8(ascii: "0") + (digit + 1) % 10
            changed.members[index].value = .number(String(text.dropLast()) + String(UnicodeScalar(replacement)))
            return changed
        }
        changed["tampered"] = true
        return changed
    }
}
