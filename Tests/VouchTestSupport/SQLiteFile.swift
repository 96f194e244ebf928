import CSQLite
import Foundation

/// SQLite itself on a store's file, beside the store's own connection, as another application
/// would open it: how a test reads what the store wrote and damages it on purpose.
///
/// `functions` defines SQL functions on each connection before it is used: the ledger's tests
/// pass the store's own (`vouch_pack(json)`, `vouch_unpack(body)`), by which they read and write
/// the JSON of packed bodies.
public enum SQLiteFile {
    /// A connection to `path` with `functions` defined on it; the caller closes it.
    public static func open(_ path: String, functions: (OpaquePointer?) -> Int32) throws -> OpaquePointer? {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, functions(handle) == SQLITE_OK else {
            sqlite3_close(handle)
            throw CocoaError(.fileReadUnknown)
        }
        return handle
    }

    /// Runs every statement of `sql` on `path`.
    public static func execute(_ path: String, _ sql: String, functions: (OpaquePointer?) -> Int32) throws {
        let handle = try open(path, functions: functions)
        defer { sqlite3_close(handle) }
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Runs the one statement `sql` on `path`: the first column of its first row, `nil` when it
    /// gives no row or a `NULL`.
    public static func value(_ path: String, _ sql: String, functions: (OpaquePointer?) -> Int32) throws -> String? {
        let handle = try open(path, functions: functions)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw CocoaError(.fileReadUnknown)
        }
        defer { sqlite3_finalize(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW || code == SQLITE_DONE else { throw CocoaError(.fileWriteUnknown) }
        guard code == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
        return String(cString: text)
    }
}
