public import Foundation
public import Vouch
public import VouchReceipts

/// Who is entitled to what, from verified App Store data: StoreKit's
/// `Transaction.currentEntitlements` applied to signed server data.
///
/// Feed it verified payloads (transactions, renewal info, notifications with their nested
/// tokens) and verified receipts in any order, any number of times; ask for the entitlements of
/// an account at an instant, the accounts entitled to a product or tier, and the revocations.
/// The rules:
///
/// - A non-consumable purchased at or before the instant and not revoked at it. A product the
///   catalog gives `trialDays` is a trial for that many days from its purchase, then nothing.
/// - For each auto-renewable subscription chain (`originalTransactionId`), its latest
///   transaction purchased at or before the instant and not superseded by an upgrade
///   (`isUpgraded`), while the instant is before its `expiresDate`, or, when the newest renewal
///   info says `isInBillingRetryPeriod`, before its `gracePeriodExpiresDate`; never when revoked.
///   When several transactions represent the period (`additionalTransactionReason`, seats added
///   to a multiseat subscription), access ends only when every one of them is revoked, and the
///   entitlement counts the period's seats; a seat-based refund (`revokedSeatQuantity`) lowers
///   the seats and never revokes.
/// - The latest transaction of each non-renewing subscription, for the catalog's length
///   (unbounded without one); never when revoked.
/// - Consumables, and types this version does not know, are never entitlements.
///
/// The newest signed statement about a transaction wins (a later `signedDate` supersedes, so
/// data without `revocationDate` after a refund restores access); the newest renewal info of a
/// chain wins likewise. A receipt's purchase stands for a transaction no signed statement is
/// known of; its cancellation date revokes, and it never restores a revoked transaction.
/// `FAMILY_SHARED` transactions form chains of their own and a `FAMILY_REVOKE` is not a refund;
/// a member's `ASSIGNED` transactions are an account of their own.
/// Environments never mix.
///
/// Only `VerifiedPayload`s and `VerifiedReceipt`s go in: nothing unverified can reach the
/// answer. Memory holds one small record per transaction, one renewal statement per chain and
/// one entry per notification delivery, never the tokens: feeding the same statements again
/// changes nothing. Two ledgers fed disjoint parts of the data and merged equal one ledger fed
/// all of it.
///
/// Accounts are kept in indexes updated as statements arrive (by account, by
/// `originalTransactionId` and by `transactionId`), so a lookup costs a few hash probes and
/// one account's answer reads only that account's chains.
///
/// The ledger holds channels, each a folder of its own under `Channels/`: the App Store
/// (tokens and receipts), Stripe (webhook events) and grants (a server's own sources). Each
/// keeps its statements and indexes and answers for its own data; the ledger asks every
/// channel and merges the answers.
public struct EntitlementLedger: Sendable {
    /// Tiers, trials and non-renewing lengths.
    public var catalog: ProductCatalog

    /// The channels (``LedgerChannel``); registering a channel is a property here and a line
    /// in ``ask(_:)`` and ``mergeChannels(_:)``.
    var appStore = AppStoreChannel()
    var stripe = StripeChannel()
    var grants = GrantChannel()

    /// Asks every channel `question`, in the order their answers are merged, and returns the
    /// answers gathered. Each channel is passed as itself (generic), never boxed, so a question
    /// costs what the channels' answers cost.
    func ask(_ question: ChannelQuestion) -> ChannelQuestion {
        var question = question
        question.visit(appStore)
        question.visit(stripe)
        question.visit(grants)
        return question
    }

    /// Runs `body`, which inserts many stored records into this ledger, deriving each App Store
    /// chain's account once when it is done (``AppStoreChannel/deferAccounts()``).
    mutating func insertingRecords<Result>(_ body: (inout EntitlementLedger) throws(LedgerError) -> Result)
        throws(LedgerError) -> Result
    {
        let began = appStore.deferAccounts()
        defer { if began { appStore.deriveDeferredAccounts() } }
        return try body(&self)
    }

    /// Adds each channel of `other` to this ledger's.
    private mutating func mergeChannels(_ other: EntitlementLedger) {
        appStore.merge(other.appStore)
        stripe.merge(other.stripe)
        grants.merge(other.grants)
    }

    /// What was fed in.
    public internal(set) var statistics = Statistics()

    /// What each distinct input added to ``statistics``, by the input's digest
    /// (``LedgerStore/checksum(_:)`` of its identity: a token's kind and payload, a receipt's
    /// signed content, a Stripe event's mode and id, a grant's record); kept by a ledger made by
    /// ``batch()`` only, `nil` otherwise. A store counts the inputs of such a batch that it does
    /// not hold yet, so an input added again (a rerun after a crash) is counted once.
    var inputs: [Int64: Statistics]?

    /// An empty ledger gathering a batch for a store (``LedgerStore/add(contentsOf:)``): it
    /// also keeps which inputs it was fed, so that the store's statistics count each input
    /// once however often it is added. Merging a ledger made otherwise into it drops that.
    public static func batch() -> EntitlementLedger {
        var ledger = EntitlementLedger()
        ledger.inputs = [:]
        return ledger
    }

    /// Records, in a ledger made by ``batch()``, that the input of identity `key` added
    /// `added` to ``statistics``.
    mutating func counted(_ key: @autoclosure () -> [UInt8], added: Statistics) {
        guard inputs != nil else { return }
        inputs?[LedgerStore.checksum(key())] = added
    }

    /// The number of distinct transactions held.
    public var transactionCount: Int { appStore.transactionCount }

    /// Counts of what the ledger was fed.
    public struct Statistics: Sendable, Hashable {
        /// Transaction statements read (nested ones and receipts' in-app purchases included).
        public internal(set) var transactions = 0
        /// Renewal info statements read (nested ones included).
        public internal(set) var renewalInfos = 0
        /// Notifications read (their nested statements are counted above).
        public internal(set) var notifications = 0
        /// Payloads that say nothing about entitlements (app transactions, retention-messaging
        /// requests, notifications without a transaction).
        public internal(set) var ignored = 0
        /// Transactions or renewal info lacking a member the rules need (`signedDate`,
        /// `transactionId`, `originalTransactionId`, `productId`, `purchaseDate`; for a
        /// receipt's purchase, the receipt's creation date).
        public internal(set) var incomplete = 0
        /// Receipts read (their in-app purchases are counted as transactions).
        public internal(set) var receipts = 0
        /// Stripe events read (those of types that say nothing about entitlements or refunds
        /// are also counted as ``ignored``).
        public internal(set) var stripeEvents = 0
        /// Grants added from a server's own sources (``EntitlementGrant``).
        public internal(set) var grants = 0

        /// What this counts beyond `earlier`, a count taken before.
        func since(_ earlier: Statistics) -> Statistics {
            var added = self
            added.stripeEvents -= earlier.stripeEvents
            added.grants -= earlier.grants
            added.transactions -= earlier.transactions
            added.renewalInfos -= earlier.renewalInfos
            added.notifications -= earlier.notifications
            added.ignored -= earlier.ignored
            added.incomplete -= earlier.incomplete
            added.receipts -= earlier.receipts
            return added
        }

        mutating func add(_ other: Statistics) {
            stripeEvents += other.stripeEvents
            grants += other.grants
            transactions += other.transactions
            renewalInfos += other.renewalInfos
            notifications += other.notifications
            ignored += other.ignored
            incomplete += other.incomplete
            receipts += other.receipts
        }
    }

    /// What the ledger knows of notification deliveries, by `notificationUUID`.
    ///
    /// Apple gives each notification a UUID and sends it again until the server answers it;
    /// Apple does not say whether a retry is signed anew. A notification read again with the
    /// same `signedDate` is a duplicate (the same delivery read twice: a re-import, a history
    /// fetched again); with another `signedDate`, a retry.
    public struct NotificationDeliveries: Sendable, Hashable {
        /// Distinct `notificationUUID`s.
        public internal(set) var notifications = 0
        /// Readings of a notification with a `signedDate` already read.
        public internal(set) var duplicates = 0
        /// Further `signedDate`s of a notification already read.
        public internal(set) var retries = 0
    }

    /// An empty ledger that answers tiers, trials and non-renewing lengths by `catalog`.
    public init(catalog: ProductCatalog = ProductCatalog()) {
        self.catalog = catalog
    }

    /// An empty ledger of `catalog` for the records of one account's answer, dropped once it is
    /// given: the texts of its records are not interned (``AppStoreChannel/internsTexts``).
    static func forOneAnswer(catalog: ProductCatalog) -> EntitlementLedger {
        var ledger = EntitlementLedger(catalog: catalog)
        ledger.appStore.internsTexts = false
        return ledger
    }

    /// The number of transaction chains held.
    public var chainCount: Int { appStore.chains.count }

    /// The number of Stripe subscriptions held.
    public var stripeSubscriptionCount: Int { stripe.subscriptions.count }

    /// The notification deliveries read, by `notificationUUID`.
    public var notificationDeliveries: NotificationDeliveries {
        var counts = NotificationDeliveries()
        for sightings in appStore.deliveries.values {
            counts.notifications += 1
            let all = sightings.all
            counts.retries += all.count - 1
            for sighting in all { counts.duplicates += sighting.count - 1 }
        }
        return counts
    }

    // MARK: Feeding

    /// Adds what a verified payload says. A notification contributes its verified nested
    /// transaction and renewal info, and its delivery (``notificationDeliveries``); a
    /// `REFUND_REVERSED` notification also dates the reversal.
    public mutating func add(_ verified: VerifiedPayload) {
        var batch = AppStoreChannel.Statements()
        batch.read(verified)
        apply(batch, key: Self.key(of: verified))
    }

    /// Adds what a verified payload of a known kind says, as ``add(_:)-(VerifiedPayload)``.
    public mutating func add<Payload: VerifiablePayload>(_ verified: Verified<Payload>) {
        add(verified.untyped)
    }

    /// Adds what a verified payload says and binds the chains it names to `account`, the
    /// caller's account id (a purchase the app sent with the signed-in user's account).
    ///
    /// Throws ``LedgerError/Code/accountConflict``, adding nothing, when one of those chains
    /// already belongs to another account (by the `appAccountToken` Apple signed, or by an
    /// earlier claim), or the payload carries another `appAccountToken`.
    public mutating func add(_ verified: VerifiedPayload, account: UUID) throws(LedgerError) {
        var batch = AppStoreChannel.Statements()
        batch.read(verified)
        try appStore.claim(batch, for: Self.token(account))
        apply(batch, key: Self.key(of: verified))
    }

    /// Adds what a verified payload of a known kind says and binds its chains to `account`, as
    /// ``add(_:account:)-(VerifiedPayload,_)``.
    public mutating func add<Payload: VerifiablePayload>(_ verified: Verified<Payload>, account: UUID)
        throws(LedgerError)
    {
        try add(verified.untyped, account: account)
    }

    /// Adds the in-app purchases of a verified receipt as statements of their transactions,
    /// dated by the receipt's creation, in the receipt's environment. Each chain belongs to the
    /// account its signed data names, or is an account of its own.
    public mutating func add(_ receipt: VerifiedReceipt) {
        var batch = AppStoreChannel.Statements()
        batch.read(receipt)
        apply(batch, key: receipt.payload)
    }

    /// Adds the in-app purchases of a verified receipt and binds their chains to `account`, the
    /// caller's account id. Throws ``LedgerError/Code/accountConflict``, adding nothing, when
    /// one of the chains already belongs to another account.
    public mutating func add(_ receipt: VerifiedReceipt, account: UUID) throws(LedgerError) {
        var batch = AppStoreChannel.Statements()
        batch.read(receipt)
        try appStore.claim(batch, for: Self.token(account))
        apply(batch, key: receipt.payload)
    }

    /// Applies the statements of one input, whose identity is `key`.
    private mutating func apply(_ batch: AppStoreChannel.Statements, key: @autoclosure () -> [UInt8]) {
        statistics.add(batch.statistics)
        counted(key(), added: batch.statistics)
        appStore.apply(batch)
    }

    /// A token's identity: its kind and its payload as ``JSONWriter`` writes it (the nested
    /// tokens of a notification are members of it), copied from the signed bytes when they are
    /// exactly that.
    private static func key(of verified: VerifiedPayload) -> [UInt8] {
        Array(verified.kind.rawValue.utf8) + [0x0A]
            + (verified.canonicalPayload ?? JSONWriter.encode(.object(verified.payload)))
    }

    /// The text an account token is kept as: the UUID in lower case, as Apple writes it.
    static func token(_ account: UUID) -> String { account.uuidString.lowercased() }

    /// Adds everything `other` holds (statistics, deliveries and claims included; a chain both
    /// have claimed keeps this ledger's claim); the catalog stays this ledger's.
    public mutating func merge(_ other: EntitlementLedger) {
        mergeChannels(other)
        statistics.add(other.statistics)
        if let theirs = other.inputs {
            inputs?.merge(theirs) { mine, _ in mine }
        } else {
            inputs = nil
        }
    }

    // MARK: Accounts

    /// Every account known, in a stable order.
    public var accounts: [AccountKey] { ask(ChannelQuestion(.accounts)).accounts.sorted() }

    /// Whether the ledger knows `account` from any channel.
    func knows(_ account: AccountKey) -> Bool {
        appStore.knows(account) || stripe.knows(account) || grants.knows(account)
    }

    /// The environments of everything held.
    var environments: Set<String> {
        appStore.environments.union(stripe.environments).union(grants.environments)
    }

    /// The accounts an identifier names: an `appAccountToken` (in any case), any
    /// `originalTransactionId` of the account, a Stripe subscription's id or a grant's id, in
    /// every environment.
    public func accounts(matching identifier: String) -> [AccountKey] {
        var found = Set<AccountKey>()
        let lowered = AccountKey.token(identifier)
        for environment in environments {
            let account = AccountKey(environment: environment, appAccountToken: lowered, originalTransactionId: "")
            if knows(account) { found.insert(account) }
        }
        found.formUnion(ask(ChannelQuestion(.accountsIdentified(by: identifier))).accounts)
        return found.sorted()
    }

    /// The accounts whose `appAccountToken` is `appAccountToken`, in every environment.
    public func accounts(matching appAccountToken: UUID) -> [AccountKey] {
        let token = Self.token(appAccountToken)
        return environments.map {
            AccountKey(environment: $0, appAccountToken: token, originalTransactionId: "")
        }.filter(knows).sorted()
    }

    /// The accounts holding a transaction `transactionId` (one per environment and ownership
    /// that has it), or a Stripe subscription or grant of that id.
    public func accounts(withTransactionId transactionId: String) -> [AccountKey] {
        ask(ChannelQuestion(.accountsHolding(transactionId: transactionId))).accounts.sorted()
    }
}
