internal import Foundation
internal import Vouch

// The store's identity and schema: telling a Vouch store of this schema from an empty file,
// an older schema (brought forward in one transaction) and anything else (refused untouched).
extension LedgerStore {
    enum Identity: Equatable {
        case store
        case empty
        /// A Vouch store of an older schema, which ``migrations`` bring to this one.
        case older(Int)
    }

    func identify(writable: Bool) throws(LedgerError) -> Identity {
        try Self.identify(connection, path: path, writable: writable)
    }

    /// Tells a Vouch store of this schema from an empty file, and refuses anything else.
    static func identify(_ connection: SQLiteConnection, path: String, writable: Bool) throws(LedgerError)
        -> Identity
    {
        // One statement, so one snapshot of the file: read one after another, a writer making
        // the store could commit between them, and a file with its tables but without its
        // application id (read before the commit) would be refused as another application's.
        let statement = try connection.prepare(
            "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
                + "(SELECT count(*) FROM sqlite_schema)",
            phase: .read)
        try statement.bind([])
        guard try statement.step() else {
            throw LedgerError(.storeFailure, "\(path): SQLite gave no row reading the store's identity")
        }
        let application = statement.integer(0) ?? 0
        let version = statement.integer(1) ?? 0
        let tables = statement.integer(2) ?? 0
        statement.reset()
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
    /// which one account's refunds are found, and a refunded charge's own account; schema 3 gives
    /// every record body its checksum (`vouch_checksum`, ``LedgerStore/checksum(_:)`` computed
    /// by this process: SQLite has no such function of its own); schema 4 keeps the digest of
    /// every input fed (`fed_input`), so that an input added again is counted once, each
    /// notification delivery once (the counters summed before it stay as they were), and gives
    /// the claims and deliveries their checksums (``LedgerStore/checksum(columns:)``); schema 5
    /// packs every record body (``StoredBody``, `vouch_pack`), its checksum unchanged (of its
    /// JSON); schema 6 keeps every App Store transaction and renewal info packed
    /// (``StoredBody/packed``, `vouch_repack`), read without a parse, with the checksum of its
    /// packed bytes; schema 7 rewrites the App Store's tables `WITHOUT ROWID` (``appStoreTables``),
    /// each record copied as it is. A body that does not match its checksum or does not read is
    /// left as it was, for ``LedgerStore/check()`` and every read to name.
    static let migrations: [Int: String] = [
        2: """
        ALTER TABLE channel_record ADD COLUMN customer TEXT;
        UPDATE channel_record SET customer = CASE refund
            WHEN 1 THEN json_extract(body, '$.customer') ELSE json_extract(body, '$.subscription.customer') END
            WHERE channel = 'stripe';
        UPDATE channel_record SET account = json_extract(body, '$.account') WHERE channel = 'stripe' AND refund = 1;
        CREATE INDEX channel_record_by_customer ON channel_record (channel, environment, customer)
            WHERE customer IS NOT NULL;
        """,
        3: """
        ALTER TABLE app_store_transaction ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        UPDATE app_store_transaction SET checksum = vouch_checksum(body);
        ALTER TABLE app_store_renewal ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        UPDATE app_store_renewal SET checksum = vouch_checksum(body);
        ALTER TABLE channel_record ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        UPDATE channel_record SET checksum = vouch_checksum(body);
        """,
        4: """
        CREATE TABLE fed_input (digest INTEGER PRIMARY KEY);
        UPDATE delivery SET seen = 1;
        ALTER TABLE claim ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        UPDATE claim SET checksum = \(RowTable.claim.checksumSQL(newline: "char(10)") { "vouch_checksum(\($0))" });
        ALTER TABLE delivery ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        UPDATE delivery SET checksum = \(RowTable.delivery.checksumSQL(newline: "char(10)") { "vouch_checksum(\($0))" });
        """,
        5: """
        UPDATE app_store_transaction SET body = vouch_pack(body);
        UPDATE app_store_renewal SET body = vouch_pack(body);
        UPDATE channel_record SET body = vouch_pack(body);
        """,
        6: """
        UPDATE app_store_transaction SET body = coalesce(vouch_repack(body, checksum), body);
        UPDATE app_store_transaction SET checksum = vouch_checksum(body) WHERE substr(body, 1, 1) = x'02';
        UPDATE app_store_renewal SET body = coalesce(vouch_repack(body, checksum), body);
        UPDATE app_store_renewal SET checksum = vouch_checksum(body) WHERE substr(body, 1, 1) = x'02';
        """,
        7: """
        ALTER TABLE app_store_transaction RENAME TO app_store_transaction_6;
        ALTER TABLE app_store_renewal RENAME TO app_store_renewal_6;
        DROP INDEX app_store_transaction_by_id;
        DROP INDEX app_store_transaction_revoked;
        \(appStoreTables)
        INSERT INTO app_store_transaction
            SELECT environment, original_transaction_id, ownership, transaction_id, revoked, body, checksum
            FROM app_store_transaction_6 ORDER BY environment, original_transaction_id, ownership, transaction_id;
        INSERT INTO app_store_renewal SELECT environment, original_transaction_id, body, checksum
            FROM app_store_renewal_6 ORDER BY environment, original_transaction_id;
        DROP TABLE app_store_transaction_6;
        DROP TABLE app_store_renewal_6;
        """,
    ]

    /// The App Store's tables (schema 7), each `WITHOUT ROWID` so that a chain's records lie
    /// together in its key's order, and a lookup reads them from the table itself rather than
    /// through an index and then the table.
    static let appStoreTables = """
        CREATE TABLE app_store_transaction (
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            ownership TEXT NOT NULL,
            transaction_id TEXT NOT NULL,
            revoked INTEGER NOT NULL,
            body BLOB NOT NULL,
            checksum INTEGER NOT NULL,
            PRIMARY KEY (environment, original_transaction_id, ownership, transaction_id)
        ) WITHOUT ROWID;
        CREATE INDEX app_store_transaction_by_id ON app_store_transaction (transaction_id);
        CREATE INDEX app_store_transaction_revoked ON app_store_transaction (environment, original_transaction_id)
            WHERE revoked = 1;
        CREATE TABLE app_store_renewal (
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            body BLOB NOT NULL,
            checksum INTEGER NOT NULL,
            PRIMARY KEY (environment, original_transaction_id)
        ) WITHOUT ROWID;
        """

    /// Brings a store of an older schema to ``schemaVersion``, in one transaction: a failure
    /// leaves it as it was.
    func migrate() throws(LedgerError) {
        try connection.defineFunctions()
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
    func initialise() throws(LedgerError) {
        // Another writer making the store at the same moment holds the file while it switches
        // the journal: waited for, as a writer waits for the write lock.
        try connection.execute("PRAGMA journal_mode = WAL", phase: .write, retryingWhileBusyFor: options.busyTimeout)
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

    /// Schema 7. The channel-neutral tables (`chain`, `claim`, `delivery`, `counter`) name a
    /// channel (`app_store`); the App Store keeps its records in tables of its own
    /// (`app_store_transaction`, `app_store_renewal`), their bodies the records of
    /// `vouch ledger export` (less the statement in force, which is derived); `revoked` marks a
    /// transaction a statement revoked or refunded seats of, for the revocation answers. The other
    /// channels (Stripe's subscriptions and refunded charges, a server's own grants) keep one
    /// record each in `channel_record`, with the account (or, for an account without a token,
    /// the id it is known by, `chain`) it belongs to; `refund` tells a refunded charge from a
    /// grant, whose `account` is the one its own metadata names; `customer` is a Stripe record's
    /// customer, by which an account's refunds are found. Every record body (`body`) is stored
    /// in the format of ``StoredBody`` (an App Store record packed, any other deflated JSON) with
    /// its `checksum` (``LedgerStore/checksum(_:)`` of the packed bytes, or of the JSON), both
    /// verified whenever it is read, and every claim and delivery with a checksum over its columns
    /// (``LedgerStore/checksum(columns:)``). Every table but `fed_input` is `WITHOUT ROWID`, kept
    /// in its key's order (the App Store's since schema 7). `fed_input` holds the digest of every
    /// input fed (``EntitlementLedger/inputs``), the row's own key, by which the counters count
    /// each input once.
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
            checksum INTEGER NOT NULL,
            PRIMARY KEY (channel, environment, chain)
        ) WITHOUT ROWID;
        CREATE TABLE delivery (
            channel TEXT NOT NULL,
            id TEXT NOT NULL,
            signed_date INTEGER NOT NULL,
            seen INTEGER NOT NULL,
            checksum INTEGER NOT NULL,
            PRIMARY KEY (channel, id, signed_date)
        ) WITHOUT ROWID;
        CREATE TABLE counter (
            name TEXT NOT NULL PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE fed_input (digest INTEGER PRIMARY KEY);
        \(appStoreTables)
        CREATE TABLE channel_record (
            channel TEXT NOT NULL,
            environment TEXT NOT NULL,
            id TEXT NOT NULL,
            refund INTEGER NOT NULL,
            account TEXT,
            chain TEXT NOT NULL,
            body BLOB NOT NULL,
            customer TEXT,
            checksum INTEGER NOT NULL,
            PRIMARY KEY (channel, environment, refund, id)
        ) WITHOUT ROWID;
        CREATE INDEX channel_record_by_account ON channel_record (account) WHERE account IS NOT NULL;
        CREATE INDEX channel_record_by_chain ON channel_record (chain);
        CREATE INDEX channel_record_by_id ON channel_record (id);
        CREATE INDEX channel_record_by_customer ON channel_record (channel, environment, customer)
            WHERE customer IS NOT NULL;
        """

    static let channel = LedgerRecordJSON.appStore

}
