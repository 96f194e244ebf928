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

        /// The record's key, as text naming it.
        var key: String {
            switch self {
            case .appStoreTransaction:
                "environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id"
            case .appStoreRenewal: "environment || ' ' || original_transaction_id"
            case .channelRecord:
                "channel || ' ' || environment || ' ' || CASE refund WHEN 1 THEN 'refund ' ELSE '' END || id"
            }
        }

        /// The columns every read of a body selects: the body, its checksum and its key, which
        /// ``LedgerStore/verified(_:_:)`` takes.
        var columns: String { "body, checksum, \(key)" }

        /// The order of the export.
        var order: String {
            switch self {
            case .appStoreTransaction: "environment, original_transaction_id, ownership, transaction_id"
            case .appStoreRenewal: "environment, original_transaction_id"
            case .channelRecord: "channel, environment, refund, id"
            }
        }
    }

    /// The checksum of a record body.
    static func checksum(_ body: some Collection<UInt8>) -> Int64 {
        SHA256Digest.hash(body).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// The body of the current row of a statement selecting ``RecordTable/columns``, once its
    /// checksum is verified; ``LedgerError/Code/corruptStore`` naming the record when not.
    func verified(_ row: SQLiteStatement, _ table: RecordTable) throws(LedgerError) -> [UInt8] {
        let body = row.bytes(0)
        guard row.integer(1) == Self.checksum(body) else { throw Self.damaged(path, table, row.text(2)) }
        return body
    }

    /// The error of a record of `store` (its name as the user gave it, redacted) whose body does
    /// not match its checksum: ``LedgerError/Code/corruptStore`` naming the record by `key`.
    static func damaged(_ store: String, _ table: RecordTable, _ key: String?) -> LedgerError {
        LedgerError(
            .corruptStore, "\(store) holds a damaged record: \(table.name) \(key ?? "?") does not match its checksum")
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

        /// Counts one record of `table` read and verifies it: its checksum, then that it
        /// decodes; what is wrong is added to ``problems``, named by `key`.
        mutating func verify(_ table: RecordTable, key: String?, checksum: Int64?, body: [UInt8]) {
            records += 1
            let key = key ?? "?"
            guard checksum == LedgerStore.checksum(body) else {
                problems.append(.init(table: table.name, key: key, reason: "does not match its checksum"))
                return
            }
            do throws(RecordFormatError) {
                _ = try LedgerRecordJSON.read(body)
            } catch {
                problems.append(.init(table: table.name, key: key, reason: "does not read: \(error.reason)"))
            }
        }
    }

    /// Runs SQLite's `PRAGMA integrity_check` over the file, then reads every record, verifying
    /// its checksum and that it decodes. Problems are reported, not thrown; a store that cannot
    /// be read at all throws as any reader does.
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
                    try statement("SELECT \(table.columns) FROM \(table.name) ORDER BY \(table.order)", phase: .read)
                        .rows { row in
                            report.verify(table, key: row.text(2), checksum: row.integer(1), body: row.bytes(0))
                        }
                } catch  where error.code == .corruptStore {
                    report.problems.append(.init(table: table.name, key: nil, reason: error.reason))
                }
            }
            return report
        }
    }
}

extension SQLiteConnection {
    /// Makes `vouch_checksum(body)` (``LedgerStore/checksum(_:)``) callable from this
    /// connection's SQL, for the migration that fills the checksums of a store of schema 2.
    func defineChecksum() throws(LedgerError) {
        let code = sqlite3_create_function_v2(
            handle, "vouch_checksum", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let value = values?[0], let text = sqlite3_value_text(value) else {
                    sqlite3_result_null(context)
                    return
                }
                let body = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
                sqlite3_result_int64(context, LedgerStore.checksum(body))
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code, phase: .write) }
    }
}
