internal import Foundation
internal import Vouch
internal import VouchReceipts

/// The App Store channel: verified transactions, renewal info and notifications (with their
/// nested tokens), and the in-app purchases of verified receipts, kept by transaction chain
/// (`originalTransactionId`, ownership and environment). Its indexes find a chain's account,
/// an account's chains, and the chains an `originalTransactionId` or `transactionId` names.
/// The rules it answers by are ``EntitlementLedger``'s.
struct AppStoreChannel: LedgerChannel {
    static let source = EntitlementSource.appStore

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
    /// The environments of the chains held.
    private(set) var environments: Set<String> = []
    /// Every notification delivery read: by `notificationUUID`, each `signedDate` and how often.
    private(set) var deliveries: [String: Sightings] = [:]
    /// One copy of each text many records repeat (product ids, types, tokens), so memory
    /// follows the transactions, not the bytes of their statements.
    private var strings = Set<String>()
    /// Whether inserted records' texts are interned in ``strings``: worth its hashing over a
    /// ledger's life, not in a ledger that gives one answer and is dropped.
    var internsTexts = true
    /// The number of distinct transactions held.
    private(set) var transactionCount = 0
    /// The chains whose account is derived once the records being inserted are all in
    /// (``deferAccounts()``); `nil` derives a chain's account whenever it may change.
    private var chainsToRekey: Set<RenewalKey>?

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

    /// What one call gives the ledger: the statements read from a payload or receipt.
    struct Statements {
        var transactions: [TransactionRecord] = []
        var renewals: [(RenewalKey, RenewalStatement)] = []
        var delivery: (uuid: String, signedDate: Int64)?
        var statistics = EntitlementLedger.Statistics()

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
    mutating func claim(_ batch: Statements, for token: String) throws(LedgerError) {
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
    mutating func apply(_ batch: Statements) {
        if let delivery = batch.delivery { noteDelivery(delivery.uuid, signedDate: delivery.signedDate, count: 1) }
        for record in batch.transactions { insert(record) }
        for (key, statement) in batch.renewals { insert(statement, for: key) }
        for key in batch.chains where claims[key] != nil { rekey(key) }
    }

    /// Counts a notification delivery `count` times with `signedDate`.
    mutating func noteDelivery(_ uuid: String, signedDate: Int64, count: Int) {
        deliveries[uuid] =
            deliveries[uuid]?.adding(signedDate, count: count)
            ?? .one(NotificationSighting(signedDate: signedDate, count: count))
    }

    /// Joins `record` into its chain and keeps the indexes up to date.
    mutating func insert(_ record: TransactionRecord) {
        var record = record
        if internsTexts { record.share(&strings) }
        let statement = record.current
        let key = statement.chainKey
        // The chain's records are found once and changed where they lie.
        let (newChain, added) = Self.change(&chains[key, default: [:]]) { records in
            let newChain = records.isEmpty
            guard records[statement.transactionId] != nil else {
                records[statement.transactionId] = record
                return (newChain, true)
            }
            records[statement.transactionId]!.join(record)
            return (newChain, false)
        }
        if newChain {
            chainsByOriginalTransactionId[key.originalTransactionId] =
                chainsByOriginalTransactionId[key.originalTransactionId]?.adding(key) ?? .one(key)
            environments.insert(key.environment)
        }
        if added {
            transactionCount += 1
            chainsByTransactionId[statement.transactionId] =
                chainsByTransactionId[statement.transactionId]?.adding(key) ?? .one(key)
        }
        // A new ownership of a chain can change whether a member's chain shares it.
        if newChain, key.ownership != InAppOwnershipType.assigned.rawValue { rekey(key.renewalKey) } else { rekey(key) }
    }

    /// `body` applied to `value` in place (a dictionary's slot, found once).
    private static func change<Value, Result>(_ value: inout Value, _ body: (inout Value) -> Result) -> Result {
        body(&value)
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

    /// Defers deriving chains' accounts until ``deriveDeferredAccounts()``: a caller inserting
    /// many records (a store's rows, another ledger) has each chain's account derived once,
    /// where after each record a chain of n records would cost n² to read. The accounts are
    /// the same either way, since a chain's account follows from the records in the end. Says
    /// whether this call began deferring (it is not nested in another).
    mutating func deferAccounts() -> Bool {
        guard chainsToRekey == nil else { return false }
        chainsToRekey = []
        return true
    }

    /// Derives the account of every chain changed since ``deferAccounts()``, and derives them
    /// as they change again.
    mutating func deriveDeferredAccounts() {
        guard let keys = chainsToRekey else { return }
        chainsToRekey = nil
        for key in keys { rekey(key) }
    }

    /// Re-derives the account of every chain of `key` (its ownerships).
    private mutating func rekey(_ key: RenewalKey) {
        if chainsToRekey != nil {
            chainsToRekey!.insert(key)
            return
        }
        for chain in chainsByOriginalTransactionId[key.originalTransactionId]?.keys ?? []
        where chain.environment == key.environment {
            rekey(chain)
        }
    }

    /// Re-derives the account of `key` and moves the chain between accounts when it changed.
    private mutating func rekey(_ key: ChainKey) {
        if chainsToRekey != nil {
            chainsToRekey!.insert(key.renewalKey)
            return
        }
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
        for record in records.values {
            let statement = record.current
            guard statement.appAccountToken != nil else { continue }
            if let known = best,
                (known.purchaseDate, known.transactionId) >= (statement.purchaseDate, statement.transactionId)
            {
                continue
            }
            best = statement
        }
        let shared = Self.isAssigned(key) && chainKeys(of: key.renewalKey).contains { !Self.isAssigned($0) }
        let token =
            best?.appAccountToken
            ?? (shared ? nil : renewals[key.renewalKey]?.appAccountToken ?? claims[key.renewalKey])
        return AccountKey(
            environment: key.environment, appAccountToken: token, originalTransactionId: key.originalTransactionId)
    }

    /// The chains of `account`, ordered by `originalTransactionId`, then ownership; `nil` for
    /// an account not known.
    func chains(of account: AccountKey) -> [ChainKey]? { accountChains[account] }

    /// The account of a chain.
    func account(of chain: ChainKey) -> AccountKey? { chainAccounts[chain] }

    func forEachAccount(_ body: (AccountKey) -> Void) {
        for account in accountChains.keys { body(account) }
    }

    func knows(_ account: AccountKey) -> Bool { accountChains[account] != nil }

    /// The accounts of the chains of `originalTransactionId`.
    func accounts(identifiedBy originalTransactionId: String) -> Set<AccountKey> {
        Set((chainsByOriginalTransactionId[originalTransactionId]?.keys ?? []).compactMap { chainAccounts[$0] })
    }

    func accounts(withTransactionId transactionId: String) -> Set<AccountKey> {
        Set((chainsByTransactionId[transactionId]?.keys ?? []).compactMap { chainAccounts[$0] })
    }

    /// Adds `other`'s transactions, renewal info, claims (a chain both have claimed keeps
    /// this channel's claim) and deliveries.
    mutating func merge(_ other: AppStoreChannel) {
        let began = deferAccounts()
        defer { if began { deriveDeferredAccounts() } }
        for records in other.chains.values {
            for record in records.values { insert(record) }
        }
        for (key, statement) in other.renewals { insert(statement, for: key) }
        for (key, token) in other.claims { insert(claim: token, for: key) }
        for (uuid, sightings) in other.deliveries {
            for sighting in sightings { noteDelivery(uuid, signedDate: sighting.signedDate, count: sighting.count) }
        }
    }
}

extension TransactionStatement {
    /// The chain the statement belongs to.
    var chainKey: AppStoreChannel.ChainKey {
        AppStoreChannel.ChainKey(
            environment: environment, originalTransactionId: originalTransactionId, ownership: ownership)
    }
}
