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
public struct EntitlementLedger: Sendable {
    /// Tiers, trials and non-renewing lengths.
    public var catalog: ProductCatalog

    /// A transaction chain: every transaction of one `originalTransactionId` and ownership in
    /// one environment.
    struct ChainKey: Hashable, Sendable {
        var environment: String
        var originalTransactionId: String
        var ownership: String

        var renewalKey: RenewalKey {
            RenewalKey(environment: environment, originalTransactionId: originalTransactionId)
        }
    }

    /// What renewal info and account claims are kept by: a chain whatever its ownership.
    struct RenewalKey: Hashable, Sendable {
        var environment: String
        var originalTransactionId: String
    }

    /// The chains one identifier names: nearly always one, so it is kept without an array.
    enum ChainKeys: Sendable {
        case one(ChainKey)
        case many([ChainKey])

        var keys: [ChainKey] {
            switch self {
            case .one(let key): [key]
            case .many(let keys): keys
            }
        }

        func adding(_ key: ChainKey) -> ChainKeys {
            switch self {
            case .one(let known): known == key ? self : .many([known, key])
            case .many(let known): known.contains(key) ? self : .many(known + [key])
            }
        }
    }

    private(set) var chains: [ChainKey: [String: TransactionRecord]] = [:]
    private(set) var renewals: [RenewalKey: RenewalStatement] = [:]
    /// The account a caller named for a chain (lowercased `appAccountToken`s), by chain.
    private(set) var claims: [RenewalKey: String] = [:]
    /// Each chain's account, and each account's chains (ordered by `originalTransactionId`,
    /// then ownership): kept up to date as statements arrive.
    private var chainAccounts: [ChainKey: AccountKey] = [:]
    private var accountChains: [AccountKey: [ChainKey]] = [:]
    private var chainsByOriginalTransactionId: [String: ChainKeys] = [:]
    private var chainsByTransactionId: [String: ChainKeys] = [:]
    /// The environments of the chains held, for lookups by account token.
    var environments: Set<String> = []
    /// Every notification delivery read: by `notificationUUID`, each `signedDate` and how often.
    private(set) var deliveries: [String: Sightings] = [:]
    /// Grants a server added from a source of its own (``EntitlementGrant``), by source,
    /// environment and id, and each account's.
    var grants: [GrantKey: EntitlementGrant] = [:]
    var accountGrants: [AccountKey: [GrantKey]] = [:]
    var grantsById: [String: Set<GrantKey>] = [:]
    /// Stripe subscriptions, by environment and id: what their events said; each account's,
    /// and each subscription's account.
    var stripeSubscriptions: [StripeKey: StripeSubscriptionRecord] = [:]
    var accountSubscriptions: [AccountKey: [StripeKey]] = [:]
    var subscriptionAccounts: [StripeKey: AccountKey] = [:]
    /// Refunded Stripe charges, by environment and charge id: the newest statement of each.
    var stripeRefunds: [StripeKey: StripeRefundRecord] = [:]
    /// Stripe subscriptions and refunded charges by environment and customer id, and refunded
    /// charges by environment and the account their own metadata names: what one account's
    /// refunds are found through.
    var stripeSubscriptionsByCustomer: [StripeKey: Set<StripeKey>] = [:]
    var stripeRefundsByCustomer: [StripeKey: Set<StripeKey>] = [:]
    var stripeRefundsByAccount: [StripeKey: Set<StripeKey>] = [:]
    /// One copy of each text many records repeat (product ids, types, tokens), so memory
    /// follows the transactions, not the bytes of their statements.
    private var strings = Set<String>()
    /// What was fed in.
    public internal(set) var statistics = Statistics()
    /// The number of distinct transactions held.
    public private(set) var transactionCount = 0

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

    /// One `signedDate` a notification was read with, and how many times.
    struct NotificationSighting: Sendable, Hashable {
        var signedDate: Int64
        var count: Int
    }

    /// The sightings of one notification: nearly always one `signedDate`, kept without an array.
    enum Sightings: Sendable, Hashable, Sequence {
        case one(NotificationSighting)
        case many([NotificationSighting])

        var all: [NotificationSighting] {
            switch self {
            case .one(let sighting): [sighting]
            case .many(let sightings): sightings
            }
        }

        func makeIterator() -> IndexingIterator<[NotificationSighting]> { all.makeIterator() }

        /// These sightings and `count` more with `signedDate`.
        func adding(_ signedDate: Int64, count: Int) -> Sightings {
            var sightings = all
            if let index = sightings.firstIndex(where: { $0.signedDate == signedDate }) {
                sightings[index].count += count
            } else {
                sightings.append(NotificationSighting(signedDate: signedDate, count: count))
            }
            return sightings.count == 1 ? .one(sightings[0]) : .many(sightings)
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

    /// The number of transaction chains held.
    public var chainCount: Int { chains.count }

    /// The number of Stripe subscriptions held.
    public var stripeSubscriptionCount: Int { stripeSubscriptions.count }

    /// The notification deliveries read, by `notificationUUID`.
    public var notificationDeliveries: NotificationDeliveries {
        var counts = NotificationDeliveries()
        for sightings in deliveries.values {
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
        var batch = Statements()
        batch.read(verified)
        apply(batch)
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
        var batch = Statements()
        batch.read(verified)
        try claim(batch, for: Self.token(account))
        apply(batch)
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
        var batch = Statements()
        batch.read(receipt)
        apply(batch)
    }

    /// Adds the in-app purchases of a verified receipt and binds their chains to `account`, the
    /// caller's account id. Throws ``LedgerError/Code/accountConflict``, adding nothing, when
    /// one of the chains already belongs to another account.
    public mutating func add(_ receipt: VerifiedReceipt, account: UUID) throws(LedgerError) {
        var batch = Statements()
        batch.read(receipt)
        try claim(batch, for: Self.token(account))
        apply(batch)
    }

    /// The text an account token is kept as: the UUID in lower case, as Apple writes it.
    static func token(_ account: UUID) -> String { account.uuidString.lowercased() }

    /// What one call gives the ledger: the statements read from a payload or receipt.
    struct Statements {
        var transactions: [TransactionRecord] = []
        var renewals: [(RenewalKey, RenewalStatement)] = []
        var delivery: (uuid: String, signedDate: Int64)?
        var statistics = Statistics()

        mutating func read(_ verified: VerifiedPayload) {
            switch verified.decoded {
            case .transaction(let transaction):
                read(transaction)
            case .renewalInfo(let renewal):
                read(renewal)
            case .notification(let notification):
                statistics.notifications += 1
                if let uuid = notification.notificationUUID, let signedDate = notification.signedDate?.milliseconds {
                    delivery = (uuid, signedDate)
                }
                let reversal =
                    notification.notificationType == .refundReversed ? notification.signedDate?.milliseconds : nil
                var used = false
                for nested in verified.nested {
                    switch nested.payload.decoded {
                    case .transaction(let transaction):
                        read(transaction, reversalNotifiedAt: reversal)
                        used = true
                    case .renewalInfo(let renewal):
                        read(renewal)
                        used = true
                    default:
                        continue
                    }
                }
                if !used { statistics.ignored += 1 }
            case .appTransaction, .realtimeRequest:
                statistics.ignored += 1
            }
        }

        mutating func read(_ transaction: JWSTransactionDecodedPayload, reversalNotifiedAt: Int64? = nil) {
            statistics.transactions += 1
            guard let statement = TransactionStatement(transaction) else {
                statistics.incomplete += 1
                return
            }
            transactions.append(TransactionRecord(statement, reversalNotifiedAt: reversalNotifiedAt))
        }

        mutating func read(_ renewal: JWSRenewalInfoDecodedPayload) {
            statistics.renewalInfos += 1
            guard let statement = RenewalStatement(renewal), let originalTransactionId = renewal.originalTransactionId
            else {
                statistics.incomplete += 1
                return
            }
            renewals.append(
                (
                    RenewalKey(
                        environment: renewal.environment?.rawValue ?? "", originalTransactionId: originalTransactionId),
                    statement
                ))
        }

        mutating func read(_ verified: VerifiedReceipt) {
            statistics.receipts += 1
            let receipt = verified.receipt
            let environment = receipt.receiptType?.environment ?? ""
            for purchase in receipt.inApp {
                statistics.transactions += 1
                guard let created = receipt.receiptCreationDate?.milliseconds,
                    let statement = TransactionStatement(purchase, environment: environment, createdAt: created)
                else {
                    statistics.incomplete += 1
                    continue
                }
                transactions.append(TransactionRecord(receipt: statement))
            }
        }

        /// The chains the statements name.
        var chains: Set<RenewalKey> {
            Set(transactions.map { $0.current.chainKey.renewalKey } + renewals.map(\.0))
        }
    }

    /// Checks that every chain `batch` names may be bound to `token`, then binds them.
    private mutating func claim(_ batch: Statements, for token: String) throws(LedgerError) {
        for record in batch.transactions {
            if let other = record.current.appAccountToken, other != token {
                throw Self.conflict(record.current.chainKey.renewalKey, claimed: token, owner: other)
            }
        }
        for (key, renewal) in batch.renewals {
            if let other = renewal.appAccountToken, other != token {
                throw Self.conflict(key, claimed: token, owner: other)
            }
        }
        let keys = batch.chains
        for key in keys {
            if let owner = owner(of: key), owner != token { throw Self.conflict(key, claimed: token, owner: owner) }
        }
        for key in keys { claims[key] = strings.insert(token).memberAfterInsert }
    }

    /// The account token a chain belongs to, by any of its chains' ownerships: what its signed
    /// data or a claim names. A member's `ASSIGNED` chain is an account of its own and never
    /// names the owner.
    func owner(of key: RenewalKey) -> String? {
        for chain in chainKeys(of: key) where !Self.isAssigned(chain) {
            if let token = chainAccounts[chain]?.appAccountToken { return token }
        }
        return renewals[key]?.appAccountToken ?? claims[key]
    }

    /// Whether a chain holds a member's seat of a multiseat subscription (`ASSIGNED`).
    static func isAssigned(_ chain: ChainKey) -> Bool { chain.ownership == InAppOwnershipType.assigned.rawValue }

    static func conflict(_ key: RenewalKey, claimed: String, owner: String) -> LedgerError {
        LedgerError(
            .accountConflict,
            "the \(key.environment) chain \(key.originalTransactionId) belongs to account \(owner), not \(claimed)")
    }

    /// Adds the statements of one call (claims are bound before).
    private mutating func apply(_ batch: Statements) {
        statistics.add(batch.statistics)
        if let delivery = batch.delivery { note(delivery.uuid, signedDate: delivery.signedDate, count: 1) }
        for record in batch.transactions { insert(record) }
        for (key, statement) in batch.renewals { insert(statement, for: key) }
        for key in batch.chains where claims[key] != nil { rekey(key) }
    }

    private mutating func note(_ uuid: String, signedDate: Int64, count: Int) {
        deliveries[uuid] =
            deliveries[uuid]?.adding(signedDate, count: count)
            ?? .one(NotificationSighting(signedDate: signedDate, count: count))
    }

    /// Joins `record` into its chain and keeps the indexes up to date.
    mutating func insert(_ record: TransactionRecord) {
        var record = record
        record.share(&strings)
        let statement = record.current
        let key = statement.chainKey
        let newChain = chains[key] == nil
        if newChain {
            chainsByOriginalTransactionId[key.originalTransactionId] =
                chainsByOriginalTransactionId[key.originalTransactionId]?.adding(key) ?? .one(key)
            environments.insert(key.environment)
        }
        var added = false
        if var known = chains[key]?[statement.transactionId] {
            known.join(record)
            chains[key]![statement.transactionId] = known
        } else {
            chains[key, default: [:]][statement.transactionId] = record
            transactionCount += 1
            added = true
        }
        if added {
            chainsByTransactionId[statement.transactionId] =
                chainsByTransactionId[statement.transactionId]?.adding(key) ?? .one(key)
        }
        // A new ownership of a chain can change whether a member's chain shares it.
        if newChain, key.ownership != InAppOwnershipType.assigned.rawValue { rekey(key.renewalKey) } else { rekey(key) }
    }

    /// Keeps the newer of `statement` and the renewal info known of its chain.
    mutating func insert(_ statement: RenewalStatement, for key: RenewalKey) {
        if let known = renewals[key], !statement.isNewer(than: known) { return }
        var statement = statement
        statement.appAccountToken = statement.appAccountToken.map { strings.insert($0).memberAfterInsert }
        let before = renewals[key]?.appAccountToken
        renewals[key] = statement
        if before != statement.appAccountToken { rekey(key) }
    }

    /// Binds a chain to an account (a stored claim); the first claim of a chain stays.
    mutating func insert(claim token: String, for key: RenewalKey) {
        guard claims[key] == nil else { return }
        claims[key] = strings.insert(token).memberAfterInsert
        rekey(key)
    }

    /// The chains of `key`, one per ownership held.
    func chainKeys(of key: RenewalKey) -> [ChainKey] {
        (chainsByOriginalTransactionId[key.originalTransactionId]?.keys ?? []).filter {
            $0.environment == key.environment
        }
    }

    /// Re-derives the account of every chain of `key` (its ownerships).
    private mutating func rekey(_ key: RenewalKey) {
        for chain in chainsByOriginalTransactionId[key.originalTransactionId]?.keys ?? []
        where chain.environment == key.environment {
            rekey(chain)
        }
    }

    /// Re-derives the account of `key` and moves the chain between accounts when it changed.
    private mutating func rekey(_ key: ChainKey) {
        guard let records = chains[key] else { return }
        let account = account(of: key, records: records)
        let before = chainAccounts[key]
        guard before != account else { return }
        if let before, var list = accountChains[before] {
            list.removeAll { $0 == key }
            accountChains[before] = list.isEmpty ? nil : list
        }
        chainAccounts[key] = account
        var list = accountChains[account] ?? []
        let index =
            list.firstIndex {
                ($0.originalTransactionId, $0.ownership) > (key.originalTransactionId, key.ownership)
            } ?? list.endIndex
        list.insert(key, at: index)
        accountChains[account] = list
    }

    /// A chain's account: the `appAccountToken` of its latest transaction that carries one (by
    /// purchase date, then transaction id), else of its renewal info, else the account a caller
    /// named for it, else the chain itself. A member's `ASSIGNED` chain that shares its
    /// `originalTransactionId` with another ownership takes neither the renewal info's token nor
    /// the caller's account (they are the purchaser's): the member is an account of their own.
    private func account(of key: ChainKey, records: [String: TransactionRecord]) -> AccountKey {
        var best: TransactionStatement?
        for record in records.values where record.current.appAccountToken != nil {
            if let known = best,
                (known.purchaseDate, known.transactionId) >= (record.current.purchaseDate, record.current.transactionId)
            {
                continue
            }
            best = record.current
        }
        let shared = Self.isAssigned(key) && chainKeys(of: key.renewalKey).contains { !Self.isAssigned($0) }
        let token =
            best?.appAccountToken
            ?? (shared ? nil : renewals[key.renewalKey]?.appAccountToken ?? claims[key.renewalKey])
        return AccountKey(
            environment: key.environment, appAccountToken: token, originalTransactionId: key.originalTransactionId)
    }

    /// Adds everything `other` holds (statistics, deliveries and claims included; a chain both
    /// have claimed keeps this ledger's claim); the catalog stays this ledger's.
    public mutating func merge(_ other: EntitlementLedger) {
        for records in other.chains.values {
            for record in records.values { insert(record) }
        }
        for (key, statement) in other.renewals { insert(statement, for: key) }
        for (key, token) in other.claims { insert(claim: token, for: key) }
        for (uuid, sightings) in other.deliveries {
            for sighting in sightings { note(uuid, signedDate: sighting.signedDate, count: sighting.count) }
        }
        mergeOtherChannels(other)
        statistics.add(other.statistics)
    }

    /// Counts a notification delivery read elsewhere (a store's).
    mutating func noteDelivery(_ uuid: String, signedDate: Int64, count: Int) {
        note(uuid, signedDate: signedDate, count: count)
    }

    // MARK: Accounts

    /// Every account known, in a stable order.
    public var accounts: [AccountKey] {
        Set(accountChains.keys).union(accountGrants.keys).union(accountSubscriptions.keys).sorted()
    }

    /// Whether the ledger knows `account` from any source.
    func knows(_ account: AccountKey) -> Bool {
        accountChains[account] != nil || accountGrants[account] != nil || accountSubscriptions[account] != nil
    }

    /// The chains of `account`, ordered by `originalTransactionId`, then ownership; `nil` for
    /// an account not known.
    func chains(of account: AccountKey) -> [ChainKey]? { accountChains[account] }

    /// The account of a chain.
    func account(of chain: ChainKey) -> AccountKey? { chainAccounts[chain] }

    /// The accounts an identifier names: an `appAccountToken` (in any case) or any
    /// `originalTransactionId` of the account, in every environment.
    public func accounts(matching identifier: String) -> [AccountKey] {
        var found = Set<AccountKey>()
        let lowered = identifier.lowercased()
        for environment in environments {
            let account = AccountKey(environment: environment, appAccountToken: lowered, originalTransactionId: "")
            if knows(account) { found.insert(account) }
        }
        for key in chainsByOriginalTransactionId[identifier]?.keys ?? [] {
            if let account = chainAccounts[key] { found.insert(account) }
        }
        found.formUnion(accounts(withGrantId: identifier))
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
    /// that has it).
    public func accounts(withTransactionId transactionId: String) -> [AccountKey] {
        Set((chainsByTransactionId[transactionId]?.keys ?? []).compactMap { chainAccounts[$0] })
            .union(accounts(withGrantId: transactionId)).sorted()
    }
}

extension TransactionStatement {
    /// The chain the statement belongs to.
    var chainKey: EntitlementLedger.ChainKey {
        EntitlementLedger.ChainKey(
            environment: environment, originalTransactionId: originalTransactionId, ownership: ownership)
    }
}
