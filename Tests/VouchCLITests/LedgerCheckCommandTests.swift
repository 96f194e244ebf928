import Foundation
import Testing
import VouchTestSupport
@testable import VouchEntitlements

/// `vouch ledger check` on the built binary: a whole store checks clean, an overwritten digit of
/// a stored `expiresDate` is found and named, and every answer that reads the record refuses it.
@Suite(.serialized) struct LedgerCheckCommandTests {
    typealias L = LedgerCommandTests

    /// Runs `sql` on `path` with SQLite itself, returning the first column of its first row;
    /// `vouch_pack(json)` and `vouch_unpack(body)` read and write the JSON of packed bodies.
    @discardableResult
    static func sqlite(_ path: String, _ sql: String) throws -> String? {
        try SQLiteFile.value(path, sql, functions: StoredBody.defineFunctions)
    }

    @Test func ledgerCheckFindsAndNamesAnOverwrittenDigitThatEveryAnswerRefuses() throws {
        let tokens = try L.file(L.tokens, name: "check-tokens.jsonl")
        let db = LedgerStoreCommandTests.database("check.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, tokens]).status == 0)

        let whole = try VouchBinary.run(["ledger", "check", "--db", db])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout == "\(db): 15 records read; the file and every record are whole\n")
        let stats = try VouchBinary.run(["ledger", "stats", "--db", db])
        #expect(stats.stdout.contains("records not checked; run vouch ledger check --db \(db)"))
        let statsJSON = try VouchBinary.object(try VouchBinary.run(["ledger", "stats", "--db", db, "--json"]).stdout)
        #expect(statsJSON["recordsChecked"] as? Bool == false)
        let before = try VouchBinary.run(["entitlements", "--db", db, "--at", LedgerStoreCommandTests.at, "--json"])
        #expect(before.status == 0)

        // One digit of one stored expiresDate, changed in its JSON, packed again.
        let unpacked = "vouch_unpack(body)"
        let columns = "environment, original_transaction_id, ownership, transaction_id"
        let target =
            "(\(columns)) = (SELECT \(columns) FROM app_store_transaction "
            + "WHERE instr(\(unpacked), '\"expiresDate\":1') > 0 ORDER BY \(columns) LIMIT 1)"
        let key = try #require(
            try Self.sqlite(
                db,
                "SELECT environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id "
                    + "FROM app_store_transaction WHERE \(target)"))
        let at = "instr(\(unpacked), '\"expiresDate\":1')"
        try Self.sqlite(
            db,
            "UPDATE app_store_transaction SET body = vouch_pack(substr(\(unpacked), 1, \(at) + 15) || "
                + "CASE substr(\(unpacked), \(at) + 16, 1) WHEN '9' THEN '0' "
                + "ELSE char(unicode(substr(\(unpacked), \(at) + 16, 1)) + 1) END || substr(\(unpacked), \(at) + 17)) "
                + "WHERE \(target)")

        let damaged = try VouchBinary.run(["ledger", "check", "--db", db])
        #expect(damaged.status == 65)
        #expect(
            damaged.stdout == "\(db): app_store_transaction \(key): does not match its checksum\n"
                + "\(db): 15 records read; 1 problem\n")
        let json = try VouchBinary.object(try VouchBinary.run(["ledger", "check", "--db", db, "--json"]).stdout)
        #expect(json["healthy"] as? Bool == false)
        #expect(json["records"] as? Int == 15)
        let problems = json["problems"] as? [[String: Any]] ?? []
        #expect(problems.count == 1)
        #expect(problems.first?["table"] as? String == "app_store_transaction")
        #expect(problems.first?["key"] as? String == key)

        for command in [
            ["entitlements", "--db", db, "--at", LedgerStoreCommandTests.at, "--json"],
            ["entitlements", "--db", db, "--at", LedgerStoreCommandTests.at],
            ["ledger", "export", "--db", db],
        ] {
            let answer = try VouchBinary.run(command)
            #expect(answer.status == 65, "\(command)")
            #expect(answer.stdout.isEmpty, "\(command)")
            #expect(answer.stderr.contains("app_store_transaction \(key) does not match its checksum"), "\(command)")
        }
    }

    @Test func ledgerCheckOfAServerThatCannotBeReachedIsExit66NamingIt() throws {
        let result = try VouchBinary.run(
            ["ledger", "check", "--db", "postgresql://nobody:secret@127.0.0.1:1/vouch?connect_timeout=5"])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("cannot open postgresql://nobody@127.0.0.1:1/vouch"))
        #expect(!result.stderr.contains("secret"))
    }
}
