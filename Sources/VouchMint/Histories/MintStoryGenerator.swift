public import Foundation
public import Vouch

/// Two-channel stories (``MintStory``) for many accounts, deterministically from a seed: what
/// `vouch mint story` writes.
///
/// Account `index` is a pure function of (`seed`, `date`, `index`, ``stripe``'s API version,
/// mode and metadata key) and lives story `index` modulo ``stories``'s count, so any five
/// accounts in a row tell all five. Every story is current at ``date``: each step happens
/// before it, and the account's tier at `date` is the story's (Plus and Pro are the catalog
/// of ``tiers``):
///
/// | story | what happens | tier at `date` |
/// |---|---|---|
/// | `trial` | a 14-day web trial of Plus ($0 invoice), converted at its end | Plus (`stripe`) |
/// | `payment-retried` | Pro on the web; a renewal's payment fails (`past_due`), Stripe's retry succeeds | Pro (`stripe`) |
/// | `upgrade` | Plus on the web, renewed; Pro bought in the app, and the web Plus set to cancel at its period end | Pro (`app_store`) |
/// | `refunds` | Pro in the app, renewed, the renewal refunded (`REFUND`); Plus on the web, its charge refunded (`charge.refunded`) and set to cancel at its period end | Plus (`stripe`) |
/// | `no-token` | Plus in an app that sends no `appAccountToken`, renewing; nothing on the web | Plus (`app_store`), known by its chain |
///
/// Each App Store purchase in the app is also sent by the app (the transaction alone, 5
/// seconds after it is signed). Account ids are UUIDs of the seed; App Store transaction ids
/// are the seed's range for the account
/// (``MintHistory/firstTransactionId(environment:namespace:account:)``), Stripe ids are drawn
/// from the seed and the account: mints of two seeds can be fed to one ledger.
public struct MintStoryGenerator: Sendable {
    /// The stories, in the order accounts take them.
    public static let stories = ["trial", "payment-retried", "upgrade", "refunds", "no-token"]

    /// The App Store product ids of Plus and Pro (monthly subscriptions of one group).
    public static let appProducts = (plus: "com.example.plus.monthly", pro: "com.example.pro.monthly")

    /// What every account is derived from (and the Stripe catalog, through ``stripe``).
    public var seed: UInt64
    /// Stories are current at this instant.
    public var date: Date
    /// Renders the Stripe events; its seed is ``seed`` and its date ``date``.
    public var stripe: MintStripe
    /// `bundleId` of every App Store payload.
    public var bundleId = "com.example.app"

    /// Stories current at `date`, derived from `seed`, Stripe events in test mode (App Store
    /// data in Sandbox, as a reader of both channels expects).
    public init(seed: UInt64, date: Date) {
        self.seed = seed
        self.date = date
        stripe = MintStripe(seed: seed, date: date)
    }

    /// How far back a story reaches from ``date``: every step is within this many milliseconds
    /// before it (72 days).
    public static let length: Int64 = 72 * 86_400_000

    /// When the App Store items of every story are signed: from ``length`` before ``date``
    /// (whole seconds) through it.
    public var signedDates: ClosedRange<Date> {
        let end = Double(endSeconds)
        return Date(timeIntervalSince1970: end - Double(Self.length / 1000))...Date(timeIntervalSince1970: end)
    }

    /// The App Store environment of the stories: Production for live-mode Stripe events,
    /// Sandbox for test mode.
    public var environment: AppStoreEnvironment { stripe.livemode ? .production : .sandbox }

    /// The catalog for `vouch entitlements --tiers`: `plus` (rank 10) and `pro` (rank 20), each
    /// with its App Store product and its Stripe price.
    public var tiers: JSONObject {
        let prices = stripe.prices
        func tier(_ name: String, _ rank: Int, _ products: [String]) -> JSONValue {
            .object([
                "name": .string(name), "rank": .number(String(rank)), "products": .array(products.map { .string($0) }),
            ])
        }
        return [
            "tiers": .array([
                tier("plus", 10, [Self.appProducts.plus, prices[0].id]),
                tier("pro", 20, [Self.appProducts.pro, prices[1].id]),
            ])
        ]
    }

    /// The story account `index` lives.
    public func story(of index: Int) -> String { Self.stories[index % Self.stories.count] }

    /// The account id of account `index`: a UUID of the seed.
    public func account(of index: Int) -> String {
        var random = SplitMix64(seed: seed, index: UInt64(index))
        return random.uuid()
    }

    private var endSeconds: Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// The story of account `index`, its steps taken.
    public func story(_ index: Int) -> MintStory {
        let second: Int64 = 1000
        let hour = 3_600 * second
        let day = 24 * hour
        let end = endSeconds * second
        var random = SplitMix64(seed: seed, index: UInt64(index) &+ 0x5709)
        // Each account starts within a day (whole seconds) of its story's start.
        let jitter = Int64(random.below(86_400)) * second
        func at(_ milliseconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds) }
        func month(after milliseconds: Int64) -> Int64 { CivilTime.adding(months: 1, to: milliseconds) }
        let name = story(of: index)
        var story = MintStory(
            account: account(of: index),
            firstTransactionId: MintHistory.firstTransactionId(
                environment: environment, namespace: seed, account: index),
            appAccountToken: name != "no-token", environment: environment, bundleId: bundleId, stripe: stripe)
        let plus = story.web.prices[0]
        let pro = story.web.prices[1]
        /// A subscription bought in the app at `start`, and the app sending its transaction.
        func buyInApp(_ product: String, at start: Int64, price: Int64) -> MintHistory.Transaction {
            let bought = story.appStore.purchase(
                product, type: .autoRenewableSubscription, at: at(start), price: price,
                expires: at(month(after: start)))
            story.appStore.restate(bought, at: at(start + 5 * second))
            return bought
        }
        switch name {
        case "trial":
            let trial = story.web.startTrial(plus, at: at(end - 20 * day - jitter), days: 14)
            story.web.renew(trial, at: at(trial.currentPeriodEnd.milliseconds + hour))
        case "payment-retried":
            let bought = story.web.subscribe(pro, at: at(end - 40 * day - jitter))
            let failed = at(bought.currentPeriodEnd.milliseconds + hour)
            let pastDue = story.web.failRenewal(bought, at: failed)
            story.web.recoverPayment(pastDue, at: at(failed.milliseconds + 3 * day))
        case "upgrade":
            let bought = story.web.subscribe(plus, at: at(end - 50 * day - jitter))
            let renewed = story.web.renew(bought, at: at(bought.currentPeriodEnd.milliseconds + hour))
            let upgrade = end - 10 * day - jitter / 4_000 * second
            _ = buyInApp(Self.appProducts.pro, at: upgrade, price: 9_990)
            story.web.cancelAtPeriodEnd(renewed, at: at(upgrade + 60 * second))
        case "refunds":
            let start = end - 45 * day - jitter
            let bought = buyInApp(Self.appProducts.pro, at: start, price: 9_990)
            let renewal = story.appStore.renew(bought, until: at(month(after: month(after: start))))
            story.appStore.refund(renewal, at: at(end - 5 * day - jitter / 4_000 * second), reason: .refundedDueToIssue)
            let web = story.web.subscribe(plus, at: at(end - 20 * day - jitter))
            let refunded = web.currentPeriodStart.milliseconds + 2 * day
            story.web.refund(web, at: at(refunded))
            story.web.cancelAtPeriodEnd(web, at: at(refunded + second))
        default:  // no-token
            var current = buyInApp(Self.appProducts.plus, at: end - 70 * day - jitter, price: 4_990)
            while let expires = current.expiresDate?.milliseconds, expires <= end {
                current = story.appStore.renew(current, until: at(month(after: expires)))
            }
        }
        return story
    }
}
