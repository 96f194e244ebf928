public import Vouch

/// Who is entitled to what, from verified App Store data: StoreKit's
/// `Transaction.currentEntitlements` applied to signed server data.
///
/// Feed it verified payloads (transactions, renewal info, notifications with their nested
/// tokens) in any order, any number of times; ask for the entitlements of an account at an
/// instant, the accounts entitled to a product or tier, and the revocations. The rules:
///
/// - A non-consumable purchased at or before the instant and not revoked at it. A product the
///   catalog gives `trialDays` is a trial for that many days from its purchase, then nothing.
/// - For each auto-renewable subscription chain (`originalTransactionId`), its latest
///   transaction purchased at or before the instant and not superseded by an upgrade
///   (`isUpgraded`), while the instant is before its `expiresDate`, or, when the newest renewal
///   info says `isInBillingRetryPeriod`, before its `gracePeriodExpiresDate`; never when revoked.
/// - The latest transaction of each non-renewing subscription, for the catalog's length
///   (unbounded without one); never when revoked.
/// - Consumables, and types this version does not know, are never entitlements.
///
/// The newest signed statement about a transaction wins (a later `signedDate` supersedes, so
/// data without `revocationDate` after a refund restores access); the newest renewal info of a
/// chain wins likewise. `FAMILY_SHARED` transactions form chains of their own and a
/// `FAMILY_REVOKE` is not a refund. Environments never mix.
///
/// Only `VerifiedPayload`s go in: nothing unverified can reach the answer. Memory holds one
/// small record per transaction and one renewal statement per chain, never the tokens: feeding
/// the same statements again changes nothing. Two ledgers fed disjoint parts of the data and
/// merged equal one ledger fed all of it.
public struct EntitlementLedger: Sendable {
    /// Tiers, trials and non-renewing lengths.
    public var catalog: ProductCatalog

    struct ChainKey: Hashable, Sendable {
        var environment: String
        var originalTransactionId: String
        var ownership: String
    }

    struct RenewalKey: Hashable, Sendable {
        var environment: String
        var originalTransactionId: String
    }

    private(set) var chains: [ChainKey: [String: TransactionRecord]] = [:]
    private(set) var renewals: [RenewalKey: RenewalStatement] = [:]
    /// One copy of each text many records repeat (product ids, types, tokens), so memory
    /// follows the transactions, not the bytes of their statements.
    private var strings = Set<String>()
    /// What was fed in.
    public private(set) var statistics = Statistics()

    /// Counts of what the ledger was fed.
    public struct Statistics: Sendable, Hashable {
        /// Transaction statements read (nested ones included).
        public internal(set) var transactions = 0
        /// Renewal info statements read (nested ones included).
        public internal(set) var renewalInfos = 0
        /// Notifications read (their nested statements are counted above).
        public internal(set) var notifications = 0
        /// Payloads that say nothing about entitlements (app transactions, retention-messaging
        /// requests, notifications without a transaction).
        public internal(set) var ignored = 0
        /// Transactions or renewal info lacking a member the rules need (`signedDate`,
        /// `transactionId`, `originalTransactionId`, `productId`, `purchaseDate`).
        public internal(set) var incomplete = 0

        mutating func add(_ other: Statistics) {
            transactions += other.transactions
            renewalInfos += other.renewalInfos
            notifications += other.notifications
            ignored += other.ignored
            incomplete += other.incomplete
        }
    }

    /// An empty ledger that answers tiers, trials and non-renewing lengths by `catalog`.
    public init(catalog: ProductCatalog = ProductCatalog()) {
        self.catalog = catalog
    }

    /// The number of transaction chains held.
    public var chainCount: Int { chains.count }
    /// The number of distinct transactions held.
    public var transactionCount: Int { chains.values.reduce(0) { $0 + $1.count } }

    // MARK: Feeding

    /// Adds what a verified payload says. A notification contributes its verified nested
    /// transaction and renewal info; a `REFUND_REVERSED` notification also dates the reversal.
    public mutating func add(_ verified: VerifiedPayload) {
        switch verified.decoded {
        case .transaction(let transaction):
            add(transaction)
        case .renewalInfo(let renewal):
            add(renewal)
        case .notification(let notification):
            statistics.notifications += 1
            let reversal =
                notification.notificationType == .refundReversed ? notification.signedDate?.milliseconds : nil
            var used = false
            for nested in verified.nested {
                switch nested.payload.decoded {
                case .transaction(let transaction):
                    add(transaction, reversalNotifiedAt: reversal)
                    used = true
                case .renewalInfo(let renewal):
                    add(renewal)
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

    private mutating func add(_ transaction: JWSTransactionDecodedPayload, reversalNotifiedAt: Int64? = nil) {
        statistics.transactions += 1
        guard var statement = TransactionStatement(transaction) else {
            statistics.incomplete += 1
            return
        }
        statement.share(&strings)
        let key = ChainKey(
            environment: statement.environment, originalTransactionId: statement.originalTransactionId,
            ownership: statement.ownership)
        let record = TransactionRecord(statement, reversalNotifiedAt: reversalNotifiedAt)
        chains[key, default: [:]][statement.transactionId, default: record].join(record)
    }

    private mutating func add(_ renewal: JWSRenewalInfoDecodedPayload) {
        statistics.renewalInfos += 1
        guard let statement = RenewalStatement(renewal), let originalTransactionId = renewal.originalTransactionId
        else {
            statistics.incomplete += 1
            return
        }
        let key = RenewalKey(
            environment: renewal.environment?.rawValue ?? "", originalTransactionId: originalTransactionId)
        if let known = renewals[key], !statement.isNewer(than: known) { return }
        renewals[key] = statement
    }

    /// Adds everything `other` holds (statistics included); the catalog stays this ledger's.
    public mutating func merge(_ other: EntitlementLedger) {
        for (key, records) in other.chains {
            for (id, record) in records {
                chains[key, default: [:]][id, default: record].join(record)
            }
        }
        for (key, statement) in other.renewals {
            if let known = renewals[key], !statement.isNewer(than: known) { continue }
            renewals[key] = statement
        }
        statistics.add(other.statistics)
    }

    // MARK: Accounts

    /// Every account, in ``AccountKey`` order, with its chains.
    private func accountIndex() -> [(account: AccountKey, chains: [ChainKey])] {
        var index: [AccountKey: [ChainKey]] = [:]
        for (key, records) in chains {
            index[account(of: key, records: records), default: []].append(key)
        }
        return index.sorted { $0.key < $1.key }.map { entry in
            (
                entry.key,
                entry.value.sorted {
                    ($0.originalTransactionId, $0.ownership) < ($1.originalTransactionId, $1.ownership)
                }
            )
        }
    }

    /// A chain's account: the `appAccountToken` of its latest transaction that carries one (by
    /// purchase date, then transaction id), else of its renewal info, else the chain itself.
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
        let token =
            best?.appAccountToken
            ?? renewals[RenewalKey(environment: key.environment, originalTransactionId: key.originalTransactionId)]?
            .appAccountToken
        return AccountKey(
            environment: key.environment, appAccountToken: token, originalTransactionId: key.originalTransactionId)
    }

    /// Every account known, in a stable order.
    public var accounts: [AccountKey] { accountIndex().map(\.account) }

    /// The accounts an identifier names: an `appAccountToken` (in any case) or any
    /// `originalTransactionId` of the account, in every environment.
    public func accounts(matching identifier: String) -> [AccountKey] {
        let lowered = identifier.lowercased()
        return accountIndex().filter { entry in
            entry.account.appAccountToken == lowered || entry.chains.contains { $0.originalTransactionId == identifier }
        }.map(\.account)
    }

    // MARK: Entitlements

    /// The entitlements of every account at `instant`, accounts in a stable order; accounts
    /// with none are included, with an empty list.
    public func entitlements(at instant: Timestamp) -> [AccountEntitlements] {
        accountIndex().map { entitlements(of: $0.account, chains: $0.chains, at: instant.milliseconds) }
    }

    /// The entitlements of one account at `instant`, or `nil` for an unknown account.
    public func entitlements(of account: AccountKey, at instant: Timestamp) -> AccountEntitlements? {
        guard let entry = accountIndex().first(where: { $0.account == account }) else { return nil }
        return entitlements(of: entry.account, chains: entry.chains, at: instant.milliseconds)
    }

    /// The accounts entitled to `productId` at `instant`.
    public func accounts(entitledTo productId: String, at instant: Timestamp) -> [AccountKey] {
        entitlements(at: instant).filter { $0.entitlements.contains { $0.productId == productId } }.map(\.account)
    }

    /// The accounts whose highest tier at `instant` is `tier`.
    public func accounts(inTier tier: String, at instant: Timestamp) -> [AccountKey] {
        entitlements(at: instant).filter { $0.tier?.name == tier }.map(\.account)
    }

    private func entitlements(of account: AccountKey, chains keys: [ChainKey], at instant: Int64) -> AccountEntitlements
    {
        var found: [Entitlement] = []
        var nonRenewing: [String: TransactionStatement] = [:]  // by ownership and product
        for key in keys {
            guard let records = chains[key] else { continue }
            var latestSubscription: TransactionRecord?
            for record in records.values {
                let statement = record.current
                guard statement.purchaseDate <= instant else { continue }
                switch ProductType(rawValue: statement.type) {
                case .nonConsumable:
                    guard !record.isRevoked(at: instant) else { continue }
                    if let days = catalog.trialDays[statement.productId] {
                        let end = statement.purchaseDate + Int64(days) * Self.day
                        if instant < end { found.append(Self.entitlement(statement, state: .trial, expires: end)) }
                    } else {
                        found.append(Self.entitlement(statement, state: .active, expires: nil))
                    }
                case .autoRenewableSubscription:
                    guard !isSuperseded(record, in: records, at: instant) else { continue }
                    if let known = latestSubscription,
                        (known.current.purchaseDate, known.current.transactionId) >= (
                            statement.purchaseDate, statement.transactionId
                        )
                    {
                        continue
                    }
                    latestSubscription = record
                case .nonRenewingSubscription:
                    let slot = statement.ownership + "\u{0}" + statement.productId
                    if let known = nonRenewing[slot],
                        (known.purchaseDate, known.transactionId) >= (statement.purchaseDate, statement.transactionId)
                    {
                        continue
                    }
                    nonRenewing[slot] = statement
                default:
                    continue  // consumables and unknown types entitle to nothing
                }
            }
            if let record = latestSubscription, let entitlement = subscriptionEntitlement(record, key: key, at: instant)
            {
                found.append(entitlement)
            }
        }
        for statement in nonRenewing.values {
            guard
                let record = chains[
                    ChainKey(
                        environment: statement.environment, originalTransactionId: statement.originalTransactionId,
                        ownership: statement.ownership)]?[statement.transactionId],
                !record.isRevoked(at: instant)
            else { continue }
            let end = catalog.lengthDays[statement.productId].map { statement.purchaseDate + Int64($0) * Self.day }
            if let end, instant >= end { continue }
            found.append(Self.entitlement(statement, state: .nonRenewing, expires: end))
        }
        found.sort {
            ($0.ownership == .purchased ? 0 : 1, $0.ownership.rawValue, $0.productId, $0.transactionId)
                < ($1.ownership == .purchased ? 0 : 1, $1.ownership.rawValue, $1.productId, $1.transactionId)
        }
        var ids: [String] = []
        for key in keys where ids.last != key.originalTransactionId { ids.append(key.originalTransactionId) }
        return AccountEntitlements(
            account: account, originalTransactionIds: ids, entitlements: found, tier: highestTier(found))
    }

    /// An upgraded transaction gives way to the next transaction of its chain from that one's
    /// purchase; when the next one is not known, from its own purchase.
    private func isSuperseded(_ record: TransactionRecord, in records: [String: TransactionRecord], at instant: Int64)
        -> Bool
    {
        guard record.current.isUpgraded else { return false }
        var next: Int64?
        for other in records.values where other.current.purchaseDate > record.current.purchaseDate {
            next = min(next ?? other.current.purchaseDate, other.current.purchaseDate)
        }
        return instant >= (next ?? record.current.purchaseDate)
    }

    private func subscriptionEntitlement(_ record: TransactionRecord, key: ChainKey, at instant: Int64) -> Entitlement?
    {
        let statement = record.current
        guard !record.isRevoked(at: instant), let expires = statement.expiresDate else { return nil }
        if instant < expires {
            return Self.entitlement(statement, state: statement.isFreeTrial ? .trial : .active, expires: expires)
        }
        let renewal = renewals[
            RenewalKey(environment: key.environment, originalTransactionId: key.originalTransactionId)]
        if let renewal, renewal.isInBillingRetryPeriod, let grace = renewal.gracePeriodExpiresDate, grace > expires,
            instant < grace
        {
            return Self.entitlement(statement, state: .gracePeriod, expires: grace)
        }
        return nil
    }

    private static let day: Int64 = 86_400_000

    private static func entitlement(_ statement: TransactionStatement, state: Entitlement.State, expires: Int64?)
        -> Entitlement
    {
        Entitlement(
            productId: statement.productId, type: ProductType(rawValue: statement.type),
            subscriptionGroupIdentifier: statement.subscriptionGroupIdentifier, state: state,
            expiresDate: expires.map(Timestamp.init(milliseconds:)),
            ownership: InAppOwnershipType(rawValue: statement.ownership),
            transactionId: statement.transactionId, originalTransactionId: statement.originalTransactionId,
            purchaseDate: Timestamp(milliseconds: statement.purchaseDate))
    }

    /// The highest rank; then the later end (none is latest); then the transaction id.
    private func highestTier(_ entitlements: [Entitlement]) -> TierGrant? {
        var best: TierGrant?
        for entitlement in entitlements {
            guard let tier = catalog.tier(of: entitlement.productId) else { continue }
            let candidate = TierGrant(name: tier.name, rank: tier.rank, entitlement: entitlement)
            guard let known = best else {
                best = candidate
                continue
            }
            func order(_ grant: TierGrant) -> (Int, Int64, String) {
                (grant.rank, grant.entitlement.expiresDate?.milliseconds ?? Int64.max, grant.entitlement.transactionId)
            }
            if order(candidate) > order(known) { best = candidate }
        }
        return best
    }

    // MARK: Revocations

    /// Every revocation with a `revocationDate` at or after `since` (all when `nil`), ordered
    /// by revocation date, then environment and transaction id.
    public func revocations(since: Timestamp? = nil) -> [Revocation] {
        var found: [Revocation] = []
        for (key, records) in chains {
            var account: AccountKey?
            for record in records.values {
                guard let newest = record.newestRevocation else { continue }
                let statement = record.current
                let facts: RevocationFacts
                let state: Revocation.State
                var reversedDate: Int64?
                if let current = statement.revocation {
                    facts = current
                    state = .revoked
                } else {
                    facts = newest.facts
                    state = .reversed
                    if let notified = record.reversalNotified, notified > newest.signedDate {
                        reversedDate = notified
                    } else {
                        reversedDate = statement.signedDate
                    }
                }
                if let since, facts.date < since.milliseconds { continue }
                if account == nil { account = self.account(of: key, records: records) }
                let kind: Revocation.Kind =
                    facts.type == RevocationType.familyRevoke.rawValue ? .familyRevocation : .refund
                found.append(
                    Revocation(
                        environment: AppStoreEnvironment(rawValue: statement.environment),
                        appAccountToken: account?.appAccountToken,
                        originalTransactionId: statement.originalTransactionId, transactionId: statement.transactionId,
                        productId: statement.productId, type: ProductType(rawValue: statement.type),
                        ownership: InAppOwnershipType(rawValue: statement.ownership), kind: kind, state: state,
                        revocationDate: Timestamp(milliseconds: facts.date),
                        revocationReason: facts.reason.map(RevocationReason.init(rawValue:)),
                        revocationType: facts.type.map(RevocationType.init(rawValue:)),
                        revocationPercentage: facts.percentage,
                        price: statement.price, currency: statement.currency,
                        refundedAmount: Revocation.refundedAmount(kind: kind, facts: facts, price: statement.price),
                        reversedDate: reversedDate.map(Timestamp.init(milliseconds:))))
            }
        }
        return found.sorted {
            ($0.revocationDate.milliseconds, $0.environment.rawValue, $0.transactionId, $0.ownership.rawValue)
                < ($1.revocationDate.milliseconds, $1.environment.rawValue, $1.transactionId, $1.ownership.rawValue)
        }
    }
}
