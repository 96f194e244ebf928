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

    /// The schema this version writes and reads. A store of an older schema is brought to it
    /// when opened for writing, in one transaction.
    public static let schemaVersion = 2
    /// `PRAGMA application_id` of a Vouch store: "Vouc".
    static let applicationId: Int64 = 0x566F_7563

    /// The file.
    public let path: String
    /// How it was opened.
    public let access: Access
    /// Tiers, trials and non-renewing lengths the answers use.
    public let catalog: ProductCatalog

    private let connection: SQLiteConnection
    private let lock = NSLock()
    private var prepared: [String: SQLiteStatement] = [:]

    /// Opens the store at `path`; with ``Access/readWrite``, creates it when the file does not
    /// exist or is empty.
    ///
    /// Throws ``LedgerError/Code/notAStore`` for a file that is not a Vouch store,
    /// ``LedgerError/Code/newerSchema`` for a store of a newer schema (neither is modified),
    /// ``LedgerError/Code/corruptStore`` for a damaged one, ``LedgerError/Code/cannotOpen``
    /// when it cannot be read (a missing or empty file read only: no store made yet; a store
    /// whose write-ahead log this user cannot read, rather than an answer that misses its
    /// changes) and ``LedgerError/Code/cannotWrite`` when ``Access/readWrite`` is asked and it
    /// cannot be written or created.
    public init(path: String, access: Access = .readWrite, catalog: ProductCatalog = ProductCatalog())
        throws(LedgerError)
    {
        self.path = path
        self.access = access
        self.catalog = catalog
        switch access {
        case .readWrite:
            connection = try SQLiteConnection(path: path, writable: true)
            guard !connection.isReadOnly else {
                throw LedgerError(.cannotWrite, "cannot write \(path): the file may only be read")
            }
            try connection.execute("PRAGMA busy_timeout = 10000; PRAGMA synchronous = FULL", phase: .open)
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
                try opened.execute("PRAGMA busy_timeout = 10000", phase: .open)
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
            connection = opened
        }
    }

    // MARK: The file

    enum Identity: Equatable {
        case store
        case empty
        /// A Vouch store of an older schema, which ``migrations`` bring to this one.
        case older(Int)
    }

    private func identify(writable: Bool) throws(LedgerError) -> Identity {
        try Self.identify(connection, path: path, writable: writable)
    }

    /// Tells a Vouch store of this schema from an empty file, and refuses anything else.
    private static func identify(_ connection: SQLiteConnection, path: String, writable: Bool) throws(LedgerError)
        -> Identity
    {
        func integer(_ sql: String) throws(LedgerError) -> Int64 {
            let statement = try connection.prepare(sql, phase: .read)
            try statement.bind([])
            guard try statement.step() else { return 0 }
            return statement.integer(0) ?? 0
        }
        let application = try integer("PRAGMA application_id")
        let version = try integer("PRAGMA user_version")
        let tables = try integer("SELECT count(*) FROM sqlite_schema")
        if application == applicationId {
            if version == Int64(schemaVersion) { return .store }
            if version >= 1, version < Int64(schemaVersion) {
                if writable { return .older(Int(version)) }
                throw LedgerError(
                    .cannotOpen,
                    "\(path) is a Vouch store of schema \(version), which this version brings to schema "
                        + "\(schemaVersion) when it opens the store for writing; open it once so (any vouch ledger "
                        + "add does), then read it")
            }
            if version > Int64(schemaVersion) {
                throw LedgerError(
                    .newerSchema,
                    "\(path) is a Vouch store of schema \(version); this version reads schema \(schemaVersion) and leaves it as it is"
                )
            }
            throw LedgerError(.corruptStore, "\(path) is a Vouch store without a schema version")
        }
        if application == 0, version == 0, tables == 0 {
            if writable { return .empty }
            // A file made but never written (a creation that failed, the disk full) is a store
            // not made yet, as a missing file is.
            throw LedgerError(
                .cannotOpen, "cannot open \(path): no store has been made in it yet ('vouch ledger add' makes one)")
        }
        throw LedgerError(
            .notAStore,
            "\(path) is not a Vouch store but an SQLite database of another application (application_id \(application), "
                + "user_version \(version), \(tables) schema objects); it is left as it is")
    }

    /// What brings a store of schema `key − 1` to schema `key`, run in one transaction with the
    /// new `user_version`: schema 2 keeps each Stripe record's customer (`customer`, indexed), by
    /// which one account's refunds are found, and a refunded charge's own account.
    static let migrations: [Int: String] = [
        2: """
        ALTER TABLE channel_record ADD COLUMN customer TEXT;
        UPDATE channel_record SET customer = CASE refund
            WHEN 1 THEN json_extract(body, '$.customer') ELSE json_extract(body, '$.subscription.customer') END
            WHERE channel = 'stripe';
        UPDATE channel_record SET account = json_extract(body, '$.account') WHERE channel = 'stripe' AND refund = 1;
        CREATE INDEX channel_record_by_customer ON channel_record (channel, environment, customer)
            WHERE customer IS NOT NULL;
        """
    ]

    /// Brings a store of an older schema to ``schemaVersion``, in one transaction: a failure
    /// leaves it as it was.
    private func migrate() throws(LedgerError) {
        try connection.execute("BEGIN IMMEDIATE", phase: .write)
        do throws(LedgerError) {
            // Another writer may have migrated it since it was looked at.
            if case .older(let found) = try identify(writable: true) {
                for step in (found + 1)...Self.schemaVersion {
                    guard let sql = Self.migrations[step] else {
                        throw LedgerError(.corruptStore, "\(path): no way from schema \(step - 1) to \(step)")
                    }
                    try connection.execute(sql, phase: .write)
                }
                try connection.execute("PRAGMA user_version = \(Self.schemaVersion)", phase: .write)
            }
            try connection.execute("COMMIT", phase: .write)
        } catch {
            try? connection.execute("ROLLBACK", phase: .write)
            throw error
        }
    }

    /// Writes the schema into an empty file, in one transaction.
    private func initialise() throws(LedgerError) {
        try connection.execute("PRAGMA journal_mode = WAL", phase: .write)
        try connection.execute("BEGIN IMMEDIATE", phase: .write)
        do {
            // Another writer may have made the store since it was looked at.
            if try identify(writable: true) == .empty {
                try connection.execute(Self.schema, phase: .write)
                try connection.execute(
                    "PRAGMA application_id = \(Self.applicationId); PRAGMA user_version = \(Self.schemaVersion)",
                    phase: .write)
            }
            try connection.execute("COMMIT", phase: .write)
        } catch {
            try? connection.execute("ROLLBACK", phase: .write)
            throw error
        }
    }

    /// Schema 2. The channel-neutral tables (`chain`, `claim`, `delivery`, `counter`) name a
    /// channel (`app_store`); the App Store keeps its records in tables of its own
    /// (`app_store_transaction`, `app_store_renewal`), their bodies the records of
    /// `vouch ledger export` (less the statement in force, which is derived); `revoked` marks a
    /// transaction a statement revoked or refunded seats of, for the revocation answers. The other
    /// channels (Stripe's subscriptions and refunded charges, a server's own grants) keep one
    /// record each in `channel_record`, with the account (or, for an account without a token,
    /// the id it is known by, `chain`) it belongs to; `refund` tells a refunded charge from a
    /// grant, whose `account` is the one its own metadata names; `customer` is a Stripe record's
    /// customer, by which an account's refunds are found. Records are a
    /// kilobyte or so: ordinary tables, with their keys unique, rather than `WITHOUT ROWID`.
    static let schema = """
        CREATE TABLE chain (
            channel TEXT NOT NULL,
            environment TEXT NOT NULL,
            chain TEXT NOT NULL,
            scope TEXT NOT NULL,
            account TEXT,
            PRIMARY KEY (channel, environment, chain, scope)
        ) WITHOUT ROWID;
        CREATE INDEX chain_by_account ON chain (account) WHERE account IS NOT NULL;
        CREATE INDEX chain_by_id ON chain (chain);
        CREATE TABLE claim (
            channel TEXT NOT NULL,
            environment TEXT NOT NULL,
            chain TEXT NOT NULL,
            account TEXT NOT NULL,
            PRIMARY KEY (channel, environment, chain)
        ) WITHOUT ROWID;
        CREATE TABLE delivery (
            channel TEXT NOT NULL,
            id TEXT NOT NULL,
            signed_date INTEGER NOT NULL,
            seen INTEGER NOT NULL,
            PRIMARY KEY (channel, id, signed_date)
        ) WITHOUT ROWID;
        CREATE TABLE counter (
            name TEXT NOT NULL PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE app_store_transaction (
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            ownership TEXT NOT NULL,
            transaction_id TEXT NOT NULL,
            revoked INTEGER NOT NULL,
            body TEXT NOT NULL,
            UNIQUE (environment, original_transaction_id, ownership, transaction_id)
        );
        CREATE INDEX app_store_transaction_by_id ON app_store_transaction (transaction_id);
        CREATE INDEX app_store_transaction_revoked ON app_store_transaction (environment, original_transaction_id)
            WHERE revoked = 1;
        CREATE TABLE app_store_renewal (
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            body TEXT NOT NULL,
            UNIQUE (environment, original_transaction_id)
        );
        CREATE TABLE channel_record (
            channel TEXT NOT NULL,
            environment TEXT NOT NULL,
            id TEXT NOT NULL,
            refund INTEGER NOT NULL,
            account TEXT,
            chain TEXT NOT NULL,
            body TEXT NOT NULL,
            customer TEXT,
            PRIMARY KEY (channel, environment, refund, id)
        ) WITHOUT ROWID;
        CREATE INDEX channel_record_by_account ON channel_record (account) WHERE account IS NOT NULL;
        CREATE INDEX channel_record_by_chain ON channel_record (chain);
        CREATE INDEX channel_record_by_id ON channel_record (id);
        CREATE INDEX channel_record_by_customer ON channel_record (channel, environment, customer)
            WHERE customer IS NOT NULL;
        """

    private static let channel = LedgerRecordJSON.appStore

    /// A statement prepared once per connection.
    private func statement(_ sql: String, phase: SQLiteConnection.Phase) throws(LedgerError) -> SQLiteStatement {
        if let known = prepared[sql] { return known }
        let made = try connection.prepare(sql, phase: phase)
        prepared[sql] = made
        return made
    }

    /// Runs `body` under the lock, in one read transaction (a consistent view of the file).
    private func reading<Result>(_ body: () throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        try connection.execute("BEGIN", phase: .read)
        do {
            let result = try body()
            try connection.execute("COMMIT", phase: .read)
            return result
        } catch {
            try? connection.execute("ROLLBACK", phase: .read)
            throw error
        }
    }

    /// Runs `body` under the lock, in one write transaction: all of it is stored, or nothing.
    private func writing<Result>(_ body: () throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        guard access == .readWrite else {
            throw LedgerError(.cannotWrite, "cannot write \(path): the store was opened read-only")
        }
        try connection.execute("BEGIN IMMEDIATE", phase: .write)
        do {
            let result = try body()
            try connection.execute("COMMIT", phase: .write)
            return result
        } catch {
            try? connection.execute("ROLLBACK", phase: .write)
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
        var ledger = EntitlementLedger()
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
        var ledger = EntitlementLedger()
        if let account { try ledger.add(receipt, account: account) } else { ledger.add(receipt) }
        return try add(contentsOf: ledger)
    }

    /// Adds what a verified Stripe event says, in one transaction, as
    /// ``EntitlementLedger/add(_:accountKey:)``.
    @discardableResult
    public func add(_ event: VerifiedStripeEvent, accountKey: String = EntitlementLedger.defaultStripeAccountKey)
        throws(LedgerError) -> Change
    {
        var ledger = EntitlementLedger()
        ledger.add(event, accountKey: accountKey)
        return try add(contentsOf: ledger)
    }

    /// Adds a grant of a source of the server's own, in one transaction; the newest statement
    /// of each grant wins.
    @discardableResult
    public func add(_ grant: EntitlementGrant) throws(LedgerError) -> Change {
        var ledger = EntitlementLedger()
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

    private func store(_ delta: EntitlementLedger) throws(LedgerError) -> Change {
        var touched = Set(delta.appStore.chains.keys.map(\.renewalKey))
        touched.formUnion(delta.appStore.renewals.keys)
        touched.formUnion(delta.appStore.claims.keys)
        var merged = EntitlementLedger()
        try load(touched, into: &merged, phase: .write)
        let before = merged
        for (key, token) in delta.appStore.claims {
            if let owner = merged.appStore.owner(of: key), owner != token {
                throw AppStoreChannel.conflict(key, claimed: token, owner: owner)
            }
        }
        merged.merge(delta)

        var change = Change()
        let putTransaction = try statement(
            "INSERT OR REPLACE INTO app_store_transaction (environment, original_transaction_id, ownership, "
                + "transaction_id, revoked, body) VALUES (?, ?, ?, ?, ?, ?)", phase: .write)
        let putRenewal = try statement(
            "INSERT OR REPLACE INTO app_store_renewal (environment, original_transaction_id, body) VALUES (?, ?, ?)",
            phase: .write)
        let putClaim = try statement("INSERT OR REPLACE INTO claim VALUES (?, ?, ?, ?)", phase: .write)
        let putChain = try statement("INSERT OR REPLACE INTO chain VALUES (?, ?, ?, ?, ?)", phase: .write)
        var lastSigned: Int64?
        for key in touched {
            for chain in merged.appStore.chainKeys(of: key) {
                for (id, record) in merged.appStore.chains[chain] ?? [:] {
                    let known = before.appStore.chains[chain]?[id]
                    guard known != record else { continue }
                    if known == nil { change.newTransactions += 1 } else { change.changedTransactions += 1 }
                    for statement in [record.signed, record.receipt] {
                        if let date = statement?.signedDate { lastSigned = max(lastSigned ?? date, date) }
                    }
                    try putTransaction.run([
                        .text(chain.environment), .text(chain.originalTransactionId), .text(chain.ownership),
                        .text(id), .integer(record.newestRevocation == nil && record.newestSeatRefund == nil ? 0 : 1),
                        .text(JSONWriter.string(LedgerRecordJSON.object(record, inForce: false))),
                    ])
                }
                let account = merged.appStore.account(of: chain)?.appAccountToken
                if account != before.appStore.account(of: chain)?.appAccountToken
                    || before.appStore.chains[chain] == nil
                {
                    try putChain.run([
                        .text(Self.channel), .text(chain.environment), .text(chain.originalTransactionId),
                        .text(chain.ownership), account.map(SQLiteStatement.Value.text) ?? .null,
                    ])
                }
            }
            if let renewal = merged.appStore.renewals[key], renewal != before.appStore.renewals[key] {
                change.renewalInfos += 1
                lastSigned = max(lastSigned ?? renewal.signedDate, renewal.signedDate)
                try putRenewal.run([
                    .text(key.environment), .text(key.originalTransactionId),
                    .text(JSONWriter.string(LedgerRecordJSON.object(renewal, key: key))),
                ])
            }
            if let token = merged.appStore.claims[key], before.appStore.claims[key] == nil {
                change.claims += 1
                try putClaim.run([
                    .text(Self.channel), .text(key.environment), .text(key.originalTransactionId), .text(token),
                ])
            }
        }
        try storeDeliveries(delta, into: &change)
        try storeOtherChannels(delta, into: &change, lastSigned: &lastSigned)
        try count(delta.statistics, lastSigned: lastSigned)
        return change
    }

    /// Joins the Stripe subscriptions, refunded charges and grants of `delta` into the stored
    /// ones, writing each record that changed.
    private func storeOtherChannels(_ delta: EntitlementLedger, into change: inout Change, lastSigned: inout Int64?)
        throws(LedgerError)
    {
        let get = try statement(
            "SELECT body FROM channel_record WHERE channel = ? AND environment = ? AND refund = ? AND id = ?",
            phase: .write)
        let put = try statement(
            "INSERT OR REPLACE INTO channel_record (channel, environment, refund, id, account, chain, body, customer) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", phase: .write)
        func known(_ channel: String, _ environment: String, refund: Bool, _ id: String) throws(LedgerError)
            -> EntitlementLedger
        {
            var ledger = EntitlementLedger()
            try get.rows([.text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id)]) {
                row throws(LedgerError) in try insert(row.bytes(0), into: &ledger)
            }
            return ledger
        }
        func write(
            _ channel: String, _ environment: String, refund: Bool, _ id: String, account: AccountKey?,
            customer: String? = nil, _ body: JSONValue
        ) throws(LedgerError) {
            change.otherRecords += 1
            try put.run([
                .text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id),
                account?.appAccountToken.map(SQLiteStatement.Value.text) ?? .null,
                .text(account?.originalTransactionId ?? id), .text(JSONWriter.string(body)),
                customer.map(SQLiteStatement.Value.text) ?? .null,
            ])
        }
        let stripe = LedgerRecordJSON.stripe
        let putClaim = try statement("INSERT OR REPLACE INTO claim VALUES (?, ?, ?, ?)", phase: .write)
        for key in Set(delta.stripe.subscriptions.keys).union(delta.stripe.claims.keys).sorted() {
            var merged = try known(stripe, key.environment, refund: false, key.id)
            try loadClaim(of: key, into: &merged)
            let before = merged.stripe.subscriptions[key]
            let accountBefore = merged.stripe.subscriptionAccounts[key]
            if let record = delta.stripe.subscriptions[key] { merged.stripe.insert(record, for: key) }
            if let token = delta.stripe.claims[key], merged.stripe.claims[key] == nil {
                try merged.stripe.claim(key, for: token)
                change.claims += 1
                try putClaim.run([.text(stripe), .text(key.environment), .text(key.id), .text(token)])
            } else if let token = delta.stripe.claims[key], let owner = merged.stripe.owner(of: key), owner != token {
                throw StripeChannel.conflict(key, claimed: token, owner: owner)
            }
            guard let joined = merged.stripe.subscriptions[key],
                joined != before || merged.stripe.subscriptionAccounts[key] != accountBefore
            else { continue }
            for stamp in [joined.snapshot?.stamp, joined.payment?.stamp, joined.checkout?.stamp].compactMap({ $0 }) {
                lastSigned = max(lastSigned ?? stamp.created, stamp.created)
            }
            try write(
                stripe, key.environment, refund: false, key.id, account: merged.stripe.subscriptionAccounts[key],
                customer: joined.snapshot?.customer, LedgerRecordJSON.object(joined, key: key))
        }
        for (key, refund) in delta.stripe.refunds {
            var merged = try known(stripe, key.environment, refund: true, key.id)
            let before = merged.stripe.refunds[key]
            merged.stripe.insert(refund, for: key)
            guard let newest = merged.stripe.refunds[key], newest != before else { continue }
            lastSigned = max(lastSigned ?? newest.stamp.created, newest.stamp.created)
            let account = newest.account.map {
                AccountKey(environment: key.environment, appAccountToken: $0, originalTransactionId: key.id)
            }
            try write(
                stripe, key.environment, refund: true, key.id, account: account, customer: newest.customer,
                LedgerRecordJSON.object(newest, key: key))
        }
        for (key, grant) in delta.grants.grants {
            var merged = try known(key.source, key.environment, refund: false, key.id)
            let before = merged.grants.grants[key]
            merged.grants.insert(grant)
            guard let newest = merged.grants.grants[key], newest != before else { continue }
            lastSigned = max(lastSigned ?? newest.signedDate.milliseconds, newest.signedDate.milliseconds)
            try write(
                key.source, key.environment, refund: false, key.id, account: newest.account,
                LedgerRecordJSON.object(newest))
        }
    }

    private func storeDeliveries(_ delta: EntitlementLedger, into change: inout Change) throws(LedgerError) {
        let known = try statement(
            "SELECT signed_date, seen FROM delivery WHERE channel = ? AND id = ?", phase: .write)
        let put = try statement("INSERT OR REPLACE INTO delivery VALUES (?, ?, ?, ?)", phase: .write)
        for (uuid, sightings) in delta.appStore.deliveries {
            var seen: [Int64: Int64] = [:]
            try known.rows([.text(Self.channel), .text(uuid)]) { row in
                seen[row.integer(0) ?? 0] = row.integer(1) ?? 0
            }
            for sighting in sightings.all.sorted(by: { $0.signedDate < $1.signedDate }) {
                if seen[sighting.signedDate] != nil {
                    change.duplicateNotifications += sighting.count
                } else {
                    if seen.isEmpty { change.newNotifications += 1 } else { change.retriedNotifications += 1 }
                    change.duplicateNotifications += sighting.count - 1
                }
                seen[sighting.signedDate, default: 0] += Int64(sighting.count)
                try put.run([
                    .text(Self.channel), .text(uuid), .integer(sighting.signedDate),
                    .integer(seen[sighting.signedDate]!),
                ])
            }
        }
    }

    /// The counters of what was fed, by name.
    private static var counters: [(String, WritableKeyPath<EntitlementLedger.Statistics, Int>)] {
        [
            ("transactions", \.transactions), ("renewalInfos", \.renewalInfos), ("notifications", \.notifications),
            ("ignored", \.ignored), ("incomplete", \.incomplete), ("receipts", \.receipts),
            ("stripeEvents", \.stripeEvents), ("grants", \.grants),
        ]
    }

    private func count(_ statistics: EntitlementLedger.Statistics, lastSigned: Int64?) throws(LedgerError) {
        let add = try statement(
            "INSERT INTO counter VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = value + ?2", phase: .write)
        for (name, path) in Self.counters where statistics[keyPath: path] != 0 {
            try add.run([.text(name), .integer(Int64(statistics[keyPath: path]))])
        }
        if let lastSigned {
            try statement(
                "INSERT INTO counter VALUES ('lastSignedDate', ?1) ON CONFLICT (name) DO UPDATE SET value = max(value, ?1)",
                phase: .write
            ).run([.integer(lastSigned)])
        }
    }

    // MARK: Reading records

    /// Reads every record of the chains of `keys` (each ownership), their renewal info and
    /// claims into `ledger`.
    private func load(
        _ keys: Set<AppStoreChannel.RenewalKey>, into ledger: inout EntitlementLedger,
        phase: SQLiteConnection.Phase
    ) throws(LedgerError) {
        let transactions = try statement(
            "SELECT body FROM app_store_transaction WHERE environment = ? AND original_transaction_id = ?",
            phase: phase)
        let renewal = try statement(
            "SELECT body FROM app_store_renewal WHERE environment = ? AND original_transaction_id = ?", phase: phase)
        let claim = try statement(
            "SELECT account FROM claim WHERE channel = ? AND environment = ? AND chain = ?", phase: phase)
        for key in keys {
            let values: [SQLiteStatement.Value] = [.text(key.environment), .text(key.originalTransactionId)]
            try transactions.rows(values) { row throws(LedgerError) in try insert(row.bytes(0), into: &ledger) }
            try renewal.rows(values) { row throws(LedgerError) in try insert(row.bytes(0), into: &ledger) }
            try claim.rows([.text(Self.channel)] + values) { row in
                if let token = row.text(0) { ledger.appStore.insert(claim: token, for: key) }
            }
        }
    }

    /// Reads the account a caller bound the Stripe subscription `key` to, if any, into `ledger`.
    private func loadClaim(of key: StripeKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
        try statement(
            "SELECT account FROM claim WHERE channel = 'stripe' AND environment = ? AND chain = ?", phase: .read
        ).rows([.text(key.environment), .text(key.id)]) { row in
            if let token = row.text(0) { ledger.stripe.insert(claim: token, for: key) }
        }
    }

    /// Reads one stored body into `ledger`, with the claim of a Stripe subscription.
    private func insert(_ body: [UInt8], into ledger: inout EntitlementLedger) throws(LedgerError) {
        let stored: any StoredRecord
        do {
            stored = try LedgerRecordJSON.read(body)
        } catch {
            throw LedgerError(.corruptStore, "\(path) holds a record that does not read: \(error.reason)")
        }
        if case .subscription(let key, _)? = stored as? StripeRecord { try loadClaim(of: key, into: &ledger) }
        stored.insert(into: &ledger)
    }

    /// Every record of every table, in the export's order, to `body`.
    private func eachRecord(_ body: ([UInt8]) throws(LedgerError) -> Void) throws(LedgerError) {
        for sql in [
            "SELECT body FROM app_store_transaction ORDER BY environment, original_transaction_id, ownership, transaction_id",
            "SELECT body FROM app_store_renewal ORDER BY environment, original_transaction_id",
            "SELECT \(Self.claimJSON) FROM claim ORDER BY channel, environment, chain",
            "SELECT body FROM channel_record ORDER BY channel, environment, refund, id",
        ] {
            try statement(sql, phase: .read).rows { row throws(LedgerError) in try body(row.bytes(0)) }
        }
    }

    /// A claim row as its record, made by SQLite so that every record reads through one reader.
    private static let claimJSON =
        "json_object('kind', 'accountClaim', 'channel', channel, 'environment', environment, "
        + "CASE channel WHEN 'app_store' THEN 'originalTransactionId' ELSE 'subscriptionId' END, chain, "
        + "'appAccountToken', account)"

    /// Everything the store holds, as one ledger answering by the store's catalog (its
    /// `statistics` are its own; the store's are ``statistics()``).
    public func ledger() throws(LedgerError) -> EntitlementLedger {
        try reading { () throws(LedgerError) -> EntitlementLedger in
            var ledger = EntitlementLedger(catalog: catalog)
            try eachRecord { bytes throws(LedgerError) in try insert(bytes, into: &ledger) }
            return ledger
        }
    }

    /// Writes every record the store holds, one JSON object per call, newline-free, in a
    /// stable order (transactions, renewal info, account claims, each by its keys): the
    /// records of `vouch ledger export` (Schemas/ledger-export.schema.json).
    public func export(_ write: ([UInt8]) throws -> Void) throws {
        var failure: (any Error)?
        try reading { () throws(LedgerError) in
            try eachRecord { bytes throws(LedgerError) in
                guard failure == nil else { return }
                let object: JSONValue
                do throws(RecordFormatError) {
                    object = try LedgerRecordJSON.read(bytes).exported
                } catch {
                    throw LedgerError(.corruptStore, "\(path) holds a record that does not read: \(error.reason)")
                }
                do { try write(JSONWriter.encode(object)) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

    // MARK: Questions

    /// The accounts an identifier names: an `appAccountToken` (in any case) or any
    /// `originalTransactionId` of the account, in every environment.
    public func accounts(matching identifier: String) throws(LedgerError) -> [AccountKey] {
        try reading { () throws(LedgerError) -> [AccountKey] in
            var found = Set<AccountKey>()
            try statement(
                "SELECT environment, account, chain FROM chain WHERE account = ?1 AND channel = 'app_store' "
                    + "UNION SELECT environment, account, chain FROM chain WHERE chain = ?2 AND channel = 'app_store'",
                phase: .read
            ).rows([.text(identifier.lowercased()), .text(identifier)]) { row in
                found.insert(Self.account(row))
            }
            try statement(
                "SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND account = ?1 "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND chain = ?2 "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND id = ?2",
                phase: .read
            ).rows([.text(identifier.lowercased()), .text(identifier)]) { row in
                found.insert(Self.account(row))
            }
            return found.sorted()
        }
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
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0",
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
            var ledger = EntitlementLedger(catalog: catalog)
            try load(account, into: &ledger)
            return ledger.entitlements(of: account, at: instant)
        }
    }

    /// The instants at which the answer of `account` may change, as
    /// ``EntitlementLedger/changeInstants(of:)`` gives them; only the account's records are read.
    public func changeInstants(of account: AccountKey) throws(LedgerError) -> [Timestamp] {
        try reading { () throws(LedgerError) -> [Timestamp] in
            var ledger = EntitlementLedger(catalog: catalog)
            try load(account, into: &ledger)
            return ledger.changeInstants(of: account)
        }
    }

    /// The revocations of one account, as
    /// ``EntitlementLedger/revocations(of:)`` answers them: its App Store chains, its Stripe
    /// subscriptions and, through their customers, the refunded charges told with it. Only that
    /// account's records and its customers' are read.
    public func revocations(of account: AccountKey) throws(LedgerError) -> [Revocation] {
        try reading { () throws(LedgerError) -> [Revocation] in
            var ledger = EntitlementLedger(catalog: catalog)
            try load(account, into: &ledger)
            let environment = account.environment.rawValue
            // Every record of those customers: their other subscriptions decide whose a charge is.
            let customers = Set(ledger.stripe.subscriptions.values.compactMap { $0.snapshot?.customer })
            let byCustomer = try statement(
                "SELECT body FROM channel_record WHERE channel = 'stripe' AND environment = ? AND customer = ?",
                phase: .read)
            for customer in customers.sorted() {
                try byCustomer.rows([.text(environment), .text(customer)]) { row throws(LedgerError) in
                    try insert(row.bytes(0), into: &ledger)
                }
            }
            if let token = account.appAccountToken {
                try statement(
                    "SELECT body FROM channel_record WHERE channel = 'stripe' AND refund = 1 AND account = ? "
                        + "AND environment = ?",
                    phase: .read
                ).rows([.text(token), .text(environment)]) { row throws(LedgerError) in
                    try insert(row.bytes(0), into: &ledger)
                }
            }
            return ledger.revocations(of: account)
        }
    }

    /// Reads the records of `account` into `ledger`: its App Store chains (every ownership, with
    /// renewal info and claims) and its records of the other channels.
    private func load(_ account: AccountKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
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
        let others =
            account.appAccountToken != nil
            ? "SELECT body FROM channel_record WHERE account = ?1 AND environment = ?2 AND refund = 0"
            : "SELECT body FROM channel_record WHERE chain = ?1 AND environment = ?2 AND refund = 0 "
                + "AND account IS NULL"
        try statement(others, phase: .read).rows([
            .text(account.appAccountToken ?? account.originalTransactionId ?? ""), .text(environment),
        ]) { row throws(LedgerError) in try insert(row.bytes(0), into: &ledger) }
    }

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
                "SELECT body FROM channel_record WHERE channel = 'stripe' AND (refund = 1 OR (environment, customer) IN "
                    + "(SELECT environment, customer FROM channel_record WHERE channel = 'stripe' AND refund = 1))",
                phase: .read
            ).rows { row throws(LedgerError) in try insert(row.bytes(0), into: &ledger) }
            return ledger.revocations(since: since)
        }
    }

    // MARK: Statistics

    /// What a store holds and was fed.
    public struct Statistics: Sendable, Hashable {
        /// Accounts (as ``EntitlementLedger/accounts`` counts them).
        public internal(set) var accounts = 0
        /// Transaction chains.
        public internal(set) var chains = 0
        /// Distinct transactions.
        public internal(set) var transactions = 0
        /// Chains with renewal info.
        public internal(set) var renewalInfos = 0
        /// Chains bound to an account a caller named.
        public internal(set) var claims = 0
        /// Stripe subscriptions.
        public internal(set) var stripeSubscriptions = 0
        /// Refunded Stripe charges.
        public internal(set) var stripeRefunds = 0
        /// Grants of a server's own sources.
        public internal(set) var grants = 0
        /// What the additions read, summed (transaction and renewal info statements,
        /// notifications, receipts, payloads ignored, incomplete ones).
        public internal(set) var fed = EntitlementLedger.Statistics()
        /// Distinct `notificationUUID`s, and their repeats (as ``EntitlementLedger/NotificationDeliveries``).
        public internal(set) var deliveries = EntitlementLedger.NotificationDeliveries()
        /// The latest `signedDate` (or receipt creation date) of any statement held.
        public internal(set) var lastSignedDate: Timestamp?
        /// The size of the file and its write-ahead log, in bytes.
        public internal(set) var bytes: Int64 = 0
        /// The file's schema version.
        public internal(set) var schemaVersion = LedgerStore.schemaVersion

        /// Statements read: transaction and renewal info statements.
        public var statements: Int { fed.transactions + fed.renewalInfos }
    }

    /// What the store holds and was fed.
    public func statistics() throws(LedgerError) -> Statistics {
        try reading { () throws(LedgerError) -> Statistics in
            var statistics = Statistics()
            func integer(_ sql: String) throws(LedgerError) -> Int {
                let query = try statement(sql, phase: .read)
                try query.bind([])
                guard try query.step() else { return 0 }
                return Int(query.integer(0) ?? 0)
            }
            statistics.accounts = try integer(
                "SELECT count(*) FROM (SELECT environment, coalesce(account, '#' || chain) FROM chain "
                    + "WHERE channel = 'app_store' UNION SELECT environment, coalesce(account, '#' || chain) "
                    + "FROM channel_record WHERE refund = 0)")
            statistics.stripeSubscriptions = try integer(
                "SELECT count(*) FROM channel_record WHERE channel = 'stripe' AND refund = 0")
            statistics.stripeRefunds = try integer(
                "SELECT count(*) FROM channel_record WHERE channel = 'stripe' AND refund = 1")
            statistics.grants = try integer("SELECT count(*) FROM channel_record WHERE channel != 'stripe'")
            statistics.chains = try integer("SELECT count(*) FROM chain WHERE channel = 'app_store'")
            statistics.transactions = try integer("SELECT count(*) FROM app_store_transaction")
            statistics.renewalInfos = try integer("SELECT count(*) FROM app_store_renewal")
            statistics.claims = try integer("SELECT count(*) FROM claim WHERE channel = 'app_store'")
            var counters: [String: Int64] = [:]
            try statement("SELECT name, value FROM counter", phase: .read).rows { row in
                counters[row.text(0) ?? ""] = row.integer(1)
            }
            for (name, path) in Self.counters { statistics.fed[keyPath: path] = Int(counters[name] ?? 0) }
            statistics.lastSignedDate = counters["lastSignedDate"].map(Timestamp.init(milliseconds:))
            statistics.deliveries.notifications = try integer(
                "SELECT count(DISTINCT id) FROM delivery WHERE channel = 'app_store'")
            statistics.deliveries.retries =
                try integer("SELECT count(*) FROM delivery WHERE channel = 'app_store'")
                - statistics.deliveries.notifications
            statistics.deliveries.duplicates =
                try integer("SELECT coalesce(sum(seen - 1), 0) FROM delivery WHERE channel = 'app_store'")
            statistics.bytes = [path, path + "-wal"].reduce(0) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0)
            }
            return statistics
        }
    }
}
