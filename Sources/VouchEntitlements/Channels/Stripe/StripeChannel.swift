internal import Foundation
internal import Vouch
public import VouchStripe

// Stripe subscriptions and refunds in the ledger. Each subscription keeps the newest statement of
// each kind that its events make (the subscription object, the latest invoice's payment, the
// Checkout session that created it), newest by the ledger's one order of statements
// (`StatementOrder`: `created`, then the one that grants less, then the event id); every answer
// is derived from those, so the events may come in any order, any number of times, split across
// ledgers that are merged.

/// What a Stripe subscription or charge is kept by: the environment (`livemode` true is
/// Production, false Sandbox) and its id.
struct StripeKey: Hashable, Sendable, Comparable {
    var environment: String
    var id: String

    static func < (lhs: StripeKey, rhs: StripeKey) -> Bool { (lhs.environment, lhs.id) < (rhs.environment, rhs.id) }
}

/// When a Stripe statement was made: its event's `created` (whole seconds) and id. Statements of
/// one kind are ordered by ``StatementOrder``; a payment and a subscription object, which say
/// different things, by this alone (`created`, then the id).
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
    struct Snapshot: Hashable, Sendable, OrderedStatement {
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

        /// Created, then a status that grants nothing, then the earlier end, then the event id.
        var order: StatementOrder {
            let ends = [cancelAt, endedAt, items.compactMap(\.periodEnd).max() ?? periodEnd].compactMap { $0 }
            return StatementOrder(
                instant: stamp.created, revokes: StripeSubscriptionRecord.state(status) == nil, end: ends.min(),
                content: [stamp.eventId])
        }
    }

    /// The newest `invoice.paid` or `invoice.payment_failed` of the subscription.
    struct Payment: Hashable, Sendable, OrderedStatement {
        var stamp: StripeStamp
        var paid: Bool
        var periodEnd: Int64?
        /// `amount_paid`: `0` for a trial's invoice; `nil` when the invoice did not say.
        var amountPaid: Int64? = nil
        var account: String?

        /// Created, then a failed payment, then the earlier period end, then the event id.
        var order: StatementOrder {
            StatementOrder(instant: stamp.created, revokes: !paid, end: periodEnd, content: [stamp.eventId])
        }
    }

    /// The newest `checkout.session.completed` that names the subscription.
    struct Checkout: Hashable, Sendable, OrderedStatement {
        var stamp: StripeStamp
        var account: String?

        /// Created, then the event id.
        var order: StatementOrder { StatementOrder(instant: stamp.created, content: [stamp.eventId]) }
    }

    var snapshot: Snapshot?
    var payment: Payment?
    var checkout: Checkout?

    /// The newer of each kind of statement.
    mutating func join(_ other: StripeSubscriptionRecord) {
        snapshot = Snapshot.newer(snapshot, other.snapshot)
        payment = Payment.newer(payment, other.payment)
        checkout = Checkout.newer(checkout, other.checkout)
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
    /// paid invoice of a positive amount: active until its period's end; a failed one: past due)
    /// unless the subscription has ended; a paid invoice of nothing (a trial's) extends the
    /// period but leaves the status to the subscription, so a trial stays a trial. A
    /// subscription that has ended (`canceled` with `ended_at`) gave access from its start until
    /// it ended: an instant before that is answered `active`. An item without an end (no period
    /// end, `cancel_at` or `ended_at` in Stripe's range) grants nothing: access is never open
    /// ended. An item's product is its price when the catalog lists the price, else its product
    /// when the catalog lists that, else its price.
    func grants(key: StripeKey, account: AccountKey, catalog: ProductCatalog) -> [EntitlementGrant] {
        guard let snapshot else { return [] }
        var status = snapshot.status
        var extended: Int64?
        var signed = snapshot.stamp.created
        let ended = ["canceled", "incomplete_expired"].contains(status)
        if let payment, payment.stamp > snapshot.stamp, !ended {
            if !payment.paid {
                status = status == "trialing" || status == "active" ? "past_due" : status
            } else if payment.amountPaid ?? 1 > 0 {
                status = "active"
            }
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
            guard let end else { return nil }
            return EntitlementGrant(
                source: .stripe, id: snapshot.items.count == 1 ? key.id : "\(key.id)/\(index)", account: account,
                productId: productId, state: state,
                startDate: Timestamp(milliseconds: snapshot.startDate),
                expiresDate: Timestamp(milliseconds: end), signedDate: Timestamp(milliseconds: signed))
        }
    }

    static func productId(_ item: Snapshot.Item, catalog: ProductCatalog) -> String? {
        if let price = item.price, catalog.tier(of: price) != nil { return price }
        if let product = item.product, catalog.tier(of: product) != nil { return product }
        return item.price ?? item.product
    }
}

/// The newest statement of a refunded charge.
struct StripeRefundRecord: Hashable, Sendable, OrderedStatement {
    var stamp: StripeStamp
    var amount: Int64?
    var amountRefunded: Int64
    var currency: String
    var customer: String?
    var invoice: String?
    var account: String?

    /// Created, then the event id.
    var order: StatementOrder { StatementOrder(instant: stamp.created, revokes: true, content: [stamp.eventId]) }
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
    /// Checkout session's `client_reference_id` or metadata value, else the account a caller
    /// bound it to (``bindStripeSubscription(_:livemode:to:)``); a subscription without one is
    /// an account of its own. `livemode` events are Production, test-mode events Sandbox.
    public mutating func add(_ verified: VerifiedStripeEvent, accountKey: String = defaultStripeAccountKey) {
        let before = statistics
        statistics.stripeEvents += 1
        if !stripe.add(verified.event, accountKey: accountKey, statistics: &statistics) { statistics.ignored += 1 }
        // An event is the same in every retry of its delivery: its mode and id name it.
        counted(
            Array("stripe_event\n\(verified.event.livemode)\n\(verified.event.id)".utf8),
            added: statistics.since(before))
    }

    /// Adds what a verified Stripe event says and binds the subscription it is about (its own,
    /// its invoice's or its Checkout session's) to `account`, the caller's account id (a UUID
    /// is kept in lower case, as `appAccountToken`s are). An event about no subscription (a
    /// refunded charge) is added and binds nothing.
    ///
    /// Throws ``LedgerError/Code/accountConflict``, adding nothing, when the subscription
    /// belongs to another account (by its own data, the event's included, or an earlier
    /// claim): the same rule as App Store chains.
    public mutating func add(
        _ verified: VerifiedStripeEvent, account: String, accountKey: String = defaultStripeAccountKey
    ) throws(LedgerError) {
        let token = StripeChannel.stripeAccount(account) ?? account
        guard let key = StripeChannel.subscriptionKey(of: verified.event) else {
            return add(verified, accountKey: accountKey)
        }
        var told = StripeChannel()
        var ignored = Statistics()
        _ = told.add(verified.event, accountKey: accountKey, statistics: &ignored)
        for owner in [told.owner(of: key), stripe.owner(of: key)].compactMap({ $0 }) where owner != token {
            throw StripeChannel.conflict(key, claimed: token, owner: owner)
        }
        add(verified, accountKey: accountKey)
        try stripe.claim(key, for: token)
    }

    /// Binds the Stripe subscription `subscriptionId` (of live mode or test mode) to `account`,
    /// the caller's account id, whether or not its events are known yet: a subscription whose
    /// events name no account belongs to it from then on (a UUID is kept in lower case).
    ///
    /// Throws ``LedgerError/Code/accountConflict``, binding nothing, when the subscription's
    /// own data or an earlier claim names another account.
    public mutating func bindStripeSubscription(_ subscriptionId: String, livemode: Bool, to account: String)
        throws(LedgerError)
    {
        let key = StripeKey(environment: StripeChannel.environment(livemode: livemode), id: subscriptionId)
        try stripe.claim(key, for: StripeChannel.stripeAccount(account) ?? account)
    }
}

/// The Stripe channel: subscriptions and refunded charges, from verified webhook events.
struct StripeChannel: LedgerChannel {
    static let source = EntitlementSource.stripe

    /// Subscriptions, by environment and id: what their events said; each account's, and each
    /// subscription's account.
    private(set) var subscriptions: [StripeKey: StripeSubscriptionRecord] = [:]
    private var accountSubscriptions: [AccountKey: [StripeKey]] = [:]
    private(set) var subscriptionAccounts: [StripeKey: AccountKey] = [:]
    /// Refunded charges, by environment and charge id: the newest statement of each.
    private(set) var refunds: [StripeKey: StripeRefundRecord] = [:]
    /// Subscriptions and refunded charges by environment and customer id, and refunded charges
    /// by environment and the account their own metadata names: what one account's refunds are
    /// found through.
    private var subscriptionsByCustomer: [StripeKey: Set<StripeKey>] = [:]
    private var refundsByCustomer: [StripeKey: Set<StripeKey>] = [:]
    private var refundsByAccount: [StripeKey: Set<StripeKey>] = [:]
    /// The environments of the subscriptions and charges held.
    private(set) var environments: Set<String> = []
    /// The account a caller named for a subscription, by subscription: it stands when the
    /// subscription's own data names none.
    private(set) var claims: [StripeKey: String] = [:]

    /// Adds what `event` says (``EntitlementLedger/add(_:accountKey:)`` states what); `false`
    /// when it says nothing about a subscription or refund.
    mutating func add(_ event: StripeEvent, accountKey: String, statistics: inout EntitlementLedger.Statistics)
        -> Bool
    {
        let environment = Self.environment(livemode: event.livemode)
        let stamp = StripeStamp(created: event.created.milliseconds, eventId: event.id)
        var record = StripeSubscriptionRecord()
        let id: String
        switch event.type {
        case .customerSubscriptionCreated, .customerSubscriptionUpdated, .customerSubscriptionDeleted,
            .customerSubscriptionPaused, .customerSubscriptionResumed:
            guard let subscription = event.subscription else { return false }
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
            // Access with no end the rules can use (none given, or out of Stripe's range).
            if StripeSubscriptionRecord.state(subscription.status.rawValue) != nil,
                subscription.currentPeriodEnd == nil,
                subscription.cancelAt == nil
            {
                statistics.incomplete += 1
            }
        case .invoicePaid, .invoicePaymentFailed:
            guard let invoice = event.invoice, let subscription = invoice.subscription else { return false }
            id = subscription
            record.payment = .init(
                stamp: stamp, paid: event.type == .invoicePaid, periodEnd: invoice.periodEnd?.milliseconds,
                amountPaid: invoice.amountPaid, account: Self.stripeAccount(invoice.subscriptionMetadata[accountKey]))
        case .checkoutSessionCompleted:
            guard let session = event.checkoutSession, let subscription = session.subscription else { return false }
            id = subscription
            record.checkout = .init(
                stamp: stamp, account: Self.stripeAccount(session.clientReferenceId ?? session.metadata[accountKey]))
        case .chargeRefunded:
            guard let charge = event.charge, let refunded = charge.amountRefunded, refunded > 0 else { return false }
            insert(
                StripeRefundRecord(
                    stamp: stamp, amount: charge.amount, amountRefunded: refunded,
                    currency: (charge.currency ?? "").uppercased(), customer: charge.customer, invoice: charge.invoice,
                    account: Self.stripeAccount(charge.metadata[accountKey])),
                for: StripeKey(environment: environment, id: charge.id))
            return true
        default:
            return false
        }
        insert(record, for: StripeKey(environment: environment, id: id))
        return true
    }

    /// The subscription an event is about: its own, an invoice's, a Checkout session's; `nil`
    /// for other events (a refunded charge names no subscription).
    static func subscriptionKey(of event: StripeEvent) -> StripeKey? {
        let id: String? =
            switch event.type {
            case .customerSubscriptionCreated, .customerSubscriptionUpdated, .customerSubscriptionDeleted,
                .customerSubscriptionPaused, .customerSubscriptionResumed:
                event.subscription?.id
            case .invoicePaid, .invoicePaymentFailed: event.invoice?.subscription
            case .checkoutSessionCompleted: event.checkoutSession?.subscription
            default: nil
            }
        return id.map { StripeKey(environment: environment(livemode: event.livemode), id: $0) }
    }

    /// The environment of live-mode data (Production) or test-mode data (Sandbox).
    static func environment(livemode: Bool) -> String {
        livemode ? AppStoreEnvironment.production.rawValue : AppStoreEnvironment.sandbox.rawValue
    }

    /// The account a subscription belongs to: what its own data names, else a caller's claim.
    func owner(of key: StripeKey) -> String? { subscriptions[key]?.account ?? claims[key] }

    /// Binds the subscription `key` to `token`, the account a caller names. Throws
    /// ``LedgerError/Code/accountConflict``, binding nothing, when the subscription's own data
    /// or an earlier claim names another account.
    mutating func claim(_ key: StripeKey, for token: String) throws(LedgerError) {
        if let owner = owner(of: key), owner != token { throw Self.conflict(key, claimed: token, owner: owner) }
        insert(claim: token, for: key)
    }

    static func conflict(_ key: StripeKey, claimed: String, owner: String) -> LedgerError {
        LedgerError(
            .accountConflict,
            "the \(key.environment) Stripe subscription \(key.id) belongs to account \(owner), not \(claimed)")
    }

    /// Binds a subscription to an account (a stored claim); the first claim stays.
    mutating func insert(claim token: String, for key: StripeKey) {
        guard claims[key] == nil else { return }
        claims[key] = token
        environments.insert(key.environment)
        rekey(key)
    }

    /// Re-derives the account of the subscription `key`, moving it between accounts when it
    /// changed; a subscription no event has told of is no account's yet.
    private mutating func rekey(_ key: StripeKey) {
        guard subscriptions[key] != nil else { return }
        let account = AccountKey(
            environment: key.environment, appAccountToken: owner(of: key), originalTransactionId: key.id)
        let before = subscriptionAccounts[key]
        guard before != account else { return }
        if let before { accountSubscriptions.remove(key, of: before) }
        subscriptionAccounts[key] = account
        accountSubscriptions.insert(key, of: account)
    }

    /// An account id as the ledger keeps it: a UUID in lower case, as Apple writes
    /// `appAccountToken`; any other text as it is; nothing for an empty one.
    static func stripeAccount(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return AccountKey.token(text)
    }

    mutating func insert(_ record: StripeSubscriptionRecord, for key: StripeKey) {
        var joined = subscriptions[key] ?? StripeSubscriptionRecord()
        joined.join(record)
        guard joined != subscriptions[key] else { return }
        Self.move(
            key, from: subscriptions[key]?.snapshot?.customer, to: joined.snapshot?.customer,
            environment: key.environment, in: &subscriptionsByCustomer)
        subscriptions[key] = joined
        environments.insert(key.environment)
        rekey(key)
    }

    mutating func insert(_ record: StripeRefundRecord, for key: StripeKey) {
        let before = refunds[key]
        guard let newest = StripeRefundRecord.newer(before, record), newest != before else { return }
        refunds[key] = newest
        environments.insert(key.environment)
        Self.move(
            key, from: before?.customer, to: newest.customer, environment: key.environment, in: &refundsByCustomer
        )
        Self.move(
            key, from: before?.account, to: newest.account, environment: key.environment, in: &refundsByAccount)
    }

    /// Moves `key` in `index` from the entry of `old` to the entry of `new` (ids in `environment`).
    private static func move(
        _ key: StripeKey, from old: String?, to new: String?, environment: String,
        in index: inout [StripeKey: Set<StripeKey>]
    ) {
        guard old != new else { return }
        if let old {
            let slot = StripeKey(environment: environment, id: old)
            index[slot]?.remove(key)
            if index[slot]?.isEmpty == true { index[slot] = nil }
        }
        if let new { index[StripeKey(environment: environment, id: new), default: []].insert(key) }
    }

    /// The refunded Stripe charges with an event at or after `since`: each charge once, with
    /// all that was refunded of it by its newest event, dated by that event.
    func revocations(since: Int64?, catalog: ProductCatalog) -> [Revocation] {
        refunds.compactMap { key, refund in
            if let since, refund.stamp.created < since { return nil }
            return stripeRevocation(key, refund, catalog: catalog).revocation
        }
    }

    /// The refunded Stripe charges told with `account`: those whose metadata names it, and those
    /// of its subscriptions' customers that no other account's data claims. Only the account's
    /// subscriptions, their customers' and the charges found through them are read.
    func revocations(of account: AccountKey, catalog: ProductCatalog) -> [Revocation] {
        let environment = account.environment.rawValue
        var charges = Set<StripeKey>()
        if let token = account.appAccountToken {
            charges.formUnion(refundsByAccount[StripeKey(environment: environment, id: token)] ?? [])
        }
        for key in accountSubscriptions[account] ?? [] {
            guard let customer = subscriptions[key]?.snapshot?.customer else { continue }
            charges.formUnion(refundsByCustomer[StripeKey(environment: environment, id: customer)] ?? [])
        }
        return charges.compactMap { key in
            guard let refund = refunds[key] else { return nil }
            let told = stripeRevocation(key, refund, catalog: catalog)
            return told.account == account ? told.revocation : nil
        }
    }

    /// A refunded charge as a revocation, and the account it is told with: the one its metadata
    /// names, else its customer's newest subscription's.
    private func stripeRevocation(_ key: StripeKey, _ refund: StripeRefundRecord, catalog: ProductCatalog) -> (
        revocation: Revocation, account: AccountKey
    ) {
        let subscription = refund.customer.flatMap {
            newestSubscription(of: StripeKey(environment: key.environment, id: $0))
        }
        let account = refund.account ?? subscription.flatMap { self.owner(of: $0) }
        let item = subscription.flatMap { subscriptions[$0]?.snapshot?.items.first }
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
        let owner =
            refund.account.map {
                AccountKey(environment: key.environment, appAccountToken: $0, originalTransactionId: key.id)
            } ?? subscription.flatMap { subscriptionAccounts[$0] }
            ?? AccountKey(environment: key.environment, appAccountToken: nil, originalTransactionId: key.id)
        return (revocation, owner)
    }

    /// The subscription a refunded charge is told with: its customer's newest subscription (by
    /// its newest subscription object), `customer` naming the environment and customer id. A
    /// charge names no subscription (nor, since `2025-03-31.basil`, its invoice).
    private func newestSubscription(of customer: StripeKey) -> StripeKey? {
        var newest: (order: StatementOrder, key: StripeKey)?
        for key in subscriptionsByCustomer[customer] ?? [] {
            guard let snapshot = subscriptions[key]?.snapshot else { continue }
            if newest.map({ snapshot.order > $0.order || (snapshot.order == $0.order && key > $0.key) }) ?? true {
                newest = (snapshot.order, key)
            }
        }
        return newest?.key
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

extension StripeChannel {
    func forEachAccount(_ body: (AccountKey) -> Void) {
        for account in accountSubscriptions.keys { body(account) }
    }

    func knows(_ account: AccountKey) -> Bool { accountSubscriptions[account] != nil }

    /// The accounts of the subscriptions whose id is `id`, in every environment.
    func accounts(identifiedBy id: String) -> Set<AccountKey> {
        Set(environments.compactMap { subscriptionAccounts[StripeKey(environment: $0, id: id)] })
    }

    /// The entitlements the subscriptions of `account` give at `instant`, each with the
    /// latest refund of its subscription's charges by then; a refund ends one only when the
    /// catalog lists Stripe in ``ProductCatalog/refundEndsAccess``.
    func entitlements(of account: AccountKey, at instant: Int64, catalog: ProductCatalog) -> [Entitlement] {
        let refunds = refundDates(of: account, catalog: catalog)
        let ends = catalog.refundEndsAccess.contains(.stripe)
        return (accountSubscriptions[account] ?? []).flatMap { key in
            let refunded = refunds[key.id]?.filter { $0 <= instant }.max()
            if ends, refunded != nil { return [Entitlement]() }
            return (subscriptions[key]?.grants(key: key, account: account, catalog: catalog) ?? []).compactMap {
                var entitlement = $0.entitlement(at: instant)
                entitlement?.refundedDate = refunded.map(Timestamp.init(milliseconds:))
                entitlement?.stripeSubscription = StripeSubscriptionReference(
                    id: key.id, livemode: key.environment == AppStoreEnvironment.production.rawValue)
                return entitlement
            }
        }
    }

    /// The dates of the refunds told with `account`, by the subscription they are told with.
    private func refundDates(of account: AccountKey, catalog: ProductCatalog) -> [String: [Int64]] {
        var dates: [String: [Int64]] = [:]
        for revocation in revocations(of: account, catalog: catalog) {
            dates[revocation.originalTransactionId, default: []].append(revocation.revocationDate.milliseconds)
        }
        return dates
    }

    func changeInstants(of account: AccountKey, catalog: ProductCatalog) -> Set<Int64> {
        var instants = Set(refundDates(of: account, catalog: catalog).values.joined())
        for grant in grants(of: account, catalog: catalog) {
            instants.insert(grant.startDate.milliseconds)
            if let expires = grant.expiresDate { instants.insert(expires.milliseconds) }
        }
        return instants
    }

    /// The grants the subscriptions of `account` give.
    private func grants(of account: AccountKey, catalog: ProductCatalog) -> [EntitlementGrant] {
        (accountSubscriptions[account] ?? []).flatMap {
            subscriptions[$0]?.grants(key: $0, account: account, catalog: catalog) ?? []
        }
    }

    /// Adds `other`'s subscriptions, refunded charges and claims (a subscription both have
    /// claimed keeps this channel's claim).
    mutating func merge(_ other: StripeChannel) {
        for (key, record) in other.subscriptions { insert(record, for: key) }
        for (key, record) in other.refunds { insert(record, for: key) }
        for (key, token) in other.claims { insert(claim: token, for: key) }
    }
}
