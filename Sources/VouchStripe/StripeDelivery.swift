internal import Vouch

/// One webhook delivery as Stripe sent it: the `Stripe-Signature` header and the raw body.
///
/// Stored, a delivery is one JSON object, `{"stripe-signature":"t=…,v1=…","body":"…"}` (or
/// `{"headers":{"Stripe-Signature":"…"},"body":"…"}`), one per line or document: `InputReader`
/// (in VouchBatch) reads it back, and ``storedJSON`` writes it. The body is kept as the string
/// it was received as, never as parsed JSON: the signature is over its exact bytes.
public struct StripeDelivery: Sendable, Hashable {
    /// The `Stripe-Signature` header's value: `t=…,v1=…[,v1=…]`.
    public var signature: String
    /// The request body, byte for byte as received (UTF-8 JSON, as Stripe sends it).
    public var body: [UInt8]

    /// A delivery of `body` with the header `signature`.
    public init(signature: String, body: [UInt8]) {
        self.signature = signature
        self.body = body
    }

    /// The stored form, `{"stripe-signature":"…","body":"…"}`, on one line (no newline after
    /// it): the body's newlines and quotes are escaped, its bytes otherwise kept. The body must
    /// be UTF-8 (a JSON string cannot hold other bytes).
    public var storedJSON: [UInt8] {
        var writer = JSONWriter(reservingCapacity: body.count + signature.utf8.count + 64)
        writer.write(
            object: JSONObject([
                .init("stripe-signature", .string(signature)),
                .init("body", .string(String(decoding: body, as: UTF8.self))),
            ]))
        return writer.bytes
    }
}
