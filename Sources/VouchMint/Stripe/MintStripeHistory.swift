public import Foundation
public import Vouch
public import VouchMintPKI
public import VouchStripe

/// The Stripe events of one account's web subscriptions, told step by step at instants the
/// caller picks: bought through Checkout, renewed, a renewal's payment failing and Stripe's
/// retry succeeding, set to cancel at the period end and ended then, a charge refunded.
///
/// Events are rendered as ``MintStripe`` renders them (the same builders, ids and API
/// versions): the account id is in each subscription's metadata under
/// ``MintStripe/accountKey``, in its Checkout session's and as the session's
/// `client_reference_id`, and every subscription of the history has the same customer.
///
/// A step's first event is created at the step's instant (whole seconds), the events that
/// follow from it a second or more later, as Stripe creates them (see each step). A step out of
/// order (before the step taken before it, a renewal before the period ends, a recovery of a
/// payment that did not fail, an instant that is not a whole second) is refused by
/// ``deliveries(signer:)``, with the step named.
public struct MintStripeHistory: Sendable {
    /// A subscription of the history as it stands after a step, to refer to in later steps.
    public struct Subscription: Sendable, Hashable {
        /// `sub_…`.
        public var id: String
        /// The price it is of.
        public var price: MintStripe.Price
        /// Its status after the step.
        public var status: StripeSubscription.Status
        /// Start of its billing period.
        public var currentPeriodStart: Timestamp
        /// End of its billing period: until when it is paid (or, past due, being retried).
        public var currentPeriodEnd: Timestamp
        /// When it is set to end, if it is.
        public var cancelAt: Timestamp?
    }

    /// Renders the events: its seed, API version, mode and metadata key.
    public let generator: MintStripe
    /// The account id the server gave Checkout (the App Store `appAccountToken` of the same
    /// account, for a story of both channels).
    public let account: String
    /// The account's customer, `cus_…`.
    public let customer: String
    /// Every event, in order of creation.
    public private(set) var events: [MintStripe.Event] = []
    private var writers: [String: MintStripe.Writer] = [:]
    /// What the history's ids are drawn from: the seed and the account.
    private let namespace: UInt64
    /// The steps that were out of order, in the order taken.
    private var problems: [String] = []

    /// An account with no subscription yet; ids (customer, subscriptions, invoices, charges,
    /// events, Checkout sessions) are drawn from `generator`'s seed and the account, so that
    /// histories of two accounts, or of two seeds, share none (`generator`'s `date` and `story`
    /// play no part).
    public init(account: String, generator: MintStripe = MintStripe(date: Date(timeIntervalSince1970: 0))) {
        self.generator = generator
        self.account = account
        namespace = generator.seed ^ SplitMix64.mix(MintGenerator.seed(account))
        var random = SplitMix64(seed: namespace, index: UInt64.max - 1)
        customer = "cus_" + String(MintStripe.id(&random).prefix(14))
    }

    /// The catalog the subscriptions are of: ``MintStripe/prices`` (Plus, then Pro).
    public var prices: [MintStripe.Price] { generator.prices }

    // MARK: Steps

    /// Bought through Checkout at `date`: `customer.subscription.created` then, monthly from
    /// `date`, `invoice.paid` 2 seconds later and `checkout.session.completed` 4 seconds later.
    @discardableResult
    public mutating func subscribe(_ price: MintStripe.Price, at date: Timestamp) -> Subscription {
        open(price, at: date, trialDays: nil)
    }

    /// A trial of `days` started through Checkout at `date`: as ``subscribe(_:at:)``, but the
    /// subscription is `trialing` until `days` later (its first period, `trial_end`) and its
    /// first invoice, paid, is of $0 (`subscription_create`). ``renew(_:at:)`` at the trial's
    /// end converts it (`active`, the first paid invoice); ``failRenewal(_:at:)`` makes it
    /// `past_due`.
    @discardableResult
    public mutating func startTrial(_ price: MintStripe.Price, at date: Timestamp, days: Int = 14) -> Subscription {
        if days < 1 { problems.append("trial of \(price.name): \(days) days") }
        return open(price, at: date, trialDays: max(1, days))
    }

    private mutating func open(_ price: MintStripe.Price, at date: Timestamp, trialDays: Int?) -> Subscription {
        _ = check(date, "\(trialDays == nil ? "subscription" : "trial") of \(price.name)")
        let start = date.milliseconds / 1000
        let random = SplitMix64(seed: namespace, index: UInt64.max - 2 - UInt64(writers.count))
        var writer = MintStripe.Writer(
            generator: generator, random: random, price: price, start: start, account: account, customer: customer)
        writer.open(trial: trialDays != nil, trialDays: trialDays ?? 0)
        return record(writer)
    }

    /// The next period paid at `date` (at or after the period end, before the next one ends):
    /// `invoice.paid`, and a second later `customer.subscription.updated` with the new period.
    @discardableResult
    public mutating func renew(_ subscription: Subscription, at date: Timestamp) -> Subscription {
        guard var writer = cycle(subscription, at: date, "renewal") else { return subscription }
        writer.renew(at: date.milliseconds / 1000)
        return record(writer)
    }

    /// The next period's payment fails at `date` (at or after the period end, before the next
    /// one ends): `invoice.payment_failed`, and a second later `customer.subscription.updated`,
    /// `past_due` in the new period. Stripe retries the payment; the subscription still grants
    /// access meanwhile.
    @discardableResult
    public mutating func failRenewal(_ subscription: Subscription, at date: Timestamp) -> Subscription {
        guard var writer = cycle(subscription, at: date, "failed renewal") else { return subscription }
        writer.failRenewal(at: date.milliseconds / 1000)
        return record(writer)
    }

    /// Stripe's retry of the failed payment succeeds at `date` (before the period ends):
    /// `invoice.paid`, and a second later `customer.subscription.updated`, `active` again.
    @discardableResult
    public mutating func recoverPayment(_ subscription: Subscription, at date: Timestamp) -> Subscription {
        let step = "payment recovery of \(subscription.id)"
        guard
            var writer = inPeriod(
                subscription, at: date, step, { $0.status == "past_due" ? nil : "it is not past due" })
        else { return subscription }
        writer.recover(at: date.milliseconds / 1000)
        return record(writer)
    }

    /// The customer asks at `date` to cancel at the period end: `customer.subscription.updated`
    /// with `cancel_at_period_end` and `cancel_at`. It keeps access until ``end(_:)``.
    @discardableResult
    public mutating func cancelAtPeriodEnd(_ subscription: Subscription, at date: Timestamp) -> Subscription {
        let step = "cancellation of \(subscription.id)"
        let canceled = { (writer: MintStripe.Writer) in
            writer.status != "canceled" && writer.cancelAt == nil ? nil : "it is already canceled"
        }
        guard var writer = inPeriod(subscription, at: date, step, canceled) else { return subscription }
        writer.requestCancellation(at: date.milliseconds / 1000)
        return record(writer)
    }

    /// A subscription set to cancel ends at its period end: `customer.subscription.deleted`,
    /// `canceled`, created at the period end.
    @discardableResult
    public mutating func end(_ subscription: Subscription) -> Subscription {
        let step = "end of \(subscription.id)"
        guard var writer = writer(subscription, step) else { return subscription }
        guard writer.cancelAt != nil, writer.status != "canceled" else {
            problems.append("\(step): it is not set to cancel")
            return subscription
        }
        guard check(Timestamp(milliseconds: writer.periodEnd * 1000), step) else { return subscription }
        writer.end()
        return record(writer)
    }

    /// `amount` (in cents; by default all of it) of the subscription's last paid invoice refunded
    /// at `date`: `charge.refunded`, the charge with its refund, of the account's customer.
    /// The subscription itself is unchanged, as on Stripe.
    public mutating func refund(_ subscription: Subscription, at date: Timestamp, amount: Int64? = nil) {
        let step = "refund of \(subscription.id)"
        guard var writer = writer(subscription, step), check(date, step) else { return }
        guard let paid = writer.paidInvoice, paid.amount > 0 else {
            problems.append("\(step): nothing was paid")
            return
        }
        let refunded = amount ?? paid.amount
        guard refunded > 0, refunded <= paid.amount else {
            problems.append("\(step): \(refunded) cents of a payment of \(paid.amount)")
            return
        }
        writer.refund(at: date.milliseconds / 1000, amount: refunded)
        record(writer)
    }

    // MARK: Signing

    /// Every event signed as its delivery (`MintStripeSigner.delivery(_:signedAt:)`, 2 seconds
    /// after its creation), in order of creation. Refuses a history with a step out of order
    /// (`MintError` code `unsupported`, naming the step).
    public func deliveries(signer: MintStripeSigner) throws(MintError) -> [StripeDelivery] {
        try checkOrder()
        var deliveries: [StripeDelivery] = []
        deliveries.reserveCapacity(events.count)
        for event in events { deliveries.append(try signer.delivery(event)) }
        return deliveries
    }

    private func checkOrder() throws(MintError) {
        if let problem = problems.first { throw MintError(.unsupported, "a step out of order: \(problem)") }
    }

    // MARK: Order

    /// The writer of a subscription of this history.
    private mutating func writer(_ subscription: Subscription, _ step: String) -> MintStripe.Writer? {
        guard let writer = writers[subscription.id] else {
            problems.append("\(step): not a subscription of this history")
            return nil
        }
        return writer
    }

    /// The writer of an active subscription whose period has ended at `date`, the next not yet.
    private mutating func cycle(_ subscription: Subscription, at date: Timestamp, _ name: String) -> MintStripe.Writer?
    {
        let step = "\(name) of \(subscription.id)"
        guard let writer = writer(subscription, step), check(date, step) else { return nil }
        let at = date.milliseconds / 1000
        guard writer.status == "active" || writer.status == "trialing", writer.cancelAt == nil else {
            problems.append("\(step): it is \(writer.cancelAt == nil ? writer.status : "set to cancel")")
            return nil
        }
        guard at >= writer.periodEnd else {
            problems.append("\(step): before its period ends")
            return nil
        }
        guard at < MintStripe.Writer.addingMonth(writer.periodEnd) else {
            problems.append("\(step): after the next period ends")
            return nil
        }
        return writer
    }

    /// Whether `date` is a whole second, not before the last event; records the problem if not.
    private mutating func check(_ date: Timestamp, _ step: String) -> Bool {
        guard date.milliseconds % 1000 == 0 else {
            problems.append("\(step) at \(date.milliseconds) ms: not a whole second")
            return false
        }
        if let last = events.last, date.milliseconds / 1000 < last.created {
            problems.append("\(step): before the step taken before it")
            return false
        }
        return true
    }

    /// The writer of a subscription at `date` within its period, unless `refusal` names why the
    /// step cannot be taken.
    private mutating func inPeriod(
        _ subscription: Subscription, at date: Timestamp, _ step: String,
        _ refusal: (MintStripe.Writer) -> String?
    ) -> MintStripe.Writer? {
        guard let writer = writer(subscription, step), check(date, step) else { return nil }
        if let reason = refusal(writer) {
            problems.append("\(step): \(reason)")
            return nil
        }
        guard date.milliseconds / 1000 < writer.periodEnd else {
            problems.append("\(step): after its period")
            return nil
        }
        return writer
    }

    /// Keeps the writer and the events its step added.
    @discardableResult
    private mutating func record(_ writer: MintStripe.Writer) -> Subscription {
        let known = writers[writer.subscriptionId]?.events.count ?? 0
        events += writer.events[known...]
        writers[writer.subscriptionId] = writer
        return Subscription(
            id: writer.subscriptionId, price: writer.price, status: StripeSubscription.Status(rawValue: writer.status),
            currentPeriodStart: Timestamp(milliseconds: writer.periodStart * 1000),
            currentPeriodEnd: Timestamp(milliseconds: writer.periodEnd * 1000),
            cancelAt: writer.cancelAt.map { Timestamp(milliseconds: $0 * 1000) })
    }
}
