import Foundation
import Testing
import VouchTestSupport

@testable import VouchEntitlements

/// The PostgreSQL connection: what it refuses before a server answers, and (against the real
/// server `VOUCH_TEST_POSTGRESQL` names) statements, parameters, transactions, lost connections,
/// advisory locks and serialization failures, each failure with its ledger code and no password.
@Suite struct PostgreSQLConnectionTests {
    @Test func aPortNothingListensOnIsCannotOpenWithoutThePassword() throws {
        let error = #expect(throws: PostgreSQLError.self) {
            try PostgreSQLConnection("postgresql://vouch:unreachable-secret@127.0.0.1:1/postgres?connect_timeout=5")
        }
        #expect(error?.error.code == .cannotOpen)
        #expect(error?.connectionLost == false)
        #expect(error?.error.reason.contains("127.0.0.1") == true)
        #expect(error?.error.reason.contains("unreachable-secret") == false)
    }

    @Test func aConnectionStringLibpqCannotReadIsCannotOpenWithoutThePassword() throws {
        for text in [
            "postgresql://vouch:unreadable-secret%zz@127.0.0.1/postgres",
            "host=127.0.0.1 password='unreadable-secret no_such_keyword=1",
            "postgres://vouch@127.0.0.1/postgres?password=unreadable-secret&no_such_parameter=1",
        ] {
            let error = #expect(throws: PostgreSQLError.self, "\(text)") { try PostgreSQLConnection(text) }
            #expect(error?.error.code == .cannotOpen, "\(text)")
            #expect(error?.error.reason.contains("not one libpq reads") == true, "\(error?.error.reason ?? "")")
            #expect(error?.error.reason.contains("unreadable") == false, "\(error?.error.reason ?? "")")
        }
        // A port that is not a number is refused when connecting, before any server is asked.
        let port = #expect(throws: PostgreSQLError.self) {
            try PostgreSQLConnection("postgresql://vouch:unreadable-secret@127.0.0.1:notaport/postgres")
        }
        #expect(port?.error.code == .cannotOpen)
        #expect(port?.error.reason.contains("notaport") == true, "\(port?.error.reason ?? "")")
        #expect(port?.error.reason.contains("unreadable-secret") == false)
    }

    @Test(arguments: [
        ("57P01", false, PostgreSQLConnection.Phase.write, LedgerError.Code.cannotWrite),
        ("57P01", false, .read, .cannotOpen),
        ("08006", false, .write, .cannotWrite),
        ("40001", false, .write, .cannotWrite),
        ("40P01", false, .write, .cannotWrite),
        ("55P03", false, .write, .cannotWrite),
        ("28P01", false, .open, .cannotOpen),
        ("3D000", false, .write, .cannotOpen),
        ("42501", false, .write, .cannotWrite),
        ("42P01", false, .read, .corruptStore),
        ("XX001", false, .read, .corruptStore),
        ("42601", false, .write, .storeFailure),
        ("22P02", true, .write, .cannotWrite),
    ])
    func aFailureMapsToTheLedgerCodeOfItsSQLStateAndPhase(
        sqlState: String, lost: Bool, phase: PostgreSQLConnection.Phase, code: LedgerError.Code
    ) {
        #expect(PostgreSQLError.code(sqlState: sqlState, connectionLost: lost, phase: phase) == code)
    }

    @Test func aLostConnectionWithoutAnSQLStateIsCannotWriteWhileWritingAndCannotOpenWhileReading() {
        #expect(PostgreSQLError.code(sqlState: nil, connectionLost: true, phase: .write) == .cannotWrite)
        #expect(PostgreSQLError.code(sqlState: nil, connectionLost: true, phase: .read) == .cannotOpen)
        #expect(PostgreSQLError.code(sqlState: nil, connectionLost: false, phase: .write) == .storeFailure)
    }

    @Test func aURIOfEitherSchemeNamesAServerAndAPathDoesNot() {
        #expect(PostgreSQLConnection.isConnectionURI("postgresql://ledger@db.internal/vouch"))
        #expect(PostgreSQLConnection.isConnectionURI("postgres://"))
        #expect(!PostgreSQLConnection.isConnectionURI("ledger.sqlite"))
        #expect(!PostgreSQLConnection.isConnectionURI("/var/lib/vouch/postgresql://x"))
        #expect(!PostgreSQLConnection.isConnectionURI("host=db dbname=vouch"))
        #expect(!PostgreSQLConnection.isConnectionURI("file:ledger.sqlite?mode=ro"))
    }

    @Test func theLockKeyOfANameIsItsFNV1aHash() {
        // FNV-1a 64 of "" is the offset basis; of "a", 0xaf63dc4c8601ec8c (the published vectors).
        #expect(PostgreSQLConnection.lockKey("") == Int64(bitPattern: 0xcbf2_9ce4_8422_2325))
        #expect(PostgreSQLConnection.lockKey("a") == Int64(bitPattern: 0xaf63_dc4c_8601_ec8c))
        #expect(PostgreSQLConnection.lockKey("account-1") != PostgreSQLConnection.lockKey("account-2"))
    }

    /// The tests against a real server.
    @Suite(.serialized, .postgreSQLServer) struct WithServer {
        /// A connection to the test server.
        static func connect() throws -> PostgreSQLConnection {
            try PostgreSQLConnection(try PostgreSQLServer.url())
        }

        /// A new table of `columns` with a name of its own, so that runs never meet.
        static func table(_ connection: PostgreSQLConnection, _ columns: String) throws -> String {
            let name = "vouch_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try connection.execute("CREATE TABLE \(name) \(columns)", phase: .write)
            return name
        }

        static func count(_ connection: PostgreSQLConnection, _ table: String) throws -> Int64? {
            try connection.query("SELECT count(*) FROM \(table)", phase: .read).integer(0, 0)
        }

        @Test func aParameterisedInsertReadsBackEveryValueAsItWasGiven() throws {
            let connection = try Self.connect()
            #expect(connection.isConnected)
            #expect(connection.target.hasPrefix("postgresql://vouch@127.0.0.1:"))
            let table = try Self.table(connection, "(id bigint PRIMARY KEY, body text, raw bytea)")
            defer { try? connection.execute("DROP TABLE \(table)", phase: .write) }
            let rows: [(Int64, String?, [UInt8])] = [
                (1, "it's \"quoted\" \\ $1 ; DROP TABLE x; --", [0, 1, 0xFF, 0x27, 0x5C]),
                (Int64.min, "Zoë 🧾 日本語 \u{1F1EB}\u{1F1F7} \t\n", []),
                (Int64.max, "", Array(0...255)),
                (0, nil, [0]),
            ]
            for (id, body, raw) in rows {
                let inserted = try connection.query(
                    "INSERT INTO \(table) (id, body, raw) VALUES ($1, $2, $3)",
                    [.integer(id), body.map { .text($0) } ?? .null, .bytes(raw)], phase: .write)
                #expect(inserted.affected == 1)
            }
            for (id, body, raw) in rows {
                let found = try connection.query(
                    "SELECT id, body, raw FROM \(table) WHERE id = $1", [.integer(id)], phase: .read)
                #expect(found.count == 1)
                #expect(found.columns == 3)
                #expect(found.integer(0, 0) == id)
                #expect(found.text(0, 1) == body)
                #expect(found.isNull(0, 1) == (body == nil))
                #expect(found.bytes(0, 2) == raw)
            }
            // The same rows through a prepared statement, prepared once for the connection.
            let select = try connection.prepare("SELECT body, raw FROM \(table) WHERE id = $1", phase: .read)
            #expect(
                try connection.prepare("SELECT body, raw FROM \(table) WHERE id = $1", phase: .read).name == select.name
            )
            for (id, body, raw) in rows {
                let found = try select.rows([.integer(id)])
                #expect(found.count == 1 && found.text(0, 0) == body && found.bytes(0, 1) == raw)
            }
            #expect(try select.rows([.integer(42)]).count == 0)
            let wrong = #expect(throws: PostgreSQLError.self) {
                try connection.prepare("SELECT FROM WHERE \(table)", phase: .read)
            }
            #expect(wrong?.error.code == .storeFailure)
            #expect(wrong?.sqlState == "42601")

            let byText = try connection.query(
                "SELECT id FROM \(table) WHERE body = $1", [.text(rows[0].1!)], phase: .read)
            #expect(byText.count == 1 && byText.integer(0, 0) == 1)
            #expect(try Self.count(connection, table) == 4)

            let nul = #expect(throws: PostgreSQLError.self) {
                try connection.query("SELECT $1::text", [.text("a\u{0}b")], phase: .read)
            }
            #expect(nul?.error.code == .storeFailure)

            connection.close()
            connection.close()
            #expect(!connection.isConnected)
            let closed = #expect(throws: PostgreSQLError.self) { try connection.execute("SELECT 1", phase: .read) }
            #expect(closed?.error.code == .storeFailure)
        }

        @Test func anArrayOfTextReadsBackEveryElementAsItWasGiven() throws {
            let connection = try Self.connect()
            let texts: [String?] = [
                "it's \"quoted\" \\ {a,b} NULL ; --", nil, "NULL", "", " spaced ", "Zoë 🧾 日本語 \t\n",
                "{\"kind\":\"transaction\",\"x\":\"\\u0041\"}",
            ]
            let literal = PostgreSQLUpserts.arrayLiteral(texts.map { $0.map { .text($0) } ?? .null })
            let found = try connection.query(
                "SELECT element FROM unnest($1::text[]) WITH ORDINALITY AS u (element, position) ORDER BY position",
                [.text(literal)], phase: .read)
            #expect(found.count == texts.count)
            for (row, text) in texts.enumerated() {
                #expect(found.text(row, 0) == text, "element \(row)")
                #expect(found.isNull(row, 0) == (text == nil), "element \(row)")
            }
            let numbers: [Int64] = [Int64.min, -1, 0, 1, Int64.max]
            let integers = try connection.query(
                "SELECT element FROM unnest($1::bigint[]) WITH ORDINALITY AS u (element, position) ORDER BY position",
                [.text(PostgreSQLUpserts.arrayLiteral(numbers.map { .integer($0) }))], phase: .read)
            #expect((0..<integers.count).map { integers.integer($0, 0) } == numbers)
            let blobs: [[UInt8]] = [[], [0, 0x22, 0x5C, 0xFF], Array(0...255)]
            let bytes = try connection.query(
                "SELECT element FROM unnest($1::bytea[]) WITH ORDINALITY AS u (element, position) ORDER BY position",
                [.text(PostgreSQLUpserts.arrayLiteral(blobs.map { .bytes($0) }))], phase: .read)
            #expect((0..<bytes.count).map { bytes.bytes($0, 0) } == blobs)
        }

        @Test func heldUpsertsWriteTheLastRowOfEachKeyInStatementsOfAThousandRows() throws {
            let connection = try Self.connect()
            let table = try Self.table(connection, "(id text PRIMARY KEY, body text, n bigint)")
            defer { try? connection.execute("DROP TABLE \(table)", phase: .write) }
            let upsert = PostgreSQLUpsert(
                table: table, columns: ["id", "body", "n"], types: ["text", "text", "bigint"], keyCount: 1,
                update: "body = excluded.body, n = excluded.n")
            try connection.execute("INSERT INTO \(table) VALUES ('k0', 'before', -1)", phase: .write)
            let upserts = PostgreSQLUpserts()
            for n in 0..<2_500 {
                upserts.add([.text("k\(n)"), .text("first \"\(n)\""), .integer(Int64(n))], to: upsert)
            }
            // Written again while its first row is held: the last row replaces the first.
            upserts.add([.text("k7"), .null, .integer(700)], to: upsert)
            let statements = upserts.take()
            #expect(statements.count == 3)
            #expect(upserts.isEmpty && upserts.take().isEmpty)
            for statement in statements {
                _ = try connection.query(statement.sql, statement.values, phase: .write)
            }
            #expect(try Self.count(connection, table) == 2_500)
            let rows = try connection.query(
                "SELECT id, body, n FROM \(table) WHERE id IN ('k0', 'k7', 'k2499') ORDER BY n", phase: .read)
            #expect(rows.count == 3)
            #expect(rows.text(0, 0) == "k0" && rows.text(0, 1) == "first \"0\"" && rows.integer(0, 2) == 0)
            #expect(rows.text(1, 0) == "k7" && rows.isNull(1, 1) && rows.integer(1, 2) == 700)
            #expect(rows.text(2, 0) == "k2499" && rows.integer(2, 2) == 2_499)
        }

        @Test func aTransactionThatFailsLeavesNothing() throws {
            let connection = try Self.connect()
            let table = try Self.table(connection, "(id bigint PRIMARY KEY)")
            defer { try? connection.execute("DROP TABLE \(table)", phase: .write) }

            let error = #expect(throws: PostgreSQLError.self) {
                try connection.transaction { () throws(PostgreSQLError) in
                    try connection.query("INSERT INTO \(table) VALUES ($1)", [.integer(1)], phase: .write)
                    #expect(connection.inTransaction)
                    try connection.execute("SELECT * FROM vouch_no_such_table", phase: .write)
                }
            }
            #expect(error?.error.code == .corruptStore)
            #expect(error?.sqlState == "42P01")
            #expect(error?.isRetryable == false)
            #expect(!connection.inTransaction)
            #expect(try Self.count(connection, table) == 0)

            try connection.execute("BEGIN", phase: .write)
            try connection.query("INSERT INTO \(table) VALUES ($1)", [.integer(2)], phase: .write)
            try connection.execute("ROLLBACK", phase: .write)
            #expect(try Self.count(connection, table) == 0)

            let kept = try connection.transaction { () throws(PostgreSQLError) -> Int in
                try connection.query("INSERT INTO \(table) VALUES ($1)", [.integer(3)], phase: .write).affected
            }
            #expect(kept == 1)
            #expect(try Self.count(connection, table) == 1)
        }

        @Test func aWrongPasswordIsCannotOpenWithoutEitherPassword() throws {
            let url = try PostgreSQLServer.url()
            let components = try #require(URLComponents(string: url))
            let password = try #require(components.password)
            var wrong = components
            wrong.password = "wrong-secret-\(UUID().uuidString)"
            let keywordForm =
                "host=\(components.host ?? "") port=\(components.port ?? 0) user=\(components.user ?? "") "
                + "password='\(wrong.password!)' dbname=postgres"
            for text in [wrong.string!, keywordForm] {
                let error = #expect(throws: PostgreSQLError.self) { try PostgreSQLConnection(text) }
                #expect(error?.error.code == .cannotOpen)
                #expect(error?.error.reason.contains("password authentication failed") == true)
                #expect(error?.error.reason.contains(wrong.password!) == false)
                #expect(error?.error.reason.contains(password) == false)
            }
        }

        @Test func aConnectionLostInATransactionIsCannotWriteAndKeepsNothing() throws {
            let writer = try Self.connect()
            let observer = try Self.connect()
            let table = try Self.table(observer, "(id bigint PRIMARY KEY)")
            defer { try? observer.execute("DROP TABLE \(table)", phase: .write) }

            try writer.execute("BEGIN", phase: .write)
            try writer.query("INSERT INTO \(table) VALUES ($1)", [.integer(1)], phase: .write)
            let backend = writer.backendProcessID
            let terminated = try observer.query(
                "SELECT pg_terminate_backend($1::integer)", [.integer(Int64(backend))], phase: .write)
            #expect(terminated.text(0, 0) == "t")
            // The backend is gone when the server no longer lists it: at most 10 s.
            var gone = false
            for _ in 0..<200 {
                let listed = try observer.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1::integer", [.integer(Int64(backend))],
                    phase: .read)
                if listed.integer(0, 0) == 0 {
                    gone = true
                    break
                }
                usleep(50_000)
            }
            #expect(gone)

            let lost = #expect(throws: PostgreSQLError.self) {
                try writer.query("INSERT INTO \(table) VALUES ($1)", [.integer(2)], phase: .write)
            }
            #expect(lost?.error.code == .cannotWrite)
            #expect(lost?.connectionLost == true)
            #expect(lost?.isRetryable == false)
            #expect(lost?.error.reason.contains("lost the connection") == true)
            let password = try #require(URLComponents(string: PostgreSQLServer.url())?.password)
            #expect(lost?.error.reason.contains(password) == false)
            #expect(!writer.isConnected)
            let again = #expect(throws: PostgreSQLError.self) { try writer.execute("COMMIT", phase: .write) }
            #expect(again?.error.code == .cannotWrite)
            #expect(try Self.count(observer, table) == 0)

            // Run again on a new connection, the writes complete.
            let rerun = try Self.connect()
            try rerun.transaction { () throws(PostgreSQLError) in
                for id: Int64 in [1, 2] {
                    try rerun.query("INSERT INTO \(table) VALUES ($1)", [.integer(id)], phase: .write)
                }
            }
            #expect(try Self.count(observer, table) == 2)
        }

        @Test func twoConnectionsTakingOneAdvisoryLockChangeARowOneAfterTheOther() throws {
            let url = try PostgreSQLServer.url()
            let first = try Self.connect()
            defer { first.close() }
            let table = try Self.table(first, "(id bigint PRIMARY KEY, n bigint NOT NULL)")
            defer { try? first.execute("DROP TABLE \(table)", phase: .write) }
            try first.query("INSERT INTO \(table) VALUES (1, 0)", phase: .write)
            let key = PostgreSQLConnection.lockKey("account-\(UUID())")

            let outside = #expect(throws: PostgreSQLError.self) { try first.lock(key) }
            #expect(outside?.error.code == .storeFailure)

            try first.execute("BEGIN", phase: .write)
            try first.lock(key)
            let before = try #require(
                try first.query("SELECT n FROM \(table) WHERE id = 1", phase: .read).integer(0, 0))

            // The second writer reads and increments the same row under the same lock.
            let outcome = Outcome()
            Thread.detachNewThread {
                do {
                    let second = try PostgreSQLConnection(url)
                    try second.transaction { () throws(PostgreSQLError) in
                        try second.lock(key)
                        let seen = try second.query("SELECT n FROM \(table) WHERE id = 1", phase: .read)
                        try second.query(
                            "UPDATE \(table) SET n = $1 WHERE id = 1", [.integer((seen.integer(0, 0) ?? -100) + 1)],
                            phase: .write)
                    }
                    second.close()
                    outcome.finish(nil)
                } catch {
                    outcome.finish("\(error)")
                }
            }
            // It waits for the lock: the server shows a request for it not granted, within 10 s.
            let watcher = try Self.connect()
            let bits = UInt64(bitPattern: key)
            var waiting = false
            for _ in 0..<200 {
                let requests = try watcher.query(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                        + "AND classid = $1::bigint::oid AND objid = $2::bigint::oid",
                    [.integer(Int64(bits >> 32)), .integer(Int64(bits & 0xFFFF_FFFF))], phase: .read)
                if requests.integer(0, 0) == 1 {
                    waiting = true
                    break
                }
                usleep(50_000)
            }
            #expect(waiting)
            #expect(!outcome.isFinished)
            try first.query("UPDATE \(table) SET n = $1 WHERE id = 1", [.integer(before + 1)], phase: .write)
            try first.execute("COMMIT", phase: .write)

            #expect(outcome.wait(seconds: 10))
            #expect(outcome.failure == nil)
            // Without the lock the second would have read 0 too, and one increment would be lost.
            #expect(try first.query("SELECT n FROM \(table) WHERE id = 1", phase: .read).integer(0, 0) == 2)
        }

        @Test func aDeadlockEndsOneOfTheTwoTransactionsAsRetryable() throws {
            let url = try PostgreSQLServer.url()
            let first = try Self.connect()
            defer { first.close() }
            let table = try Self.table(first, "(id bigint PRIMARY KEY, n bigint NOT NULL)")
            defer { try? first.execute("DROP TABLE \(table)", phase: .write) }
            try first.query("INSERT INTO \(table) VALUES (1, 0), (2, 0)", phase: .write)

            // The first holds row 1 and the second row 2; each then asks for the other's row.
            try first.execute("BEGIN", phase: .write)
            try first.query("UPDATE \(table) SET n = n + 1 WHERE id = 1", phase: .write)
            let outcome = Outcome()
            Thread.detachNewThread {
                do {
                    let second = try PostgreSQLConnection(url)
                    defer { second.close() }
                    do throws(PostgreSQLError) {
                        try second.execute("BEGIN", phase: .write)
                        try second.query("UPDATE \(table) SET n = n + 1 WHERE id = 2", phase: .write)
                        try second.query("UPDATE \(table) SET n = n + 1 WHERE id = 1", phase: .write)
                        try second.execute("COMMIT", phase: .write)
                        outcome.finish(nil)
                    } catch {
                        outcome.finish("\(error.sqlState ?? "none") \(error.isRetryable) \(error.error.code)")
                    }
                } catch {
                    outcome.finish("cannot connect: \(error)")
                }
            }
            // The second waits for row 1 (a transaction lock not granted), within 10 s.
            let watcher = try Self.connect()
            var waiting = false
            for _ in 0..<200 {
                let requests = try watcher.query(
                    "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                        + "WHERE NOT l.granted AND a.query LIKE $1",
                    [.text("%\(table)%id = 1%")], phase: .read)
                if requests.integer(0, 0) ?? 0 > 0 {
                    waiting = true
                    break
                }
                usleep(50_000)
            }
            #expect(waiting)
            var firstFailure: PostgreSQLError?
            do throws(PostgreSQLError) {
                try first.query("UPDATE \(table) SET n = n + 1 WHERE id = 2", phase: .write)
                try first.execute("COMMIT", phase: .write)
            } catch {
                firstFailure = error
                try first.execute("ROLLBACK", phase: .write)
            }
            // The server finds the cycle after deadlock_timeout (1 s by default).
            #expect(outcome.wait(seconds: 20))
            let secondFailure = outcome.failure
            // Exactly one of the two was ended, with 40P01, retryable, cannot_write.
            #expect((firstFailure == nil) != (secondFailure == nil))
            if let firstFailure {
                #expect(firstFailure.sqlState == "40P01")
                #expect(firstFailure.isRetryable)
                #expect(firstFailure.error.code == .cannotWrite)
            }
            if let secondFailure { #expect(secondFailure == "40P01 true cannot_write") }
            // The transaction that was not ended committed both its changes.
            let n = try first.query("SELECT sum(n) FROM \(table)", phase: .read).integer(0, 0)
            #expect(n == 2)
        }

        @Test func aSerializationFailureIsRetryableAndATransactionRetriesIt() throws {
            let first = try Self.connect()
            let second = try Self.connect()
            let table = try Self.table(first, "(id bigint PRIMARY KEY, n bigint NOT NULL)")
            defer { try? first.execute("DROP TABLE \(table)", phase: .write) }
            try first.query("INSERT INTO \(table) VALUES (1, 0)", phase: .write)

            // A snapshot taken, then the row changed by another transaction: updating it fails.
            try first.execute("BEGIN ISOLATION LEVEL REPEATABLE READ", phase: .write)
            _ = try first.query("SELECT n FROM \(table) WHERE id = 1", phase: .read)
            try second.query("UPDATE \(table) SET n = n + 10 WHERE id = 1", phase: .write)
            let failure = #expect(throws: PostgreSQLError.self) {
                try first.query("UPDATE \(table) SET n = n + 1 WHERE id = 1", phase: .write)
            }
            #expect(failure?.sqlState == "40001")
            #expect(failure?.isRetryable == true)
            #expect(failure?.connectionLost == false)
            #expect(failure?.error.code == .cannotWrite)
            try first.execute("ROLLBACK", phase: .write)

            // The same race inside `transaction`: the first attempt fails, the second commits.
            var attempts = 0
            let result = try first.transaction(.repeatableRead, attempts: 3) { () throws(PostgreSQLError) -> Int64? in
                attempts += 1
                let seen = try first.query("SELECT n FROM \(table) WHERE id = 1", phase: .read).integer(0, 0) ?? 0
                if attempts == 1 {
                    try second.query("UPDATE \(table) SET n = n + 10 WHERE id = 1", phase: .write)
                }
                return try first.query(
                    "UPDATE \(table) SET n = $1 WHERE id = 1 RETURNING n", [.integer(seen + 1)], phase: .write
                ).integer(0, 0)
            }
            #expect(attempts == 2)
            #expect(result == 21)

            // With one attempt only, the failure reaches the caller, still retryable.
            let once = #expect(throws: PostgreSQLError.self) {
                try first.transaction(.repeatableRead, attempts: 1) { () throws(PostgreSQLError) in
                    _ = try first.query("SELECT n FROM \(table) WHERE id = 1", phase: .read)
                    try second.query("UPDATE \(table) SET n = n + 10 WHERE id = 1", phase: .write)
                    try first.query("UPDATE \(table) SET n = n + 1 WHERE id = 1", phase: .write)
                }
            }
            #expect(once?.isRetryable == true)
            #expect(!first.inTransaction)
            #expect(try first.query("SELECT n FROM \(table) WHERE id = 1", phase: .read).integer(0, 0) == 31)
        }
    }
}

/// What a writer thread reports: whether it finished, and its failure.
private final class Outcome: @unchecked Sendable {
    private let lock = NSCondition()
    private var finished = false
    private var message: String?

    func finish(_ failure: String?) {
        lock.lock()
        finished = true
        message = failure
        lock.broadcast()
        lock.unlock()
    }

    var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    var failure: String? {
        lock.lock()
        defer { lock.unlock() }
        return message
    }

    /// Waits until the thread finished, at most `seconds`.
    func wait(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        lock.lock()
        defer { lock.unlock() }
        while !finished {
            if !lock.wait(until: deadline) { return finished }
        }
        return true
    }
}
