import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchTestSupport

/// `--db postgresql://…` on the built binary, against the real server `VOUCH_TEST_POSTGRESQL`
/// names: `vouch ledger add` stores what verified, and every command answering from a store
/// answers as from the SQLite store fed the same input, byte for byte.
@Suite(.serialized, .postgreSQLServer) struct PostgreSQLLedgerCommandTests {
    typealias L = LedgerCommandTests

    /// A connection string to a new, empty schema of the test server.
    static func freshStore() throws -> String {
        let url = try PostgreSQLServer.url()
        let schema = "vouch_cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        try connection.execute("CREATE SCHEMA \(schema)", phase: .write)
        return url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    @Test func ledgerAddIntoPostgreSQLAnswersAsTheSQLiteStore() throws {
        let input = try L.file(L.tokens + ["not a token"], name: "postgresql-input.jsonl")
        let tiers = try L.file([L.tiers], name: "postgresql-tiers.json")
        let server = try Self.freshStore()
        let file = LedgerStoreCommandTests.database("postgresql-twin.sqlite")
        let password = try #require(URLComponents(string: try PostgreSQLServer.url())?.password)

        let added = try VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, input])
        let twin = try VouchBinary.run(["ledger", "add", "--db", file, "--root", L.root, input])
        #expect(added.status == 1, "\(added.stderr)")
        #expect(twin.status == 1)
        #expect(added.stderr.contains("11 tokens: 10 verified, 1 rejected; stored 5 new and 0 changed transactions"))
        #expect(!added.stderr.contains(password))

        for command in [
            ["entitlements", "--at", LedgerStoreCommandTests.at, "--json", "--tiers", tiers],
            ["entitlements", "--at", LedgerStoreCommandTests.at, "--account", L.account, "--json"],
            ["refunds", "--json"], ["ledger", "export"],
        ] {
            let fromServer = try VouchBinary.run(command + ["--db", server])
            let fromFile = try VouchBinary.run(command + ["--db", file])
            #expect(fromServer.status == 0, "\(command): \(fromServer.stderr)")
            #expect(!fromFile.stdout.isEmpty)
            #expect(fromServer.stdout == fromFile.stdout, "\(command)")
        }

        // Again: nothing changes.
        let again = try VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, input])
        #expect(again.stderr.contains("stored 0 new and 0 changed transactions, 0 renewal infos"))

        let stats = try VouchBinary.run(["ledger", "stats", "--db", server, "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let object = try VouchBinary.object(stats.stdout)
        #expect(object["transactions"] as? Int == 5)
        #expect(object["schemaVersion"] as? Int == PostgreSQLLedgerStore.schemaVersion)
        #expect((object["path"] as? String)?.hasPrefix("postgresql://") == true)
        #expect(!stats.stdout.contains(password))
        let text = try VouchBinary.run(["ledger", "stats", "--db", server])
        #expect(text.stdout.contains("Vouch ledger, PostgreSQL schema \(PostgreSQLLedgerStore.schemaVersion)"))
        #expect(text.stdout.contains("bytes of tables and indexes on the server"))
        // What checks a server's records, and never its password (the file's note named the URI as given).
        #expect(text.stdout.contains("records not checked; run vouch ledger check with the same --db"))
        #expect(!text.stdout.contains(password) && !text.stderr.contains(password))
    }

    @Test func ledgerCheckReadsEveryRecordOfAServerAndNamesOneOverwrittenBySQL() throws {
        let server = try Self.freshStore()
        let password = try #require(URLComponents(string: server)?.password)
        let tokens = try L.file(L.tokens, name: "postgresql-check.jsonl")
        #expect(try VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, tokens]).status == 0)
        let name = try #require(
            try VouchBinary.object(try VouchBinary.run(["ledger", "stats", "--db", server, "--json"]).stdout)["path"]
                as? String)
        #expect(name.hasPrefix("postgresql://") && !name.contains(password))

        let whole = try VouchBinary.run(["ledger", "check", "--db", server])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(
            whole.stdout
                == "\(name): 15 records read; every record is whole (the server checks its own data: pg_amcheck)\n")
        let wholeJSON = try VouchBinary.object(
            try VouchBinary.run(["ledger", "check", "--db", server, "--json"]).stdout)
        #expect(wholeJSON["healthy"] as? Bool == true)
        #expect(wholeJSON["records"] as? Int == 15)
        #expect((wholeJSON["problems"] as? [Any])?.isEmpty == true)

        // One digit of one stored transaction's body, changed by an UPDATE beside the store.
        let connection = try PostgreSQLConnection(server)
        defer { connection.close() }
        let key = "environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id"
        let found = try connection.query(
            "SELECT \(key), body FROM app_store_transaction WHERE body LIKE '%\"expiresDate\":1%' ORDER BY 1 LIMIT 1",
            phase: .read)
        let record = try #require(found.text(0, 0))
        var body = Array(try #require(found.text(0, 1)).utf8)
        let expires = try #require(body.indices.first { body[$0...].starts(with: Array(#""expiresDate":1"#.utf8)) })
        let digit = expires + #""expiresDate":1"#.utf8.count
        body[digit] = 0x30 + (body[digit] - 0x30 + 1) % 10
        try connection.query(
            "UPDATE app_store_transaction SET body = $1 WHERE \(key) = $2",
            [.text(String(decoding: body, as: UTF8.self)), .text(record)], phase: .write)

        let damaged = try VouchBinary.run(["ledger", "check", "--db", server])
        #expect(damaged.status == 65, "\(damaged.stderr)")
        #expect(
            damaged.stdout == "\(name): app_store_transaction \(record): does not match its checksum\n"
                + "\(name): 15 records read; 1 problem\n")
        let json = try VouchBinary.run(["ledger", "check", "--db", server, "--json"])
        #expect(json.status == 65)
        let object = try VouchBinary.object(json.stdout)
        #expect(object["path"] as? String == name)
        #expect(object["healthy"] as? Bool == false)
        #expect(object["records"] as? Int == 15)
        let problems = object["problems"] as? [[String: Any]] ?? []
        #expect(problems.count == 1)
        #expect(problems.first?["table"] as? String == "app_store_transaction")
        #expect(problems.first?["key"] as? String == record)
        #expect(problems.first?["reason"] as? String == "does not match its checksum")
        for result in [whole, damaged, json] {
            #expect(!result.stdout.contains(password) && !result.stderr.contains(password))
        }
    }

    @Test func aConnectionEndedInTheMiddleOfAnAddIsExit74AndARerunCompletesIt() throws {
        let server = try Self.freshStore()
        let password = try #require(URLComponents(string: try PostgreSQLServer.url())?.password)
        let start = try L.file(Array(L.tokens.prefix(2)), name: "postgresql-start.jsonl")
        let all = try L.file(L.tokens, name: "postgresql-all.jsonl")
        #expect(try VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, start]).status == 0)
        let before = try VouchBinary.run(["ledger", "export", "--db", server]).stdout

        // The counters are written last: holding them, the add waits after writing its records.
        let observer = try PostgreSQLConnection(server)
        defer { observer.close() }
        try observer.execute("BEGIN", phase: .write)
        try observer.query("SELECT value FROM counter FOR UPDATE", phase: .write)
        let outcome = RunOutcome()
        Thread.detachNewThread {
            outcome.finish(try? VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, all]))
        }
        // Watched from a connection of its own: a transaction sees one snapshot of pg_stat_activity.
        let watcher = try PostgreSQLConnection(server)
        defer { watcher.close() }
        var ended = false
        for _ in 0..<400 where !ended {
            let found = try watcher.query(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO counter%'",
                phase: .read)
            if found.count == 1, let pid = found.integer(0, 0) {
                try watcher.query("SELECT pg_terminate_backend($1::integer)", [.integer(pid)], phase: .write)
                ended = true
            } else {
                usleep(25_000)
            }
        }
        #expect(ended)
        let result = try #require(outcome.wait(seconds: 60))
        try observer.execute("ROLLBACK", phase: .write)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("lost the connection"), "\(result.stderr)")
        #expect(!result.stderr.contains(password))
        #expect(try VouchBinary.run(["ledger", "export", "--db", server]).stdout == before)

        // Run again, it completes: the store answers as one fed the whole input at once.
        #expect(try VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, all]).status == 0)
        let file = LedgerStoreCommandTests.database("postgresql-rerun.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", file, "--root", L.root, all]).status == 0)
        let command = ["entitlements", "--at", LedgerStoreCommandTests.at, "--json", "--db"]
        #expect(try VouchBinary.run(command + [server]).stdout == VouchBinary.run(command + [file]).stdout)
    }

    @Test func aStoredBodyWithAnOverwrittenDigitIsExit65CorruptStoreNamingTheRecord() throws {
        let server = try Self.freshStore()
        let input = try L.file(L.tokens, name: "postgresql-damaged.jsonl")
        #expect(try VouchBinary.run(["ledger", "add", "--db", server, "--root", L.root, input]).status == 0)
        let connection = try PostgreSQLConnection(server)
        defer { connection.close() }
        let found = try connection.query(
            "SELECT transaction_id, body FROM app_store_transaction WHERE revoked = 1 ORDER BY transaction_id LIMIT 1",
            phase: .read)
        let id = try #require(found.text(0, 0))
        // A revoked transaction's: every command below reads it.
        var body = Array(try #require(found.text(0, 1)).utf8)
        let digit = try #require(body.lastIndex { (0x30...0x39).contains($0) })
        body[digit] = 0x30 + (body[digit] - 0x30 + 1) % 10
        try connection.query(
            "UPDATE app_store_transaction SET body = $1 WHERE transaction_id = $2 AND revoked = 1",
            [.text(String(decoding: body, as: UTF8.self)), .text(id)], phase: .write)

        for command in [
            ["entitlements", "--at", LedgerStoreCommandTests.at, "--json"], ["ledger", "export"],
            ["refunds", "--json"],
        ] {
            let result = try VouchBinary.run(command + ["--db", server])
            #expect(result.status == 65, "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command)")
            #expect(result.stderr.contains("holds a damaged record: app_store_transaction "), "\(result.stderr)")
            #expect(result.stderr.contains("\(id) does not match its checksum"), "\(result.stderr)")
        }
    }

    @Test func aStoreOnAServerThatCannotBeReachedIsCannotOpen() throws {
        let result = try VouchBinary.run([
            "ledger", "stats", "--db", "postgresql://vouch:secret-word@127.0.0.1:1/vouch?connect_timeout=5",
        ])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("cannot_open") || result.stderr.contains("cannot open"))
        #expect(!result.stderr.contains("secret-word"))
    }
}

/// The result of a run on another thread, once it ends.
private final class RunOutcome: @unchecked Sendable {
    private let condition = NSCondition()
    private var finished = false
    private var result: VouchBinary.Result?

    func finish(_ result: VouchBinary.Result?) {
        condition.lock()
        finished = true
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    /// The result, waiting at most `seconds`; `nil` when the run did not end or failed to start.
    func wait(seconds: Double) -> VouchBinary.Result? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) { break }
        }
        return result
    }
}
