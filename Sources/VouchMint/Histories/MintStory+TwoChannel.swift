public import Foundation
public import Vouch
public import VouchMintPKI

extension MintStory {
    /// The instants of ``MintStory/twoChannel(signer:stripeSigner:account:start:stripe:)``'s
    /// steps, in the order they happen.
    public struct TwoChannelMoments: Sendable, Hashable {
        /// Plus bought on the web (`customer.subscription.created`, `active`).
        public var webPlus: Timestamp
        /// Pro bought in the app (`SUBSCRIBED`, `INITIAL_BUY`).
        public var appPro: Timestamp
        /// The web renewal's payment failed (`invoice.payment_failed`, `past_due`).
        public var cardFailed: Timestamp
        /// The App Store refunded Pro (`REFUND`, revoked).
        public var appRefund: Timestamp
        /// Stripe's retry of the card succeeded (`invoice.paid`, `active`).
        public var cardRetried: Timestamp
        /// The customer asked to cancel Plus at the period end (`cancel_at_period_end`).
        public var cancelRequested: Timestamp
        /// Plus ended with its period (`customer.subscription.deleted`, `canceled`).
        public var webPeriodEnd: Timestamp

        /// Every instant, in order.
        public var all: [Timestamp] {
            [webPlus, appPro, cardFailed, appRefund, cardRetried, cancelRequested, webPeriodEnd]
        }
    }

    /// ``MintStory/twoChannel(signer:stripeSigner:account:start:stripe:)``'s story, signed.
    public struct TwoChannel: Sendable {
        /// The story, to look at its steps.
        public var story: MintStory
        /// Both channels signed, in the order a server receives them
        /// (``MintStory/deliveries(signer:stripeSigner:)``).
        public var deliveries: [MintStory.Delivery]
        /// When each step happens.
        public var moments: TwoChannelMoments
        /// The Stripe price of Plus (its product is ``MintStripe/Price/product``).
        public var webPlus: MintStripe.Price
        /// The App Store product id of Pro.
        public var appPro: String
        /// The web subscription, `sub_…`.
        public var webSubscription: String
        /// The App Store transaction of Pro (its `originalTransactionId` too).
        public var appTransaction: String
    }

    /// The App Store product id of Pro in ``twoChannel(signer:stripeSigner:account:start:stripe:)``.
    public static let twoChannelProProductId = "com.example.pro.monthly"

    /// An account that buys Plus on the web and Pro in the app, signed: the Stripe card fails
    /// and is retried, the App Store refunds Pro, and Plus is canceled at its period end.
    ///
    /// The steps, from `start` (whole seconds; by default 2025-01-06T09:00:00Z), and what a
    /// reader of both channels should answer for the account from each instant of ``TwoChannelMoments``
    /// on, until the next (Plus below Pro in the catalog: ``TwoChannel/webPlus`` and
    /// ``TwoChannel/appPro``):
    ///
    /// | moment | step | the account's tier |
    /// |---|---|---|
    /// | `webPlus` = start | Plus bought through Checkout, monthly | Plus (`stripe`, `active`, until a month after start) |
    /// | `appPro` = start + 10 days | Pro bought in the app, until a month later | Pro (`app_store`) |
    /// | `cardFailed` = Plus's period end + 1 hour | the renewal's payment fails: `past_due`, the period advanced a month | Pro (`app_store`), Stripe past due |
    /// | `appRefund` = `cardFailed` + 26 hours | the App Store refunds Pro | Plus (`stripe`, `past_due`, until the new period end) |
    /// | `cardRetried` = `cardFailed` + 3 days | Stripe's retry succeeds | Plus (`stripe`, `active`) |
    /// | `cancelRequested` = the new period's start + 14 days | cancel at period end | Plus (`stripe`, `active`, ending at the period end) |
    /// | `webPeriodEnd` = the new period's end | the subscription ends | none |
    ///
    /// A step's Stripe events are created at its instant and up to 4 seconds after it
    /// (``MintStripeHistory``); each of them already states what the table says.
    ///
    /// - Parameters:
    ///   - signer: signs the App Store data (its certificate must be valid over the story's dates).
    ///   - stripeSigner: signs the Stripe deliveries.
    ///   - account: the account id, a UUID (lowercase).
    ///   - start: when Plus is bought.
    ///   - stripe: renders the Stripe events (seed, API version, mode, metadata key).
    public static func twoChannel(
        signer: MintSigner, stripeSigner: MintStripeSigner, account: String = "3f2b8c1e-7a4d-4e9b-9c05-1d6e2a8f4b70",
        start: Timestamp = Timestamp(milliseconds: 1_736_154_000_000),
        stripe: MintStripe = MintStripe(date: Date(timeIntervalSince1970: 0))
    ) throws(MintError) -> TwoChannel {
        let hour: Int64 = 3_600_000
        func later(_ instant: Timestamp, _ milliseconds: Int64) -> Timestamp {
            Timestamp(milliseconds: instant.milliseconds + milliseconds)
        }
        var story = MintStory(account: account, stripe: stripe)
        let plusPrice = story.web.prices[0]
        let plus = story.web.subscribe(plusPrice, at: start)
        let appPro = later(start, 240 * hour)
        let pro = story.appStore.purchase(
            twoChannelProProductId, type: .autoRenewableSubscription, at: appPro, price: 19_990,
            expires: Timestamp(milliseconds: CivilTime.adding(months: 1, to: appPro.milliseconds)))
        let cardFailed = later(plus.currentPeriodEnd, hour)
        let pastDue = story.web.failRenewal(plus, at: cardFailed)
        let appRefund = later(cardFailed, 26 * hour)
        story.appStore.refund(pro, at: appRefund, reason: .refundedDueToIssue)
        let cardRetried = later(cardFailed, 72 * hour)
        story.web.recoverPayment(pastDue, at: cardRetried)
        let cancelRequested = later(pastDue.currentPeriodStart, 14 * 24 * hour)
        let canceling = story.web.cancelAtPeriodEnd(pastDue, at: cancelRequested)
        let ended = story.web.end(canceling)
        return TwoChannel(
            story: story, deliveries: try story.deliveries(signer: signer, stripeSigner: stripeSigner),
            moments: TwoChannelMoments(
                webPlus: start, appPro: appPro, cardFailed: cardFailed, appRefund: appRefund, cardRetried: cardRetried,
                cancelRequested: cancelRequested, webPeriodEnd: ended.currentPeriodEnd),
            webPlus: plusPrice, appPro: twoChannelProProductId, webSubscription: plus.id,
            appTransaction: pro.transactionId)
    }
}
