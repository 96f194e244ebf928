internal import Foundation
internal import Vouch
public import VouchBatch

/// An entitlement ledger kept in PostgreSQL: one ledger a fleet of servers shares, each
/// addition one transaction.
///
/// It keeps what ``LedgerStore`` keeps, in the same tables (PostgreSQL's dialect, bodies as
/// `text`) and the same records, written and read by the same codecs and joined by the same
/// code (load the touched records into an ``EntitlementLedger``, merge, write what changed), so
/// it answers exactly as the SQLite store and the in-memory ledger fed the same verified data,
/// in any order or split, from any number of writers.
///
/// ```swift
/// let store = try PostgreSQLLedgerStore("postgresql://vouch@db.internal/entitlements", catalog: catalog)
/// try store.add(try verifier.verify(signedPayload))      // a webhook, on any host of the fleet
/// ```
///
/// It is opened by a connection string as libpq reads it (`postgresql://…`, `postgres://…`,
/// the keyword form `host=… dbname=…`), completed by libpq's environment variables (`PGHOST`,
/// `PGUSER`, `PGPASSWORD`, …) and password file. The store's tables live in the connection's
/// current schema (the first of its `search_path`).
///
/// Writers on many hosts never lose an update to each other: an addition runs at
/// `READ COMMITTED` and, before it reads anything, takes the transaction-scoped advisory locks
/// (`pg_advisory_xact_lock`) of the chains, Stripe subscriptions and refunded charges, grants
/// and notifications it touches, in ascending order: each record maps to one of
/// ``lockCount`` locks, always the same, so two additions touching one record run one after
/// the other, and two touching records of different locks run at once. An addition holds at
/// most ``lockCount`` locks however large it is, well within PostgreSQL's default lock table
/// (`max_locks_per_transaction` 64 for each connection). A repeated
/// delivery changes nothing and is counted as a duplicate (the deliveries are keyed by
/// `notificationUUID` and `signedDate`, written in the same transaction). A connection lost in
/// the middle of an addition is ``LedgerError/Code/cannotWrite`` and leaves nothing of it (the
/// server rolls the transaction back); the next call connects again, and running the addition
/// again completes it.
///
/// The store records an application id and its schema version in `vouch_meta`. It is made
/// on first use under an advisory lock (two hosts starting at once make it once) and brought
/// forward from an older schema; a newer schema is ``LedgerError/Code/newerSchema``, and a
/// schema holding other tables but no `vouch_meta` is ``LedgerError/Code/notAStore``, both
/// left untouched. A `PostgreSQLLedgerStore` is safe to use from several threads: its calls
/// take turns on its one connection.
public final class PostgreSQLLedgerStore: @unchecked Sendable {
    /// The schema this version writes and reads.
    public static let schemaVersion = 2

    /// The server and database, as reasons name them (`postgresql://user@host:port/dbname`,
    /// never a password).
    public let target: String
    /// How the store was opened.
    public let access: LedgerStore.Access
    /// Tiers, trials and non-renewing lengths the answers use.
    public let catalog: ProductCatalog

    let connectionString: String
    /// The open connection; `nil` once closed.
    private var live: PostgreSQLConnection?
    private var closed = false
    private let lock = NSLock()

    /// Opens the store the connection string `connectionString` names; with
    /// ``LedgerStore/Access/readWrite``, makes it when the schema holds no table yet.
    ///
    /// Throws ``LedgerError/Code/cannotOpen`` when the server cannot be reached or refuses the
    /// connection, or (read only) when no store has been made yet;
    /// ``LedgerError/Code/notAStore`` for a schema holding other tables but no Vouch store;
    /// ``LedgerError/Code/newerSchema`` for a store of a newer schema;
    /// ``LedgerError/Code/cannotWrite`` when the store must be made or brought forward and the
    /// role may not.
    public init(
        _ connectionString: String, access: LedgerStore.Access = .readWrite,
        catalog: ProductCatalog = ProductCatalog()
    ) throws(LedgerError) {
        self.connectionString = connectionString
        self.access = access
        self.catalog = catalog
        let connection: PostgreSQLConnection
        do {
            connection = try PostgreSQLConnection(connectionString)
        } catch {
            throw error.error
        }
        target = connection.target
        live = connection
        switch access {
        case .readWrite: try prepareSchema(connection)
        case .readOnly:
            switch try identify(connection, phase: .open) {
            case .store: break
            case .empty:
                throw LedgerError(
                    .cannotOpen,
                    "cannot open \(target): no store has been made in it yet ('vouch ledger add' makes one)")
            case .older(let version):
                throw LedgerError(
                    .cannotOpen,
                    "\(target) is a Vouch store of schema \(version), which this version brings to schema "
                        + "\(Self.schemaVersion) when it opens the store for writing; open it once so (any vouch "
                        + "ledger add does), then read it")
            }
        }
    }

    /// Closes the store's connection. Every later call is refused with
    /// ``LedgerError/Code/cannotOpen``; closing again does nothing.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        live?.close()
        live = nil
        closed = true
    }

    /// The connection: the open one, or a new one when the last was lost.
    private func connection() throws(LedgerError) -> PostgreSQLConnection {
        guard !closed else { throw LedgerError(.cannotOpen, "\(target) was closed") }
        if let live, live.isConnected { return live }
        live?.close()
        live = nil
        do {
            let connection = try PostgreSQLConnection(connectionString)
            live = connection
            return connection
        } catch {
            throw error.error
        }
    }

    /// Runs `body` under the lock, in one read-only transaction at `REPEATABLE READ`: one
    /// consistent view of the store.
    func reading<Result>(_ body: (PostgreSQLConnection) throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        try transaction(.repeatableRead, readOnly: true, phase: .read, first: { _ in }, body)
    }

    /// Runs `body`, which reads with one statement, under the lock and outside a transaction:
    /// a statement sees one snapshot of the store by itself, and the answer costs one round
    /// trip to the server instead of three.
    func readingOnce<Result>(_ body: (PostgreSQLConnection) throws(LedgerError) -> Result) throws(LedgerError)
        -> Result
    {
        lock.lock()
        defer { lock.unlock() }
        return try body(try connection())
    }

    /// How many advisory locks the records map to.
    public static let lockCount = 64

    /// The advisory lock keys records map to (``lockCount`` of them).
    static let lockKeys: [Int64] = (0..<lockCount).map { PostgreSQLConnection.lockKey("vouch ledger records \($0)") }

    /// Runs `body` under the lock, in one write transaction at `READ COMMITTED` holding the
    /// advisory locks of `names` (taken in ascending order of their keys, so that writers never
    /// wait for each other in a circle): all of it is stored, or nothing.
    func writing<Result>(locking names: Set<String>, _ body: (PostgreSQLConnection) throws(LedgerError) -> Result)
        throws(LedgerError) -> Result
    {
        guard access == .readWrite else {
            throw LedgerError(.cannotWrite, "cannot write \(target): the store was opened read-only")
        }
        let keys = Set(
            names.map {
                Self.lockKeys[Int(UInt64(bitPattern: PostgreSQLConnection.lockKey($0)) % UInt64(Self.lockCount))]
            }
        )
        .sorted()
        return try transaction(
            .readCommitted, phase: .write,
            first: { connection throws(PostgreSQLError) in
                for key in keys { try connection.lock(key) }
            }, body)
    }

    /// Runs `body` under the lock in one transaction at `isolation`, after `first`.
    private func transaction<Result>(
        _ isolation: PostgreSQLConnection.Isolation, readOnly: Bool = false, phase: PostgreSQLConnection.Phase,
        first: (PostgreSQLConnection) throws(PostgreSQLError) -> Void,
        _ body: (PostgreSQLConnection) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        let connection = try connection()
        do throws(PostgreSQLError) {
            return try connection.transaction(isolation, readOnly: readOnly, phase: phase) {
                () throws(PostgreSQLError) -> Result in
                try first(connection)
                do throws(LedgerError) {
                    return try body(connection)
                } catch {
                    throw PostgreSQLError(error, sqlState: nil, connectionLost: false)
                }
            }
        } catch {
            throw error.error
        }
    }

    // MARK: Adding

    /// Adds whatever the input layer verified, in one transaction, as
    /// ``EntitlementLedger/add(_:account:stripeAccountKey:)`` does; `account`, when given,
    /// binds what the input is about to the caller's account, checked against what the store
    /// holds (``LedgerError/Code/accountConflict`` stores nothing).
    @discardableResult
    public func add(
        _ input: VerifiedInput, account: String? = nil,
        stripeAccountKey: String = EntitlementLedger.defaultStripeAccountKey
    ) throws(LedgerError) -> LedgerStore.Change {
        var ledger = EntitlementLedger.batch()
        try ledger.add(input, account: account, stripeAccountKey: stripeAccountKey)
        return try add(contentsOf: ledger)
    }

    /// Adds a grant of a source of the server's own, in one transaction; the newest statement
    /// of each grant wins.
    @discardableResult
    public func add(_ grant: EntitlementGrant) throws(LedgerError) -> LedgerStore.Change {
        var ledger = EntitlementLedger.batch()
        ledger.add(grant)
        return try add(contentsOf: ledger)
    }

    /// Binds a Stripe subscription to an account after the fact, in one transaction, as
    /// ``EntitlementLedger/bindStripeSubscription(_:livemode:to:)`` does, checked against what
    /// the store holds.
    @discardableResult
    public func bindStripeSubscription(_ subscriptionId: String, livemode: Bool, to account: String)
        throws(LedgerError) -> LedgerStore.Change
    {
        var ledger = EntitlementLedger()
        try ledger.bindStripeSubscription(subscriptionId, livemode: livemode, to: account)
        return try add(contentsOf: ledger)
    }

    /// Adds everything `ledger` holds in one transaction, as
    /// ``LedgerStore/add(contentsOf:)`` does: stored whole or not at all.
    ///
    /// An addition of ``statisticsRows`` rows or more then has PostgreSQL refresh its
    /// statistics of the store's tables it grew by a fifth or more, so that the lookups after a
    /// bulk load find their rows by the indexes at once, not after autovacuum's next round.
    @discardableResult
    public func add(contentsOf ledger: EntitlementLedger) throws(LedgerError) -> LedgerStore.Change {
        let change = try writing(locking: PostgreSQLTables.lockNames(of: ledger)) { connection throws(LedgerError) in
            try PostgreSQLTables(connection: connection, name: target, writing: true).join(ledger)
        }
        let rows =
            change.newTransactions + change.changedTransactions + change.renewalInfos + change.claims
            + change.otherRecords + change.newNotifications + change.retriedNotifications
        if rows >= Self.statisticsRows { refreshStatistics() }
        return change
    }

    /// The rows an addition writes from which it refreshes the planner's statistics.
    public static let statisticsRows = 1_000

    /// Runs `ANALYZE` on the store's tables PostgreSQL has no statistics of, or that changed by
    /// a fifth or more since it made them. Without statistics the planner may read a whole
    /// index for one account (a lookup of milliseconds, growing with the store, where it takes
    /// a fraction of one), until autovacuum analyzes the tables, up to a minute or more after a
    /// bulk load. Only the tables the role owns (or a superuser's): a role that may not analyze
    /// them leaves it to autovacuum. After the commit and best effort: the addition is stored
    /// whatever happens here.
    private func refreshStatistics() {
        lock.lock()
        defer { lock.unlock() }
        guard let connection = try? connection() else { return }
        let tables = ["chain", "claim", "delivery", "app_store_transaction", "app_store_renewal", "channel_record"]
        guard
            let stale = try? connection.query(
                "SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
                    + "WHERE s.relid = ANY ($1::regclass[]) AND pg_has_role(c.relowner, 'MEMBER') "
                    + "AND (coalesce(s.last_analyze, s.last_autoanalyze) IS NULL OR s.n_mod_since_analyze * 5 > s.n_live_tup) "
                    + "ORDER BY s.relname",
                [.text(PostgreSQLUpserts.arrayLiteral(tables.map { .text($0) }))], phase: .read),
            stale.count > 0
        else { return }
        let names = (0..<stale.count).compactMap { stale.text($0, 0) }
        try? connection.execute("ANALYZE " + names.joined(separator: ", "), phase: .write)
    }
}

extension PostgreSQLLedgerStore: LedgerReading, LedgerWriting {}
