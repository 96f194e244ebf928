public import Vouch

/// A Stripe event whose delivery verified: the signed event, when it was signed and by which
/// secret.
public struct VerifiedStripeEvent: Sendable {
    /// The event, read from the signed body.
    public let event: StripeEvent
    /// The timestamp `t` of the delivery's signature (a retry of the same event has a new one).
    public let signedAt: Timestamp
    /// Which of ``StripeWebhookVerifier/Configuration/secrets`` verified it, from 0: while a
    /// secret is rolled, it tells which deliveries still come signed with the old one.
    public let secretIndex: Int
}

/// A Stripe event (`"object":"event"`): what happened, and the API object it happened to, as
/// rendered by the event's API version.
///
/// The members a server branches on are typed; the whole event stays available as
/// ``json``, members in the order Stripe wrote them and numbers as their text.
public struct StripeEvent: Sendable {
    /// The whole event.
    public let json: JSONObject
    /// The event's id, `evt_…`: the same in every retry of its delivery.
    public let id: String
    /// What happened: `customer.subscription.updated`, `invoice.paid`, ….
    public let type: StripeEventType
    /// When the event was created (Stripe's `created`, whole seconds).
    public let created: Timestamp
    /// Whether the event is of live mode (`false` for test mode).
    public let livemode: Bool
    /// The API version the event's `data` is rendered in (`2025-03-31.basil`); `nil` for
    /// events older than October 2014.
    public let apiVersion: String?
    /// The API object the event is about (`data.object`): a subscription, an invoice, a
    /// Checkout session, ….
    public let object: JSONObject
    /// For `*.updated` events, the members of ``object`` that changed, with their values
    /// before (`data.previous_attributes`).
    public let previousAttributes: JSONObject?
    /// The connected account the event is about (Connect), when there is one.
    public let account: String?

    /// Reads an event; throws `stripe_not_an_event` when `json` is not one.
    package init(_ json: JSONObject) throws(VerificationError) {
        func fail(_ reason: String) -> VerificationError {
            VerificationError(.stripeNotAnEvent, "the signed body is not a Stripe event: \(reason)")
        }
        guard let kind = json["object"]?.stringValue else { throw fail("it has no \"object\" member") }
        guard kind == "event" else {
            throw fail(
                "its object is \"\(kind)\""
                    + (kind == "v2.core.event" ? " (a thin event: fetch it from Stripe to get its data)" : ""))
        }
        guard let id = json["id"]?.stringValue, !id.isEmpty else { throw fail("it has no id") }
        guard let type = json["type"]?.stringValue, !type.isEmpty else { throw fail("it has no type") }
        guard let created = StripeTime.timestamp(json["created"]) else {
            throw fail("its created is not a number of seconds from 1970 to 9999")
        }
        guard let livemode = json["livemode"]?.boolValue else { throw fail("its livemode is not true or false") }
        guard let data = json["data"]?.objectValue, let object = data["object"]?.objectValue else {
            throw fail("it has no data.object")
        }
        let version = json["api_version"]
        guard version == nil || version!.isNull || version!.stringValue != nil else {
            throw fail("its api_version is not a string")
        }
        self.json = json
        self.id = id
        self.type = StripeEventType(rawValue: type)
        self.created = created
        self.livemode = livemode
        self.apiVersion = version?.stringValue
        self.object = object
        self.previousAttributes = data["previous_attributes"]?.objectValue
        self.account = json["account"]?.stringValue
    }

    /// The subscription of a `customer.subscription.*` event (any event whose object is one).
    public var subscription: StripeSubscription? { StripeSubscription(object) }
    /// The Checkout session of a `checkout.session.*` event.
    public var checkoutSession: StripeCheckoutSession? { StripeCheckoutSession(object) }
    /// The invoice of an `invoice.*` event.
    public var invoice: StripeInvoice? { StripeInvoice(object) }
    /// The charge of a `charge.*` event.
    public var charge: StripeCharge? { StripeCharge(object) }
}

/// An event's `type`, with the ones a subscription server reads named. Any other type keeps
/// its text.
public struct StripeEventType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The type as Stripe spells it.
    public let rawValue: String
    /// A type with this text.
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A subscription was created.
    public static let customerSubscriptionCreated = Self(rawValue: "customer.subscription.created")
    /// A subscription changed: renewed, upgraded, went past due, set to cancel at period end, ….
    public static let customerSubscriptionUpdated = Self(rawValue: "customer.subscription.updated")
    /// A subscription ended.
    public static let customerSubscriptionDeleted = Self(rawValue: "customer.subscription.deleted")
    /// A subscription was paused (a trial ended without a payment method).
    public static let customerSubscriptionPaused = Self(rawValue: "customer.subscription.paused")
    /// A paused subscription was resumed.
    public static let customerSubscriptionResumed = Self(rawValue: "customer.subscription.resumed")
    /// An invoice was paid.
    public static let invoicePaid = Self(rawValue: "invoice.paid")
    /// An invoice's payment failed (Stripe retries it).
    public static let invoicePaymentFailed = Self(rawValue: "invoice.payment_failed")
    /// A Checkout session completed.
    public static let checkoutSessionCompleted = Self(rawValue: "checkout.session.completed")
    /// A charge was refunded, in whole or in part (`amount_refunded` says how much in all).
    public static let chargeRefunded = Self(rawValue: "charge.refunded")
}

/// Stripe's instants: whole seconds since 1970.
enum StripeTime {
    /// The seconds a Stripe instant may have: from 1970 to the end of 9999. Stripe writes no
    /// other, and a larger one would read as a period that never ends.
    static let seconds: ClosedRange<Int64> = 0...253_402_300_799

    /// The instant of a number of seconds in ``seconds``, or `nil` for anything else (a
    /// fraction, `null`, a negative number, one past 9999).
    static func timestamp(_ value: JSONValue?) -> Timestamp? {
        guard let seconds = value?.int64Value, Self.seconds.contains(seconds) else { return nil }
        return Timestamp(milliseconds: seconds * 1000)
    }

    /// An id member that Stripe may expand into its object: the string, or the object's `id`.
    static func id(_ value: JSONValue?) -> String? {
        value?.stringValue ?? value?.objectValue?["id"]?.stringValue
    }

    /// A metadata object's string values (Stripe's metadata holds only strings).
    static func metadata(_ value: JSONValue?) -> [String: String] {
        var metadata: [String: String] = [:]
        for member in value?.objectValue?.members ?? [] {
            if let text = member.value.stringValue { metadata[member.name] = text }
        }
        return metadata
    }
}
