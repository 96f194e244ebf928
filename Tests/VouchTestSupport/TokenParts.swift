import Testing
public import Vouch

/// Takes test tokens apart and builds them by hand: segments are encoded exactly as given,
/// nothing is verified.
public enum TokenParts {
    /// The dot-separated segments of a compact JWS, empty ones included.
    public static func segments(_ token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    public static func encode(_ text: String) -> String {
        String(decoding: Base64.encodeURL(Array(text.utf8)), as: UTF8.self)
    }

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: Base64.encodeURL(bytes), as: UTF8.self)
    }

    public static func decode(_ segment: String) -> String {
        String(decoding: Base64.decodeURL(Array(segment.utf8)) ?? [], as: UTF8.self)
    }

    /// The payload of a compact JWS, without checking its signature: the middle segment,
    /// base64url-decoded and parsed strictly.
    public static func unverifiedPayload(_ token: String) throws -> JSONObject {
        let parts = segments(token)
        guard parts.count == 3 else { throw TestFailure("\(parts.count) segments, not 3") }
        guard let bytes = Base64.decodeURL(Array(parts[1].utf8)) else {
            throw TestFailure("payload segment is not base64url")
        }
        return try StrictJSON.parseObject(bytes)
    }

    /// The token with its header JSON object replaced by `transform(header)`.
    public static func replacingHeader(of token: String, _ transform: (inout JSONObject) -> Void) throws -> String {
        var parts = segments(token)
        var header = try StrictJSON.parseObject(Array(decode(parts[0]).utf8))
        transform(&header)
        parts[0] = encode(JSONWriter.string(.object(header)))
        return parts.joined(separator: ".")
    }
}

/// The three segments of a compact JWS, decoded.
public struct DecodedJWS {
    public var headerText: String
    public var header: JSONObject
    public var payloadBytes: [UInt8]
    public var payload: JSONObject
    public var signature: [UInt8]
    /// `header.payload` exactly as in the token.
    public var signingInput: [UInt8]

    public init(_ token: String) throws {
        let parts = TokenParts.segments(token)
        try #require(parts.count == 3)
        let headerBytes = try #require(Base64.decodeURL(Array(parts[0].utf8)))
        headerText = String(decoding: headerBytes, as: UTF8.self)
        header = try StrictJSON.parseObject(headerBytes)
        payloadBytes = try #require(Base64.decodeURL(Array(parts[1].utf8)))
        payload = try StrictJSON.parseObject(payloadBytes)
        signature = try #require(Base64.decodeURL(Array(parts[2].utf8)))
        signingInput = Array((parts[0] + "." + parts[1]).utf8)
    }

    /// The DER certificates of `x5c`.
    public var chain: [[UInt8]] {
        get throws {
            let entries = try #require(header["x5c"]?.arrayValue)
            return try entries.map { entry in
                let text = try #require(entry.stringValue)
                return try #require(Base64.decodeStandard(Array(text.utf8)))
            }
        }
    }
}
