public import Vouch
internal import VouchOpenSSL

/// Signs payloads as compact JWS (ES256) with an authority's signing key, loaded once.
///
/// The header is `{"alg":"ES256","x5c":[leaf,intermediate,root]}` (App Store) or
/// `{"kid":"Apple_Xcode_Key","typ":"JWT","x5c":[certificate],"alg":"ES256"}` (Xcode), the
/// certificates in standard base64 with padding; the signature is raw `r‖s` (64 bytes), as
/// RFC 7518 §3.4 requires. The header segment is encoded once, so a signature costs one
/// SHA-256 and one P-256 signing operation. ECDSA nonces come from OpenSSL's random generator:
/// signing the same payload twice gives two different, equally valid signatures.
///
/// A signer only reads its key, so one instance may sign from several threads at once.
public final class MintSigner: Sendable {
    /// The authority whose signing key and certificates the signer uses.
    public let authority: MintAuthority
    /// The protected header, in the member order it is written.
    public let header: JSONObject
    /// `BASE64URL(header) "."`, shared by every token.
    let headerPrefix: [UInt8]

    /// A signer with the header Apple (or Xcode) uses for `authority`'s style.
    public convenience init(authority: MintAuthority) throws(MintError) {
        let chain = try authority.certificateChain().map {
            JSONValue.string(String(decoding: Base64.encodeStandard($0), as: UTF8.self))
        }
        let header: JSONObject
        switch authority.style {
        case .appStore:
            header = JSONObject([.init("alg", "ES256"), .init("x5c", .array(chain))])
        case .xcode:
            header = JSONObject([
                .init("kid", "Apple_Xcode_Key"), .init("typ", "JWT"), .init("x5c", .array(chain)),
                .init("alg", "ES256"),
            ])
        }
        self.init(authority: authority, header: header)
    }

    /// A signer writing `header` as given (used to mint deliberately broken tokens).
    init(authority: MintAuthority, header: JSONObject) {
        self.authority = authority
        self.header = header
        self.headerPrefix = Base64.encodeURL(JSONWriter.encode(.object(header))) + [UInt8(ascii: ".")]
    }

    /// The compact JWS of `payload`, written as compact JSON in member order.
    public func sign(payload: JSONObject) throws(MintError) -> String {
        var writer = JSONWriter(reservingCapacity: 2048)
        writer.write(object: payload)
        return try sign(payloadBytes: writer.bytes)
    }

    /// The compact JWS of exactly `payloadBytes` (which need not be JSON at all).
    public func sign(payloadBytes: some Collection<UInt8>) throws(MintError) -> String {
        var token = headerPrefix
        token.append(contentsOf: Base64.encodeURL(payloadBytes))
        let signature = try signature(over: token)
        token.append(UInt8(ascii: "."))
        token.append(contentsOf: Base64.encodeURL(signature))
        return String(decoding: token, as: UTF8.self)
    }

    /// The raw `r‖s` ES256 signature of `input` (the JWS signing input).
    func signature(over input: [UInt8]) throws(MintError) -> [UInt8] {
        try MintError.openSSL { () throws(OpenSSLError) in try authority.signingKey.signatureOfSHA256(input) }
    }
}
