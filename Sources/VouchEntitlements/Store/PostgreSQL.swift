internal import CLibPQ
internal import Foundation
internal import Vouch

/// One PostgreSQL connection through libpq: the only owner of its `PGconn`, closed by
/// ``close()`` or in `deinit`. Used by one thread at a time, like ``SQLiteConnection``.
///
/// It is opened by a connection string as libpq reads it: a URI (`postgresql://…` or
/// `postgres://…`, with its query parameters) or the keyword form (`host=… dbname=…`); what the
/// string leaves out libpq takes from its environment variables (`PGHOST`, `PGPORT`, `PGUSER`,
/// `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`, …) and the password file. Parameters and results
/// travel as text, except ``Value/bytes(_:)``, which is sent as binary; a `bytea` column reads
/// back through ``PostgreSQLRows/bytes(_:_:)``.
///
/// Every failure is a ``PostgreSQLError``: the ``LedgerError`` it means (see
/// ``PostgreSQLError/code(sqlState:connectionLost:phase:)`` for the mapping), the server's
/// SQLSTATE, and whether running the transaction again may succeed. No reason ever holds the
/// password: it is cut from the connection string and from every message.
package final class PostgreSQLConnection {
    /// What a failure means depends on what was being done, as for SQLite's connection: a lost
    /// connection is "cannot be read" while reading and "cannot be written" while writing.
    package enum Phase: Sendable {
        case open
        case read
        case write
    }

    /// A parameter of a statement.
    package enum Value: Sendable, Hashable {
        /// Text, sent as UTF-8; PostgreSQL's text holds no NUL character, so one is refused.
        case text(String)
        /// A 64-bit integer (a `bigint` parameter).
        case integer(Int64)
        /// Bytes, sent in binary (a `bytea` parameter).
        case bytes([UInt8])
        /// SQL NULL.
        case null
    }

    /// How a transaction of ``transaction(_:attempts:phase:_:)`` sees other transactions.
    package enum Isolation: String, Sendable {
        /// PostgreSQL's default: each statement sees what was committed before it began.
        case readCommitted = "READ COMMITTED"
        /// One snapshot for the whole transaction; a concurrent update is a serialization failure.
        case repeatableRead = "REPEATABLE READ"
        /// As if the transactions ran one after another; a conflict is a serialization failure.
        case serializable = "SERIALIZABLE"
    }

    /// How long opening waits for the server when neither the connection string
    /// (`connect_timeout`) nor `PGCONNECT_TIMEOUT` says: libpq's own default is to wait forever.
    static let defaultConnectTimeout = 10

    private var handle: OpaquePointer?
    /// The server as reasons name it (`postgresql://user@host:port/dbname`), without a password.
    package let target: String
    /// What no reason may contain: the password of the connection string and `PGPASSWORD`.
    private let secrets: [String]
    /// The server-side names of the statements prepared on this connection, by their SQL.
    private var prepared: [String: String] = [:]

    /// Whether `database` (what `--db` was given) names a PostgreSQL server rather than a file:
    /// a `postgresql://` or `postgres://` URI, the two prefixes libpq reads as one. The keyword
    /// form (`host=… dbname=…`) opens too, but is not told apart here: a file's path may hold `=`.
    package static func isConnectionURI(_ database: String) -> Bool {
        database.hasPrefix("postgresql://") || database.hasPrefix("postgres://")
    }

    /// Connects to the server `connectionString` names.
    ///
    /// - Throws: ``PostgreSQLError`` with ``LedgerError/Code/cannotOpen``: a connection string
    ///   libpq cannot read, a server that cannot be reached or refuses the connection
    ///   (authentication, an unknown database or role, too many connections).
    package init(_ connectionString: String) throws(PostgreSQLError) {
        let secrets = Self.secrets(in: connectionString)
        self.secrets = secrets
        // Read before connecting, so that a string libpq refuses is reported with its own words.
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &parseError) else {
            let message = parseError.map { String(cString: $0) } ?? "out of memory"
            if let parseError { PQfreemem(parseError) }
            throw PostgreSQLError(
                LedgerError(
                    .cannotOpen,
                    "cannot open PostgreSQL: the connection string is not one libpq reads: "
                        + Self.redact(message, secrets)),
                sqlState: nil, connectionLost: false)
        }
        PQconninfoFree(options)

        // Keywords are processed in order and the expanded connection string (`dbname`) comes
        // last: what it says wins over the defaults before it.
        var keywords = ["fallback_application_name"]
        var values = ["vouch"]
        if ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            keywords.append("connect_timeout")
            values.append(String(Self.defaultConnectTimeout))
        }
        keywords.append("dbname")
        values.append(connectionString)
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw PostgreSQLError(
                LedgerError(.storeFailure, "PostgreSQL: libpq could not allocate a connection"),
                sqlState: nil, connectionLost: false)
        }
        target = Self.target(of: connection)
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.redact(Self.oneLine(String(cString: PQerrorMessage(connection))), secrets)
            // A connection that failed to open still owns its handle.
            PQfinish(connection)
            throw PostgreSQLError(
                LedgerError(.cannotOpen, "cannot open \(target): \(message)"),
                sqlState: nil, connectionLost: false)
        }
        handle = connection
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection; an open transaction is rolled back by the server. Later calls
    /// fail with ``LedgerError/Code/storeFailure``. Closing twice does nothing.
    package func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection is open and the server reachable as far as libpq knows (it learns
    /// of a lost connection on the next call).
    package var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether a transaction is open (begun and neither committed nor rolled back).
    package var inTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// The process id of the server's backend serving this connection (`pg_backend_pid()`).
    package var backendProcessID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Runs `sql`: one or more statements without parameters, their rows discarded.
    package func execute(_ sql: String, phase: Phase) throws(PostgreSQLError) {
        let connection = try open(phase: phase)
        _ = try check(PQexec(connection, sql), phase: phase)
    }

    /// Runs one statement with `values` bound to `$1`, `$2`, … in order, and returns its rows
    /// (none for a statement that returns none).
    @discardableResult
    package func query(_ sql: String, _ values: [Value] = [], phase: Phase) throws(PostgreSQLError) -> PostgreSQLRows {
        let connection = try open(phase: phase)
        let result = try withParameters(values) { count, pointers, lengths, formats in
            PQexecParams(connection, sql, count, nil, pointers, lengths, formats, 0)
        }
        return try check(result, phase: phase)
    }

    /// Prepares `sql` (one statement with parameters `$1`, `$2`, …) on the server, once per
    /// connection: preparing the same text again returns a statement of the same server-side
    /// name, without a round trip. A prepared statement outlives transactions, committed or not,
    /// and lasts as long as the connection.
    package func prepare(_ sql: String, phase: Phase) throws(PostgreSQLError) -> PostgreSQLStatement {
        if let name = prepared[sql] { return PostgreSQLStatement(name: name, connection: self, phase: phase) }
        let connection = try open(phase: phase)
        let name = "vouch_\(prepared.count + 1)"
        _ = try check(PQprepare(connection, name, sql, 0, nil), phase: phase)
        prepared[sql] = name
        return PostgreSQLStatement(name: name, connection: self, phase: phase)
    }

    /// Runs the prepared statement `name` with `values`.
    func run(prepared name: String, _ values: [Value], phase: Phase) throws(PostgreSQLError) -> PostgreSQLRows {
        let connection = try open(phase: phase)
        let result = try withParameters(values) { count, pointers, lengths, formats in
            PQexecPrepared(connection, name, count, pointers, lengths, formats, 0)
        }
        return try check(result, phase: phase)
    }

    /// Calls `body` with `values` as libpq's parameter arrays (count, values, lengths, formats),
    /// valid during the call: text and integers as text, bytes as binary, `NULL` for SQL NULL.
    private func withParameters(
        _ values: [Value],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, [Int32], [Int32]) -> OpaquePointer?
    ) throws(PostgreSQLError) -> OpaquePointer? {
        var parameters: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { for parameter in parameters { free(parameter) } }
        for value in values {
            switch value {
            case .text(let text):
                guard !text.utf8.contains(0) else {
                    throw PostgreSQLError(
                        LedgerError(.storeFailure, "\(target): a text parameter holds a NUL character"),
                        sqlState: nil, connectionLost: false)
                }
                parameters.append(strdup(text))
                lengths.append(0)
                formats.append(0)
            case .integer(let number):
                parameters.append(strdup(String(number)))
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                // A zero-length value still needs a non-NULL pointer: NULL is SQL NULL.
                let copy = malloc(max(bytes.count, 1))!.assumingMemoryBound(to: CChar.self)
                bytes.withUnsafeBytes { source in
                    if let base = source.baseAddress { memcpy(copy, base, bytes.count) }
                }
                parameters.append(copy)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            case .null:
                parameters.append(nil)
                lengths.append(0)
                formats.append(0)
            }
        }
        return parameters.withUnsafeBufferPointer { pointers in
            pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constPointers in
                body(Int32(values.count), constPointers.baseAddress, lengths, formats)
            }
        }
    }

    /// Runs `body` in one transaction: `BEGIN` (at `isolation`, and `READ ONLY` when
    /// `readOnly`), then `COMMIT` when `body` returns, `ROLLBACK` when it throws. A serialization failure or a deadlock
    /// (``PostgreSQLError/isRetryable``), in `body` or at `COMMIT`, runs the whole transaction
    /// again, up to `attempts` times in all; any other failure is thrown at once. `body` must
    /// therefore do nothing outside the database that cannot be done twice. A connection lost
    /// during `COMMIT` leaves it unknown whether the server committed: writes made idempotent
    /// (keyed, as the store's are) make running them again safe either way.
    package func transaction<T>(
        _ isolation: Isolation = .readCommitted, readOnly: Bool = false, attempts: Int = 1, phase: Phase = .write,
        _ body: () throws(PostgreSQLError) -> T
    ) throws(PostgreSQLError) -> T {
        precondition(attempts >= 1, "a transaction runs at least once")
        var attempt = 1
        while true {
            do {
                try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)\(readOnly ? " READ ONLY" : "")", phase: phase)
                let value = try body()
                try execute("COMMIT", phase: phase)
                return value
            } catch {
                rollBack()
                guard error.isRetryable, attempt < attempts else { throw error }
                attempt += 1
            }
        }
    }

    /// Takes the transaction-scoped advisory lock `key` (`pg_advisory_xact_lock`), waiting
    /// while another transaction holds it; it is released when this transaction ends. Writers
    /// on any number of hosts that take the lock of an account before changing it change it one
    /// after another.
    ///
    /// - Throws: ``LedgerError/Code/storeFailure`` outside a transaction (the lock would be
    ///   released at once); ``LedgerError/Code/cannotWrite`` when a `lock_timeout` ends the wait.
    package func lock(_ key: Int64) throws(PostgreSQLError) {
        guard inTransaction else {
            throw PostgreSQLError(
                LedgerError(.storeFailure, "\(target): an advisory lock is taken inside a transaction"),
                sqlState: nil, connectionLost: false)
        }
        try query("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(key)], phase: .write)
    }

    /// The advisory lock key of `name` (an account): the 64-bit FNV-1a hash of its UTF-8, the
    /// same on every host and in every version. Two names with one key only wait for each other.
    package static func lockKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    // MARK: - Failures

    /// The open handle, or the failure of a closed connection.
    private func open(phase: Phase) throws(PostgreSQLError) -> OpaquePointer {
        guard let handle else {
            throw PostgreSQLError(
                LedgerError(.storeFailure, "\(target): the connection is closed"),
                sqlState: nil, connectionLost: false)
        }
        return handle
    }

    /// Ends an open transaction after a failure; a failure of the `ROLLBACK` itself (a lost
    /// connection) changes nothing, as the server rolls back what a lost connection left open.
    private func rollBack() {
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) != PQTRANS_IDLE else {
            return
        }
        PQclear(PQexec(handle, "ROLLBACK"))
    }

    /// The rows of `result`, or the failure it reports (freeing it).
    private func check(_ result: OpaquePointer?, phase: Phase) throws(PostgreSQLError) -> PostgreSQLRows {
        guard let handle else { preconditionFailure("checked on an open connection") }
        let status = result.map { PQresultStatus($0) }
        if let result, status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            return PostgreSQLRows(result)
        }
        var sqlState: String?
        var message = String(cString: PQerrorMessage(handle))
        if let result {
            if let field = PQresultErrorField(result, vouch_pq_diag_sqlstate()) { sqlState = String(cString: field) }
            let resultMessage = String(cString: PQresultErrorMessage(result))
            if !resultMessage.isEmpty { message = resultMessage }
            PQclear(result)
        }
        let lost = PQstatus(handle) != CONNECTION_OK
        let text = Self.redact(Self.oneLine(message), secrets)
        let code = PostgreSQLError.code(sqlState: sqlState, connectionLost: lost, phase: phase)
        let what: String
        switch code {
        case .cannotOpen: what = lost ? "lost the connection to \(target)" : "cannot read \(target)"
        case .cannotWrite: what = lost ? "lost the connection to \(target)" : "cannot write \(target)"
        case .corruptStore: what = "\(target) is damaged"
        default: what = "\(target): PostgreSQL failed"
        }
        let state = sqlState.map { " (SQLSTATE \($0))" } ?? ""
        let written = lost && phase == .write ? "; the open transaction was not committed" : ""
        throw PostgreSQLError(
            LedgerError(code, "\(what): \(text)\(state)\(written)"), sqlState: sqlState, connectionLost: lost)
    }

    // MARK: - Connection strings

    /// The server of `connection` as `postgresql://user@host:port/dbname`, as libpq resolved it
    /// (environment variables included); never a password.
    private static func target(of connection: OpaquePointer) -> String {
        func value(_ text: UnsafeMutablePointer<CChar>?) -> String {
            text.map { String(cString: $0) } ?? ""
        }
        let user = value(PQuser(connection))
        let host = value(PQhost(connection))
        let port = value(PQport(connection))
        let database = value(PQdb(connection))
        return "postgresql://" + (user.isEmpty ? "" : user + "@") + host + (port.isEmpty ? "" : ":" + port) + "/"
            + database
    }

    /// What must never appear in a reason: the password of `connectionString` (from the URI's
    /// user information, a `password` query parameter or keyword, as written and decoded) and
    /// `PGPASSWORD`. Found by hand as well as by libpq, so that a string libpq refuses is cut too.
    static func secrets(in connectionString: String) -> [String] {
        var found: [String] = []
        if let options = PQconninfoParse(connectionString, nil) {
            var option = options
            while let keyword = option.pointee.keyword {
                if String(cString: keyword) == "password", let value = option.pointee.val {
                    found.append(String(cString: value))
                }
                option += 1
            }
            PQconninfoFree(options)
        }
        if let range = connectionString.range(of: "://") {
            let rest = connectionString[range.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@") {
                let userInformation = authority[..<at]
                if let colon = userInformation.firstIndex(of: ":") {
                    found.append(String(userInformation[userInformation.index(after: colon)...]))
                }
            }
        }
        // `password=…` as a keyword (up to white space, or quoted) or a query parameter (up to `&`).
        var rest = Substring(connectionString)
        while let range = rest.range(of: "password", options: .caseInsensitive) {
            var after = rest[range.upperBound...].drop { $0 == " " }
            guard after.first == "=" else {
                rest = rest[range.upperBound...]
                continue
            }
            after = after.dropFirst().drop { $0 == " " }
            let value: Substring
            if after.first == "'" {
                value = after.dropFirst().prefix { $0 != "'" }
            } else {
                value = after.prefix { !$0.isWhitespace && $0 != "&" && $0 != "#" }
            }
            found.append(String(value))
            rest = after
        }
        if let password = ProcessInfo.processInfo.environment["PGPASSWORD"] { found.append(password) }
        var all = found
        for secret in found {
            if let decoded = secret.removingPercentEncoding { all.append(decoded) }
        }
        // Longest first, so that a secret holding another is cut whole.
        return Array(Set(all.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
    }

    /// `message` with every one of `secrets` replaced by `********`.
    static func redact(_ message: String, _ secrets: [String]) -> String {
        var message = message
        for secret in secrets { message = message.replacingOccurrences(of: secret, with: "********") }
        return message
    }

    /// libpq's message (lines, tabs, a trailing newline) on one line.
    private static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }

    /// Calls `body` with `strings` as a C array of C strings ended by NULL, valid during the call.
    private static func withCStrings<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R
    ) -> R {
        let copies: [UnsafePointer<CChar>?] = strings.map { UnsafePointer(strdup($0)) } + [nil]
        defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// A statement prepared on its connection (``PostgreSQLConnection/prepare(_:phase:)``), run any
/// number of times with other parameters; it keeps its connection alive.
package final class PostgreSQLStatement {
    /// The statement's server-side name.
    package let name: String
    let connection: PostgreSQLConnection
    let phase: PostgreSQLConnection.Phase

    init(name: String, connection: PostgreSQLConnection, phase: PostgreSQLConnection.Phase) {
        self.name = name
        self.connection = connection
        self.phase = phase
    }

    /// Runs the statement with `values` bound to `$1`, `$2`, … in order, and returns its rows.
    @discardableResult
    package func rows(_ values: [PostgreSQLConnection.Value] = []) throws(PostgreSQLError) -> PostgreSQLRows {
        try connection.run(prepared: name, values, phase: phase)
    }
}

/// The rows one statement returned, as text: the only owner of its `PGresult`, freed in `deinit`.
package final class PostgreSQLRows {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) {
        self.result = result
    }

    deinit {
        PQclear(result)
    }

    /// How many rows there are.
    package var count: Int { Int(PQntuples(result)) }

    /// How many columns each row has.
    package var columns: Int { Int(PQnfields(result)) }

    /// How many rows an `INSERT`, `UPDATE` or `DELETE` touched (0 for other statements).
    package var affected: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    /// Whether column `column` of row `row` is NULL.
    package func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// Column `column` of row `row` as text; `nil` for NULL.
    package func text(_ row: Int, _ column: Int) -> String? {
        guard !isNull(row, column), let value = PQgetvalue(result, Int32(row), Int32(column)) else { return nil }
        let count = Int(PQgetlength(result, Int32(row), Int32(column)))
        return value.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    /// Column `column` of row `row` as an integer; `nil` for NULL or text that is not one.
    package func integer(_ row: Int, _ column: Int) -> Int64? {
        text(row, column).flatMap { Int64($0) }
    }

    /// Column `column` of row `row` as bytes: a `bytea` column's value (sent as text in
    /// PostgreSQL's hex form, `\x…`, and decoded), any other column's UTF-8; `nil` for NULL or
    /// a `bytea` text that is not hex.
    package func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard let text = text(row, column) else { return nil }
        // 17 is the OID of bytea (pg_type), fixed since PostgreSQL 7.
        guard PQftype(result, Int32(column)) == 17 else { return Array(text.utf8) }
        let digits = Array(text.utf8)
        guard digits.count >= 2, digits[0] == UInt8(ascii: "\\"), digits[1] == UInt8(ascii: "x"), digits.count % 2 == 0
        else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2 - 1)
        var index = 2
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// A failure of a ``PostgreSQLConnection``: the ``LedgerError`` it means, the server's SQLSTATE,
/// and whether the connection was lost.
package struct PostgreSQLError: Error, CustomStringConvertible {
    /// What the failure means to the ledger, with a reason that holds no password.
    package let error: LedgerError
    /// The server's five-character SQLSTATE; `nil` when libpq failed without an answer from the
    /// server (it could not connect, or the connection broke).
    package let sqlState: String?
    /// Whether the connection is gone (libpq's status is no longer `CONNECTION_OK`): whatever
    /// was not committed is rolled back by the server, and a new connection is needed.
    package let connectionLost: Bool

    init(_ error: LedgerError, sqlState: String?, connectionLost: Bool) {
        self.error = error
        self.sqlState = sqlState
        self.connectionLost = connectionLost
    }

    /// Whether running the whole transaction again may succeed: a serialization failure
    /// (40001) or a deadlock (40P01), whose transaction the server rolled back.
    package var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }

    package var description: String { error.description }

    /// The ledger code of a failure, by the SQLSTATE class and whether the connection was lost,
    /// as SQLite's connection maps SQLite's codes. `cannot_open` while opening or reading and
    /// `cannot_write` while writing:
    /// - a lost connection (libpq's status is no longer `CONNECTION_OK`, with or without an
    ///   answer), class 08 (connection exception), 57P01–57P03 (the server shut down, crashed or
    ///   is starting);
    /// - 40001 (serialization failure) and 40P01 (deadlock), both retryable;
    /// - 55P03 (lock not available) and 57014 (a statement or lock timeout), 53100 (disk full),
    ///   25006 (a read-only transaction, as on a standby);
    /// - class 28 (authorization) and 42501 (insufficient privilege).
    ///
    /// `cannot_open` always: 3D000 (no such database), 53300 (too many connections).
    /// `corrupt_store`: 42P01 and 42703 (a table or column of the store's fixed statements is
    /// missing: the schema was altered), XX001 and XX002 (data or index corrupted).
    /// `store_failure`: anything else (out of memory, a statement the store got wrong).
    ///
    /// Failing to connect at all is `cannot_open` whatever the phase. A lost connection while
    /// writing is `cannot_write` (the CLI's exit 74): nothing uncommitted was kept, and running
    /// the same writes again completes them.
    package static func code(
        sqlState: String?, connectionLost: Bool, phase: PostgreSQLConnection.Phase
    ) -> LedgerError.Code {
        let contended: LedgerError.Code = phase == .write ? .cannotWrite : .cannotOpen
        if connectionLost { return contended }
        guard let sqlState else { return .storeFailure }
        switch sqlState {
        case "57P01", "57P02", "57P03", "40001", "40P01", "55P03", "57014", "53100", "25006", "42501":
            return contended
        case "3D000", "53300":
            return .cannotOpen
        case "42P01", "42703", "XX001", "XX002":
            return .corruptStore
        default:
            switch sqlState.prefix(2) {
            case "08", "28": return contended
            default: return .storeFailure
            }
        }
    }
}
