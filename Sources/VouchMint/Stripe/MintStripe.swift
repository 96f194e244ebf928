public import Foundation
public import Vouch
internal import VouchStripe

/// Realistic Stripe event sequences for tests: one subscription's story per index, events as
/// Stripe renders them in an API version, ids shaped like Stripe's (`evt_…`, `sub_…`, `cus_…`,
/// `price_…`, `prod_…`), whole-second timestamps, every value a function of the seed.
///
/// Each story is one web subscription of one account (a UUID, in the subscription's and the
/// Checkout session's metadata under ``accountKey`` and as the session's
/// `client_reference_id`), current at ``date``: every event is created before it, and but for
/// `canceled-at-period-end` (ended a few days before) each subscription is in a paid period
/// (or set to cancel after it) then. Events carry their
/// `created` instant, so a history can interleave them with App Store data of the same account.
/// `MintStripeSigner` turns events into signed deliveries.
public struct MintStripe: Sendable {
    /// The API version events are rendered in, which decides where the billing period is.
    public enum APIVersion: String, Sendable, CaseIterable {
        /// `2025-03-31.basil`: periods on the subscription's items, an invoice's subscription in
        /// `parent.subscription_details`.
        case basil = "2025-03-31.basil"
        /// `2024-06-20`: the period on the subscription, an invoice's subscription at its top level.
        case acacia = "2024-06-20"
    }

    /// What happens to a subscription.
    public enum Story: String, Sendable, CaseIterable {
        /// Bought through Checkout, then renewed twice.
        case renewing
        /// A renewal's payment fails (`past_due`), and Stripe's retry succeeds.
        case paymentRecovered = "payment-recovered"
        /// Set to cancel at period end, then deleted when the period ends.
        case canceledAtPeriodEnd = "canceled-at-period-end"
        /// A trial that ends without a payment method (`paused`), then resumed and paid.
        case trialPaused = "trial-paused"
        /// Renewed once; the renewal's charge is refunded in full two days later
        /// (`charge.refunded`) and the subscription set to cancel at its period end.
        case refunded
    }

    /// A price of the catalog: its id, product, amount in cents and name.
    public struct Price: Sendable, Hashable {
        /// `price_…`.
        public var id: String
        /// `prod_…`.
        public var product: String
        /// The monthly amount in the currency's smallest unit.
        public var amount: Int64
        /// The product's name, `Plus` or `Pro`.
        public var name: String

        /// A price of `amount` a month (in the currency's smallest unit) of product `product`,
        /// named `name`.
        public init(id: String, product: String, amount: Int64, name: String) {
            self.id = id
            self.product = product
            self.amount = amount
            self.name = name
        }
    }

    /// One minted event and when it was created.
    public struct Event: Sendable {
        /// The event object.
        public var json: JSONObject
        /// Its `created`, in seconds since 1970.
        public var created: Int64
    }

    /// One subscription's events, in order of creation, and whose they are.
    public struct Subscription: Sendable {
        /// The account id the server gave Checkout (a UUID).
        public var account: String
        /// `cus_…`.
        public var customer: String
        /// `sub_…`.
        public var subscription: String
        /// What happens to it.
        public var story: Story
        /// The price it is of.
        public var price: Price
        /// Its events, oldest first.
        public var events: [Event]
    }

    /// The seed every value derives from.
    public var seed: UInt64
    /// Stories are current at this instant: their events are created before it.
    public var date: Date
    /// The API version events are rendered in.
    public var apiVersion = APIVersion.basil
    /// Live-mode events (`false`: test mode, as Stripe's test data).
    public var livemode = false
    /// The metadata key holding the account id.
    public var accountKey = "account_id"
    /// The story of every subscription; `nil` picks one per subscription from the seed.
    public var story: Story? = nil

    /// A generator of subscriptions whose stories are current at `date`.
    public init(seed: UInt64 = 1, date: Date) {
        self.seed = seed
        self.date = date
    }

    /// The catalog: a Plus and a Pro monthly price, ids from the seed.
    public var prices: [Price] {
        var random = SplitMix64(seed: seed, index: UInt64.max)
        return [("Plus", 999), ("Pro", 1999)].map { name, amount in
            Price(
                id: "price_" + Self.id(&random), product: "prod_" + Self.id(&random).prefix(14), amount: amount,
                name: name)
        }
    }

    /// The `index`-th subscription.
    public func subscription(_ index: Int) -> Subscription {
        var random = SplitMix64(seed: seed, index: UInt64(index))
        let story = self.story ?? random.pick(Story.allCases)
        let price = random.pick(prices)
        let end = Int64(date.timeIntervalSince1970.rounded(.down))
        // How long before `end` each story starts, so that its last event is before `end` and,
        // but for a canceled one, its last period runs past it.
        let days: Int64 =
            switch story {
            case .renewing: 65
            case .paymentRecovered, .canceledAtPeriodEnd, .refunded: 40
            case .trialPaused: 30
            }
        let start = end - days * 86_400 - Int64(random.int(in: 0...(5 * 86_400)))
        var writer = Writer(generator: self, random: random, price: price, start: start)
        writer.write(story)
        return Subscription(
            account: writer.account, customer: writer.customer, subscription: writer.subscriptionId, story: story,
            price: price, events: writer.events.sorted { $0.created < $1.created })
    }

    /// `1` and 23 letters and digits: the shape of the part of a Stripe id after its prefix.
    static func id(_ random: inout SplitMix64) -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        return "1" + String((0..<23).map { _ in alphabet[random.below(alphabet.count)] })
    }

    /// Writes one subscription's events: a story of the seed's (``write(_:)``), or the steps a
    /// ``MintStripeHistory`` takes at the instants its caller picks.
    struct Writer: Sendable {
        let generator: MintStripe
        var random: SplitMix64
        let price: Price
        let start: Int64
        let account: String
        let customer: String
        let subscriptionId: String
        let itemId: String
        var events: [Event] = []
        /// The subscription as it stands after the last event.
        var status = "active"
        var periodStart: Int64
        var periodEnd: Int64
        var trialEnd: Int64? = nil
        var cancelAt: Int64? = nil
        var canceledAt: Int64? = nil
        var endedAt: Int64? = nil
        var latestInvoice: String? = nil
        /// The last invoice paid: its id, amount and when it was paid (what a refund refunds).
        var paidInvoice: (id: String, amount: Int64, at: Int64)? = nil

        /// A subscription starting at `start`; `account` and `customer` replace the ones drawn
        /// from `random` (which are drawn anyway, so that the ids after them stay the same).
        init(
            generator: MintStripe, random: SplitMix64, price: Price, start: Int64, account: String? = nil,
            customer: String? = nil
        ) {
            self.generator = generator
            self.random = random
            self.price = price
            self.start = start
            let drawnAccount = self.random.uuid()
            let drawnCustomer = "cus_" + String(MintStripe.id(&self.random).prefix(14))
            self.account = account ?? drawnAccount
            self.customer = customer ?? drawnCustomer
            subscriptionId = "sub_" + MintStripe.id(&self.random)
            itemId = "si_" + String(MintStripe.id(&self.random).prefix(14))
            periodStart = start
            periodEnd = Writer.addingMonth(start)
        }

        static func addingMonth(_ seconds: Int64) -> Int64 {
            CivilTime.adding(months: 1, to: seconds * 1000) / 1000
        }

        var basil: Bool { generator.apiVersion == .basil }

        mutating func write(_ story: Story) {
            switch story {
            case .renewing:
                open(trial: false)
                for _ in 0..<2 { renew(at: periodEnd + Int64(random.int(in: 60...3600))) }
            case .paymentRecovered:
                open(trial: false)
                failRenewal(at: periodEnd + Int64(random.int(in: 60...3600)))
                recover(at: periodStart + 3 * 86_400 + Int64(random.int(in: 0...3600)))
            case .canceledAtPeriodEnd:
                open(trial: false)
                requestCancellation(at: periodStart + 10 * 86_400 + Int64(random.int(in: 0...86_400)))
                end()
            case .refunded:
                open(trial: false)
                renew(at: periodEnd + Int64(random.int(in: 60...3600)))
                let refunded = periodStart + 2 * 86_400 + Int64(random.int(in: 0...3600))
                refund(at: refunded, amount: price.amount)
                requestCancellation(at: refunded + 1)
            case .trialPaused:
                open(trial: true)
                let trialOver = trialEnd!
                status = "paused"
                add(
                    .customerSubscriptionPaused, at: trialOver, subscription(at: trialOver),
                    previous: ["status": "trialing"])
                let resumed = trialOver + 5 * 86_400 + Int64(random.int(in: 0...86_400))
                status = "active"
                periodStart = resumed
                periodEnd = Self.addingMonth(resumed)
                add(
                    .customerSubscriptionResumed, at: resumed, subscription(at: resumed), previous: ["status": "paused"]
                )
                add(.invoicePaid, at: resumed + 2, invoice(at: resumed + 2, reason: "subscription_update", paid: true))
            }
        }

        /// Checkout, the subscription's creation and its first invoice: created at the start,
        /// paid 2 seconds later, the session completed 4 seconds after the start. A trial of
        /// `trialDays` is `trialing` and its first invoice is of $0.
        mutating func open(trial: Bool, trialDays: Int = 14) {
            if trial {
                status = "trialing"
                trialEnd = start + Int64(trialDays) * 86_400
                periodEnd = trialEnd!
            }
            add(.customerSubscriptionCreated, at: start, subscription(at: start))
            let invoice = self.invoice(at: start, reason: "subscription_create", paid: true, amount: trial ? 0 : nil)
            add(.invoicePaid, at: start + 2, invoice)
            add(.checkoutSessionCompleted, at: start + 4, checkoutSession(at: start + 4))
        }

        /// The next period, paid at `at` (after the period end): the invoice, and the
        /// subscription with its new period a second later.
        mutating func renew(at: Int64) {
            var previous = renewalPrevious()
            if status == "trialing" {
                // The trial converts: the first paid period.
                previous["status"] = "trialing"
                status = "active"
            }
            periodStart = periodEnd
            periodEnd = Self.addingMonth(periodStart)
            add(.invoicePaid, at: at, invoice(at: at, reason: "subscription_cycle", paid: true))
            add(.customerSubscriptionUpdated, at: at + 1, subscription(at: at + 1), previous: previous)
        }

        /// The next period's payment fails at `at`: the invoice stays open, and a second later
        /// the subscription, in its new period, is past due.
        mutating func failRenewal(at: Int64) {
            var previous = renewalPrevious()
            periodStart = periodEnd
            periodEnd = Self.addingMonth(periodStart)
            add(.invoicePaymentFailed, at: at, invoice(at: at, reason: "subscription_cycle", paid: false))
            previous["status"] = .string(status)
            status = "past_due"
            add(.customerSubscriptionUpdated, at: at + 1, subscription(at: at + 1), previous: previous)
        }

        /// Stripe's retry of a failed payment succeeds at `at`: the invoice paid, and a second
        /// later the subscription active again.
        mutating func recover(at: Int64) {
            add(.invoicePaid, at: at, invoice(at: at, reason: "subscription_cycle", paid: true))
            status = "active"
            add(.customerSubscriptionUpdated, at: at + 1, subscription(at: at + 1), previous: ["status": "past_due"])
        }

        /// The customer asks at `at` to cancel at the period end.
        mutating func requestCancellation(at: Int64) {
            cancelAt = periodEnd
            canceledAt = at
            add(
                .customerSubscriptionUpdated, at: at, subscription(at: at),
                previous: ["cancel_at": .null, "cancel_at_period_end": false, "canceled_at": .null])
        }

        /// The period ends and the subscription with it (`customer.subscription.deleted`).
        mutating func end() {
            status = "canceled"
            endedAt = periodEnd
            add(.customerSubscriptionDeleted, at: periodEnd, subscription(at: periodEnd))
        }

        /// `amount` of the last paid invoice's charge refunded at `at` (`charge.refunded`).
        mutating func refund(at: Int64, amount: Int64) {
            guard let paid = paidInvoice else { return }
            let charge = "ch_" + MintStripe.id(&random)
            let refund: JSONObject = [
                "id": .string("re_" + MintStripe.id(&random)), "object": "refund", "amount": .number(String(amount)),
                "charge": .string(charge), "created": .number(String(at)), "currency": "usd",
                "reason": "requested_by_customer", "status": "succeeded",
            ]
            var object: JSONObject = [
                "id": .string(charge), "object": "charge", "amount": .number(String(paid.amount)),
                "amount_captured": .number(String(paid.amount)), "amount_refunded": .number(String(amount)),
                "captured": true, "created": .number(String(paid.at)), "currency": "usd",
                "customer": .string(customer),
            ]
            if !basil { object["invoice"] = .string(paid.id) }
            object["livemode"] = .bool(generator.livemode)
            object["metadata"] = [:]
            object["paid"] = true
            object["payment_intent"] = .string("pi_" + MintStripe.id(&random))
            object["refunded"] = .bool(amount == paid.amount)
            object["refunds"] = .object(list([.object(refund)], url: "/v1/charges/\(charge)/refunds"))
            object["status"] = "succeeded"
            add(
                .chargeRefunded, at: at, object,
                previous: ["amount_refunded": 0, "refunded": false])
        }

        /// What a renewal changes, as `previous_attributes` says it.
        func renewalPrevious() -> JSONObject {
            if basil {
                return [
                    "items": .object(
                        list([item(at: start)], url: "/v1/subscription_items?subscription=\(subscriptionId)"))
                ]
            }
            return [
                "current_period_end": .number(String(periodEnd)), "current_period_start": .number(String(periodStart)),
            ]
        }

        mutating func add(_ type: StripeEventType, at created: Int64, _ object: JSONObject, previous: JSONObject? = nil)
        {
            var data: JSONObject = ["object": .object(object)]
            if let previous { data["previous_attributes"] = .object(previous) }
            let automatic = type != .checkoutSessionCompleted && type != .customerSubscriptionCreated
            let request: JSONObject = [
                "id": automatic ? .null : .string("req_" + String(MintStripe.id(&random).prefix(14))),
                "idempotency_key": automatic ? .null : .string(random.uuid()),
            ]
            let event: JSONObject = [
                "id": .string("evt_" + MintStripe.id(&random)),
                "object": "event",
                "api_version": .string(generator.apiVersion.rawValue),
                "created": .number(String(created)),
                "data": .object(data),
                "livemode": .bool(generator.livemode),
                "pending_webhooks": 1,
                "request": .object(request),
                "type": .string(type.rawValue),
            ]
            events.append(Event(json: event, created: created))
        }

        func timestamp(_ value: Int64?) -> JSONValue { value.map { .number(String($0)) } ?? .null }

        func list(_ data: [JSONValue], url: String) -> JSONObject {
            [
                "object": "list", "data": .array(data), "has_more": false, "total_count": .number(String(data.count)),
                "url": .string(url),
            ]
        }

        func priceObject() -> JSONObject {
            [
                "id": .string(price.id), "object": "price", "active": true, "billing_scheme": "per_unit",
                "created": .number(String(start - 200 * 86_400)), "currency": "usd",
                "livemode": .bool(generator.livemode),
                "lookup_key": .string(price.name.lowercased() + "_monthly"), "metadata": [:],
                "nickname": .string(price.name + " monthly"), "product": .string(price.product),
                "recurring": ["interval": "month", "interval_count": 1, "usage_type": "licensed"],
                "tax_behavior": "exclusive", "type": "recurring", "unit_amount": .number(String(price.amount)),
                "unit_amount_decimal": .string(String(price.amount)),
            ]
        }

        func item(at created: Int64) -> JSONValue {
            var item: JSONObject = [
                "id": .string(itemId), "object": "subscription_item", "created": .number(String(start)),
            ]
            if basil {
                item["current_period_end"] = .number(String(periodEnd))
                item["current_period_start"] = .number(String(periodStart))
            }
            item["metadata"] = [:]
            if !basil {
                item["plan"] = [
                    "id": .string(price.id), "object": "plan", "active": true, "amount": .number(String(price.amount)),
                    "currency": "usd", "interval": "month", "interval_count": 1, "product": .string(price.product),
                ]
            }
            item["price"] = .object(priceObject())
            item["quantity"] = 1
            item["subscription"] = .string(subscriptionId)
            return .object(item)
        }

        func subscription(at now: Int64) -> JSONObject {
            var object: JSONObject = [
                "id": .string(subscriptionId), "object": "subscription", "application": .null,
                "billing_cycle_anchor": .number(String(trialEnd ?? start)), "cancel_at": timestamp(cancelAt),
                "cancel_at_period_end": .bool(cancelAt != nil && endedAt == nil), "canceled_at": timestamp(canceledAt),
                "collection_method": "charge_automatically", "created": .number(String(start)), "currency": "usd",
            ]
            if !basil {
                object["current_period_end"] = .number(String(periodEnd))
                object["current_period_start"] = .number(String(periodStart))
            }
            object["customer"] = .string(customer)
            object["ended_at"] = timestamp(endedAt)
            object["items"] = .object(
                list([item(at: now)], url: "/v1/subscription_items?subscription=\(subscriptionId)"))
            object["latest_invoice"] = latestInvoice.map { .string($0) } ?? .null
            object["livemode"] = .bool(generator.livemode)
            object["metadata"] = [generator.accountKey: .string(account)]
            object["start_date"] = .number(String(start))
            object["status"] = .string(status)
            object["trial_end"] = timestamp(trialEnd)
            object["trial_start"] = trialEnd == nil ? .null : .number(String(start))
            return object
        }

        mutating func invoice(at created: Int64, reason: String, paid: Bool, amount: Int64? = nil) -> JSONObject {
            let id = "in_" + MintStripe.id(&random)
            latestInvoice = id
            let total = amount ?? price.amount
            var line: JSONObject = [
                "id": .string("il_" + MintStripe.id(&random)), "object": "line_item", "amount": .number(String(total)),
                "currency": "usd",
                "description": .string("1 × \(price.name) (at $\(price.amount / 100).\(price.amount % 100) / month)"),
                "period": ["end": .number(String(periodEnd)), "start": .number(String(periodStart))],
            ]
            if basil {
                line["pricing"] = [
                    "price_details": ["price": .string(price.id), "product": .string(price.product)],
                    "type": "price_details",
                ]
            } else {
                line["price"] = .object(priceObject())
                line["subscription"] = .string(subscriptionId)
            }
            line["quantity"] = 1
            var object: JSONObject = [
                "id": .string(id), "object": "invoice", "amount_due": .number(String(total)),
                "amount_paid": .number(String(paid ? total : 0)), "amount_remaining": .number(String(paid ? 0 : total)),
                "attempt_count": 1, "attempted": true, "billing_reason": .string(reason),
                "collection_method": "charge_automatically", "created": .number(String(created)), "currency": "usd",
                "customer": .string(customer),
                "lines": .object(list([.object(line)], url: "/v1/invoices/\(id)/lines")),
                "livemode": .bool(generator.livemode),
            ]
            let metadata: JSONObject = [generator.accountKey: .string(account)]
            if basil {
                object["parent"] = [
                    "quote_details": .null,
                    "subscription_details": ["metadata": .object(metadata), "subscription": .string(subscriptionId)],
                    "type": "subscription_details",
                ]
            }
            object["period_end"] = .number(String(created))
            object["period_start"] = .number(String(created))
            object["status"] = paid ? "paid" : "open"
            if !basil {
                object["subscription"] = .string(subscriptionId)
                object["subscription_details"] = ["metadata": .object(metadata)]
            }
            object["total"] = .number(String(total))
            if paid { paidInvoice = (id, total, created) }
            return object
        }

        mutating func checkoutSession(at created: Int64) -> JSONObject {
            let mode = generator.livemode ? "live" : "test"
            return [
                "id": .string("cs_\(mode)_" + MintStripe.id(&random) + MintStripe.id(&random).prefix(10)),
                "object": "checkout.session", "amount_subtotal": .number(String(trialEnd == nil ? price.amount : 0)),
                "amount_total": .number(String(trialEnd == nil ? price.amount : 0)),
                "client_reference_id": .string(account), "created": .number(String(created - 60)), "currency": "usd",
                "customer": .string(customer), "invoice": latestInvoice.map { .string($0) } ?? .null,
                "livemode": .bool(generator.livemode), "metadata": [generator.accountKey: .string(account)],
                "mode": "subscription", "payment_status": .string(trialEnd == nil ? "paid" : "no_payment_required"),
                "status": "complete", "subscription": .string(subscriptionId),
                "success_url": "https://example.com/welcome?session_id={CHECKOUT_SESSION_ID}",
            ]
        }
    }
}
