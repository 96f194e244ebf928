internal import Foundation
internal import Vouch

// The store's tables: joining a batch of statements into the stored records, and reading records
// back into a ledger, each by the channel's own codec (`LedgerRecordJSON.codecs`).
extension LedgerStore {
    /// Joins `delta` into the stored records (``LedgerTables/join(_:)``), inside the caller's
    /// write transaction.
    func store(_ delta: EntitlementLedger) throws(LedgerError) -> Change {
        try SQLiteTables(store: self).join(delta)
    }

    /// The counters of what was fed, by name.
    static var counters: [(String, WritableKeyPath<EntitlementLedger.Statistics, Int>)] {
        [
            ("transactions", \.transactions), ("renewalInfos", \.renewalInfos), ("notifications", \.notifications),
            ("ignored", \.ignored), ("incomplete", \.incomplete), ("receipts", \.receipts),
            ("stripeEvents", \.stripeEvents), ("grants", \.grants),
        ]
    }

    // MARK: Reading records

    /// Reads every record of the chains of `keys` (each ownership), their renewal info and
    /// claims into `ledger`.
    func load(
        _ keys: Set<AppStoreChannel.RenewalKey>, into ledger: inout EntitlementLedger,
        phase: SQLiteConnection.Phase
    ) throws(LedgerError) {
        let transactions = try statement(Self.chainSQL.transactions, phase: phase)
        let renewal = try statement(Self.chainSQL.renewal, phase: phase)
        let claim = try statement(Self.chainSQL.claim, phase: phase)
        try ledger.insertingRecords { ledger throws(LedgerError) in
            for key in keys {
                let values: [SQLiteStatement.Value] = [.text(key.environment), .text(key.originalTransactionId)]
                try transactions.rows(values) { row throws(LedgerError) in
                    try insert(verified(row, .appStoreTransaction), into: &ledger)
                }
                try renewal.rows(values) { row throws(LedgerError) in
                    try insert(verified(row, .appStoreRenewal), into: &ledger)
                }
                try claim.rows([.text(Self.channel)] + values) { row throws(LedgerError) in
                    let token = row.text(0) ?? ""
                    try Self.verify(
                        path, .claim, [Self.channel, key.environment, key.originalTransactionId, token],
                        checksum: row.integer(1))
                    ledger.appStore.insert(claim: token, for: key)
                }
            }
        }
    }

    /// The statements reading one chain's records, its renewal info and its claim: made once,
    /// as every lookup of an account reads its chains with them.
    private static let chainSQL = (
        transactions: "SELECT \(RecordTable.appStoreTransaction.partedColumns) FROM app_store_transaction "
            + "WHERE environment = ? AND original_transaction_id = ?",
        renewal: "SELECT \(RecordTable.appStoreRenewal.partedColumns) FROM app_store_renewal "
            + "WHERE environment = ? AND original_transaction_id = ?",
        claim: "SELECT account, checksum FROM claim WHERE channel = ? AND environment = ? AND chain = ?"
    )

    /// Reads the account a caller bound the Stripe subscription `key` to, if any, into `ledger`.
    func loadClaim(of key: StripeKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
        try SQLiteTables(store: self).loadClaim(of: key, into: &ledger)
    }

    /// Reads one stored record into `ledger`, with the claim of a Stripe subscription.
    func insert(_ record: any StoredRecord, into ledger: inout EntitlementLedger) throws(LedgerError) {
        try SQLiteTables(store: self).insert(record, into: &ledger)
    }

    /// Every record of every table, in the export's order, to `body`.
    func eachRecord(_ body: (any StoredRecord) throws(LedgerError) -> Void) throws(LedgerError) {
        func records(_ table: RecordTable) throws(LedgerError) {
            try statement("SELECT \(table.partedColumns) FROM \(table.name) ORDER BY \(table.order)", phase: .read).rows
            {
                row throws(LedgerError) in try body(verified(row, table))
            }
        }
        try records(.appStoreTransaction)
        try records(.appStoreRenewal)
        try statement(
            "SELECT \(Self.claimJSON), channel, environment, chain, account, checksum FROM claim "
                + "ORDER BY channel, environment, chain", phase: .read
        ).rows { row throws(LedgerError) in
            try Self.verify(path, .claim, (1...4).map { row.text($0) ?? "" }, checksum: row.integer(5))
            try body(SQLiteTables(store: self).record(row.bytes(0)))
        }
        try records(.channelRecord)
    }

    /// A claim row as its record, made by SQLite so that every record reads through one reader.
    static let claimJSON =
        "json_object('kind', 'accountClaim', 'channel', channel, 'environment', environment, "
        + "CASE channel WHEN 'app_store' THEN 'originalTransactionId' ELSE 'subscriptionId' END, chain, "
        + "'appAccountToken', account)"

    /// Everything the store holds, as one ledger answering by the store's catalog (its
    /// `statistics` are its own; the store's are ``statistics()``).
    public func ledger() throws(LedgerError) -> EntitlementLedger {
        try reading { () throws(LedgerError) -> EntitlementLedger in
            var ledger = EntitlementLedger(catalog: catalog)
            try ledger.insertingRecords { ledger throws(LedgerError) in
                try eachRecord { record throws(LedgerError) in try insert(record, into: &ledger) }
            }
            return ledger
        }
    }

    /// Writes every record the store holds, one JSON object per call, newline-free, in a
    /// stable order (transactions, renewal info, account claims, each by its keys): the
    /// records of `vouch ledger export` (Schemas/ledger-export.schema.json).
    public func export(_ write: ([UInt8]) throws -> Void) throws {
        var failure: (any Error)?
        try reading { () throws(LedgerError) in
            try eachRecord { record throws(LedgerError) in
                guard failure == nil else { return }
                do { try write(JSONWriter.encode(record.exported)) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

}

/// The SQLite store's rows, as joining a batch reads and writes them.
struct SQLiteTables: LedgerTables {
    let store: LedgerStore

    var name: String { store.path }

    func loadChains(_ keys: Set<AppStoreChannel.RenewalKey>, into ledger: inout EntitlementLedger)
        throws(LedgerError)
    {
        try store.load(keys, into: &ledger, phase: .write)
    }

    func records(channel: String, environment: String, refund: Bool, id: String) throws(LedgerError)
        -> [any StoredRecord]
    {
        var records: [any StoredRecord] = []
        try store.statement(
            "SELECT \(LedgerStore.RecordTable.channelRecord.partedColumns) FROM channel_record "
                + "WHERE channel = ? AND environment = ? AND refund = ? AND id = ?",
            phase: .write
        ).rows([.text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id)]) { row throws(LedgerError) in
            records.append(try store.verified(row, .channelRecord))
        }
        return records
    }

    func stripeClaim(of key: StripeKey) throws(LedgerError) -> String? {
        var token: String?
        try store.statement(
            "SELECT account, checksum FROM claim WHERE channel = 'stripe' AND environment = ? AND chain = ?",
            phase: .read
        ).rows([.text(key.environment), .text(key.id)]) { row throws(LedgerError) in
            let account = row.text(0) ?? ""
            try LedgerStore.verify(
                store.path, .claim, [LedgerRecordJSON.stripe, key.environment, key.id, account],
                checksum: row.integer(1))
            token = account
        }
        return token
    }

    func deliveries(channel: String, ids: [String]) throws(LedgerError) -> [String: [Int64: Int64]] {
        let statement = try store.statement(
            "SELECT signed_date, seen, checksum FROM delivery WHERE channel = ? AND id = ?", phase: .write)
        var seen: [String: [Int64: Int64]] = [:]
        for id in ids {
            try statement.rows([.text(channel), .text(id)]) { row throws(LedgerError) in
                let signedDate = row.integer(0) ?? 0
                let count = row.integer(1) ?? 0
                try LedgerStore.verify(
                    store.path, .delivery, [channel, id, String(signedDate), String(count)], checksum: row.integer(2))
                seen[id, default: [:]][signedDate] = count
            }
        }
        return seen
    }

    func putTransaction(
        _ chain: AppStoreChannel.ChainKey, transactionId: String, revoked: Bool, record: TransactionRecord
    ) throws(LedgerError) {
        let body = AppStoreRecord.packed(record)
        try store.statement(
            "INSERT OR REPLACE INTO app_store_transaction (environment, original_transaction_id, ownership, "
                + "transaction_id, revoked, body, checksum) VALUES (?, ?, ?, ?, ?, ?, ?)", phase: .write
        ).run([
            .text(chain.environment), .text(chain.originalTransactionId), .text(chain.ownership),
            .text(transactionId), .integer(revoked ? 1 : 0), .blob(body), .integer(LedgerStore.checksum(body)),
        ])
    }

    func putRenewal(_ key: AppStoreChannel.RenewalKey, renewal: RenewalStatement) throws(LedgerError) {
        let body = AppStoreRecord.packed(renewal, key: key)
        try store.statement(
            "INSERT OR REPLACE INTO app_store_renewal (environment, original_transaction_id, body, checksum) "
                + "VALUES (?, ?, ?, ?)",
            phase: .write
        ).run([
            .text(key.environment), .text(key.originalTransactionId), .blob(body), .integer(LedgerStore.checksum(body)),
        ])
    }

    func putClaim(channel: String, environment: String, chain: String, account: String) throws(LedgerError) {
        try store.statement(
            "INSERT OR REPLACE INTO claim (channel, environment, chain, account, checksum) VALUES (?, ?, ?, ?, ?)",
            phase: .write
        ).run([
            .text(channel), .text(environment), .text(chain), .text(account),
            .integer(LedgerStore.checksum(columns: [channel, environment, chain, account])),
        ])
    }

    func putChain(channel: String, _ chain: AppStoreChannel.ChainKey, account: String?) throws(LedgerError) {
        try store.statement("INSERT OR REPLACE INTO chain VALUES (?, ?, ?, ?, ?)", phase: .write).run([
            .text(channel), .text(chain.environment), .text(chain.originalTransactionId), .text(chain.ownership),
            account.map(SQLiteStatement.Value.text) ?? .null,
        ])
    }

    func putRecord(
        channel: String, environment: String, refund: Bool, id: String, account: String?, chain: String,
        body: String, customer: String?
    ) throws(LedgerError) {
        try store.statement(
            "INSERT OR REPLACE INTO channel_record (channel, environment, refund, id, account, chain, body, customer, "
                + "checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", phase: .write
        ).run([
            .text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id),
            account.map(SQLiteStatement.Value.text) ?? .null, .text(chain), .blob(StoredBody.pack(body.utf8)),
            customer.map(SQLiteStatement.Value.text) ?? .null, .integer(LedgerStore.checksum(body.utf8)),
        ])
    }

    func putDelivery(channel: String, id: String, signedDate: Int64, seen: Int64) throws(LedgerError) {
        try store.statement(
            "INSERT OR REPLACE INTO delivery (channel, id, signed_date, seen, checksum) VALUES (?, ?, ?, ?, ?)",
            phase: .write
        ).run([
            .text(channel), .text(id), .integer(signedDate), .integer(seen),
            .integer(LedgerStore.checksum(columns: [channel, id, String(signedDate), String(seen)])),
        ])
    }

    func newInputs(_ digests: [Int64]) throws(LedgerError) -> [Int64] {
        let insert = try store.statement(
            "INSERT INTO fed_input VALUES (?) ON CONFLICT DO NOTHING RETURNING digest", phase: .write)
        var new: [Int64] = []
        for digest in digests {
            try insert.rows([.integer(digest)]) { row in new.append(row.integer(0) ?? digest) }
        }
        return new
    }

    func addCounter(_ name: String, _ value: Int64) throws(LedgerError) {
        try store.statement(
            "INSERT INTO counter VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = value + ?2", phase: .write
        ).run([.text(name), .integer(value)])
    }

    func raiseLastSignedDate(_ value: Int64) throws(LedgerError) {
        try store.statement(
            "INSERT INTO counter VALUES ('lastSignedDate', ?1) ON CONFLICT (name) DO UPDATE SET value = max(value, ?1)",
            phase: .write
        ).run([.integer(value)])
    }
}
