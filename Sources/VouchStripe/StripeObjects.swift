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

        /// Reads one element of `items.data`. The price is an object (not expandable); its
        /// product is expandable.
        init(_ fields: PayloadFields) throws(PayloadFieldError) {
            let price = try fields.object("price", StripePrice.init)
            let plan = try fields.object("plan", StripePrice.init)
            id = try fields.string("id")
            self.price = price?.id ?? plan?.id
            product = price?.product ?? plan?.product
            quantity = try fields.int64("quantity")
            currentPeriodStart = try fields.seconds("current_period_start", in: StripeTime.seconds)
            currentPeriodEnd = try fields.seconds("current_period_end", in: StripeTime.seconds)
        }
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
    ///
    /// - Throws: `PayloadFieldError` naming a member of the wrong type (its path from the
    ///   subscription, such as `items.data[0].current_period_end`).
    public init?(_ object: JSONObject) throws(PayloadFieldError) {
        try self.init(PayloadFields(object))
    }

    init?(_ fields: PayloadFields) throws(PayloadFieldError) {
        guard try fields.string("object") == "subscription", let id = try fields.string("id") else { return nil }
        json = fields.object
        self.id = id
        customer = try fields.idOrObject("customer")
        status = Status(rawValue: try fields.string("status") ?? "")
        items =
            try fields.object("items") { (list) throws(PayloadFieldError) in try list.objects("data", Item.init) }
            .flatMap { $0 } ?? []
        metadata = try fields.stringValues("metadata") ?? [:]
        cancelAtPeriodEnd = try fields.bool("cancel_at_period_end") ?? false
        cancelAt = try fields.seconds("cancel_at", in: StripeTime.seconds)
        canceledAt = try fields.seconds("canceled_at", in: StripeTime.seconds)
        endedAt = try fields.seconds("ended_at", in: StripeTime.seconds)
        trialEnd = try fields.seconds("trial_end", in: StripeTime.seconds)
        subscriptionPeriodEnd = try fields.seconds("current_period_end", in: StripeTime.seconds)
        startDate = try fields.seconds("start_date", in: StripeTime.seconds)
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
    ///
    /// - Throws: `PayloadFieldError` naming a member of the wrong type.
    public init?(_ object: JSONObject) throws(PayloadFieldError) {
        try self.init(PayloadFields(object))
    }

    init?(_ fields: PayloadFields) throws(PayloadFieldError) {
        guard try fields.string("object") == "checkout.session", let id = try fields.string("id") else { return nil }
        json = fields.object
        self.id = id
        clientReferenceId = try fields.string("client_reference_id")
        metadata = try fields.stringValues("metadata") ?? [:]
        subscription = try fields.idOrObject("subscription")
        customer = try fields.idOrObject("customer")
        mode = try fields.string("mode")
        status = try fields.string("status")
        paymentStatus = try fields.string("payment_status")
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
    ///
    /// - Throws: `PayloadFieldError` naming a member of the wrong type (its path from the
    ///   invoice, such as `lines.data[0].period.end`).
    public init?(_ object: JSONObject) throws(PayloadFieldError) {
        try self.init(PayloadFields(object))
    }

    init?(_ fields: PayloadFields) throws(PayloadFieldError) {
        guard try fields.string("object") == "invoice", let id = try fields.string("id") else { return nil }
        json = fields.object
        self.id = id
        customer = try fields.idOrObject("customer")
        let details = try fields.object("parent") { (parent) throws(PayloadFieldError) in
            try parent.object("subscription_details", SubscriptionDetails.init)
        }.flatMap { $0 }
        let olderDetails = try fields.object("subscription_details", SubscriptionDetails.init)
        let olderSubscription = try fields.idOrObject("subscription")
        subscription = details?.subscription ?? olderSubscription
        subscriptionMetadata = details?.metadata ?? olderDetails?.metadata ?? [:]
        status = try fields.string("status")
        billingReason = try fields.string("billing_reason")
        amountPaid = try fields.int64("amount_paid")
        let ends = try fields.object("lines") { (lines) throws(PayloadFieldError) in
            try lines.objects("data") { (line) throws(PayloadFieldError) in
                try line.object("period") { (period) throws(PayloadFieldError) in
                    try period.seconds("end", in: StripeTime.seconds)
                }
            }
        }
        periodEnd = (ends.flatMap { $0 } ?? []).compactMap { $0.flatMap { $0 } }.max()
    }

    /// `parent.subscription_details` (and, before API version `2025-03-31.basil`, the
    /// invoice's own `subscription_details`).
    private struct SubscriptionDetails {
        let subscription: String?
        let metadata: [String: String]?

        init(_ fields: PayloadFields) throws(PayloadFieldError) {
            subscription = try fields.idOrObject("subscription")
            metadata = try fields.stringValues("metadata")
        }
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
    ///
    /// - Throws: `PayloadFieldError` naming a member of the wrong type.
    public init?(_ object: JSONObject) throws(PayloadFieldError) {
        try self.init(PayloadFields(object))
    }

    init?(_ fields: PayloadFields) throws(PayloadFieldError) {
        guard try fields.string("object") == "charge", let id = try fields.string("id") else { return nil }
        json = fields.object
        self.id = id
        amount = try fields.int64("amount")
        amountRefunded = try fields.int64("amount_refunded")
        currency = try fields.string("currency")
        customer = try fields.idOrObject("customer")
        invoice = try fields.idOrObject("invoice")
        metadata = try fields.stringValues("metadata") ?? [:]
    }
}

/// A subscription item's `price` (or, for older subscriptions, its `plan`): its id and its
/// product, which is expandable.
private struct StripePrice {
    let id: String?
    let product: String?

    init(_ fields: PayloadFields) throws(PayloadFieldError) {
        id = try fields.string("id")
        product = try fields.idOrObject("product")
    }
}
