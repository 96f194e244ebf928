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
        #expect(text.stdout.contains("Vouch ledger, PostgreSQL schema 1"))
        #expect(text.stdout.contains("bytes of tables and indexes on the server"))
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
