public import Vouch

/// A subscription (`"object":"subscription"`), as a subscription server reads it: whose it is,
/// its status, what it sells and until when it is paid.
///
/// Reads both shapes Stripe has rendered: before API version `2025-03-31.basil` the billing
/// period is the subscription's own (`current_period_end`); since, each item has its own
/// (`items.data[].current_period_end`) and the subscription has none.
public struct StripeSubscription: Sendable {
    /// One item of the subscription: a price of a product.
    public struct Item: Sendable, Hashable {
        /// The item's id, `si_…`.
        public let id: String?
        /// The price's id, `price_…` (an older subscription's plan id, `plan_…`, when it has no price).
        public let price: String?
        /// The price's product id, `prod_…`.
        public let product: String?
        /// How many of the price.
        public let quantity: Int64?
        /// Start of the item's billing period (since API version `2025-03-31.basil`).
        public let currentPeriodStart: Timestamp?
        /// End of the item's billing period (since API version `2025-03-31.basil`).
        public let currentPeriodEnd: Timestamp?
    }

    /// The subscription object.
    public let json: JSONObject
    /// The subscription's id, `sub_…`.
    public let id: String
    /// The customer's id, `cus_…`.
    public let customer: String?
    /// The subscription's status.
    public let status: Status
    /// The items, in order.
    public let items: [Item]
    /// The subscription's metadata (where a server keeps its own account id).
    public let metadata: [String: String]
    /// Whether the subscription is set to end at the end of its period.
    public let cancelAtPeriodEnd: Bool
    /// When the subscription is set to end, if it is.
    public let cancelAt: Timestamp?
    /// When it was canceled, if it was.
    public let canceledAt: Timestamp?
    /// When it ended, if it did.
    public let endedAt: Timestamp?
    /// When its trial ends, if it has one.
    public let trialEnd: Timestamp?
    /// The subscription's own period end (API versions before `2025-03-31.basil`).
    public let subscriptionPeriodEnd: Timestamp?
    /// When the subscription started (`start_date`).
    public let startDate: Timestamp?

    /// Reads `object` as a subscription; `nil` when it is another object or has no id.
    public init?(_ object: JSONObject) {
        guard object["object"]?.stringValue == "subscription", let id = object["id"]?.stringValue else { return nil }
        json = object
        self.id = id
        customer = StripeTime.id(object["customer"])
        status = Status(rawValue: object["status"]?.stringValue ?? "")
        items = (object["items"]?.objectValue?["data"]?.arrayValue ?? []).compactMap { value in
            guard let item = value.objectValue else { return nil }
            let price = item["price"]?.objectValue
            let plan = item["plan"]?.objectValue
            return Item(
                id: item["id"]?.stringValue,
                price: price?["id"]?.stringValue ?? plan?["id"]?.stringValue,
                product: StripeTime.id(price?["product"]) ?? StripeTime.id(plan?["product"]),
                quantity: item["quantity"]?.int64Value,
                currentPeriodStart: StripeTime.timestamp(item["current_period_start"]),
                currentPeriodEnd: StripeTime.timestamp(item["current_period_end"]))
        }
        metadata = StripeTime.metadata(object["metadata"])
        cancelAtPeriodEnd = object["cancel_at_period_end"]?.boolValue ?? false
        cancelAt = StripeTime.timestamp(object["cancel_at"])
        canceledAt = StripeTime.timestamp(object["canceled_at"])
        endedAt = StripeTime.timestamp(object["ended_at"])
        trialEnd = StripeTime.timestamp(object["trial_end"])
        subscriptionPeriodEnd = StripeTime.timestamp(object["current_period_end"])
        startDate = StripeTime.timestamp(object["start_date"])
    }

    /// Until when the subscription is paid: its own period end in API versions before
    /// `2025-03-31.basil`, else the latest of its items' period ends.
    public var currentPeriodEnd: Timestamp? {
        subscriptionPeriodEnd ?? items.compactMap(\.currentPeriodEnd).max()
    }

    /// A subscription's status, with Stripe's eight named. Any other keeps its text.
    public struct Status: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The status as Stripe spells it.
        public let rawValue: String
        /// A status with this text.
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Paid and current.
        public static let active = Self(rawValue: "active")
        /// In a trial.
        public static let trialing = Self(rawValue: "trialing")
        /// A payment failed and Stripe is retrying it.
        public static let pastDue = Self(rawValue: "past_due")
        /// Ended.
        public static let canceled = Self(rawValue: "canceled")
        /// Retries ran out and the subscription was left unpaid.
        public static let unpaid = Self(rawValue: "unpaid")
        /// The first payment has not completed (it has 23 hours).
        public static let incomplete = Self(rawValue: "incomplete")
        /// The first payment never completed.
        public static let incompleteExpired = Self(rawValue: "incomplete_expired")
        /// A trial ended without a payment method.
        public static let paused = Self(rawValue: "paused")
    }
}

/// A Checkout session (`"object":"checkout.session"`): how a web purchase ties a Stripe
/// subscription to the buyer's account on the server.
public struct StripeCheckoutSession: Sendable {
    /// The session object.
    public let json: JSONObject
    /// The session's id, `cs_…`.
    public let id: String
    /// The reference the server gave when it created the session (its account id, typically).
    public let clientReferenceId: String?
    /// The session's metadata.
    public let metadata: [String: String]
    /// The subscription the session created (`mode` `subscription`), `sub_…`.
    public let subscription: String?
    /// The customer, `cus_…`.
    public let customer: String?
    /// `subscription`, `payment` or `setup`.
    public let mode: String?
    /// `open`, `complete` or `expired`.
    public let status: String?
    /// `paid`, `unpaid` or `no_payment_required`.
    public let paymentStatus: String?

    /// Reads `object` as a Checkout session; `nil` when it is another object or has no id.
    public init?(_ object: JSONObject) {
        guard object["object"]?.stringValue == "checkout.session", let id = object["id"]?.stringValue else {
            return nil
        }
        json = object
        self.id = id
        clientReferenceId = object["client_reference_id"]?.stringValue
        metadata = StripeTime.metadata(object["metadata"])
        subscription = StripeTime.id(object["subscription"])
        customer = StripeTime.id(object["customer"])
        mode = object["mode"]?.stringValue
        status = object["status"]?.stringValue
        paymentStatus = object["payment_status"]?.stringValue
    }
}

/// An invoice (`"object":"invoice"`): for `invoice.paid` and `invoice.payment_failed`, which
/// subscription it bills and for which period.
///
/// Reads both shapes: before API version `2025-03-31.basil` the subscription is the invoice's
/// `subscription`; since, it is `parent.subscription_details.subscription`.
public struct StripeInvoice: Sendable {
    /// The invoice object.
    public let json: JSONObject
    /// The invoice's id, `in_…`.
    public let id: String
    /// The customer, `cus_…`.
    public let customer: String?
    /// The subscription the invoice bills, `sub_…`.
    public let subscription: String?
    /// The subscription's metadata as the invoice copied it, when it did.
    public let subscriptionMetadata: [String: String]
    /// `draft`, `open`, `paid`, `uncollectible` or `void`.
    public let status: String?
    /// Why it was made: `subscription_create`, `subscription_cycle`, `subscription_update`, ….
    public let billingReason: String?
    /// The latest end of the periods its lines bill (`lines.data[].period.end`).
    public let periodEnd: Timestamp?
    /// What was paid, in the smallest unit of the invoice's currency (`amount_paid`): `0` for a
    /// trial's invoice.
    public let amountPaid: Int64?

    /// Reads `object` as an invoice; `nil` when it is another object or has no id.
    public init?(_ object: JSONObject) {
        guard object["object"]?.stringValue == "invoice", let id = object["id"]?.stringValue else { return nil }
        json = object
        self.id = id
        customer = StripeTime.id(object["customer"])
        let details = object["parent"]?.objectValue?["subscription_details"]?.objectValue
        subscription = StripeTime.id(details?["subscription"]) ?? StripeTime.id(object["subscription"])
        subscriptionMetadata = StripeTime.metadata(
            details?["metadata"] ?? object["subscription_details"]?.objectValue?["metadata"])
        status = object["status"]?.stringValue
        billingReason = object["billing_reason"]?.stringValue
        amountPaid = object["amount_paid"]?.int64Value
        periodEnd = (object["lines"]?.objectValue?["data"]?.arrayValue ?? []).compactMap {
            StripeTime.timestamp($0.objectValue?["period"]?.objectValue?["end"])
        }.max()
    }
}

/// A charge (`object` `charge`), as `charge.refunded` carries it. Amounts are in the smallest
/// unit of `currency`, as Stripe states them (cents of USD, yen of JPY).
public struct StripeCharge: Sendable {
    /// The whole object, every member as Stripe sent it.
    public let json: JSONObject
    /// `ch_…`.
    public let id: String
    /// `amount`: what was charged.
    public let amount: Int64?
    /// `amount_refunded`: what has been refunded of it in all.
    public let amountRefunded: Int64?
    /// `currency`, as Stripe writes it (lower case, `usd`).
    public let currency: String?
    /// `cus_…`, when the charge has a customer.
    public let customer: String?
    /// `in_…`: the invoice the charge paid (API versions before `2025-03-31.basil`).
    public let invoice: String?
    /// `metadata`.
    public let metadata: [String: String]

    /// Reads `object` as a charge; `nil` when it is another object or has no id.
    public init?(_ object: JSONObject) {
        guard object["object"]?.stringValue == "charge", let id = object["id"]?.stringValue else { return nil }
        json = object
        self.id = id
        amount = object["amount"]?.int64Value
        amountRefunded = object["amount_refunded"]?.int64Value
        currency = object["currency"]?.stringValue
        customer = StripeTime.id(object["customer"])
        invoice = StripeTime.id(object["invoice"])
        metadata = StripeTime.metadata(object["metadata"])
    }
}
