import CSQLite
import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchOpenSSL

/// Every record body is stored with its checksum: an overwritten byte is refused as
/// `corrupt_store` naming the record, `check()` finds it, and a store of schema 2 gains its
/// checksums when a writer opens it.
@Suite(.serialized) struct LedgerStoreCheckTests {
    typealias F = LedgerFixtures

    /// The condition naming the first stored transaction, in its key's order, for which the SQL
    /// condition `filter` holds.
    static func firstTransaction(where filter: String = "1") -> String {
        let key = "environment, original_transaction_id, ownership, transaction_id"
        return "(\(key)) = (SELECT \(key) FROM app_store_transaction WHERE \(filter) ORDER BY \(key) LIMIT 1)"
    }

    /// The row whose `expiresDate` ``overwriteDigit(_:)`` changes.
    static let target = firstTransaction(where: "instr(vouch_unpack(body), '\"expiresDate\":1') > 0")

    /// Changes the third digit of the `expiresDate` of one stored transaction, as a damaged disk
    /// or a careless hand would, and returns the transaction's key as the store names it.
    static func overwriteDigit(_ path: String) throws -> String {
        let key = try query(
            path,
            "SELECT environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id "
                + "FROM app_store_transaction WHERE \(target)")
        // The record's JSON changed and packed again: its checksum is the old JSON's.
        let json = "vouch_unpack(body)"
        let at = "instr(\(json), '\"expiresDate\":1')"
        try LedgerStoreTests.sqlite(
            path,
            "UPDATE app_store_transaction SET body = vouch_pack(substr(\(json), 1, \(at) + 15) || "
                + "CASE substr(\(json), \(at) + 16, 1) WHEN '9' THEN '0' "
                + "ELSE char(unicode(substr(\(json), \(at) + 16, 1)) + 1) END || substr(\(json), \(at) + 17)) "
                + "WHERE \(target)")
        return try #require(key)
    }

    /// The first column of the first row of `sql` on `path`, read with SQLite itself.
    static func query(_ path: String, _ sql: String) throws -> String? {
        try row(path, sql).first ?? nil
    }

    /// The columns of the first row of `sql` on `path` as text, `nil` for `NULL` (none when it
    /// gives no row), run with SQLite itself.
    static func row(_ path: String, _ sql: String) throws -> [String?] {
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw CocoaError(.fileReadUnknown)
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return [] }
        return (0..<sqlite3_column_count(statement)).map { column in
            sqlite3_column_text(statement, column).map { String(cString: $0) }
        }
    }

    static func store(_ name: String) throws -> (String, EntitlementLedger) {
        let path = LedgerStoreTests.path(name)
        let ledger = F.ledger(LedgerStoreTests.payloads)
        let store = try LedgerStore(path: path, catalog: ledger.catalog)
        try store.add(contentsOf: ledger)
        return (path, ledger)
    }

    @Test func aHealthyStoreChecksEveryRecord() throws {
        let (path, _) = try Self.store("healthy.sqlite")
        let store = try LedgerStore(path: path, access: .readOnly)
        let report = try store.check()
        #expect(report.problems == [])
        #expect(report.isHealthy)
        let statistics = try store.statistics()
        // Every record, claim and delivery (the fixture has no Stripe claim).
        #expect(
            report.records
                == statistics.transactions + statistics.renewalInfos + statistics.stripeSubscriptions
                + statistics.stripeRefunds + statistics.grants + statistics.claims
                + statistics.deliveries.notifications + statistics.deliveries.retries)
        #expect(report.records > 100)
    }

    @Test func anOverwrittenDigitOfAStoredExpiresDateIsRefusedNamingTheRecord() throws {
        let (path, ledger) = try Self.store("overwritten.sqlite")
        let key = try Self.overwriteDigit(path)
        let named = "app_store_transaction \(key) does not match its checksum"
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        for question in [
            { _ = try store.entitlements(at: F.at(F.day(40))) },
            { _ = try store.ledger() },
            { try store.export { _ in } },
        ] as [() throws -> Void] {
            let error = #expect(throws: LedgerError.self) { try question() }
            #expect(error?.code == .corruptStore)
            #expect(error?.reason.contains(named) == true, "\(error?.reason ?? "")")
        }
        // The account whose chain holds the record is refused too; the others answer.
        var refused = 0
        for account in ledger.accounts {
            let instant = F.at(F.day(40))
            switch Result(catching: { () throws(LedgerError) in try store.entitlements(of: account, at: instant) }) {
            case .success(let answer):
                #expect(answer == ledger.entitlements(of: account, at: instant))
            case .failure(let error):
                #expect(error.code == .corruptStore)
                #expect(error.reason.contains(named))
                refused += 1
            }
        }
        #expect(refused >= 1 && refused < ledger.accounts.count)

        let report = try store.check()
        #expect(!report.isHealthy)
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.table == "app_store_transaction")
        #expect(report.problems.first?.key == key)
        #expect(report.problems.first?.reason == "does not match its checksum")
    }

    /// A claim and a delivery, stored beside the fixture.
    static func claimed(_ path: String, _ ledger: inout EntitlementLedger) throws {
        let account = try #require(UUID(uuidString: F.account))
        try LedgerStore(path: path, catalog: ledger.catalog).add(LedgerStoreTests.receipts[1], account: account)
        try ledger.add(LedgerStoreTests.receipts[1], account: account)
    }

    @Test func aClaimOrADeliveryChangedBesideTheStoreIsRefusedNamingIt() throws {
        var (path, ledger) = try Self.store("rows.sqlite")
        try Self.claimed(path, &ledger)
        let claim = try #require(
            try Self.query(path, "SELECT channel || ' ' || environment || ' ' || chain FROM claim"))
        // The chain bound to another account, by SQL beside the store.
        try LedgerStoreTests.sqlite(path, "UPDATE claim SET account = '\(F.otherAccount)'")
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        for question in [
            { try store.export { _ in } },
            { _ = try store.ledger() },
            {
                for account in try store.accounts() { _ = try store.entitlements(of: account, at: F.at(F.day(40))) }
            },
        ] as [() throws -> Void] {
            let error = #expect(throws: LedgerError.self) { try question() }
            #expect(error?.code == .corruptStore)
            #expect(
                error?.reason.contains("claim \(claim) does not match its checksum") == true, "\(error?.reason ?? "")")
        }
        let report = try store.check()
        #expect(report.problems.map(\.table) == ["claim"])
        #expect(report.problems.first?.key == claim)
        #expect(report.problems.first?.reason == "does not match its checksum")

        // A delivery seen five times, by SQL: the check names it, and a writer reading it refuses it.
        let delivery = try #require(
            try Self.query(path, "SELECT channel || ' ' || id || ' ' || signed_date FROM delivery ORDER BY id LIMIT 1"))
        try LedgerStoreTests.sqlite(
            path, "UPDATE delivery SET seen = 5 WHERE id = (SELECT min(id) FROM delivery)")
        let both = try store.check()
        #expect(both.problems.map(\.table) == ["claim", "delivery"])
        #expect(both.problems.last?.key == delivery)
        let writer = try LedgerStore(path: path, catalog: ledger.catalog)
        let refused = #expect(throws: LedgerError.self) {
            try writer.add(contentsOf: F.ledger(LedgerStoreTests.payloads))
        }
        #expect(refused?.code == .corruptStore)
        #expect(refused?.reason.contains("delivery \(delivery) does not match its checksum") == true)
    }

    /// Three changes to the App Store chain index beside a store, in the SQL of both stores
    /// (`query` gives the first row's columns): the first chain bound to another account, the
    /// last chain's row dropped, and a row without records beside it. What `check()` then
    /// reports, in its order (by chain id), as (key, reason).
    static func indexChanges(_ query: (String) throws -> [String]) throws -> [(String, String)] {
        let name = "'app_store ' || environment || ' ' || chain || ' ' || scope"
        let bound = try query(
            "SELECT \(name), account FROM chain WHERE channel = 'app_store' AND account IS NOT NULL "
                + "ORDER BY environment, chain, scope LIMIT 1")
        let dropped = try query(
            "SELECT \(name), environment, chain FROM chain WHERE channel = 'app_store' "
                + "ORDER BY environment DESC, chain DESC, scope LIMIT 1")
        try #require(bound.count == 2 && dropped.count == 3)
        try #require(!dropped[0].hasPrefix(bound[0].split(separator: " ").prefix(3).joined(separator: " ") + " "))
        _ = try query("UPDATE chain SET account = '\(F.otherAccount)' WHERE \(name) = '\(bound[0])'")
        _ = try query("DELETE FROM chain WHERE \(name) = '\(dropped[0])'")
        _ = try query(
            "INSERT INTO chain (channel, environment, chain, scope, account) "
                + "VALUES ('app_store', '\(dropped[1])', '\(dropped[2])', 'NO_SUCH_OWNERSHIP', NULL)")
        return [
            (bound[0], "names account \(F.otherAccount) where its records name \(bound[1])"),
            (dropped[0], "is missing"),
            ("app_store \(dropped[1]) \(dropped[2]) NO_SUCH_OWNERSHIP", "has no records"),
        ]
    }

    /// A record of another channel is named by its channel, environment and id, with `refund`
    /// before the id of a refunded charge, as much in a lookup's error as in the check.
    @Test func aDamagedStripeRecordIsNamedByItsKeyRefundOrNot() throws {
        typealias S = StripeLedgerTests
        let charge = S.event(
            "charge.refunded", created: 300,
            object: [
                "id": "ch_1", "object": "charge", "amount": 999, "amount_refunded": 999, "currency": "usd",
                "customer": "cus_1", "metadata": [:],
            ])
        let ledger = try S.ledger([S.subscription(status: "active", created: 100, periodEnd: 1_000), charge])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-check-stripe-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try LedgerStore(path: path, catalog: ledger.catalog).add(contentsOf: ledger)
        try LedgerStoreTests.sqlite(path, "UPDATE channel_record SET checksum = checksum + 1")

        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        let report = try store.check()
        #expect(report.problems.map(\.table) == ["channel_record", "channel_record"])
        #expect(report.problems.map(\.key) == ["stripe Sandbox sub_1", "stripe Sandbox refund ch_1"])
        let account = try #require(ledger.accounts.first)
        let error = #expect(throws: LedgerError.self) { try store.revocations(of: account) }
        #expect(error?.code == .corruptStore)
        #expect(
            error?.reason.contains("channel_record stripe Sandbox sub_1 does not match its checksum") == true,
            "\(error?.reason ?? "")")
    }

    @Test func aChainIndexChangedBesideTheStoreIsFoundByTheCheck() throws {
        let (path, ledger) = try Self.store("index.sqlite")
        let expected = try Self.indexChanges { sql in try Self.row(path, sql).map { $0 ?? "" } }
        let report = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog).check()
        #expect(report.problems.map(\.table) == ["chain", "chain", "chain"])
        #expect(report.problems.map { $0.key ?? "" } == expected.map(\.0))
        #expect(report.problems.map(\.reason) == expected.map(\.1))
    }

    @Test func aStoreOfSchema2GainsItsChecksumsWhenAWriterOpensIt() throws {
        var (path, ledger) = try Self.store("schema2.sqlite")
        try Self.claimed(path, &ledger)
        var expected = [String]()
        try LedgerStore(path: path, access: .readOnly).export { expected.append(String(decoding: $0, as: UTF8.self)) }
        try LedgerStoreTests.sqlite(
            path,
            """
            \(LedgerStoreTests.unpackBodies)
            ALTER TABLE app_store_transaction DROP COLUMN checksum;
            ALTER TABLE app_store_renewal DROP COLUMN checksum;
            ALTER TABLE channel_record DROP COLUMN checksum;
            ALTER TABLE claim DROP COLUMN checksum;
            ALTER TABLE delivery DROP COLUMN checksum;
            DROP TABLE fed_input;
            PRAGMA user_version = 2;
            """)
        let refused = #expect(throws: LedgerError.self) { try LedgerStore(path: path, access: .readOnly) }
        #expect(refused?.code == .cannotOpen)

        _ = try LedgerStore(path: path)
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        #expect(try store.statistics().schemaVersion == LedgerStore.schemaVersion)
        #expect(try store.check().isHealthy)
        var exported = [String]()
        try store.export { exported.append(String(decoding: $0, as: UTF8.self)) }
        #expect(exported == expected)
        #expect(try store.entitlements(at: F.at(F.day(40))) == ledger.entitlements(at: F.at(F.day(40))))

        // The checksums the migration computed are the ones a write computes.
        _ = try Self.overwriteDigit(path)
        #expect(try !LedgerStore(path: path, access: .readOnly).check().isHealthy)
    }

    /// The checksum of a packed App Store body is of its bytes; that of a deflated body (the
    /// other channels') of its JSON.
    @Test func theChecksumIsTheFirstEightBytesOfTheBodysSHA256() throws {
        let path = try StoredBodyTests.storeOfEveryChannel("digest.sqlite")
        func digest(_ bytes: [UInt8]) -> String {
            String(SHA256Digest.hash(bytes).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) })
        }
        let packed = try Self.row(path, "SELECT hex(body), checksum FROM app_store_renewal LIMIT 1")
        let hex = Array(try #require(packed.first ?? nil).utf8)
        let bytes = stride(from: 0, to: hex.count, by: 2).compactMap {
            UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)
        }
        #expect(bytes.count * 2 == hex.count)
        #expect(bytes.first == 0x02)  // packed
        #expect(packed.last == digest(bytes))
        let deflated = try Self.row(
            path, "SELECT vouch_unpack(body), checksum, substr(body, 1, 1) = x'01' FROM channel_record LIMIT 1")
        let json = try #require(deflated.first ?? nil)
        #expect(deflated.last == "1")
        #expect(deflated[1] == digest(Array(json.utf8)))
    }
}
