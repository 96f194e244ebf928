internal import Foundation
internal import Vouch
public import VouchStripe

// Stripe subscriptions and refunds in the ledger. Each subscription keeps the newest statement of
// each kind that its events make (the subscription object, the latest invoice's payment, the
// Checkout session that created it), newest by `created`, then by event id; every answer is
// derived from those, so the events may come in any order, any number of times, split across
// ledgers that are merged.

/// What a Stripe subscription or charge is kept by: the environment (`livemode` true is
/// Production, false Sandbox) and its id.
struct StripeKey: Hashable, Sendable, Comparable {
    var environment: String
    var id: String

    static func < (lhs: StripeKey, rhs: StripeKey) -> Bool { (lhs.environment, lhs.id) < (rhs.environment, rhs.id) }
}

/// The order of Stripe statements: the event's `created` (whole seconds), then its id.
struct StripeStamp: Hashable, Sendable, Comparable {
    var created: Int64
    var eventId: String

    static func < (lhs: StripeStamp, rhs: StripeStamp) -> Bool {
        (lhs.created, lhs.eventId) < (rhs.created, rhs.eventId)
    }
}

/// What a subscription's events said: the newest of each kind.
struct StripeSubscriptionRecord: Hashable, Sendable {
    /// The subscription object of the newest `customer.subscription.*` event.
    struct Snapshot: Hashable, Sendable {
        struct Item: Hashable, Sendable {
            var price: String?
            var product: String?
            var periodStart: Int64?
            var periodEnd: Int64?
        }

        var stamp: StripeStamp
        var status: String
        var items: [Item]
        var periodEnd: Int64?
        var cancelAt: Int64?
        var endedAt: Int64?
        var startDate: Int64
        var customer: String?
        var account: String?
    }

    /// The newest `invoice.paid` or `invoice.payment_failed` of the subscription.
    struct Payment: Hashable, Sendable {
        var stamp: StripeStamp
        var paid: Bool
        var periodEnd: Int64?
        var account: String?
    }

    /// The newest `checkout.session.completed` that names the subscription.
    struct Checkout: Hashable, Sendable {
        var stamp: StripeStamp
        var account: String?
    }

    var snapshot: Snapshot?
    var payment: Payment?
    var checkout: Checkout?

    /// The newer of each kind of statement.
    mutating func join(_ other: StripeSubscriptionRecord) {
        if let theirs = other.snapshot, snapshot.map({ theirs.stamp > $0.stamp }) ?? true { snapshot = theirs }
        if let theirs = other.payment, payment.map({ theirs.stamp > $0.stamp }) ?? true { payment = theirs }
        if let theirs = other.checkout, checkout.map({ theirs.stamp > $0.stamp }) ?? true { checkout = theirs }
    }

    /// The account: the subscription's metadata, else its invoices' copy of it, else the
    /// Checkout session's `client_reference_id` or metadata.
    var account: String? { snapshot?.account ?? payment?.account ?? checkout?.account }

    /// Statuses that give access until the period's end.
    static func state(_ status: String) -> Entitlement.State? {
        switch StripeSubscription.Status(rawValue: status) {
        case .active: .active
        case .trialing: .trial
        case .pastDue: .pastDue
        default: nil  // canceled, unpaid, incomplete, incomplete_expired, paused, and unknown ones
        }
    }

    /// The grants the subscription gives: one per item, while its status gives access, until the
    /// period's end (the item's since 2025, the subscription's before), or the `cancel_at`
    /// before it. A payment newer than the subscription's own statement decides the status (a
    /// paid invoice: active until its period's end; a failed one: past due) unless the
    /// subscription has ended. A subscription that has ended (`canceled` with `ended_at`) gave
    /// access from its start until it ended: an instant before that is answered `active`. An
    /// item's product is its price when the catalog lists the price, else its product when the
    /// catalog lists that, else its price.
    func grants(key: StripeKey, account: AccountKey, catalog: ProductCatalog) -> [EntitlementGrant] {
        guard let snapshot else { return [] }
        var status = snapshot.status
        var extended: Int64?
        var signed = snapshot.stamp.created
        let ended = ["canceled", "incomplete_expired"].contains(status)
        if let payment, payment.stamp > snapshot.stamp, !ended {
            status = payment.paid ? "active" : (status == "trialing" || status == "active" ? "past_due" : status)
            if payment.paid { extended = payment.periodEnd }
            signed = payment.stamp.created
        }
        let state: Entitlement.State
        if let known = Self.state(status) {
            state = known
        } else if status == StripeSubscription.Status.canceled.rawValue, snapshot.endedAt != nil {
            state = .active
        } else {
            return []
        }
        return snapshot.items.enumerated().compactMap { index, item in
            guard let productId = Self.productId(item, catalog: catalog) else { return nil }
            var end = [item.periodEnd ?? snapshot.periodEnd, extended].compactMap { $0 }.max()
            for limit in [snapshot.cancelAt, snapshot.endedAt].compactMap({ $0 }) { end = min(end ?? limit, limit) }
            return EntitlementGrant(
                source: .stripe, id: snapshot.items.count == 1 ? key.id : "\(key.id)/\(index)", account: account,
                productId: productId, state: state,
                startDate: Timestamp(milliseconds: snapshot.startDate),
                expiresDate: end.map(Timestamp.init(milliseconds:)), signedDate: Timestamp(milliseconds: signed))
        }
    }

    static func productId(_ item: Snapshot.Item, catalog: ProductCatalog) -> String? {
        if let price = item.price, catalog.tier(of: price) != nil { return price }
        if let product = item.product, catalog.tier(of: product) != nil { return product }
        return item.price ?? item.product
    }
}

/// The newest statement of a refunded charge.
struct StripeRefundRecord: Hashable, Sendable {
    var stamp: StripeStamp
    var amount: Int64?
    var amountRefunded: Int64
    var currency: String
    var customer: String?
    var invoice: String?
    var account: String?
}

extension EntitlementLedger {
    /// The metadata key a Stripe subscription names its account with when none is given:
    /// `account_id`.
    public static let defaultStripeAccountKey = "account_id"

    /// Adds what a verified Stripe event says: the state of a subscription
    /// (`customer.subscription.created`, `.updated`, `.deleted`, `.paused`, `.resumed`), its
    /// payments (`invoice.paid`, `invoice.payment_failed`), the account of the Checkout
    /// session that created it (`checkout.session.completed`), and refunds (`charge.refunded`).
    /// Other events are counted as ignored.
    ///
    /// The account is the subscription's metadata value for `accountKey` (as a UUID, in lower
    /// case, so that it is the app's `appAccountToken`; other ids as they are), else the
    /// Checkout session's `client_reference_id` or metadata value; a subscription without one
    /// is an account of its own. `livemode` events are Production, test-mode events Sandbox.
    public mutating func add(_ verified: VerifiedStripeEvent, accountKey: String = defaultStripeAccountKey) {
        statistics.stripeEvents += 1
        let event = verified.event
        let environment =
            event.livemode ? AppStoreEnvironment.production.rawValue : AppStoreEnvironment.sandbox.rawValue
        let stamp = StripeStamp(created: event.created.milliseconds, eventId: event.id)
        var record = StripeSubscriptionRecord()
        let id: String
        switch event.type {
        case .customerSubscriptionCreated, .customerSubscriptionUpdated, .customerSubscriptionDeleted,
            .customerSubscriptionPaused, .customerSubscriptionResumed:
            guard let subscription = event.subscription else { return ignore() }
            id = subscription.id
            record.snapshot = .init(
                stamp: stamp, status: subscription.status.rawValue,
                items: subscription.items.map {
                    .init(
                        price: $0.price, product: $0.product, periodStart: $0.currentPeriodStart?.milliseconds,
                        periodEnd: $0.currentPeriodEnd?.milliseconds)
                },
                periodEnd: subscription.subscriptionPeriodEnd?.milliseconds,
                cancelAt: subscription.cancelAt?.milliseconds, endedAt: subscription.endedAt?.milliseconds,
                startDate: (subscription.startDate ?? event.created).milliseconds, customer: subscription.customer,
                account: Self.stripeAccount(subscription.metadata[accountKey]))
        case .invoicePaid, .invoicePaymentFailed:
            guard let invoice = event.invoice, let subscription = invoice.subscription else { return ignore() }
            id = subscription
            record.payment = .init(
                stamp: stamp, paid: event.type == .invoicePaid, periodEnd: invoice.periodEnd?.milliseconds,
                account: Self.stripeAccount(invoice.subscriptionMetadata[accountKey]))
        case .checkoutSessionCompleted:
            guard let session = event.checkoutSession, let subscription = session.subscription else { return ignore() }
            id = subscription
            record.checkout = .init(
                stamp: stamp, account: Self.stripeAccount(session.clientReferenceId ?? session.metadata[accountKey]))
        case .chargeRefunded:
            guard let charge = event.charge, let refunded = charge.amountRefunded, refunded > 0 else { return ignore() }
            insert(
                StripeRefundRecord(
                    stamp: stamp, amount: charge.amount, amountRefunded: refunded,
                    currency: (charge.currency ?? "").uppercased(), customer: charge.customer, invoice: charge.invoice,
                    account: Self.stripeAccount(charge.metadata[accountKey])),
                for: StripeKey(environment: environment, id: charge.id))
            return
        default:
            return ignore()
        }
        insert(record, for: StripeKey(environment: environment, id: id))

        func ignore() { statistics.ignored += 1 }
    }

    /// An account id as the ledger keeps it: a UUID in lower case, as Apple writes
    /// `appAccountToken`; any other text as it is; nothing for an empty one.
    static func stripeAccount(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return UUID(uuidString: text) != nil ? text.lowercased() : text
    }

    mutating func insert(_ record: StripeSubscriptionRecord, for key: StripeKey) {
        var joined = stripeSubscriptions[key] ?? StripeSubscriptionRecord()
        joined.join(record)
        guard joined != stripeSubscriptions[key] else { return }
        stripeSubscriptions[key] = joined
        environments.insert(key.environment)
        let account = AccountKey(
            environment: key.environment, appAccountToken: joined.account, originalTransactionId: key.id)
        let before = subscriptionAccounts[key]
        guard before != account else { return }
        if let before { Self.remove(key, from: &accountSubscriptions, of: before) }
        subscriptionAccounts[key] = account
        Self.insert(key, into: &accountSubscriptions, of: account)
    }

    mutating func insert(_ record: StripeRefundRecord, for key: StripeKey) {
        if let known = stripeRefunds[key], known.stamp >= record.stamp { return }
        stripeRefunds[key] = record
    }

    /// The refunded Stripe charges with an event at or after `since`: each charge once, with
    /// all that was refunded of it by its newest event, dated by that event.
    func stripeRevocations(since: Timestamp?) -> [Revocation] {
        var found: [Revocation] = []
        let newest = stripeRefunds.isEmpty ? [:] : newestSubscriptionByCustomer()
        for (key, refund) in stripeRefunds {
            if let since, refund.stamp.created < since.milliseconds { continue }
            let subscription = refund.customer.flatMap { newest[StripeKey(environment: key.environment, id: $0)] }
            let account = refund.account ?? subscription.flatMap { stripeSubscriptions[$0]?.account }
            let item = subscription.flatMap { stripeSubscriptions[$0]?.snapshot?.items.first }
            let exponent = Self.minorUnitExponent(refund.currency)
            let milliunits = { (amount: Int64) in amount * Self.power(10, 3 - exponent) }
            let full = refund.amount.map { refund.amountRefunded >= $0 } ?? true
            var revocation = Revocation(
                environment: AppStoreEnvironment(rawValue: key.environment), appAccountToken: account,
                originalTransactionId: subscription?.id ?? key.id, transactionId: key.id,
                productId: item.flatMap { StripeSubscriptionRecord.productId($0, catalog: catalog) } ?? "",
                type: .autoRenewableSubscription, ownership: .purchased, kind: .refund, state: .revoked,
                revocationDate: Timestamp(milliseconds: refund.stamp.created), revocationReason: nil,
                revocationType: full ? .refundFull : .refundProrated,
                revocationPercentage: refund.amount.flatMap {
                    $0 > 0 ? Int32(clamping: refund.amountRefunded * 100_000 / $0) : nil
                },
                price: refund.amount.map(milliunits), currency: refund.currency,
                refundedAmount: MilliunitAmount(milliunits: milliunits(refund.amountRefunded)), reversedDate: nil)
            revocation.source = .stripe
            found.append(revocation)
        }
        return found
    }

    /// The subscription a refunded charge is told with: its customer's newest subscription (by
    /// its newest subscription object), by environment and customer id. A charge names no
    /// subscription (nor, since `2025-03-31.basil`, its invoice).
    private func newestSubscriptionByCustomer() -> [StripeKey: StripeKey] {
        var newest: [StripeKey: (stamp: StripeStamp, key: StripeKey)] = [:]
        for (key, record) in stripeSubscriptions {
            guard let snapshot = record.snapshot, let customer = snapshot.customer else { continue }
            let slot = StripeKey(environment: key.environment, id: customer)
            if newest[slot].map({ snapshot.stamp > $0.stamp }) ?? true { newest[slot] = (snapshot.stamp, key) }
        }
        return newest.mapValues(\.key)
    }

    /// The decimal places of a currency's smallest unit, as Stripe counts amounts: none for
    /// Stripe's zero-decimal currencies, three for its three-decimal ones, else two
    /// (https://docs.stripe.com/currencies#zero-decimal).
    static func minorUnitExponent(_ currency: String) -> Int {
        switch currency.uppercased() {
        case "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF",
            "XPF":
            0
        case "BHD", "JOD", "KWD", "OMR", "TND": 3
        default: 2
        }
    }

    private static func power(_ base: Int64, _ exponent: Int) -> Int64 {
        (0..<exponent).reduce(1) { result, _ in result * base }
    }
}
