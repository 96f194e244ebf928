internal import CSQLite
internal import Foundation
internal import Vouch
internal import VouchOpenSSL

// Checked records: every record body is stored with a checksum (the first 8 bytes of its
// SHA-256, as a signed 64-bit integer), verified whenever the body is read, so overwritten bytes
// are refused as `corrupt_store` naming the record rather than answered as data.
extension LedgerStore {
    /// A table of record bodies, each with its checksum.
    enum RecordTable: CaseIterable {
        case appStoreTransaction
        case appStoreRenewal
        case channelRecord

        var name: String {
            switch self {
            case .appStoreTransaction: "app_store_transaction"
            case .appStoreRenewal: "app_store_renewal"
            case .channelRecord: "channel_record"
            }
        }

        /// The texts that name a record, in order (a refund of another channel reads `refund `
        /// before its id).
        var keyParts: [String] {
            switch self {
            case .appStoreTransaction: ["environment", "original_transaction_id", "ownership", "transaction_id"]
            case .appStoreRenewal: ["environment", "original_transaction_id"]
            case .channelRecord: ["channel", "environment", "CASE refund WHEN 1 THEN 'refund ' ELSE '' END || id"]
            }
        }

        /// The record's key as one text naming it, joined by the database: its parts and spaces.
        var key: String { keyParts.joined(separator: " || ' ' || ") }

        /// The columns a read of a body from a PostgreSQL server selects: the body, its checksum
        /// and its key.
        var columns: String { "body, checksum, \(key)" }

        /// The columns a read of a body from the SQLite file selects, which
        /// ``LedgerStore/verified(_:_:)`` takes: the body, its checksum and the key's parts
        /// apart, joined only to name a record (``key(of:)``), since joining them in SQL cost an
        /// allocation for each part of every row read.
        var partedColumns: String { "body, checksum, " + keyParts.joined(separator: ", ") }

        /// The key of the current row of a statement selecting ``partedColumns``.
        func key(of row: SQLiteStatement) -> String {
            (0..<Int32(keyParts.count)).map { row.text(2 + $0) ?? "" }.joined(separator: " ")
        }

        /// The order of the export.
        var order: String {
            switch self {
            case .appStoreTransaction: "environment, original_transaction_id, ownership, transaction_id"
            case .appStoreRenewal: "environment, original_transaction_id"
            case .channelRecord: "channel, environment, refund, id"
            }
        }
    }

    /// A table of rows without a body, each with a checksum over its columns
    /// (``checksum(columns:)``), verified whenever the row is read.
    enum RowTable: CaseIterable {
        case claim
        case delivery

        var name: String {
            switch self {
            case .claim: "claim"
            case .delivery: "delivery"
            }
        }

        /// The columns the checksum covers, in order: the row's key, then its value.
        var columns: [String] {
            switch self {
            case .claim: ["channel", "environment", "chain", "account"]
            case .delivery: ["channel", "id", "signed_date", "seen"]
            }
        }

        /// The columns of the row's key (the first three of ``columns``), in the order rows are read.
        var key: ArraySlice<String> { columns.prefix(3) }

        /// The SQL of the checksum of a row's columns, as ``LedgerStore/checksum(columns:)``
        /// computes it, for the migrations that give rows held before their checksums: `newline`
        /// is a line feed in the store's dialect, `hash` the checksum of a text.
        func checksumSQL(newline: String, _ hash: (String) -> String) -> String {
            hash(columns.joined(separator: " || \(newline) || "))
        }
    }

    /// The checksum of a record body.
    static func checksum(_ body: some Collection<UInt8>) -> Int64 {
        SHA256Digest.hash(body).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// The checksum of a row without a body: of its columns' text (integers in decimal), joined
    /// by line feeds.
    static func checksum(columns: [String]) -> Int64 {
        checksum(columns.joined(separator: "\n").utf8)
    }

    /// Verifies the `columns` of a row of `table` of `store` against `checksum`:
    /// ``LedgerError/Code/corruptStore`` naming the row by its key when they do not match.
    static func verify(_ store: String, _ table: RowTable, _ columns: [String], checksum: Int64?)
        throws(LedgerError)
    {
        guard checksum == Self.checksum(columns: columns) else {
            throw damaged(store, table.name, columns.prefix(table.key.count).joined(separator: " "))
        }
    }

    /// The record of the current row of a statement selecting ``RecordTable/columns``, once its
    /// body is verified against its checksum; ``LedgerError/Code/corruptStore`` naming the
    /// record when it does not match, or does not read.
    func verified(_ row: SQLiteStatement, _ table: RecordTable) throws(LedgerError) -> any StoredRecord {
        switch row.withBlob(0, { StoredBody.record($0, checksum: row.integer(1)) }) {
        case .success(let record): return record
        case .failure(.unreadable(let reason)):
            throw LedgerError(.corruptStore, "\(path) holds a record that does not read: \(reason)")
        case .failure(let damage): throw Self.damaged(path, table.name, table.key(of: row), damage.reason)
        }
    }

    /// The error of a record of `store` (its name as the user gave it, redacted) in `table` that
    /// does not match its checksum (or, as `what` says, does not unpack):
    /// ``LedgerError/Code/corruptStore`` naming the record by `key`, in the words of ``check()``.
    static func damaged(
        _ store: String, _ table: String, _ key: String?, _ what: String = "does not match its checksum"
    )
        -> LedgerError
    {
        LedgerError(.corruptStore, "\(store) holds a damaged record: \(table) \(key ?? "?") \(what)")
    }

    /// What ``check()`` found.
    public struct CheckReport: Sendable, Hashable {
        /// One thing found wrong.
        public struct Problem: Sendable, Hashable {
            /// The table of the record, or `nil` for a fault of the file itself (SQLite's own
            /// integrity check).
            public let table: String?
            /// The record's key, its columns separated by spaces; `nil` with `table`.
            public let key: String?
            /// What is wrong.
            public let reason: String
        }

        /// The records read and verified (every record of every table with a checksum).
        public internal(set) var records = 0
        /// What is wrong, in the order found: SQLite's integrity check first, then the records
        /// table by table.
        public internal(set) var problems: [Problem] = []

        /// Whether nothing is wrong.
        public var isHealthy: Bool { problems.isEmpty }

        /// Counts one row of `table` read and verifies its `columns` against its checksum; a
        /// mismatch is added to ``problems``, named by the row's key.
        mutating func verify(_ table: RowTable, columns: [String], checksum: Int64?) {
            records += 1
            guard checksum == LedgerStore.checksum(columns: columns) else {
                problems.append(
                    .init(
                        table: table.name, key: columns.prefix(table.key.count).joined(separator: " "),
                        reason: "does not match its checksum"))
                return
            }
        }

        /// Compares the index rows of the App Store chain id `key` (`rows`: the account each
        /// ownership's row names, `nil` for a chain without a token) with the accounts that
        /// `ledger`, holding the records of that chain id alone, gives its chains. Every addition
        /// writes the index from the records, so a row that is missing, names another account
        /// or has no records was changed beside the store: a lookup of the chain's account
        /// through it would miss the chain's purchases. Each is added to ``problems``, named
        /// `app_store ENVIRONMENT ID OWNERSHIP`.
        mutating func verifyIndex(
            of key: AppStoreChannel.RenewalKey, rows: [String: String?], ledger: EntitlementLedger
        ) {
            var rows = rows
            func name(_ ownership: String) -> String {
                "\(LedgerRecordJSON.appStore) \(key.environment) \(key.originalTransactionId) \(ownership)"
            }
            for chain in ledger.appStore.chainKeys(of: key).sorted(by: { $0.ownership < $1.ownership }) {
                let token = ledger.appStore.account(of: chain)?.appAccountToken
                guard let row = rows.removeValue(forKey: chain.ownership) else {
                    problems.append(.init(table: "chain", key: name(chain.ownership), reason: "is missing"))
                    continue
                }
                if row != token {
                    problems.append(
                        .init(
                            table: "chain", key: name(chain.ownership),
                            reason: "names account \(row ?? "none") where its records name \(token ?? "none")"))
                }
            }
            for ownership in rows.keys.sorted() {
                problems.append(.init(table: "chain", key: name(ownership), reason: "has no records"))
            }
        }

        /// Counts one record of `table` read and verifies it (``StoredBody/record(_:checksum:)``):
        /// that it unpacks, matches its checksum and reads; what is wrong is added to
        /// ``problems``, named by `key`.
        mutating func verify(_ table: RecordTable, key: String?, _ read: Result<any StoredRecord, StoredBody.Damage>) {
            records += 1
            if case .failure(let damage) = read {
                problems.append(.init(table: table.name, key: key ?? "?", reason: damage.reason))
            }
        }
    }

    /// Runs SQLite's `PRAGMA integrity_check` over the file, then reads every record, verifying
    /// its checksum and that it decodes, and every claim and delivery, verifying its checksum;
    /// then compares the index of App Store chains that lookups go through with what their
    /// records say: a `chain` row that is missing, names another account or has no records is a
    /// problem of table `chain`. Problems are reported, not thrown; a store that cannot be read
    /// at all throws as any reader does.
    public func check() throws(LedgerError) -> CheckReport {
        try reading { () throws(LedgerError) -> CheckReport in
            var report = CheckReport()
            do throws(LedgerError) {
                try statement("PRAGMA integrity_check", phase: .read).rows { row in
                    let line = row.text(0) ?? ""
                    if line != "ok" { report.problems.append(.init(table: nil, key: nil, reason: line)) }
                }
            } catch  where error.code == .corruptStore {
                report.problems.append(.init(table: nil, key: nil, reason: error.reason))
            }
            for table in RecordTable.allCases {
                do throws(LedgerError) {
                    try statement(
                        "SELECT \(table.partedColumns) FROM \(table.name) ORDER BY \(table.order)", phase: .read
                    )
                    .rows { row in
                        report.verify(
                            table, key: table.key(of: row),
                            row.withBlob(0) { StoredBody.record($0, checksum: row.integer(1)) })
                    }
                } catch  where error.code == .corruptStore {
                    report.problems.append(.init(table: table.name, key: nil, reason: error.reason))
                }
            }
            for table in RowTable.allCases {
                do throws(LedgerError) {
                    try statement(
                        "SELECT \(table.columns.joined(separator: ", ")), checksum FROM \(table.name) "
                            + "ORDER BY \(table.key.joined(separator: ", "))", phase: .read
                    ).rows { row in
                        let columns = (0..<Int32(table.columns.count)).map { row.text($0) ?? "" }
                        report.verify(table, columns: columns, checksum: row.integer(Int32(table.columns.count)))
                    }
                } catch  where error.code == .corruptStore {
                    report.problems.append(.init(table: table.name, key: nil, reason: error.reason))
                }
            }
            do throws(LedgerError) {
                try checkChainIndex(into: &report)
            } catch  where error.code == .corruptStore {
                report.problems.append(.init(table: "chain", key: nil, reason: error.reason))
            }
            return report
        }
    }

    /// Every App Store chain id that has a transaction or a row of the `chain` index, in order:
    /// the chain ids the check of the index reads (in both stores' SQL).
    static let indexedChainIds =
        "SELECT environment, original_transaction_id FROM app_store_transaction "
        + "UNION SELECT environment, chain FROM chain WHERE channel = 'app_store' ORDER BY 1, 2"

    /// The `chain` index's rows of one chain id (`$1` its environment, `$2` the id): each
    /// ownership and its account (in both stores' SQL).
    static let chainIndexRows =
        "SELECT scope, account FROM chain WHERE channel = 'app_store' AND environment = $1 AND chain = $2"

    /// Compares the `chain` index with the accounts the records give, one chain id at a time.
    private func checkChainIndex(into report: inout CheckReport) throws(LedgerError) {
        let index = try statement(Self.chainIndexRows, phase: .read)
        try statement(Self.indexedChainIds, phase: .read).rows { row throws(LedgerError) in
            let key = AppStoreChannel.RenewalKey(
                environment: row.text(0) ?? "", originalTransactionId: row.text(1) ?? "")
            var ledger = EntitlementLedger(catalog: catalog)
            do throws(LedgerError) {
                try load([key], into: &ledger, phase: .read)
            } catch  where error.code == .corruptStore {
                // A damaged record of the chain id: the records' own checks above name it.
                return
            }
            var rows: [String: String?] = [:]
            try index.rows([.text(key.environment), .text(key.originalTransactionId)]) { row in
                rows[row.text(0) ?? ""] = .some(row.text(1))
            }
            report.verifyIndex(of: key, rows: rows, ledger: ledger)
        }
    }
}

extension SQLiteConnection {
    /// Makes the store's functions (``StoredBody/defineFunctions(on:)``) callable from this
    /// connection's SQL, for the migrations: schema 3 fills the checksums of a store of schema 2,
    /// schema 5 packs the bodies, schema 6 repacks the App Store records.
    func defineFunctions() throws(LedgerError) {
        let code = StoredBody.defineFunctions(on: handle)
        guard code == SQLITE_OK else { throw failure(code, phase: .write) }
    }
}
