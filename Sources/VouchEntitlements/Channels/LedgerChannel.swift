internal import Vouch

/// One channel of the ledger: a source of verified statements (the App Store, Stripe, a
/// server's own grants) with its statements, its indexes and its answers.
///
/// ``EntitlementLedger`` holds one of each registered channel and asks each the same
/// questions; it merges their answers by the rules every channel shares (one list of
/// entitlements per account, the highest tier, one order of revocations). A channel answers
/// from its own data only, reads only what concerns the account asked about, and keeps the
/// newest statement of each of its records by ``StatementOrder``.
///
/// Adding a channel (CONTRIBUTING.md says it step by step): a folder under `Channels/` holding
/// its statement types, its feeding (`EntitlementLedger.add(…)` for its verified input), this
/// conformance, and its records (`LedgerRecordJSON.object(_:…)` writers, a ``StoredRecord``
/// and a ``LedgerRecordCodec``); then one stored property of ``EntitlementLedger`` and one entry
/// in `EntitlementLedger.ask(_:)` and `mergeChannels(_:)`, and its codec in
/// `LedgerRecordJSON.codecs`.
protocol LedgerChannel: Sendable {
    /// The source its entitlements and revocations name.
    static var source: EntitlementSource { get }

    /// An empty channel.
    init()

    /// The environments of the data it holds.
    var environments: Set<String> { get }

    /// Calls `body` with every account the channel knows, in no particular order.
    func forEachAccount(_ body: (AccountKey) -> Void)

    /// Whether the channel holds data of `account`.
    func knows(_ account: AccountKey) -> Bool

    /// The accounts of the records the channel knows by `id`: the id that names a whole
    /// purchase (an `originalTransactionId`, a Stripe subscription id, a grant's id).
    func accounts(identifiedBy id: String) -> Set<AccountKey>

    /// The accounts of the records holding a transaction `id` (an App Store `transactionId`;
    /// for channels without transactions of their own, the purchase's id).
    func accounts(withTransactionId id: String) -> Set<AccountKey>

    /// The entitlements of `account` at `instant` (UNIX milliseconds), in no particular order.
    func entitlements(of account: AccountKey, at instant: Int64, catalog: ProductCatalog) -> [Entitlement]

    /// Every instant at which an answer of `account` may change (see
    /// ``EntitlementLedger/changeInstants(of:)``).
    func changeInstants(of account: AccountKey, catalog: ProductCatalog) -> Set<Int64>

    /// Every revocation dated at or after `since` (all when `nil`), in no particular order.
    func revocations(since: Int64?, catalog: ProductCatalog) -> [Revocation]

    /// The revocations told with `account`, reading only that account's data.
    func revocations(of account: AccountKey, catalog: ProductCatalog) -> [Revocation]

    /// Adds everything `other` holds.
    mutating func merge(_ other: Self)
}

extension LedgerChannel {
    func accounts(withTransactionId id: String) -> Set<AccountKey> { accounts(identifiedBy: id) }
}

/// A channel's index of each account's records, each list ascending.
extension Dictionary where Key == AccountKey {
    /// Adds `item` to the list of `account`, once, in order.
    mutating func insert<Item: Comparable>(_ item: Item, of account: AccountKey) where Value == [Item] {
        var list = self[account] ?? []
        let at = list.firstIndex { $0 >= item } ?? list.endIndex
        if at < list.endIndex, list[at] == item { return }
        list.insert(item, at: at)
        self[account] = list
    }

    /// Removes `item` from the list of `account`, and the account when its list is empty.
    mutating func remove<Item: Comparable>(_ item: Item, of account: AccountKey) where Value == [Item] {
        guard var list = self[account] else { return }
        list.removeAll { $0 == item }
        self[account] = list.isEmpty ? nil : list
    }
}

/// One question the ledger asks every channel, and the answers gathered from them.
struct ChannelQuestion {
    enum Kind {
        case accounts
        case accountsIdentified(by: String)
        case accountsHolding(transactionId: String)
        case entitlements(of: AccountKey, at: Int64)
        case changeInstants(of: AccountKey)
        case revocations(since: Int64?)
        case accountRevocations(of: AccountKey)
    }

    let kind: Kind
    let catalog: ProductCatalog
    private(set) var accounts = Set<AccountKey>()
    private(set) var entitlements: [Entitlement] = []
    private(set) var instants = Set<Int64>()
    private(set) var revocations: [Revocation] = []

    init(_ kind: Kind, catalog: ProductCatalog = ProductCatalog()) {
        self.kind = kind
        self.catalog = catalog
    }

    /// Adds `channel`'s answer.
    mutating func visit<Channel: LedgerChannel>(_ channel: Channel) {
        switch kind {
        case .accounts: channel.forEachAccount { accounts.insert($0) }
        case .accountsIdentified(let id): accounts.formUnion(channel.accounts(identifiedBy: id))
        case .accountsHolding(let id): accounts.formUnion(channel.accounts(withTransactionId: id))
        case .entitlements(let account, let instant):
            entitlements += channel.entitlements(of: account, at: instant, catalog: catalog)
        case .changeInstants(let account): instants.formUnion(channel.changeInstants(of: account, catalog: catalog))
        case .revocations(let since): revocations += channel.revocations(since: since, catalog: catalog)
        case .accountRevocations(let account): revocations += channel.revocations(of: account, catalog: catalog)
        }
    }
}
