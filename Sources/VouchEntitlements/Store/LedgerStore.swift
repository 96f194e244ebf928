public import Foundation
public import Vouch
public import VouchReceipts
public import VouchStripe

/// An entitlement ledger kept in a file: SQLite, one writer and any number of readers at once
/// (write-ahead logging), every change one transaction.
///
/// The store keeps what an ``EntitlementLedger`` keeps, record for record: each transaction's
/// merged statements, each chain's newest renewal info, the accounts callers named, and the
/// notification deliveries seen. Adding joins the new statements into the stored records the
/// same way the ledger does, and every answer is the ledger's own, computed by the same code
/// over the records it needs, so a store answers exactly as an in-memory ledger fed the same
/// verified data, in any order or split across any number of additions.
///
/// ```swift
/// let store = try LedgerStore(path: "/var/lib/app/entitlements.sqlite", catalog: catalog)
/// try store.add(try verifier.verify(signedPayload))            // a webhook: one transaction
/// try store.add(try verifier.verify(jws, as: JWSTransactionDecodedPayload.self),
///               account: userId)                               // the app's purchase, bound
/// let answer = try store.entitlements(of: AccountKey(environment: .production, appAccountToken: userId),
///                                     at: Date())
/// ```
///
/// Only verified data goes in (`VerifiedPayload`, `Verified<T>`, `VerifiedReceipt`, or a
/// ledger of them): the store takes no other input. A lookup by account reads only that
/// account's chains, through indexes.
///
/// The file records its schema version and an application id. A file that is not a Vouch
/// store, or a store of a newer schema, is refused (``LedgerError/Code/notAStore``,
/// ``LedgerError/Code/newerSchema``) and left untouched; a damaged one is
/// ``LedgerError/Code/corruptStore``. A `LedgerStore` is safe to use from several threads: its
/// calls take turns on its one connection. Several processes may read while one writes.
public final class LedgerStore: @unchecked Sendable {
    /// How a store file is opened.
    public enum Access: Sendable, Hashable {
        /// Read only: a file that does not exist is ``LedgerError/Code/cannotOpen``.
        case readOnly
        /// Read and write; a file that does not exist (or is empty) becomes a new store.
        case readWrite
    }

    /// How a store waits for the write lock and how durably it commits.
    public struct Options: Sendable, Hashable {
        /// How durably a commit reaches the disk (SQLite's `PRAGMA synchronous`).
        public enum Synchronous: String, Sendable, Hashable, CaseIterable {
            /// A commit is on the disk before it returns, even through a power loss (the default).
            case full = "FULL"
            /// A commit survives the process being killed; a power loss may undo the last
            /// commits, never leave one half made.
            case normal = "NORMAL"
            /// As ``full``, and the log's directory is synced too.
            case extra = "EXTRA"
        }

        /// How long a call waits for a lock another connection holds (the write lock, or a
        /// reader's recovery) before it fails with ``LedgerError/Code/cannotWrite`` (a writer) or
        /// ``LedgerError/Code/cannotOpen`` (a reader): 10 seconds unless told.
        public var busyTimeout: Duration
        /// How durably commits reach the disk: ``Synchronous/full`` unless told.
        public var synchronous: Synchronous
        /// How many bytes of the file are read through a memory map rather than copied page by
        /// page (SQLite's `PRAGMA mmap_size`): 0, none, unless told. A lookup then reads the
        /// pages the kernel caches where they lie. SQLite maps no more than the limit it was
        /// built with (2 GiB in Debian's build); the rest of a larger file is read as before.
        ///
        /// Map only a file on a local disk that nothing but Vouch writes: an error reading a
        /// mapped page (a failing disk, a network file system, the file cut short by another
        /// program while it is open) ends the process with `SIGBUS`, where a copied page fails
        /// the one call with a ``LedgerError``.
        public var memoryMapBytes: Int

        /// Options with the defaults a store has: a busy timeout of 10 seconds, `FULL` commits,
        /// no memory map.
        public init(busyTimeout: Duration = .seconds(10), synchronous: Synchronous = .full, memoryMapBytes: Int = 0) {
            self.busyTimeout = busyTimeout
            self.synchronous = synchronous
            self.memoryMapBytes = max(0, memoryMapBytes)
        }

        /// The busy timeout in whole milliseconds, as SQLite takes it.
        var busyMilliseconds: Int64 {
            let (seconds, attoseconds) = busyTimeout.components
            return max(0, min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        }
    }

    /// The schema this version writes and reads. A store of an older schema is brought to it
    /// when opened for writing, in one transaction.
    public static let schemaVersion = 7
    /// `PRAGMA application_id` of a Vouch store: "Vouc".
    static let applicationId: Int64 = 0x566F_7563

    /// The file.
    public let path: String
    /// How it was opened.
    public let access: Access
    /// Tiers, trials and non-renewing lengths the answers use.
    public let catalog: ProductCatalog
    /// The busy timeout and durability it was opened with.
    public let options: Options

    /// The open connection; `nil` once closed.
    private var live: SQLiteConnection?
    private let lock = NSLock()
    private var prepared: [PreparedKey: SQLiteStatement] = [:]

    /// A prepared statement's key: its SQL and the phase its failures are told in (a `COMMIT`
    /// that fails is "cannot read" after reading and "cannot write" after writing).
    private struct PreparedKey: Hashable {
        let sql: String
        let phase: SQLiteConnection.Phase

        /// The text's length stands for it: the store's statements are few and most differ in
        /// length, where hashing each whole text cost a lookup as much as binding it.
        func hash(into hasher: inout Hasher) {
            hasher.combine(sql.utf8.count)
            hasher.combine(phase)
        }
    }

    /// The connection, or ``LedgerError/Code/cannotOpen`` once ``close()`` was called.
    var connection: SQLiteConnection {
        get throws(LedgerError) {
            guard let live else { throw LedgerError(.cannotOpen, "\(path) was closed") }
            return live
        }
    }

    /// Opens the store at `path`; with ``Access/readWrite``, creates it when the file does not
    /// exist or is empty.
    ///
    /// Throws ``LedgerError/Code/notAStore`` for a file that is not a Vouch store,
    /// ``LedgerError/Code/newerSchema`` for a store of a newer schema (neither is modified),
    /// ``LedgerError/Code/corruptStore`` for a damaged one, ``LedgerError/Code/cannotOpen``
    /// when it cannot be read (a missing or empty file read only: no store made yet; a store
    /// whose write-ahead log this user cannot read, rather than an answer that misses its
    /// changes) and ``LedgerError/Code/cannotWrite`` when ``Access/readWrite`` is asked and it
    /// cannot be written or created. `options` sets how long it waits for a lock another
    /// connection holds and how durably it commits.
    public init(
        path: String, access: Access = .readWrite, catalog: ProductCatalog = ProductCatalog(),
        options: Options = Options()
    ) throws(LedgerError) {
        self.path = path
        self.access = access
        self.catalog = catalog
        self.options = options
        switch access {
        case .readWrite:
            let connection = try SQLiteConnection(path: path, writable: true)
            live = connection
            guard !connection.isReadOnly else {
                throw LedgerError(.cannotWrite, "cannot write \(path): the file may only be read")
            }
            try connection.execute(
                "PRAGMA busy_timeout = \(options.busyMilliseconds); PRAGMA synchronous = \(options.synchronous.rawValue)",
                phase: .open)
            switch try identify(writable: true) {
            case .empty:
                try initialise()
            case .older:
                try migrate()
            case .store:
                // Whether the file can be written at all (its directory must take the log
                // beside it), before a caller spends time on what it would add.
                try connection.execute("BEGIN IMMEDIATE", phase: .write)
                try connection.execute("ROLLBACK", phase: .write)
            }
        case .readOnly:
            guard FileManager.default.fileExists(atPath: path) else {
                throw LedgerError(.cannotOpen, "cannot open \(path): there is no such file")
            }
            var opened = try SQLiteConnection(path: path, writable: false)
            do {
                try opened.execute("PRAGMA busy_timeout = \(options.busyMilliseconds)", phase: .open)
                _ = try Self.identify(opened, path: path, writable: false)
            } catch  where error.code == .cannotOpen && FileManager.default.isReadableFile(atPath: path) {
                // A store in a directory this process may not write to: SQLite cannot make the
                // shared-memory file readers of a write-ahead log use. Without a log the file
                // holds every committed change and is read as it is; a log beside it holds
                // changes only readers with that file can see, so the store is refused rather
                // than answered from a stale snapshot.
                if let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber,
                    size.int64Value > 0
                {
                    throw LedgerError(
                        .cannotOpen,
                        "cannot read \(path) whole: its write-ahead log \(path)-wal holds changes a reader sees only "
                            + "through \(path)-shm, which this user cannot create; open the store once as a user who "
                            + "may write to its folder (any vouch ledger command does), or read it as one")
                }
                let uri = "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path)
                opened = try SQLiteConnection(path: path, writable: false, uri: uri + "?immutable=1")
                _ = try Self.identify(opened, path: path, writable: false)
            }
            live = opened
        }
        if options.memoryMapBytes > 0 {
            try connection.execute("PRAGMA mmap_size = \(options.memoryMapBytes)", phase: .open)
        }
    }

    /// Closes the store: its statements and its connection. Every later call is refused with
    /// ``LedgerError/Code/cannotOpen``; closing again does nothing. A store is also closed when
    /// its last reference goes.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        prepared = [:]
        live = nil
    }

    /// A statement prepared once per connection and phase.
    func statement(_ sql: String, phase: SQLiteConnection.Phase) throws(LedgerError) -> SQLiteStatement {
        let key = PreparedKey(sql: sql, phase: phase)
        if let known = prepared[key] { return known }
        let made = try connection.prepare(sql, phase: phase)
        prepared[key] = made
        return made
    }

    /// Runs `body` under the lock, in one read transaction (a consistent view of the file).
    func reading<Result>(_ body: () throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        // Prepared like any other statement: parsing `BEGIN` and `COMMIT` anew for every
        // lookup costs about as much as running them.
        try statement("BEGIN", phase: .read).run()
        do {
            let result = try body()
            resetStatements()
            try statement("COMMIT", phase: .read).run()
            return result
        } catch {
            resetStatements()
            try? statement("ROLLBACK", phase: .read).run()
            throw error
        }
    }

    /// Resets every prepared statement before a transaction ends: a statement left in the
    /// middle of its rows (a count stepped once, a row refused) would hold the connection on the
    /// transaction's snapshot, and the next read would miss what writers commit meanwhile.
    private func resetStatements() {
        for statement in prepared.values { statement.reset() }
    }

    /// Runs `body` under the lock, in one write transaction: all of it is stored, or nothing.
    func writing<Result>(_ body: () throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        guard access == .readWrite else {
            throw LedgerError(.cannotWrite, "cannot write \(path): the store was opened read-only")
        }
        try statement("BEGIN IMMEDIATE", phase: .write).run()
        do {
            let result = try body()
            resetStatements()
            try statement("COMMIT", phase: .write).run()
            return result
        } catch {
            resetStatements()
            try? statement("ROLLBACK", phase: .write).run()
            throw error
        }
    }

    // MARK: Adding

    /// What one addition changed.
    public struct Change: Sendable, Hashable {
        /// Transactions the store did not hold before.
        public internal(set) var newTransactions = 0
        /// Stripe subscriptions, refunded Stripe charges and grants of a server's own sources
        /// that are new or changed.
        public internal(set) var otherRecords = 0
        /// Transactions held before whose record changed (a newer statement, a revocation).
        public internal(set) var changedTransactions = 0
        /// Chains whose renewal info changed.
        public internal(set) var renewalInfos = 0
        /// Chains now bound to the account a caller named.
        public internal(set) var claims = 0
        /// Notifications whose `notificationUUID` the store had not seen.
        public internal(set) var newNotifications = 0
        /// Notifications read again with a `signedDate` the store had seen.
        public internal(set) var duplicateNotifications = 0
        /// Notifications read again with another `signedDate` (a retry signed anew).
        public internal(set) var retriedNotifications = 0

        /// No change.
        public init() {}

        /// Whether the store's records changed at all (a repeat changes none).
        public var changedRecords: Bool {
            newTransactions + changedTransactions + renewalInfos + claims > 0
        }

        /// Both changes' counts, summed.
        public static func + (lhs: Change, rhs: Change) -> Change {
            var sum = lhs
            sum.newTransactions += rhs.newTransactions
            sum.changedTransactions += rhs.changedTransactions
            sum.renewalInfos += rhs.renewalInfos
            sum.claims += rhs.claims
            sum.otherRecords += rhs.otherRecords
            sum.newNotifications += rhs.newNotifications
            sum.duplicateNotifications += rhs.duplicateNotifications
            sum.retriedNotifications += rhs.retriedNotifications
            return sum
        }
    }

    /// Adds what a verified payload says, in one transaction; `account` binds its chains to the
    /// caller's account, as ``EntitlementLedger/add(_:account:)-(VerifiedPayload,_)``.
    @discardableResult
    public func add(_ verified: VerifiedPayload, account: UUID? = nil) throws(LedgerError) -> Change {
        var ledger = EntitlementLedger.batch()
        if let account { try ledger.add(verified, account: account) } else { ledger.add(verified) }
        return try add(contentsOf: ledger)
    }

    /// Adds what a verified payload of a known kind says, in one transaction.
    @discardableResult
    public func add<Payload: VerifiablePayload>(_ verified: Verified<Payload>, account: UUID? = nil)
        throws(LedgerError) -> Change
    {
        try add(verified.untyped, account: account)
    }

    /// Adds the in-app purchases of a verified receipt, in one transaction; `account` binds
    /// their chains to the caller's account.
    @discardableResult
    public func add(_ receipt: VerifiedReceipt, account: UUID? = nil) throws(LedgerError) -> Change {
        var ledger = EntitlementLedger.batch()
        if let account { try ledger.add(receipt, account: account) } else { ledger.add(receipt) }
        return try add(contentsOf: ledger)
    }

    /// Adds what a verified Stripe event says, in one transaction, as
    /// ``EntitlementLedger/add(_:accountKey:)``.
    @discardableResult
    public func add(_ event: VerifiedStripeEvent, accountKey: String = EntitlementLedger.defaultStripeAccountKey)
        throws(LedgerError) -> Change
    {
        var ledger = EntitlementLedger.batch()
        ledger.add(event, accountKey: accountKey)
        return try add(contentsOf: ledger)
    }

    /// Adds a grant of a source of the server's own, in one transaction; the newest statement
    /// of each grant wins.
    @discardableResult
    public func add(_ grant: EntitlementGrant) throws(LedgerError) -> Change {
        var ledger = EntitlementLedger.batch()
        ledger.add(grant)
        return try add(contentsOf: ledger)
    }

    /// Adds everything `ledger` holds (its records, renewal info, claims, notification
    /// deliveries and statistics) in one transaction: a batch of verified data gathered in a
    /// ledger is stored whole or not at all.
    ///
    /// Throws ``LedgerError/Code/accountConflict``, storing nothing, when the ledger binds a
    /// chain that the store holds for another account.
    @discardableResult
    public func add(contentsOf ledger: EntitlementLedger) throws(LedgerError) -> Change {
        try writing { () throws(LedgerError) -> Change in try store(ledger) }
    }

    // MARK: Questions

    /// The accounts an identifier names: an `appAccountToken` (in any case) or any
    /// `originalTransactionId` of the account, in every environment.
    public func accounts(matching identifier: String) throws(LedgerError) -> [AccountKey] {
        try reading { () throws(LedgerError) -> [AccountKey] in try matching(identifier) }
    }

    /// The accounts `identifier` names, in their order, inside the caller's read transaction.
    private func matching(_ identifier: String) throws(LedgerError) -> [AccountKey] {
        // UNION ALL: the rows go into a set, so SQLite need not gather them in a temporary
        // table to drop duplicates (here and in `accounts()`).
        var found = Set<AccountKey>()
        let values: [SQLiteStatement.Value] = [.text(AccountKey.token(identifier)), .text(identifier)]
        try statement(
            "SELECT environment, account, chain FROM chain WHERE account = ?1 AND channel = 'app_store' "
                + "UNION ALL SELECT environment, account, chain FROM chain WHERE chain = ?2 AND channel = 'app_store'",
            phase: .read
        ).rows(values) { row in
            found.insert(Self.account(row))
        }
        try statement(
            "SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND account = ?1 "
                + "UNION ALL SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND chain = ?2 "
                + "UNION ALL SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND id = ?2",
            phase: .read
        ).rows(values) { row in
            found.insert(Self.account(row))
        }
        return found.sorted()
    }

    /// The accounts holding a transaction `transactionId`.
    public func accounts(withTransactionId transactionId: String) throws(LedgerError) -> [AccountKey] {
        try reading { () throws(LedgerError) -> [AccountKey] in
            var found = Set<AccountKey>()
            try statement(
                // CROSS JOIN keeps this order: the transaction by its index, then its chain.
                "SELECT c.environment, c.account, c.chain FROM app_store_transaction t CROSS JOIN chain c "
                    + "ON c.channel = 'app_store' AND c.environment = t.environment "
                    + "AND c.chain = t.original_transaction_id AND c.scope = t.ownership WHERE t.transaction_id = ?",
                phase: .read
            ).rows([.text(transactionId)]) { row in found.insert(Self.account(row)) }
            try statement(
                "SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND id = ?", phase: .read
            ).rows([.text(transactionId)]) { row in found.insert(Self.account(row)) }
            return found.sorted()
        }
    }

    /// Every account, in a stable order.
    public func accounts() throws(LedgerError) -> [AccountKey] {
        try reading { () throws(LedgerError) -> [AccountKey] in
            var found = Set<AccountKey>()
            try statement(
                "SELECT environment, account, chain FROM chain WHERE channel = 'app_store' "
                    + "UNION ALL SELECT environment, account, chain FROM channel_record WHERE refund = 0",
                phase: .read
            ).rows { row in found.insert(Self.account(row)) }
            return found.sorted()
        }
    }

    private static func account(_ row: SQLiteStatement) -> AccountKey {
        AccountKey(
            environment: row.text(0) ?? "", appAccountToken: row.text(1), originalTransactionId: row.text(2) ?? "")
    }

    /// The entitlements of one account at `instant`, or `nil` for an unknown account. Only the
    /// account's own chains are read.
    public func entitlements(of account: AccountKey, at instant: Timestamp) throws(LedgerError) -> AccountEntitlements?
    {
        try reading { () throws(LedgerError) -> AccountEntitlements? in
            try ledger(of: account).entitlements(of: account, at: instant)
        }
    }

    /// The entitlements at `instant` of every account `identifier` names, in the accounts'
    /// order, as ``LedgerReading/entitlements(ofAccountsMatching:at:)`` answers them: found and
    /// answered in one read transaction, so that a change committed meanwhile is in every
    /// answer or in none. Only those accounts' records are read.
    public func entitlements(ofAccountsMatching identifier: String, at instant: Timestamp) throws(LedgerError)
        -> [AccountEntitlements]
    {
        try reading { () throws(LedgerError) -> [AccountEntitlements] in
            var answers: [AccountEntitlements] = []
            for account in try matching(identifier) {
                if let answer = try ledger(of: account).entitlements(of: account, at: instant) {
                    answers.append(answer)
                }
            }
            return answers
        }
    }

    /// A ledger of the store's catalog holding the records of `account` (``load(_:into:)``),
    /// read inside the caller's transaction.
    private func ledger(of account: AccountKey) throws(LedgerError) -> EntitlementLedger {
        var ledger = EntitlementLedger.forOneAnswer(catalog: catalog)
        try load(account, into: &ledger)
        return ledger
    }

    /// The instants at which the answer of `account` may change, as
    /// ``EntitlementLedger/changeInstants(of:)`` gives them; only the account's records are read.
    public func changeInstants(of account: AccountKey) throws(LedgerError) -> [Timestamp] {
        try reading { () throws(LedgerError) -> [Timestamp] in
            try ledger(of: account).changeInstants(of: account)
        }
    }

    /// The revocations of one account, as
    /// ``EntitlementLedger/revocations(of:)`` answers them: its App Store chains, its Stripe
    /// subscriptions and, through their customers, the refunded charges told with it. Only that
    /// account's records and its customers' are read.
    public func revocations(of account: AccountKey) throws(LedgerError) -> [Revocation] {
        try reading { () throws(LedgerError) -> [Revocation] in
            var ledger = try self.ledger(of: account)
            let environment = account.environment.rawValue
            // Every record of those customers: their other subscriptions decide whose a charge is.
            let customers = Set(ledger.stripe.subscriptions.values.compactMap { $0.snapshot?.customer })
            let byCustomer = try statement(
                "SELECT \(RecordTable.channelRecord.partedColumns) FROM channel_record WHERE channel = 'stripe' "
                    + "AND environment = ? AND customer = ?",
                phase: .read)
            for customer in customers.sorted() {
                try byCustomer.rows([.text(environment), .text(customer)]) { row throws(LedgerError) in
                    try insert(verified(row, .channelRecord), into: &ledger)
                }
            }
            if let token = account.appAccountToken {
                try statement(
                    "SELECT \(RecordTable.channelRecord.partedColumns) FROM channel_record WHERE channel = 'stripe' "
                        + "AND refund = 1 AND account = ? "
                        + "AND environment = ?",
                    phase: .read
                ).rows([.text(token), .text(environment)]) { row throws(LedgerError) in
                    try insert(verified(row, .channelRecord), into: &ledger)
                }
            }
            return ledger.revocations(of: account)
        }
    }

    /// Reads the records of `account` into `ledger`: its App Store chains (every ownership, with
    /// renewal info and claims) and its records of the other channels.
    func load(_ account: AccountKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
        var keys = Set<AppStoreChannel.RenewalKey>()
        let environment = account.environment.rawValue
        if let token = account.appAccountToken {
            try statement(
                "SELECT chain FROM chain WHERE account = ? AND channel = 'app_store' AND environment = ?",
                phase: .read
            ).rows([.text(token), .text(environment)]) { row in
                keys.insert(.init(environment: environment, originalTransactionId: row.text(0) ?? ""))
            }
        } else if let chain = account.originalTransactionId {
            try statement(
                "SELECT chain FROM chain WHERE channel = 'app_store' AND environment = ? AND chain = ? "
                    + "AND account IS NULL",
                phase: .read
            ).rows([.text(environment), .text(chain)]) { row in
                keys.insert(.init(environment: environment, originalTransactionId: row.text(0) ?? ""))
            }
        }
        try load(keys, into: &ledger, phase: .read)
        try statement(
            account.appAccountToken != nil ? Self.otherRecordsSQL.byToken : Self.otherRecordsSQL.byChain, phase: .read
        ).rows([
            .text(account.appAccountToken ?? account.originalTransactionId ?? ""), .text(environment),
        ]) { row throws(LedgerError) in try insert(verified(row, .channelRecord), into: &ledger) }
    }

    /// The statements reading an account's records of the channels other than the App Store, by
    /// its token or, for an account without one, by its chain: made once, as every lookup of an
    /// account reads them.
    private static let otherRecordsSQL = (
        byToken: "SELECT \(RecordTable.channelRecord.partedColumns) FROM channel_record "
            + "WHERE account = ?1 AND environment = ?2 AND refund = 0",
        byChain: "SELECT \(RecordTable.channelRecord.partedColumns) FROM channel_record "
            + "WHERE chain = ?1 AND environment = ?2 AND refund = 0 AND account IS NULL"
    )

    /// The entitlements of every account at `instant` (every record is read).
    public func entitlements(at instant: Timestamp) throws(LedgerError) -> [AccountEntitlements] {
        try ledger().entitlements(at: instant)
    }

    /// Every revocation with a `revocationDate` at or after `since` (all when `nil`), as
    /// ``EntitlementLedger/revocations(since:)-(Timestamp?)`` orders them; only the chains
    /// holding a revocation, the refunded charges and their customers' subscriptions are read.
    public func revocations(since: Timestamp?) throws(LedgerError) -> [Revocation] {
        try reading { () throws(LedgerError) -> [Revocation] in
            var keys = Set<AppStoreChannel.RenewalKey>()
            try statement(
                "SELECT DISTINCT environment, original_transaction_id FROM app_store_transaction WHERE revoked = 1",
                phase: .read
            ).rows { row in
                keys.insert(.init(environment: row.text(0) ?? "", originalTransactionId: row.text(1) ?? ""))
            }
            var ledger = EntitlementLedger(catalog: catalog)
            try load(keys, into: &ledger, phase: .read)
            // A refunded Stripe charge is told with its subscription, found by its customer: the
            // refunds, and the subscriptions of their customers.
            try statement(
                "SELECT \(RecordTable.channelRecord.partedColumns) FROM channel_record WHERE channel = 'stripe' AND (refund = 1 OR (environment, customer) IN "
                    + "(SELECT environment, customer FROM channel_record WHERE channel = 'stripe' AND refund = 1))",
                phase: .read
            ).rows { row throws(LedgerError) in try insert(verified(row, .channelRecord), into: &ledger) }
            return ledger.revocations(since: since)
        }
    }

}
