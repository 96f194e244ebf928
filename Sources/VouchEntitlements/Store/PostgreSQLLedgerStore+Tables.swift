internal import Foundation
public import Vouch

// The PostgreSQL store's tables: the rows joining a batch reads and writes (the join itself is
// `LedgerTables.join`, shared with the SQLite store), reading records back into a ledger by the
// channels' codecs, and the questions, each reading only the records it needs.

/// The PostgreSQL store's rows on one connection, inside the store's transaction.
///
/// The rows a join writes are held (``PostgreSQLUpserts``) and sent before the next statement
/// and at the join's end (``flushWrites()``): a batch's transactions, chains or renewal info
/// reach the server in a statement per thousand rows, not one each.
struct PostgreSQLTables: LedgerTables {
    let connection: PostgreSQLConnection
    let name: String
    /// Whether the rows are read inside a write transaction: a failure is then
    /// ``LedgerError/Code/cannotWrite``, as the addition's.
    var writing = false
    /// The writes not sent yet.
    let upserts = PostgreSQLUpserts()

    /// Runs `sql`, prepared once per connection, with `values`, after the writes held before it.
    @discardableResult
    func rows(_ sql: String, _ values: [PostgreSQLConnection.Value] = [], phase: PostgreSQLConnection.Phase)
        throws(LedgerError) -> PostgreSQLRows
    {
        try flushWrites()
        return try run(sql, values, phase: phase)
    }

    private func run(_ sql: String, _ values: [PostgreSQLConnection.Value], phase: PostgreSQLConnection.Phase)
        throws(LedgerError) -> PostgreSQLRows
    {
        do {
            return try connection.prepare(sql, phase: writing ? .write : phase).rows(values)
        } catch {
            throw error.error
        }
    }

    func flushWrites() throws(LedgerError) {
        guard !upserts.isEmpty else { return }
        for statement in upserts.take() { _ = try run(statement.sql, statement.values, phase: .write) }
    }

    /// How many rows ``eachPage(_:_:)`` fetches at a time.
    static let page = 1_000

    /// Calls `body` with the rows of `sql` (a query without parameters), ``page`` of them at a
    /// time, through a cursor of the current transaction: memory holds one page however many
    /// rows the query gives.
    func eachPage(_ sql: String, _ body: (PostgreSQLRows) throws(LedgerError) -> Void) throws(LedgerError) {
        try flushWrites()
        func run<T>(_ step: () throws(PostgreSQLError) -> T) throws(LedgerError) -> T {
            do {
                return try step()
            } catch {
                throw error.error
            }
        }
        try run { () throws(PostgreSQLError) in
            try connection.execute("DECLARE vouch_page NO SCROLL CURSOR FOR \(sql)", phase: .read)
        }
        while true {
            let found = try run { () throws(PostgreSQLError) in
                try connection.query("FETCH \(Self.page) FROM vouch_page", phase: .read)
            }
            guard found.count > 0 else { break }
            try body(found)
        }
        try run { () throws(PostgreSQLError) in try connection.execute("CLOSE vouch_page", phase: .read) }
    }

    /// Runs `sql`, one or more statements without parameters, inside a write transaction.
    func execute(_ sql: String) throws(LedgerError) {
        try flushWrites()
        do {
            try connection.execute(sql, phase: .write)
        } catch {
            throw error.error
        }
    }

    /// The bodies of the rows of `table` that `clause` (a `WHERE` or `ORDER BY` clause) selects,
    /// each verified against its checksum (``LedgerStore/checksum(_:)``):
    /// ``LedgerError/Code/corruptStore`` naming the first record that does not match.
    func bodies(_ table: LedgerStore.RecordTable, _ clause: String, _ values: [PostgreSQLConnection.Value] = [])
        throws(LedgerError) -> [[UInt8]]
    {
        let found = try rows("SELECT \(table.columns) FROM \(table.name) \(clause)", values, phase: .read)
        var bodies: [[UInt8]] = []
        bodies.reserveCapacity(found.count)
        for row in 0..<found.count { bodies.append(try body(of: found, row, table)) }
        return bodies
    }

    /// The body of row `row` of `found`, whose columns from `column` on are those of `table`
    /// (``LedgerStore/RecordTable/columns``), verified against its checksum.
    func body(of found: PostgreSQLRows, _ row: Int, _ table: LedgerStore.RecordTable, from column: Int = 0)
        throws(LedgerError) -> [UInt8]
    {
        let body = found.bytes(row, column) ?? []
        guard found.integer(row, column + 1) == LedgerStore.checksum(body) else {
            throw LedgerStore.damaged(name, table.name, found.text(row, column + 2))
        }
        return body
    }

    /// Reads the bodies of the rows of `table` that `clause` selects into `ledger`, verified.
    func insertBodies(
        _ table: LedgerStore.RecordTable, _ clause: String, _ values: [PostgreSQLConnection.Value] = [],
        into ledger: inout EntitlementLedger
    ) throws(LedgerError) {
        for body in try bodies(table, clause, values) { try insert(record(body), into: &ledger) }
    }

    /// The accounts of the rows of `sql`, whose columns are an environment, a token and an id.
    func accounts(_ sql: String, _ values: [PostgreSQLConnection.Value]) throws(LedgerError) -> Set<AccountKey> {
        let found = try rows(sql, values, phase: .read)
        var accounts = Set<AccountKey>()
        for row in 0..<found.count {
            accounts.insert(
                AccountKey(
                    environment: found.text(row, 0) ?? "", appAccountToken: found.text(row, 1),
                    originalTransactionId: found.text(row, 2) ?? ""))
        }
        return accounts
    }

    func loadChains(_ keys: Set<AppStoreChannel.RenewalKey>, into ledger: inout EntitlementLedger)
        throws(LedgerError)
    {
        let sorted = keys.sorted {
            ($0.environment, $0.originalTransactionId) < ($1.environment, $1.originalTransactionId)
        }
        let sql = Self.chainRows(of: "SELECT * FROM unnest($1::text[], $2::text[])") + " ORDER BY 1"
        try ledger.insertingRecords { ledger throws(LedgerError) in
            for chunk in PostgreSQLUpserts.chunks(sorted) {
                let found = try rows(
                    sql,
                    [
                        .text(PostgreSQLUpserts.arrayLiteral(chunk.map { .text($0.environment) })),
                        .text(PostgreSQLUpserts.arrayLiteral(chunk.map { .text($0.originalTransactionId) })),
                    ], phase: .read)
                try insertRows(found, into: &ledger)
            }
        }
    }

    func records(channel: String, environment: String, refund: Bool, id: String) throws(LedgerError)
        -> [any StoredRecord]
    {
        var records: [any StoredRecord] = []
        for body in try bodies(
            .channelRecord, "WHERE channel = $1 AND environment = $2 AND refund = $3 AND id = $4",
            [.text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id)])
        {
            records.append(try record(body))
        }
        return records
    }

    func stripeClaim(of key: StripeKey) throws(LedgerError) -> String? {
        let found = try rows(
            "SELECT account, checksum FROM claim WHERE channel = 'stripe' AND environment = $1 AND chain = $2",
            [.text(key.environment), .text(key.id)], phase: .read)
        guard found.count > 0, let token = found.text(0, 0) else { return nil }
        try LedgerStore.verify(
            name, .claim, [LedgerRecordJSON.stripe, key.environment, key.id, token], checksum: found.integer(0, 1))
        return token
    }

    func deliveries(channel: String, ids: [String]) throws(LedgerError) -> [String: [Int64: Int64]] {
        var seen: [String: [Int64: Int64]] = [:]
        for chunk in PostgreSQLUpserts.chunks(ids) {
            let found = try rows(
                "SELECT id, signed_date, seen, checksum FROM delivery WHERE channel = $1 AND id = ANY($2::text[])",
                [.text(channel), .text(PostgreSQLUpserts.arrayLiteral(chunk.map { .text($0) }))], phase: .read)
            for row in 0..<found.count {
                let id = found.text(row, 0) ?? ""
                let signedDate = found.integer(row, 1) ?? 0
                let count = found.integer(row, 2) ?? 0
                try LedgerStore.verify(
                    name, .delivery, [channel, id, String(signedDate), String(count)], checksum: found.integer(row, 3))
                seen[id, default: [:]][signedDate] = count
            }
        }
        return seen
    }

    static let transactions = PostgreSQLUpsert(
        table: "app_store_transaction",
        columns: [
            "environment", "original_transaction_id", "ownership", "transaction_id", "revoked", "body", "checksum",
        ],
        types: ["text", "text", "text", "text", "smallint", "text", "bigint"], keyCount: 4,
        update: "revoked = excluded.revoked, body = excluded.body, checksum = excluded.checksum")

    func putTransaction(
        _ chain: AppStoreChannel.ChainKey, transactionId: String, revoked: Bool, record: TransactionRecord
    ) throws(LedgerError) {
        let body = AppStoreRecord.transaction(record).body
        upserts.add(
            [
                .text(chain.environment), .text(chain.originalTransactionId), .text(chain.ownership),
                .text(transactionId), .integer(revoked ? 1 : 0), .text(body),
                .integer(LedgerStore.checksum(body.utf8)),
            ], to: Self.transactions)
    }

    static let renewals = PostgreSQLUpsert(
        table: "app_store_renewal", columns: ["environment", "original_transaction_id", "body", "checksum"],
        types: ["text", "text", "text", "bigint"], keyCount: 2,
        update: "body = excluded.body, checksum = excluded.checksum")

    func putRenewal(_ key: AppStoreChannel.RenewalKey, renewal: RenewalStatement) throws(LedgerError) {
        let body = AppStoreRecord.renewal(key, renewal).body
        upserts.add(
            [
                .text(key.environment), .text(key.originalTransactionId), .text(body),
                .integer(LedgerStore.checksum(body.utf8)),
            ], to: Self.renewals)
    }

    static let claims = PostgreSQLUpsert(
        table: "claim", columns: ["channel", "environment", "chain", "account", "checksum"],
        types: ["text", "text", "text", "text", "bigint"], keyCount: 3,
        update: "account = excluded.account, checksum = excluded.checksum")

    func putClaim(channel: String, environment: String, chain: String, account: String) throws(LedgerError) {
        upserts.add(
            [
                .text(channel), .text(environment), .text(chain), .text(account),
                .integer(LedgerStore.checksum(columns: [channel, environment, chain, account])),
            ], to: Self.claims)
    }

    static let chains = PostgreSQLUpsert(
        table: "chain", columns: ["channel", "environment", "chain", "scope", "account"],
        types: ["text", "text", "text", "text", "text"], keyCount: 4, update: "account = excluded.account")

    func putChain(channel: String, _ chain: AppStoreChannel.ChainKey, account: String?) throws(LedgerError) {
        upserts.add(
            [
                .text(channel), .text(chain.environment), .text(chain.originalTransactionId), .text(chain.ownership),
                account.map(PostgreSQLConnection.Value.text) ?? .null,
            ], to: Self.chains)
    }

    static let records = PostgreSQLUpsert(
        table: "channel_record",
        columns: ["channel", "environment", "refund", "id", "account", "chain", "body", "customer", "checksum"],
        types: ["text", "text", "smallint", "text", "text", "text", "text", "text", "bigint"], keyCount: 4,
        update: "account = excluded.account, chain = excluded.chain, body = excluded.body, "
            + "customer = excluded.customer, checksum = excluded.checksum")

    func putRecord(
        channel: String, environment: String, refund: Bool, id: String, account: String?, chain: String,
        body: String, customer: String?
    ) throws(LedgerError) {
        // The key's columns first: channel, environment, refund, id.
        upserts.add(
            [
                .text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id),
                account.map(PostgreSQLConnection.Value.text) ?? .null, .text(chain), .text(body),
                customer.map(PostgreSQLConnection.Value.text) ?? .null, .integer(LedgerStore.checksum(body.utf8)),
            ], to: Self.records)
    }

    static let deliveries = PostgreSQLUpsert(
        table: "delivery", columns: ["channel", "id", "signed_date", "seen", "checksum"],
        types: ["text", "text", "bigint", "bigint", "bigint"], keyCount: 3,
        update: "seen = excluded.seen, checksum = excluded.checksum")

    func putDelivery(channel: String, id: String, signedDate: Int64, seen: Int64) throws(LedgerError) {
        upserts.add(
            [
                .text(channel), .text(id), .integer(signedDate), .integer(seen),
                .integer(LedgerStore.checksum(columns: [channel, id, String(signedDate), String(seen)])),
            ], to: Self.deliveries)
    }

    func newInputs(_ digests: [Int64]) throws(LedgerError) -> [Int64] {
        // One statement for the batch, inserting in ascending order: two writers holding the
        // same digests wait for each other in one order, never in a cycle.
        let found = try rows(
            "INSERT INTO fed_input (digest) SELECT unnest($1::bigint[]) ORDER BY 1 ON CONFLICT DO NOTHING "
                + "RETURNING digest",
            [.text(PostgreSQLUpserts.arrayLiteral(digests.map { .integer($0) }))], phase: .write)
        return (0..<found.count).compactMap { found.integer($0, 0) }
    }

    func addCounter(_ name: String, _ value: Int64) throws(LedgerError) {
        try rows(
            "INSERT INTO counter (name, value) VALUES ($1, $2) "
                + "ON CONFLICT (name) DO UPDATE SET value = counter.value + excluded.value",
            [.text(name), .integer(value)], phase: .write)
    }

    func raiseLastSignedDate(_ value: Int64) throws(LedgerError) {
        try rows(
            "INSERT INTO counter (name, value) VALUES ('lastSignedDate', $1) "
                + "ON CONFLICT (name) DO UPDATE SET value = greatest(counter.value, excluded.value)",
            [.integer(value)], phase: .write)
    }

    /// The rows of the chains `chains` names (a query of two columns: an environment and an
    /// `originalTransactionId`), each chain's by their index: of a kind (0 a transaction, 1
    /// renewal info, 2 a claim), then the body (a claim's account), its checksum, the record's
    /// key as text, and a claim's environment and chain. ``insertRows(_:into:)`` reads them.
    static func chainRows(of chains: String) -> String {
        let transaction = LedgerStore.RecordTable.appStoreTransaction
        let renewal = LedgerStore.RecordTable.appStoreRenewal
        // LATERAL: each chain, then its rows by their index.
        return "WITH c (e, o) AS (\(chains)) "
            + "SELECT 0, \(transaction.columns), NULL, NULL FROM c CROSS JOIN LATERAL (SELECT * FROM "
            + "\(transaction.name) WHERE environment = c.e AND original_transaction_id = c.o) r "
            + "UNION ALL SELECT 1, \(renewal.columns), NULL, NULL FROM c CROSS JOIN LATERAL (SELECT * FROM "
            + "\(renewal.name) WHERE environment = c.e AND original_transaction_id = c.o) r "
            + "UNION ALL SELECT 2, r.account, r.checksum, NULL, r.environment, r.chain FROM c CROSS JOIN LATERAL "
            + "(SELECT * FROM claim WHERE channel = 'app_store' AND environment = c.e AND chain = c.o) r"
    }

    /// Reads rows of ``chainRows(of:)`` (and of kind 3, another channel's record) into
    /// `ledger`, each verified against its checksum.
    func insertRows(_ found: PostgreSQLRows, into ledger: inout EntitlementLedger) throws(LedgerError) {
        for row in 0..<found.count {
            guard found.integer(row, 0) == 2 else {
                let table: LedgerStore.RecordTable =
                    switch found.integer(row, 0) {
                    case 0: .appStoreTransaction
                    case 1: .appStoreRenewal
                    default: .channelRecord
                    }
                try insert(record(try body(of: found, row, table, from: 1)), into: &ledger)
                continue
            }
            let token = found.text(row, 1) ?? ""
            let environment = found.text(row, 4) ?? ""
            let chain = found.text(row, 5) ?? ""
            try LedgerStore.verify(
                name, .claim, [LedgerRecordJSON.appStore, environment, chain, token], checksum: found.integer(row, 2))
            ledger.appStore.insert(claim: token, for: .init(environment: environment, originalTransactionId: chain))
        }
    }

    /// Reads the records of `account` into `ledger`: its App Store chains (every ownership, with
    /// renewal info and claims) and its records of the other channels, each verified.
    ///
    /// One statement reads them all (one round trip to the server, one snapshot of the store):
    /// the rows of its chains (``chainRows(of:)``), then its records of the other channels
    /// (kind 3).
    func load(_ account: AccountKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
        let chains =
            account.appAccountToken != nil
            ? "SELECT environment, chain FROM chain WHERE account = $1 AND channel = 'app_store' AND environment = $2"
            : "SELECT environment, chain FROM chain WHERE chain = $1 AND channel = 'app_store' AND environment = $2 "
                + "AND account IS NULL"
        let others =
            account.appAccountToken != nil
            ? "account = $1 AND environment = $2 AND refund = 0"
            : "chain = $1 AND environment = $2 AND refund = 0 AND account IS NULL"
        let record = LedgerStore.RecordTable.channelRecord
        let found = try rows(
            Self.chainRows(of: chains)
                + " UNION ALL SELECT 3, \(record.columns), NULL, NULL FROM \(record.name) WHERE \(others) ORDER BY 1",
            [
                .text(account.appAccountToken ?? account.originalTransactionId ?? ""),
                .text(account.environment.rawValue),
            ],
            phase: .read)
        try ledger.insertingRecords { ledger throws(LedgerError) in try insertRows(found, into: &ledger) }
    }

    /// Every record of every table, in the export's order (that of the SQLite store), to `body`;
    /// a claim row as its record, written by its channel's codec.
    func eachRecord(_ body: ([UInt8]) throws(LedgerError) -> Void) throws(LedgerError) {
        // A page at a time: an export holds one page of rows however large the store.
        func records(_ table: LedgerStore.RecordTable) throws(LedgerError) {
            try eachPage("SELECT \(table.columns) FROM \(table.name) ORDER BY \(table.order)") {
                found throws(LedgerError) in
                for row in 0..<found.count { try body(try self.body(of: found, row, table)) }
            }
        }
        try records(.appStoreTransaction)
        try records(.appStoreRenewal)
        try eachPage(
            "SELECT channel, environment, chain, account, checksum FROM claim ORDER BY channel, environment, chain"
        ) { claims throws(LedgerError) in
            for row in 0..<claims.count {
                let channel = claims.text(row, 0) ?? ""
                let environment = claims.text(row, 1) ?? ""
                let chain = claims.text(row, 2) ?? ""
                let token = claims.text(row, 3) ?? ""
                try LedgerStore.verify(
                    name, .claim, [channel, environment, chain, token], checksum: claims.integer(row, 4))
                let record =
                    channel == LedgerRecordJSON.appStore
                    ? LedgerRecordJSON.claim(token, key: .init(environment: environment, originalTransactionId: chain))
                    : LedgerRecordJSON.claim(token, key: StripeKey(environment: environment, id: chain))
                try body(JSONWriter.encode(record))
            }
        }
        try records(.channelRecord)
    }
}

// MARK: Questions

extension PostgreSQLLedgerStore {
    /// The accounts an identifier names: an `appAccountToken` (in any case), any
    /// `originalTransactionId` of the account, a Stripe subscription's or a grant's id, in every
    /// environment.
    public func accounts(matching identifier: String) throws(LedgerError) -> [AccountKey] {
        try readingOnce { connection throws(LedgerError) -> [AccountKey] in
            try PostgreSQLTables(connection: connection, name: target).accounts(
                "SELECT environment, account, chain FROM chain WHERE account = $1 AND channel = 'app_store' "
                    + "UNION SELECT environment, account, chain FROM chain WHERE chain = $2 AND channel = 'app_store' "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND account = $1 "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND chain = $2 "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND id = $2",
                [.text(identifier.lowercased()), .text(identifier)]
            ).sorted()
        }
    }

    /// The accounts holding a transaction `transactionId` (or a Stripe subscription or grant of
    /// that id).
    public func accounts(withTransactionId transactionId: String) throws(LedgerError) -> [AccountKey] {
        try readingOnce { connection throws(LedgerError) -> [AccountKey] in
            try PostgreSQLTables(connection: connection, name: target).accounts(
                "SELECT c.environment, c.account, c.chain FROM app_store_transaction t JOIN chain c "
                    + "ON c.channel = 'app_store' AND c.environment = t.environment "
                    + "AND c.chain = t.original_transaction_id AND c.scope = t.ownership WHERE t.transaction_id = $1 "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0 AND id = $1",
                [.text(transactionId)]
            ).sorted()
        }
    }

    /// Every account, in a stable order.
    public func accounts() throws(LedgerError) -> [AccountKey] {
        try readingOnce { connection throws(LedgerError) -> [AccountKey] in
            try PostgreSQLTables(connection: connection, name: target).accounts(
                "SELECT environment, account, chain FROM chain WHERE channel = 'app_store' "
                    + "UNION SELECT environment, account, chain FROM channel_record WHERE refund = 0", []
            ).sorted()
        }
    }

    /// The entitlements of one account at `instant`, or `nil` for an unknown account. Only the
    /// account's own records are read.
    public func entitlements(of account: AccountKey, at instant: Timestamp) throws(LedgerError) -> AccountEntitlements?
    {
        try readingOnce { connection throws(LedgerError) -> AccountEntitlements? in
            var ledger = EntitlementLedger.forOneAnswer(catalog: catalog)
            try PostgreSQLTables(connection: connection, name: target).load(account, into: &ledger)
            return ledger.entitlements(of: account, at: instant)
        }
    }

    /// The instants at which the answer of `account` may change, as
    /// ``EntitlementLedger/changeInstants(of:)`` gives them; only the account's records are read.
    public func changeInstants(of account: AccountKey) throws(LedgerError) -> [Timestamp] {
        try readingOnce { connection throws(LedgerError) -> [Timestamp] in
            var ledger = EntitlementLedger.forOneAnswer(catalog: catalog)
            try PostgreSQLTables(connection: connection, name: target).load(account, into: &ledger)
            return ledger.changeInstants(of: account)
        }
    }

    /// The revocations of one account, as ``EntitlementLedger/revocations(of:)`` answers them;
    /// only that account's records and its customers' are read.
    public func revocations(of account: AccountKey) throws(LedgerError) -> [Revocation] {
        try reading { connection throws(LedgerError) -> [Revocation] in
            let tables = PostgreSQLTables(connection: connection, name: target)
            var ledger = EntitlementLedger.forOneAnswer(catalog: catalog)
            try tables.load(account, into: &ledger)
            let environment = account.environment.rawValue
            // Every record of those customers: their other subscriptions decide whose a charge is.
            let customers = Set(ledger.stripe.subscriptions.values.compactMap { $0.snapshot?.customer })
            for customer in customers.sorted() {
                try tables.insertBodies(
                    .channelRecord, "WHERE channel = 'stripe' AND environment = $1 AND customer = $2",
                    [.text(environment), .text(customer)], into: &ledger)
            }
            if let token = account.appAccountToken {
                try tables.insertBodies(
                    .channelRecord, "WHERE channel = 'stripe' AND refund = 1 AND account = $1 AND environment = $2",
                    [.text(token), .text(environment)], into: &ledger)
            }
            return ledger.revocations(of: account)
        }
    }

    /// The entitlements of every account at `instant` (every record is read).
    public func entitlements(at instant: Timestamp) throws(LedgerError) -> [AccountEntitlements] {
        try ledger().entitlements(at: instant)
    }

    /// Every revocation with a `revocationDate` at or after `since` (all when `nil`), as
    /// ``EntitlementLedger/revocations(since:)-(Timestamp?)`` orders them; only the chains
    /// holding a revocation, the refunded charges and their customers' subscriptions are read.
    public func revocations(since: Timestamp?) throws(LedgerError) -> [Revocation] {
        try reading { connection throws(LedgerError) -> [Revocation] in
            let tables = PostgreSQLTables(connection: connection, name: target)
            let revoked = try tables.rows(
                "SELECT DISTINCT environment, original_transaction_id FROM app_store_transaction WHERE revoked = 1",
                phase: .read)
            var keys = Set<AppStoreChannel.RenewalKey>()
            for row in 0..<revoked.count {
                keys.insert(
                    .init(environment: revoked.text(row, 0) ?? "", originalTransactionId: revoked.text(row, 1) ?? ""))
            }
            var ledger = EntitlementLedger(catalog: catalog)
            try tables.loadChains(keys, into: &ledger)
            try tables.insertBodies(
                .channelRecord,
                "WHERE channel = 'stripe' AND (refund = 1 OR (environment, customer) IN "
                    + "(SELECT environment, customer FROM channel_record WHERE channel = 'stripe' AND refund = 1))",
                into: &ledger)
            return ledger.revocations(since: since)
        }
    }

    /// Everything the store holds, as one ledger answering by the store's catalog (its
    /// `statistics` are its own; the store's are ``statistics()``).
    public func ledger() throws(LedgerError) -> EntitlementLedger {
        try reading { connection throws(LedgerError) -> EntitlementLedger in
            let tables = PostgreSQLTables(connection: connection, name: target)
            var ledger = EntitlementLedger(catalog: catalog)
            try ledger.insertingRecords { ledger throws(LedgerError) in
                try tables.eachRecord { bytes throws(LedgerError) in
                    try tables.insert(tables.record(bytes), into: &ledger)
                }
            }
            return ledger
        }
    }

    /// Writes every record the store holds, one JSON object per call, newline-free, in the
    /// order and form of ``LedgerStore/export(_:)``.
    public func export(_ write: ([UInt8]) throws -> Void) throws {
        var failure: (any Error)?
        try reading { connection throws(LedgerError) in
            try PostgreSQLTables(connection: connection, name: target).eachRecord { bytes throws(LedgerError) in
                guard failure == nil else { return }
                let object: JSONValue
                do throws(RecordFormatError) {
                    object = try LedgerRecordJSON.read(bytes).exported
                } catch {
                    throw LedgerError(.corruptStore, "\(target) holds a record that does not read: \(error.reason)")
                }
                do { try write(JSONWriter.encode(object)) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

    /// Reads every record, verifying its checksum and that it decodes, and every claim and
    /// delivery, verifying its checksum, then compares the index of App Store chains with what
    /// their records say, as ``LedgerStore/check()`` does, in one snapshot. The server's own structures (its pages and
    /// indexes) are the server's to check (`pg_amcheck`, data checksums). Problems are
    /// reported, not thrown; a store that cannot be read at all throws as any reader does.
    public func check() throws(LedgerError) -> LedgerStore.CheckReport {
        try reading { connection throws(LedgerError) -> LedgerStore.CheckReport in
            let tables = PostgreSQLTables(connection: connection, name: target)
            var report = LedgerStore.CheckReport()
            for table in LedgerStore.RecordTable.allCases {
                try tables.eachPage("SELECT \(table.columns) FROM \(table.name) ORDER BY \(table.order)") { found in
                    for row in 0..<found.count {
                        report.verify(
                            table, key: found.text(row, 2),
                            StoredBody.record(json: found.bytes(row, 0) ?? [], checksum: found.integer(row, 1)))
                    }
                }
            }
            for table in LedgerStore.RowTable.allCases {
                try tables.eachPage(
                    "SELECT \(table.columns.joined(separator: ", ")), checksum FROM \(table.name) "
                        + "ORDER BY \(table.key.joined(separator: ", "))"
                ) { found in
                    for row in 0..<found.count {
                        report.verify(
                            table, columns: (0..<table.columns.count).map { found.text(row, $0) ?? "" },
                            checksum: found.integer(row, table.columns.count))
                    }
                }
            }
            // The chain index against the accounts the records give, one chain id at a time.
            try tables.eachPage(LedgerStore.indexedChainIds) { found throws(LedgerError) in
                for row in 0..<found.count {
                    let key = AppStoreChannel.RenewalKey(
                        environment: found.text(row, 0) ?? "", originalTransactionId: found.text(row, 1) ?? "")
                    var ledger = EntitlementLedger(catalog: catalog)
                    do throws(LedgerError) {
                        try tables.loadChains([key], into: &ledger)
                    } catch  where error.code == .corruptStore {
                        // A damaged record of the chain id: the records' own checks above name it.
                        continue
                    }
                    let index = try tables.rows(
                        LedgerStore.chainIndexRows, [.text(key.environment), .text(key.originalTransactionId)],
                        phase: .read)
                    var rows: [String: String?] = [:]
                    for at in 0..<index.count { rows[index.text(at, 0) ?? ""] = .some(index.text(at, 1)) }
                    report.verifyIndex(of: key, rows: rows, ledger: ledger)
                }
            }
            return report
        }
    }

    /// What the store holds and was fed, as ``LedgerStore/statistics()`` counts it;
    /// ``LedgerStore/Statistics/bytes`` is the size of the store's tables and indexes on the
    /// server (`pg_total_relation_size`), and ``LedgerStore/Statistics/schemaVersion`` this
    /// store's schema.
    public func statistics() throws(LedgerError) -> LedgerStore.Statistics {
        try reading { connection throws(LedgerError) -> LedgerStore.Statistics in
            let tables = PostgreSQLTables(connection: connection, name: target)
            var statistics = LedgerStore.Statistics()
            func integer(_ sql: String) throws(LedgerError) -> Int {
                Int(try tables.rows(sql, phase: .read).integer(0, 0) ?? 0)
            }
            for (path, sql) in LedgerStore.Statistics.counts { statistics[keyPath: path] = try integer(sql) }
            var counters: [String: Int64] = [:]
            let found = try tables.rows("SELECT name, value FROM counter", phase: .read)
            for row in 0..<found.count { counters[found.text(row, 0) ?? ""] = found.integer(row, 1) }
            for (name, path) in LedgerStore.counters { statistics.fed[keyPath: path] = Int(counters[name] ?? 0) }
            statistics.lastSignedDate = counters["lastSignedDate"].map(Timestamp.init(milliseconds:))
            statistics.bytes = Int64(
                try integer(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                        + "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname "
                        + "IN ('vouch_meta', 'chain', 'claim', 'delivery', 'counter', 'fed_input', "
                        + "'app_store_transaction', 'app_store_renewal', 'channel_record')"))
            statistics.schemaVersion = Self.schemaVersion
            return statistics
        }
    }
}
