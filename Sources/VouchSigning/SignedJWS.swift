internal import Foundation
public import Vouch

/// A compact JWS (ES256) a creator made, with the header and claims that went into it, so that
/// a server can tell its client everything it signed (the `nonce`, the `iat`).
public struct SignedJWS: Sendable, Hashable, CustomStringConvertible {
    /// The compact serialization: `BASE64URL(header).BASE64URL(claims).BASE64URL(r‖s)`.
    public let token: String
    /// The protected header: `alg` (`ES256`), `kid` (the key id) and `typ` (`JWT`).
    public let header: JSONObject
    /// The claims, in the order they were signed.
    public let claims: JSONObject

    /// The token.
    public var description: String { token }
}

/// Signs claims as the JWS App Store requests take: header `{"alg":"ES256","kid":KEY,"typ":"JWT"}`,
/// compact JSON for header and claims, raw `r‖s` signature (RFC 7518 §3.4).
struct JWSSigner: Sendable {
    let key: SigningKey
    let keyId: String

    func sign(_ claims: JSONObject) throws(SigningError) -> SignedJWS {
        try Parameters.require(keyId, "keyId")
        let header: JSONObject = ["alg": "ES256", "kid": .string(keyId), "typ": "JWT"]
        var token = Base64.encodeURL(JSONWriter.encode(.object(header))) + [UInt8(ascii: ".")]
        token += Base64.encodeURL(JSONWriter.encode(.object(claims)))
        let signature = try key.es256Signature(of: token)
        token += [UInt8(ascii: ".")] + Base64.encodeURL(signature)
        return SignedJWS(token: String(decoding: token, as: UTF8.self), header: header, claims: claims)
    }
}

/// The claims every StoreKit request JWS carries (Apple's "Generating JWS to sign App Store
/// requests"): `iss`, `iat`, `bid`, `aud`, `nonce`.
struct RequestClaims: Sendable {
    let signer: JWSSigner
    let issuerId: String
    let bundleId: String
    let audience: String

    init(key: SigningKey, keyId: String, issuerId: String, bundleId: String, audience: String) {
        signer = JWSSigner(key: key, keyId: keyId)
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.audience = audience
    }

    /// Signs the base claims followed by `specific`, the feature's own.
    func sign(_ specific: [JSONObject.Member], nonce: UUID, issuedAt: Timestamp) throws(SigningError) -> SignedJWS {
        try Parameters.require(issuerId, "issuerId")
        try Parameters.require(bundleId, "bundleId")
        var claims = JSONObject([
            .init("iss", .string(issuerId)),
            .init("iat", .number(String(try Parameters.seconds(issuedAt, "issuedAt")))),
            .init("bid", .string(bundleId)), .init("aud", .string(audience)),
            .init("nonce", .string(nonce.uuidString.lowercased())),
        ])
        claims.members += specific
        return try signer.sign(claims)
    }
}

/// The checks on the parameters of every creator.
enum Parameters {
    /// `value` must not be empty.
    static func require(_ value: String, _ name: String) throws(SigningError) {
        guard !value.isEmpty else { throw SigningError(.invalidParameter, "\(name) is empty") }
    }

    /// The whole seconds of a timestamp (NumericDate, as `iat` and `exp` take it); it must not
    /// be before 1970.
    static func seconds(_ timestamp: Timestamp, _ name: String) throws(SigningError) -> Int64 {
        guard timestamp.milliseconds >= 0 else {
            throw SigningError(.invalidParameter, "\(name) is \(timestamp.iso8601), before 1970")
        }
        return timestamp.milliseconds / 1000
    }
}
