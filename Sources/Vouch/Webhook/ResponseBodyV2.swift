/// The body App Store Server Notifications V2 posts to your server, `{"signedPayload":"…"}`
/// (Apple's `responseBodyV2`): the notification as a JWS, not yet trusted.
///
/// Read a POST body with ``init(json:)`` and verify it with ``Verifier/verify(_:)-(ResponseBodyV2)``;
/// answer the POST with the status ``WebhookStatus`` gives.
///
/// ```swift
/// let notification = try verifier.verify(try ResponseBodyV2(json: body))
/// ```
public struct ResponseBodyV2: Sendable, Hashable {
    /// The notification: a JWS whose payload is a ``ResponseBodyV2DecodedPayload``.
    public let signedPayload: String

    /// A body holding `signedPayload`.
    public init(signedPayload: String) {
        self.signedPayload = signedPayload
    }

    /// Reads a POST body as every Vouch input is read: one strict JSON object (UTF-8, no
    /// duplicate or unescaped member, no trailing comma, nesting at most 16; whitespace around it
    /// allowed) whose `signedPayload` is a string. Other members are ignored, so that one Apple
    /// adds does not break a server.
    ///
    /// Throws ``VerificationError/Code/malformedToken`` when the body is not such an object or
    /// has no string `signedPayload`, ``VerificationError/Code/jsonTooDeep`` when it nests too
    /// deep: the codes `vouch verify` gives the same body. Nothing is trusted yet.
    ///
    /// - Parameter body: the bytes of the POST body (`Data`, `[UInt8]`, a buffer's view).
    public init(json body: some Collection<UInt8>) throws(VerificationError) {
        let trimmed = SignedInput.trimmingWhitespace(Array(body)[...])
        guard trimmed.first == UInt8(ascii: "{") else {
            throw VerificationError(
                .malformedToken, #"the notification body is not a JSON object such as {"signedPayload":"…"}"#)
        }
        signedPayload = try SignedInput.token(inObject: trimmed, fields: [Self.signedPayloadMember])
    }

    /// The body as the App Store posts it: `{"signedPayload":"…"}` (written with
    /// `JSONWriter.encode(.object(body.json))`).
    public var json: JSONObject {
        [Self.signedPayloadMember: .string(signedPayload)]
    }

    static let signedPayloadMember = "signedPayload"
}

extension Verifier {
    /// Verifies the notification a webhook body holds, and each token nested in it (see
    /// ``verify(_:as:)-(String,T.Type)``): the same as verifying `body.signedPayload` as a
    /// ``ResponseBodyV2DecodedPayload``.
    public func verify(_ body: ResponseBodyV2) throws(VerificationError) -> Verified<ResponseBodyV2DecodedPayload> {
        try verify(body.signedPayload, as: ResponseBodyV2DecodedPayload.self)
    }
}
