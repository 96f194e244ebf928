internal import Foundation
internal import Vouch

// The PostgreSQL store's identity and schema: `vouch_meta` holds the application id and the
// schema version; a schema without it and without other tables is a store not made yet.
extension PostgreSQLLedgerStore {
    /// `vouch_meta.application_id` of a Vouch store: "Vouc", as the SQLite store's `application_id`.
    static let applicationId = LedgerStore.applicationId

    /// The advisory lock under which a store is made or brought forward.
    static let schemaLock = "vouch|schema"

    /// Tells a store of this schema from an empty schema and an older store, and refuses a newer
    /// store and anything else.
    func identify(_ connection: PostgreSQLConnection, phase: PostgreSQLConnection.Phase) throws(LedgerError)
        -> LedgerStore.Identity
    {
        let tables = PostgreSQLTables(connection: connection, name: target)
        let meta = try tables.rows(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'vouch_meta'",
            phase: phase)
        guard meta.integer(0, 0) == 1 else {
            let others =
                try tables.rows(
                    "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        + "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
                    phase: phase
                ).integer(0, 0) ?? 0
            if others == 0 { return .empty }
            throw LedgerError(
                .notAStore,
                "\(target) is not a Vouch store: its schema holds \(others) tables or views of another application "
                    + "and no vouch_meta; it is left as it is")
        }
        let row = try tables.rows("SELECT application_id, schema_version FROM vouch_meta", phase: phase)
        guard row.count == 1, let application = row.integer(0, 0), let version = row.integer(0, 1) else {
            throw LedgerError(.corruptStore, "\(target): vouch_meta holds \(row.count) rows, not one")
        }
        guard application == Self.applicationId else {
            throw LedgerError(
                .notAStore,
                "\(target) is not a Vouch store: vouch_meta names application \(application); it is left as it is")
        }
        if version == Int64(Self.schemaVersion) { return .store }
        if version > Int64(Self.schemaVersion) {
            throw LedgerError(
                .newerSchema,
                "\(target) is a Vouch store of schema \(version); this version reads schema \(Self.schemaVersion) "
                    + "and leaves it as it is")
        }
        guard version >= 1 else { throw LedgerError(.corruptStore, "\(target): vouch_meta names schema \(version)") }
        return .older(Int(version))
    }

    /// Makes the store, or brings it forward, in one transaction under the schema's advisory
    /// lock: two hosts opening a new store at once make it once, and a failure leaves it as it was.
    func prepareSchema(_ connection: PostgreSQLConnection) throws(LedgerError) {
        let tables = PostgreSQLTables(connection: connection, name: target, writing: true)
        do throws(PostgreSQLError) {
            try connection.transaction(.readCommitted, phase: .write) { () throws(PostgreSQLError) in
                try connection.lock(PostgreSQLConnection.lockKey(Self.schemaLock))
                do throws(LedgerError) {
                    switch try identify(connection, phase: .write) {
                    case .store: break
                    case .empty:
                        try tables.execute(Self.schema)
                    case .older(let found):
                        for step in (found + 1)...Self.schemaVersion {
                            guard let sql = Self.migrations[step] else {
                                throw LedgerError(.corruptStore, "\(target): no way from schema \(step - 1) to \(step)")
                            }
                            try tables.execute(sql)
                        }
                        try tables.execute("UPDATE vouch_meta SET schema_version = \(Self.schemaVersion)")
                    }
                } catch {
                    throw PostgreSQLError(error, sqlState: nil, connectionLost: false)
                }
            }
        } catch {
            throw error.error
        }
    }

    /// What brings a store of schema `key − 1` to schema `key`, run in one transaction with the
    /// new `schema_version`. Schema 1 is the first; schema 2 keeps the digest of every input
    /// fed (`fed_input`), so that an input added again is counted once, each notification
    /// delivery once (the counters summed before it stay as they were), and gives the claims
    /// and deliveries their checksums (``LedgerStore/checksum(columns:)``, computed by the
    /// server's `sha256`).
    static let migrations: [Int: String] = [
        2: """
        CREATE TABLE fed_input (digest bigint PRIMARY KEY);
        UPDATE delivery SET seen = 1;
        ALTER TABLE claim ADD COLUMN checksum bigint NOT NULL DEFAULT 0;
        UPDATE claim SET checksum = \(LedgerStore.RowTable.claim.checksumSQL(newline: "chr(10)", checksumSQL));
        ALTER TABLE delivery ADD COLUMN checksum bigint NOT NULL DEFAULT 0;
        UPDATE delivery SET checksum = \(LedgerStore.RowTable.delivery.checksumSQL(newline: "chr(10)", checksumSQL));
        """
    ]

    /// ``LedgerStore/checksum(_:)`` of the text `value` in PostgreSQL's SQL: the first 8 bytes
    /// of its SHA-256 as a signed 64-bit integer.
    static func checksumSQL(_ value: String) -> String {
        "('x' || left(encode(sha256(convert_to(\(value), 'UTF8')), 'hex'), 16))::bit(64)::bigint"
    }

    /// Schema 2: the SQLite store's tables of its schema 4, in PostgreSQL's dialect. Keys are
    /// `text` in the "C" collation, so that they compare and sort byte for byte as SQLite's do
    /// (the export's order); bodies are `text`, the codecs' JSON as written, each with its
    /// `checksum` (``LedgerStore/checksum(_:)``), verified on every read, as are the claims' and
    /// deliveries' (``LedgerStore/checksum(columns:)``).
    static let schema = """
        CREATE TABLE vouch_meta (
            application_id bigint NOT NULL,
            schema_version integer NOT NULL
        );
        INSERT INTO vouch_meta VALUES (\(applicationId), \(schemaVersion));
        CREATE TABLE chain (
            channel text COLLATE "C" NOT NULL,
            environment text COLLATE "C" NOT NULL,
            chain text COLLATE "C" NOT NULL,
            scope text COLLATE "C" NOT NULL,
            account text COLLATE "C",
            PRIMARY KEY (channel, environment, chain, scope)
        );
        CREATE INDEX chain_by_account ON chain (account) WHERE account IS NOT NULL;
        CREATE INDEX chain_by_id ON chain (chain);
        CREATE TABLE claim (
            channel text COLLATE "C" NOT NULL,
            environment text COLLATE "C" NOT NULL,
            chain text COLLATE "C" NOT NULL,
            account text COLLATE "C" NOT NULL,
            checksum bigint NOT NULL,
            PRIMARY KEY (channel, environment, chain)
        );
        CREATE TABLE delivery (
            channel text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            signed_date bigint NOT NULL,
            seen bigint NOT NULL,
            checksum bigint NOT NULL,
            PRIMARY KEY (channel, id, signed_date)
        );
        CREATE TABLE counter (
            name text COLLATE "C" NOT NULL PRIMARY KEY,
            value bigint NOT NULL
        );
        CREATE TABLE fed_input (digest bigint PRIMARY KEY);
        CREATE TABLE app_store_transaction (
            environment text COLLATE "C" NOT NULL,
            original_transaction_id text COLLATE "C" NOT NULL,
            ownership text COLLATE "C" NOT NULL,
            transaction_id text COLLATE "C" NOT NULL,
            revoked smallint NOT NULL,
            body text NOT NULL,
            checksum bigint NOT NULL,
            PRIMARY KEY (environment, original_transaction_id, ownership, transaction_id)
        );
        CREATE INDEX app_store_transaction_by_id ON app_store_transaction (transaction_id);
        CREATE INDEX app_store_transaction_revoked ON app_store_transaction (environment, original_transaction_id)
            WHERE revoked = 1;
        CREATE TABLE app_store_renewal (
            environment text COLLATE "C" NOT NULL,
            original_transaction_id text COLLATE "C" NOT NULL,
            body text NOT NULL,
            checksum bigint NOT NULL,
            PRIMARY KEY (environment, original_transaction_id)
        );
        CREATE TABLE channel_record (
            channel text COLLATE "C" NOT NULL,
            environment text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            refund smallint NOT NULL,
            account text COLLATE "C",
            chain text COLLATE "C" NOT NULL,
            body text NOT NULL,
            checksum bigint NOT NULL,
            customer text COLLATE "C",
            PRIMARY KEY (channel, environment, refund, id)
        );
        CREATE INDEX channel_record_by_account ON channel_record (account) WHERE account IS NOT NULL;
        CREATE INDEX channel_record_by_chain ON channel_record (chain);
        CREATE INDEX channel_record_by_id ON channel_record (id);
        CREATE INDEX channel_record_by_customer ON channel_record (channel, environment, customer)
            WHERE customer IS NOT NULL;
        """
}
