public import Vouch

extension VerificationError.Code {
    /// A Stripe command was given a unit that is not a stored webhook delivery (a bare line, a
    /// JSON document without a `Stripe-Signature`).
    public static let stripeNotADelivery = Self(rawValue: "stripe_not_a_delivery", category: .input)
    /// A stored delivery without its raw body as one JSON string, or whose `Stripe-Signature`
    /// is not one string.
    public static let stripeMalformedDelivery = Self(rawValue: "stripe_malformed_delivery", category: .input)
    /// The delivery's body is larger than the verifier's size limit.
    public static let stripeBodyTooLarge = Self(rawValue: "stripe_body_too_large", category: .input)
    /// The `Stripe-Signature` header is not a list of `key=value` items with one integer `t`.
    public static let stripeMalformedHeader = Self(rawValue: "stripe_malformed_header", category: .format)
    /// The header holds no `v1` signature (other schemes are ignored).
    public static let stripeNoSignature = Self(rawValue: "stripe_no_signature", category: .signature)
    /// No `v1` signature is the HMAC-SHA256 of `t.body` with any of the secrets.
    public static let stripeBadSignature = Self(rawValue: "stripe_bad_signature", category: .signature)
    /// The signature holds, but its timestamp is older than the tolerance allows at the
    /// validation instant.
    public static let stripeTimestampOutOfTolerance = Self(
        rawValue: "stripe_timestamp_out_of_tolerance", category: .claims)
    /// The signed body is not a strict UTF-8 JSON object.
    public static let stripeBadBodyJSON = Self(rawValue: "stripe_bad_body_json", category: .format)
    /// The signed body is JSON but not a Stripe event (`"object":"event"` with its `id`,
    /// `type`, `created`, `livemode` and `data.object`).
    public static let stripeNotAnEvent = Self(rawValue: "stripe_not_an_event", category: .format)
    /// The signed body is a Stripe event whose object (a subscription, a Checkout session, an
    /// invoice, a charge) has a member of the wrong type: the reason names its path, such as
    /// `data.object.items.data[0].current_period_end`.
    public static let stripeBadObject = Self(rawValue: "stripe_bad_object", category: .format)

    /// The codes only Stripe deliveries produce, in documentation order. With
    /// `VerificationError.Code.all` and the other modules' lists, every code.
    public static let stripeCodes: [Self] = [
        .stripeNotADelivery, .stripeMalformedDelivery, .stripeBodyTooLarge, .stripeMalformedHeader,
        .stripeNoSignature, .stripeBadSignature, .stripeTimestampOutOfTolerance, .stripeBadBodyJSON,
        .stripeNotAnEvent, .stripeBadObject,
    ]
}
