public import Vouch

/// Where an entitlement comes from: the App Store, Stripe, or a source of a server's own
/// (Google Play, a grant by hand), named by its text.
public struct EntitlementSource: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The source's name, as records and the CLI print it.
    public let rawValue: String
    /// A source named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (lhs: EntitlementSource, rhs: EntitlementSource) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Verified App Store data: signed transactions, renewal info, notifications, receipts.
    public static let appStore = EntitlementSource(rawValue: "app_store")
    /// Verified Stripe webhook events.
    public static let stripe = EntitlementSource(rawValue: "stripe")
}

/// Access from a source the ledger does not read itself, in the terms every source shares: the
/// account, what it grants, from when until when, and in what state. The ledger weighs it with
/// the App Store's and Stripe's grants in the one tier merge (the highest rank, then the later
/// end).
///
/// A grant is known by its source, environment and id; the newest (by ``signedDate``) wins, so
/// a server ends or changes a grant by adding a newer one with the same id (an ``expiresDate``
/// at the end). Add only grants your server has established as true (a verified purchase of
/// another store, a decision by hand): the ledger takes them as given.
public struct EntitlementGrant: Sendable, Hashable {
    /// Where it comes from (not ``EntitlementSource/appStore`` or ``EntitlementSource/stripe``,
    /// which the ledger reads from verified data itself).
    public var source: EntitlementSource
    /// The grant's id in its source (a purchase token, an order id): with the source and the
    /// account's environment, what makes two grants the same grant.
    public var id: String
    /// The account it is for (``AccountKey/init(environment:appAccountToken:)-(_,UUID)``, say).
    public var account: AccountKey
    /// What it grants: a product id the catalog may map to a tier.
    public var productId: String
    /// Its state while it lasts (`active`, `trial`, …).
    public var state: Entitlement.State
    /// When it starts.
    public var startDate: Timestamp
    /// When it ends; `nil` when it does not.
    public var expiresDate: Timestamp?
    /// When the source stated it: the newest statement of a grant wins.
    public var signedDate: Timestamp

    /// A grant of `productId` to `account` from `startDate` until `expiresDate`.
    public init(
        source: EntitlementSource, id: String, account: AccountKey, productId: String,
        state: Entitlement.State = .active,
        startDate: Timestamp, expiresDate: Timestamp?, signedDate: Timestamp
    ) {
        self.source = source
        self.id = id
        self.account = account
        self.productId = productId
        self.state = state
        self.startDate = startDate
        self.expiresDate = expiresDate
        self.signedDate = signedDate
    }

    /// Its place in the ledger's one order of statements: its ``signedDate``, then the earlier
    /// end, then its other members.
    var order: StatementOrder {
        StatementOrder(
            instant: signedDate.milliseconds, end: expiresDate?.milliseconds,
            content: [state.rawValue, String(startDate.milliseconds), productId, account.description])
    }

    /// The entitlement it gives at `instant`, if any.
    func entitlement(at instant: Int64) -> Entitlement? {
        guard startDate.milliseconds <= instant, expiresDate.map({ instant < $0.milliseconds }) ?? true else {
            return nil
        }
        return Entitlement(
            productId: productId, type: .autoRenewableSubscription, subscriptionGroupIdentifier: nil, state: state,
            expiresDate: expiresDate, ownership: .purchased, transactionId: id, originalTransactionId: id,
            purchaseDate: startDate, source: source)
    }
}

/// What a grant is known by.
struct GrantKey: Hashable, Sendable, Comparable {
    var source: String
    var environment: String
    var id: String

    static func < (lhs: GrantKey, rhs: GrantKey) -> Bool {
        (lhs.source, lhs.environment, lhs.id) < (rhs.source, rhs.environment, rhs.id)
    }
}

extension EntitlementLedger {
    /// Adds a grant of a source of the server's own; the newest statement of each grant wins.
    public mutating func add(_ grant: EntitlementGrant) {
        statistics.grants += 1
        var added = Statistics()
        added.grants = 1
        counted(Array("grant\n".utf8) + JSONWriter.encode(LedgerRecordJSON.object(grant)), added: added)
        grants.insert(grant)
    }
}

/// The channel of grants from a server's own sources (``EntitlementGrant``): the newest
/// statement of each grant, by source, environment and id.
struct GrantChannel: LedgerChannel {
    /// The source of the channel's records by default; each grant names its own.
    static let source = EntitlementSource(rawValue: "grant")

    private(set) var grants: [GrantKey: EntitlementGrant] = [:]
    private var accountGrants: [AccountKey: [GrantKey]] = [:]
    private var grantsById: [String: Set<GrantKey>] = [:]
    private(set) var environments: Set<String> = []

    mutating func insert(_ grant: EntitlementGrant) {
        let key = GrantKey(source: grant.source.rawValue, environment: grant.account.environment.rawValue, id: grant.id)
        if let known = grants[key] {
            guard grant.isNewer(than: known) else { return }
            if known.account != grant.account { accountGrants.remove(key, of: known.account) }
        }
        grants[key] = grant
        grantsById[key.id, default: []].insert(key)
        environments.insert(key.environment)
        accountGrants.insert(key, of: grant.account)
    }

    func forEachAccount(_ body: (AccountKey) -> Void) {
        for account in accountGrants.keys { body(account) }
    }

    func knows(_ account: AccountKey) -> Bool { accountGrants[account] != nil }

    /// The accounts of the grants whose id is `id`, of every source and environment.
    func accounts(identifiedBy id: String) -> Set<AccountKey> {
        Set((grantsById[id] ?? []).compactMap { grants[$0]?.account })
    }

    func entitlements(of account: AccountKey, at instant: Int64, catalog: ProductCatalog) -> [Entitlement] {
        (accountGrants[account] ?? []).compactMap { grants[$0]?.entitlement(at: instant) }
    }

    func changeInstants(of account: AccountKey, catalog: ProductCatalog) -> Set<Int64> {
        var instants = Set<Int64>()
        for grant in (accountGrants[account] ?? []).compactMap({ grants[$0] }) {
            instants.insert(grant.startDate.milliseconds)
            if let expires = grant.expiresDate { instants.insert(expires.milliseconds) }
        }
        return instants
    }

    /// Grants tell no revocations: a grant ends by a newer statement of it.
    func revocations(since: Int64?, catalog: ProductCatalog) -> [Revocation] { [] }

    func revocations(of account: AccountKey, catalog: ProductCatalog) -> [Revocation] { [] }

    mutating func merge(_ other: GrantChannel) {
        for grant in other.grants.values { insert(grant) }
    }
}

extension EntitlementGrant: OrderedStatement {}
