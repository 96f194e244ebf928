public import Foundation
public import Vouch
public import VouchMintPKI
public import VouchStripe

/// One account's life on two channels: its App Store history (``MintHistory``) and its web
/// subscriptions through Stripe (``MintStripeHistory``), the account id the same on both, the
/// `appAccountToken` in the app and the Checkout metadata and `client_reference_id` on the web.
///
/// Each channel is told with its own steps (`story.appStore.purchase(…)`,
/// `story.web.subscribe(…)`); ``deliveries(signer:stripeSigner:)`` signs both and puts them in
/// the order a server receives them. ``twoChannel(signer:stripeSigner:account:start:stripe:)`` is a
/// ready-made story of this kind.
public struct MintStory: Sendable {
    /// One signed statement of the story, from either channel, and its instant.
    public struct Delivery: Sendable, Hashable {
        /// What was signed.
        public enum Content: Sendable, Hashable {
            /// An App Store token (compact JWS): a transaction, or a notification with its nested
            /// transaction and renewal info.
            case appStore(String)
            /// A Stripe webhook delivery: the signed body and its `Stripe-Signature` header.
            case stripe(StripeDelivery)
        }

        /// The item's `signedDate` (App Store) or the event's `created` (Stripe).
        public var instant: Timestamp
        /// The token or the delivery.
        public var content: Content
        /// Whether an App Store token is a notification (which the App Store POSTs to the
        /// server) rather than a transaction (which the app sends).
        var isNotification = false

        /// The delivery as one line of a file `vouch` reads: the token, or the stored delivery
        /// (`StripeDelivery.storedJSON`).
        public var line: String {
            switch content {
            case .appStore(let token): token
            case .stripe(let delivery): String(decoding: delivery.storedJSON, as: UTF8.self)
            }
        }

        /// The delivery as the server receives it, as one line of a file `vouch` reads: a
        /// notification as the body the App Store POSTs (``MintHistory/webhookBody(signedPayload:)``),
        /// a transaction as the token the app sends, a Stripe delivery stored
        /// (`StripeDelivery.storedJSON`).
        public var received: String {
            if case .appStore(let token) = content, isNotification {
                return MintHistory.webhookBody(signedPayload: token)
            }
            return line
        }
    }

    /// The account's App Store history; its `appAccountToken` is the account id.
    public var appStore: MintHistory
    /// The account's Stripe subscriptions; its ``MintStripeHistory/account`` is the account id.
    public var web: MintStripeHistory

    /// The story of `account` (a UUID: the `appAccountToken` in the app, lowercased as the App
    /// Store writes it, and the Checkout metadata on the web), with nothing in it yet.
    ///
    /// Its ids are the account's: App Store transaction ids from `firstTransactionId` (by
    /// default the account's own range, ``MintHistory/firstTransactionId(environment:namespace:account:)``
    /// in the namespace of the account id's hash), Stripe ids from `stripe`'s seed and the
    /// account (``MintStripeHistory/init(account:generator:)``), so that stories of different
    /// accounts can be fed to one ledger and each answers as it does alone.
    /// - Parameters:
    ///   - account: the account id.
    ///   - firstTransactionId: the App Store history's first transaction id; `nil` for the
    ///     account's own.
    ///   - appAccountToken: whether the app sends the account id as `appAccountToken`. Without
    ///     it the App Store data names no account, as an app's that never sets one: a reader
    ///     knows that chain by its `originalTransactionId`, apart from the web account.
    ///   - environment: the `environment` of every App Store payload; by default the one that
    ///     matches Stripe's mode (Production for live mode, Sandbox for test mode), so that a
    ///     reader of both channels sees one account.
    ///   - bundleId: the `bundleId` of every App Store payload.
    ///   - stripe: renders the Stripe events (seed, API version, mode, metadata key).
    public init(
        account: String, firstTransactionId: Int64? = nil, appAccountToken: Bool = true,
        environment: AppStoreEnvironment? = nil, bundleId: String = "com.example.app",
        stripe: MintStripe = MintStripe(date: Date(timeIntervalSince1970: 0))
    ) {
        let environment = environment ?? (stripe.livemode ? .production : .sandbox)
        let account = account.lowercased()
        appStore = MintHistory(
            environment: environment, bundleId: bundleId, appAccountToken: appAccountToken ? account : nil,
            firstTransactionId: firstTransactionId
                ?? MintHistory.firstTransactionId(
                    environment: environment, namespace: MintGenerator.seed(account), account: 0))
        web = MintStripeHistory(account: account, generator: stripe)
    }

    /// The account id, as both channels carry it.
    public var account: String { web.account }

    /// Both channels signed, in the order a server receives them: by instant, an App Store item
    /// before a Stripe event of the same millisecond, each channel in its own order.
    ///
    /// Refuses a story with a step out of order on either channel, or whose channels name
    /// different accounts (`MintError` code `unsupported`); an App Store history that names no
    /// account is the app's that sends none.
    public func deliveries(signer: MintSigner, stripeSigner: MintStripeSigner) throws(MintError) -> [Delivery] {
        guard appStore.appAccountToken == nil || appStore.appAccountToken == web.account else {
            throw MintError(
                .unsupported,
                "the App Store history is of \(appStore.appAccountToken ?? "no account") and the Stripe one of \(web.account)"
            )
        }
        let tokens = try appStore.tokens(signer: signer)
        let stripe = try web.deliveries(signer: stripeSigner)
        var app = zip(appStore.items, tokens).map {
            Delivery(instant: $0.signedDate, content: .appStore($1), isNotification: $0.isNotification)
        }[...]
        var events = zip(web.events, stripe).map {
            Delivery(instant: Timestamp(milliseconds: $0.created * 1000), content: .stripe($1))
        }[...]
        var merged: [Delivery] = []
        merged.reserveCapacity(app.count + events.count)
        while !app.isEmpty || !events.isEmpty {
            if let event = events.first, app.first.map({ event.instant < $0.instant }) ?? true {
                merged.append(events.removeFirst())
            } else {
                merged.append(app.removeFirst())
            }
        }
        return merged
    }
}
