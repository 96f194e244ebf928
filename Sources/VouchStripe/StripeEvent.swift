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

    /// The object typed, when it is one this version reads.
    private let content: Content

    /// Reads an event: throws `stripe_not_an_event` when `json` is not one, and
    /// `stripe_bad_object` when its object is a subscription, Checkout session, invoice or
    /// charge with a member of the wrong type (the reason names the member's path).
    package init(_ json: JSONObject) throws(VerificationError) {
        func fail(_ reason: String) -> VerificationError {
            VerificationError(.stripeNotAnEvent, "the signed body is not a Stripe event: \(reason)")
        }
        let fields = PayloadFields(json)
        guard let kind = try? fields.string("object") else { throw fail("it has no \"object\" member") }
        guard kind == "event" else {
            throw fail(
                "its object is \"\(kind)\""
                    + (kind == "v2.core.event" ? " (a thin event: fetch it from Stripe to get its data)" : ""))
        }
        guard let id = try? fields.string("id"), !id.isEmpty else { throw fail("it has no id") }
        guard let type = try? fields.string("type"), !type.isEmpty else { throw fail("it has no type") }
        guard let created = try? fields.seconds("created", in: StripeTime.seconds) else {
            throw fail("its created is not a number of seconds from 1970 to 9999")
        }
        guard let livemode = try? fields.bool("livemode") else { throw fail("its livemode is not true or false") }
        guard let data = try? fields.jsonObject("data"), let object = try? PayloadFields(data).jsonObject("object")
        else {
            throw fail("it has no data.object")
        }
        let apiVersion: String?
        let previousAttributes: JSONObject?
        let account: String?
        do {
            apiVersion = try fields.string("api_version")
        } catch {
            throw fail("its api_version is not a string")
        }
        do {
            previousAttributes = try PayloadFields(data).jsonObject("previous_attributes")
        } catch {
            throw fail("its data.previous_attributes is not an object")
        }
        do {
            account = try fields.string("account")
        } catch {
            throw fail("its account is not a string")
        }
        do {
            content = try Content(PayloadFields(object))
        } catch {
            throw VerificationError(
                .stripeBadObject, "the event's object has a member of the wrong type: data.object.\(error)")
        }
        self.json = json
        self.id = id
        self.type = StripeEventType(rawValue: type)
        self.created = created
        self.livemode = livemode
        self.apiVersion = apiVersion
        self.object = object
        self.previousAttributes = previousAttributes
        self.account = account
    }

    /// The subscription of a `customer.subscription.*` event (any event whose object is one).
    public var subscription: StripeSubscription? {
        if case .subscription(let subscription) = content { subscription } else { nil }
    }
    /// The Checkout session of a `checkout.session.*` event.
    public var checkoutSession: StripeCheckoutSession? {
        if case .checkoutSession(let session) = content { session } else { nil }
    }
    /// The invoice of an `invoice.*` event.
    public var invoice: StripeInvoice? {
        if case .invoice(let invoice) = content { invoice } else { nil }
    }
    /// The charge of a `charge.*` event.
    public var charge: StripeCharge? {
        if case .charge(let charge) = content { charge } else { nil }
    }

    /// An event's object, read by its `object` member when this version models it.
    private enum Content: Sendable {
        case subscription(StripeSubscription)
        case checkoutSession(StripeCheckoutSession)
        case invoice(StripeInvoice)
        case charge(StripeCharge)
        /// Another object, or a modelled one without an id.
        case other

        init(_ fields: PayloadFields) throws(PayloadFieldError) {
            self =
                switch try fields.string("object") {
                case "subscription": try StripeSubscription(fields).map(Self.subscription) ?? .other
                case "checkout.session": try StripeCheckoutSession(fields).map(Self.checkoutSession) ?? .other
                case "invoice": try StripeInvoice(fields).map(Self.invoice) ?? .other
                case "charge": try StripeCharge(fields).map(Self.charge) ?? .other
                default: .other
                }
        }
    }
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

/// Stripe's instants: whole seconds since 1970, read by `PayloadFields.seconds(_:in:)`.
enum StripeTime {
    /// The seconds a Stripe instant may have: from 1970 to the end of 9999. Stripe writes no
    /// other, and a larger one would read as a period that never ends.
    static let seconds: ClosedRange<Int64> = 0...253_402_300_799
}
