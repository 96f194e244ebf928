internal import CSQLite
internal import Foundation

/// One SQLite connection: the only owner of its `sqlite3` handle, closed in `deinit`. Used by
/// one thread at a time (``LedgerStore`` serialises its calls).
final class SQLiteConnection {
    /// What a failure means depends on what was being done: the same SQLite code is "cannot be
    /// opened" when reading and "cannot be written" when writing.
    enum Phase {
        case open
        case read
        case write
    }

    let handle: OpaquePointer
    let path: String

    /// Opens `path` read-only, or read-write creating it when absent; `uri` takes a `file:` URI.
    init(path: String, writable: Bool, uri: String? = nil) throws(LedgerError) {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= writable ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) : SQLITE_OPEN_READONLY
        if uri != nil { flags |= SQLITE_OPEN_URI }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(uri ?? path, &opened, flags, nil)
        guard let opened else {
            throw LedgerError(.storeFailure, "\(path): SQLite could not allocate a connection")
        }
        guard code == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(opened))
            // A connection that failed to open still owns its handle.
            sqlite3_close_v2(opened)
            throw Self.error(code, message: message, path: path, phase: writable ? .write : .open)
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        // Every statement is finalised by its owner before the connection goes.
        sqlite3_close_v2(handle)
    }

    /// Whether SQLite opened the file read-only (a read-write open of a file without write
    /// permission does).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Runs `sql` (one or more statements without results).
    func execute(_ sql: String, phase: Phase) throws(LedgerError) {
        try execute(sql, phase: phase, retryingWhileBusyFor: .zero)
    }

    /// Runs `sql` as ``execute(_:phase:)`` does, running it again while SQLite answers that the
    /// file is busy, for up to `timeout`: for a statement SQLite does not wait for by itself
    /// (changing the journal mode takes the file alone, without the busy handler).
    func execute(_ sql: String, phase: Phase, retryingWhileBusyFor timeout: Duration) throws(LedgerError) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let code = sqlite3_exec(handle, sql, nil, nil, nil)
            if code == SQLITE_OK { return }
            guard code & 0xFF == SQLITE_BUSY, ContinuousClock.now < deadline else { throw failure(code, phase: phase) }
            usleep(2_000)
        }
    }

    /// Prepares one statement.
    func prepare(_ sql: String, phase: Phase) throws(LedgerError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, 0, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw failure(code, phase: phase) }
        return SQLiteStatement(handle: statement, connection: self, phase: phase)
    }

    /// The error of `code`, with SQLite's message for this connection.
    func failure(_ code: Int32, phase: Phase) -> LedgerError {
        Self.error(code, message: String(cString: sqlite3_errmsg(handle)), path: path, phase: phase)
    }

    /// The error a SQLite result code means in `phase`.
    static func error(_ code: Int32, message: String, path: String, phase: Phase) -> LedgerError {
        let primary = code & 0xFF
        switch primary {
        case SQLITE_NOTADB:
            return LedgerError(.notAStore, "\(path) is not a Vouch store: \(message)")
        case SQLITE_CORRUPT:
            return LedgerError(.corruptStore, "\(path) is damaged (truncated or overwritten): \(message)")
        case SQLITE_ERROR where message.hasPrefix("no such table") || message.hasPrefix("no such column"):
            // The store's statements are fixed: a Vouch store of this schema without one of its
            // tables or columns has been altered.
            return LedgerError(.corruptStore, "\(path) is damaged (its schema was altered): \(message)")
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH:
            return phase == .write
                ? LedgerError(.cannotWrite, "cannot write \(path): \(message)")
                : LedgerError(.cannotOpen, "cannot open \(path): \(message)")
        case SQLITE_READONLY, SQLITE_FULL, SQLITE_BUSY, SQLITE_LOCKED:
            return phase == .read
                ? LedgerError(.cannotOpen, "cannot read \(path): \(message)")
                : LedgerError(.cannotWrite, "cannot write \(path): \(message)")
        case SQLITE_IOERR:
            // SQLITE_IOERR_SHORT_READ: the file ends before a page it says it has.
            if code == SQLITE_IOERR | (2 << 8) {
                return LedgerError(.corruptStore, "\(path) is damaged (truncated): \(message)")
            }
            return phase == .write
                ? LedgerError(.cannotWrite, "cannot write \(path): \(message)")
                : LedgerError(.cannotOpen, "cannot read \(path): \(message)")
        default:
            return LedgerError(.storeFailure, "\(path): SQLite failed: \(message) (code \(code))")
        }
    }
}

/// One prepared statement, finalised in `deinit`; it keeps its connection alive.
final class SQLiteStatement {
    let handle: OpaquePointer
    let connection: SQLiteConnection
    let phase: SQLiteConnection.Phase

    init(handle: OpaquePointer, connection: SQLiteConnection, phase: SQLiteConnection.Phase) {
        self.handle = handle
        self.connection = connection
        self.phase = phase
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// A value to bind.
    enum Value {
        case text(String)
        case blob([UInt8])
        case integer(Int64)
        case null
    }

    /// Resets the statement and binds `values` to its parameters in order; parameters past
    /// them are NULL.
    func bind(_ values: [Value]) throws(LedgerError) {
        sqlite3_reset(handle)
        if values.count < Int(sqlite3_bind_parameter_count(handle)) { sqlite3_clear_bindings(handle) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .text(var text):
                // The string's own UTF-8, whole (a NUL inside it too), which SQLite copies
                // before the call returns (SQLITE_TRANSIENT).
                code = text.withUTF8 { utf8 in
                    guard let start = utf8.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, nil) }
                    return start.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                        sqlite3_bind_text(handle, index, $0, Int32(utf8.count), vouch_sqlite_transient())
                    }
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), vouch_sqlite_transient())
                }
            case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
            case .null: code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw connection.failure(code, phase: phase) }
        }
    }

    /// Steps once: `true` when a row is ready, `false` when the statement is done.
    func step() throws(LedgerError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(code, phase: phase)
        }
    }

    /// Resets the statement, ending the read it holds open when it was not stepped to its end
    /// (a statement left so keeps its connection on the snapshot it began in).
    func reset() {
        sqlite3_reset(handle)
    }

    /// Binds `values` and runs the statement to its end.
    func run(_ values: [Value] = []) throws(LedgerError) {
        try bind(values)
        while try step() {}
    }

    /// Binds `values` and calls `row` for each row.
    func rows(_ values: [Value] = [], _ row: (SQLiteStatement) throws(LedgerError) -> Void) throws(LedgerError) {
        try bind(values)
        while try step() { try row(self) }
    }

    /// Column `index` of the current row as text; `nil` for NULL.
    func text(_ index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let bytes = sqlite3_column_text(handle, index) else {
            return nil
        }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes (a text column's UTF-8).
    func bytes(_ index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_text(handle, index) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))))
    }

    /// `body` of column `index` of the current row as SQLite holds it (empty for NULL), without
    /// a copy: the bytes are valid only during the call.
    func withBlob<Result>(_ index: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let start = sqlite3_column_blob(handle, index)
        return body(
            UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(sqlite3_column_bytes(handle, index))))
    }

    /// Column `index` of the current row as an integer; `nil` for NULL.
    func integer(_ index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }
}
