import CSQLite
import Foundation
import Testing
import Vouch

@testable import VouchEntitlements

/// Record bodies are stored packed (a format byte, then DEFLATE against a preset dictionary):
/// they unpack to the records the store exports, a byte changed in one is refused as damage
/// naming the record, and a store of schema 4 (bodies as JSON) is packed by its first writer.
@Suite(.serialized) struct StoredBodyTests {
    typealias F = LedgerFixtures

    @Test(arguments: [0, 1, 700, 5_000, 200_000])
    func anyBytesPackAndUnpackAsTheyWere(count: Int) throws {
        var random = SystemRandomNumberGenerator()
        // Half JSON-like text, half noise: both the dictionary's matches and literals.
        let bytes = (0..<count).map { index in
            index % 2 == 0 ? Array(#""expiresDate":"#.utf8)[index / 2 % 14] : UInt8.random(in: 0...255, using: &random)
        }
        let packed = StoredBody.pack(bytes)
        #expect(packed.first == StoredBody.deflated)
        #expect(StoredBody.unpack(packed) == bytes)
    }

    @Test func whatIsNotOneWholePackedBodyDoesNotUnpack() {
        let json = Array(#"{"kind":"transaction","channel":"app_store","environment":"Production"}"#.utf8)
        let packed = StoredBody.pack(json)
        #expect(StoredBody.unpack(json) == nil)  // JSON as schema 4 kept it
        #expect(StoredBody.unpack([]) == nil)
        #expect(StoredBody.unpack([StoredBody.deflated]) == nil)
        #expect(StoredBody.unpack([0x02] + packed.dropFirst()) == nil)  // another format
        #expect(StoredBody.unpack(Array(packed.dropLast())) == nil)  // cut short
        #expect(StoredBody.unpack(packed + [0]) == nil)  // bytes after the end
    }

    /// Every body is a blob: an App Store transaction's or renewal info's packed, its checksum
    /// of its bytes; any other record's deflated, its checksum of the JSON it unpacks to. Each
    /// reads as a record, and together they are a fraction of the JSON's size.
    @Test func everyRecordBodyIsStoredInItsFormat() throws {
        let path = try Self.storeOfEveryChannel("packed.sqlite")
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var storedBytes = 0
        var jsonBytes = 0
        var bodies: [String: Int] = [:]
        for table in ["app_store_transaction", "app_store_renewal", "channel_record"] {
            var statement: OpaquePointer?
            try #require(
                sqlite3_prepare_v2(
                    handle, "SELECT body, typeof(body), checksum, vouch_unpack(body) FROM \(table)", -1, &statement, nil
                )
                    == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            while sqlite3_step(statement) == SQLITE_ROW {
                let stored = Array(
                    UnsafeRawBufferPointer(
                        start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0))))
                let checksum = sqlite3_column_int64(statement, 2)
                #expect(String(cString: sqlite3_column_text(statement, 1)) == "blob", "\(table)")
                let json = Array(try #require(sqlite3_column_text(statement, 3).map { String(cString: $0) }).utf8)
                if table == "channel_record" {
                    #expect(stored.first == StoredBody.deflated, "\(table)")
                    #expect(StoredBody.unpack(stored) == json, "\(table)")
                    #expect(LedgerStore.checksum(json) == checksum, "\(table)")
                } else {
                    #expect(stored.first == StoredBody.packed, "\(table)")
                    #expect(LedgerStore.checksum(stored) == checksum, "\(table)")
                }
                let read = stored.withUnsafeBytes { StoredBody.record($0, checksum: checksum) }
                #expect(try read.get().exported == LedgerRecordJSON.read(json).exported, "\(table)")
                #expect(json.starts(with: Array(#"{"kind":"#.utf8)), "\(table)")
                storedBytes += stored.count
                jsonBytes += json.count
                bodies[table, default: 0] += 1
            }
        }
        #expect(bodies.count == 3 && bodies.values.reduce(0, +) > 10, "\(bodies)")
        #expect(storedBytes * 3 < jsonBytes, "\(storedBytes) bytes stored of \(jsonBytes) of JSON")
    }

    /// A store of the App Store fixture (``LedgerStoreCheckTests/store(_:)``) with a Stripe
    /// subscription and a refunded charge added: records of every table.
    static func storeOfEveryChannel(_ name: String) throws -> String {
        typealias S = StripeLedgerTests
        let (path, _) = try LedgerStoreCheckTests.store(name)
        let charge = S.event(
            "charge.refunded", created: 300,
            object: [
                "id": "ch_1", "object": "charge", "amount": 999, "amount_refunded": 999, "currency": "usd",
                "customer": "cus_1", "metadata": [:],
            ])
        try LedgerStore(path: path).add(
            contentsOf: try S.ledger([S.subscription(status: "active", created: 100, periodEnd: 1_000), charge]))
        return path
    }

    /// One byte of a packed body overwritten: the record is refused as `corrupt_store` naming it,
    /// whether what is left fails to unpack or unpacks to other JSON, and `check()` reports it.
    @Test(arguments: [0, 1, 9, -1])
    func anOverwrittenByteOfAPackedBodyIsRefusedNamingTheRecord(offset: Int) throws {
        let (path, ledger) = try LedgerStoreCheckTests.store("flipped-\(offset).sqlite")
        let first = LedgerStoreCheckTests.firstTransaction()
        let key = try #require(
            try LedgerStoreCheckTests.query(
                path,
                "SELECT environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id "
                    + "FROM app_store_transaction WHERE \(first)"))
        try Self.overwrite(path, at: first) { body in
            let at = offset >= 0 ? offset : body.count + offset  // -1: the last byte
            body[at] ^= 0x55
        }
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        let report = try store.check()
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.key == key)
        let reason = try #require(report.problems.first?.reason)
        #expect(["does not unpack", "does not match its checksum"].contains(reason), "\(report.problems)")
        // A question refusing the record says what the check says of it.
        for question in [{ _ = try store.ledger() }, { try store.export { _ in } }] as [() throws -> Void] {
            let error = #expect(throws: LedgerError.self) { try question() }
            #expect(error?.code == .corruptStore)
            #expect(error?.reason.hasSuffix("app_store_transaction \(key) \(reason)") == true, "\(error?.reason ?? "")")
        }
    }

    /// Stored bodies changed at random (a byte replaced, a byte added, a cut), each with a
    /// checksum that matches it, as only a file crafted to match would hold: every one reads as a
    /// record or is refused as one that does not read, and never stops the process.
    @Test func changedBodiesWithMatchingChecksumsReadOrAreRefused() throws {
        let path = try Self.storeOfEveryChannel("mutated.sqlite")
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        try #require(
            sqlite3_prepare_v2(
                handle,
                "SELECT body FROM app_store_transaction UNION ALL SELECT body FROM app_store_renewal "
                    + "UNION ALL SELECT body FROM channel_record", -1, &statement, nil) == SQLITE_OK)
        var bodies: [[UInt8]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            bodies.append(
                Array(
                    UnsafeRawBufferPointer(
                        start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))))
        }
        sqlite3_finalize(statement)
        #expect(Set(bodies.compactMap(\.first)) == [StoredBody.packed, StoredBody.deflated])
        var random = SystemRandomNumberGenerator()
        var (read, refused) = (0, 0)
        for body in bodies {
            for _ in 0..<40 {
                var changed = body
                let at = Int.random(in: 1..<changed.count, using: &random)
                let byte = [0x00, 0x01, 0x7F, 0x80, 0xFF, UInt8.random(in: 0...255, using: &random)].randomElement(
                    using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: changed[at] = byte
                case 1: changed.insert(byte, at: at)
                default: changed.removeSubrange(at...)
                }
                // A packed body's checksum is of its bytes, a deflated one's of its JSON.
                let checksum =
                    changed[0] == StoredBody.packed
                    ? LedgerStore.checksum(changed) : StoredBody.unpack(changed).map(LedgerStore.checksum) ?? 0
                let result = changed.withUnsafeBytes { StoredBody.record($0, checksum: checksum) }
                switch result {
                case .success: read += 1
                case .failure(.checksum): Issue.record("a matching checksum refused: \(changed)")
                case .failure: refused += 1
                }
            }
        }
        #expect(refused > bodies.count)
        #expect(read + refused == bodies.count * 40)
    }

    /// Changes in place the stored body of the transaction that the SQL condition `row` names.
    static func overwrite(_ path: String, at row: String, _ change: (inout [UInt8]) -> Void) throws {
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        try #require(
            sqlite3_prepare_v2(
                handle, "SELECT body FROM app_store_transaction WHERE \(row)", -1, &statement, nil)
                == SQLITE_OK)
        try #require(sqlite3_step(statement) == SQLITE_ROW)
        var body = Array(
            UnsafeRawBufferPointer(
                start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0))))
        sqlite3_finalize(statement)
        let length = body.count
        change(&body)
        #expect(body.count == length)
        try #require(
            sqlite3_prepare_v2(
                handle, "UPDATE app_store_transaction SET body = ? WHERE \(row)", -1, &statement, nil)
                == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        _ = body.withUnsafeBytes { sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32($0.count), nil) }
        try #require(sqlite3_step(statement) == SQLITE_DONE)
    }

    /// A store of schema 4 keeps its bodies as JSON: a reader refuses it, its first writer packs
    /// every body in one transaction, and it then exports and answers as before.
    @Test func aStoreOfSchema4IsPackedByItsFirstWriter() throws {
        let (path, ledger) = try LedgerStoreCheckTests.store("schema4.sqlite")
        var expected = [String]()
        try LedgerStore(path: path, access: .readOnly).export { expected.append(String(decoding: $0, as: UTF8.self)) }
        try LedgerStoreTests.sqlite(path, LedgerStoreTests.unpackBodies + "PRAGMA user_version = 4;")
        #expect(
            try LedgerStoreCheckTests.query(
                path, "SELECT count(*) FROM app_store_transaction WHERE typeof(body) = 'text'")
                != "0")
        let refused = #expect(throws: LedgerError.self) { try LedgerStore(path: path, access: .readOnly) }
        #expect(refused?.code == .cannotOpen)
        #expect(refused?.reason.contains("is a Vouch store of schema 4") == true)

        _ = try LedgerStore(path: path)
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        #expect(try store.statistics().schemaVersion == LedgerStore.schemaVersion)
        for table in ["app_store_transaction", "app_store_renewal", "channel_record"] {
            #expect(
                try LedgerStoreCheckTests.query(
                    path, "SELECT count(*) FROM \(table) WHERE typeof(body) != 'blob' OR vouch_unpack(body) IS NULL")
                    == "0", "\(table)")
        }
        try Self.expectHealthy(store, exporting: expected, answeringAs: ledger)
    }

    /// Expects `store`, migrated, to check healthy, export `expected` and answer as `ledger`.
    static func expectHealthy(_ store: LedgerStore, exporting expected: [String], answeringAs ledger: EntitlementLedger)
        throws
    {
        #expect(try store.check().isHealthy)
        var exported = [String]()
        try store.export { exported.append(String(decoding: $0, as: UTF8.self)) }
        #expect(exported == expected)
        #expect(try store.entitlements(at: F.at(F.day(40))) == ledger.entitlements(at: F.at(F.day(40))))
    }

    /// SQL that makes a store of schema 5 of one of this schema: its App Store records deflated,
    /// each checksum of its JSON.
    static let schema5 = """
        UPDATE app_store_transaction SET body = vouch_pack(vouch_unpack(body)), checksum = vouch_checksum(vouch_unpack(body));
        UPDATE app_store_renewal SET body = vouch_pack(vouch_unpack(body)), checksum = vouch_checksum(vouch_unpack(body));
        PRAGMA user_version = 5;
        """

    /// A store of schema 5 keeps App Store records deflated, each checksum of its JSON: its first
    /// writer packs every one in one transaction, each with the checksum of its packed bytes, and
    /// it then exports and answers as before. A record that does not match its checksum is left
    /// as it was, and still named by the check.
    @Test func aStoreOfSchema5IsRepackedByItsFirstWriterLeavingADamagedRecordAsItWas() throws {
        let (path, ledger) = try LedgerStoreCheckTests.store("schema5.sqlite")
        var expected = [String]()
        try LedgerStore(path: path, access: .readOnly).export { expected.append(String(decoding: $0, as: UTF8.self)) }
        try LedgerStoreTests.sqlite(path, Self.schema5)
        let deflated = "SELECT count(*) FROM app_store_transaction WHERE substr(body, 1, 1) = x'01'"
        let transactions = try #require(try LedgerStoreCheckTests.query(path, deflated))
        #expect(transactions != "0")
        let refused = #expect(throws: LedgerError.self) { try LedgerStore(path: path, access: .readOnly) }
        #expect(refused?.code == .cannotOpen)
        #expect(refused?.reason.contains("is a Vouch store of schema 5") == true)

        _ = try LedgerStore(path: path)
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        #expect(try store.statistics().schemaVersion == LedgerStore.schemaVersion)
        for table in ["app_store_transaction", "app_store_renewal"] {
            #expect(
                try LedgerStoreCheckTests.query(
                    path,
                    "SELECT count(*) FROM \(table) WHERE substr(body, 1, 1) != x'02' OR checksum != vouch_checksum(body)"
                )
                    == "0", "\(table)")
        }
        try Self.expectHealthy(store, exporting: expected, answeringAs: ledger)

        try Self.expectDamagedRecordKept(from: Self.schema5, in: "schema5-damaged.sqlite") { damagedPath throws in
            #expect(try LedgerStoreCheckTests.query(damagedPath, deflated) == "1")
        }
    }

    /// Makes a store of an older schema by the SQL `olderSchema`, damages one record (its JSON
    /// changed, its checksum the old one's), opens it for writing, runs `expect` on its path and
    /// expects the check to name the record.
    static func expectDamagedRecordKept(from olderSchema: String, in name: String, _ expect: (String) throws -> Void)
        throws
    {
        let (path, _) = try LedgerStoreCheckTests.store(name)
        try LedgerStoreTests.sqlite(path, olderSchema)
        let key = try LedgerStoreCheckTests.overwriteDigit(path)
        _ = try LedgerStore(path: path)
        try expect(path)
        let report = try LedgerStore(path: path, access: .readOnly).check()
        #expect(report.problems.map(\.key) == [key])
        #expect(report.problems.map(\.reason) == ["does not match its checksum"])
    }

    /// SQL that makes a store of schema 6 of one of this schema: its App Store tables ordinary
    /// tables with their keys unique, their rows in the reverse of their keys' order.
    static let schema6 = """
        CREATE TABLE transaction_6 (
            environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL, ownership TEXT NOT NULL,
            transaction_id TEXT NOT NULL, revoked INTEGER NOT NULL, body BLOB NOT NULL, checksum INTEGER NOT NULL,
            UNIQUE (environment, original_transaction_id, ownership, transaction_id));
        INSERT INTO transaction_6 SELECT * FROM app_store_transaction
            ORDER BY environment DESC, original_transaction_id DESC, ownership DESC, transaction_id DESC;
        DROP TABLE app_store_transaction;
        ALTER TABLE transaction_6 RENAME TO app_store_transaction;
        CREATE INDEX app_store_transaction_by_id ON app_store_transaction (transaction_id);
        CREATE INDEX app_store_transaction_revoked ON app_store_transaction (environment, original_transaction_id)
            WHERE revoked = 1;
        CREATE TABLE renewal_6 (
            environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL, body BLOB NOT NULL,
            checksum INTEGER NOT NULL, UNIQUE (environment, original_transaction_id));
        INSERT INTO renewal_6 SELECT * FROM app_store_renewal ORDER BY environment DESC, original_transaction_id DESC;
        DROP TABLE app_store_renewal;
        ALTER TABLE renewal_6 RENAME TO app_store_renewal;
        PRAGMA user_version = 6;
        """

    /// Every table, index and its SQL in a store, one line each, in the order of their names.
    static let schemaObjects =
        "SELECT group_concat(type || ' ' || name || ' ' || coalesce(sql, ''), char(10)) "
        + "FROM (SELECT * FROM sqlite_schema ORDER BY name)"

    /// A store of schema 6 keeps its App Store records in tables with a `rowid`: its first writer
    /// rewrites them `WITHOUT ROWID` in one transaction, each record copied as it is, leaving the
    /// store's schema that of a store made by this version; it then exports and answers as before,
    /// and a record damaged before the migration is still named by the check.
    @Test func aStoreOfSchema6IsRewrittenWithoutRowidByItsFirstWriter() throws {
        let (path, ledger) = try LedgerStoreCheckTests.store("schema6.sqlite")
        var expected = [String]()
        try LedgerStore(path: path, access: .readOnly).export { expected.append(String(decoding: $0, as: UTF8.self)) }
        let made = try #require(try LedgerStoreCheckTests.query(path, Self.schemaObjects))
        let withoutRowid =
            "SELECT count(*) FROM sqlite_schema WHERE name IN ('app_store_transaction', 'app_store_renewal') "
            + "AND sql LIKE '%WITHOUT ROWID'"
        #expect(try LedgerStoreCheckTests.query(path, withoutRowid) == "2")
        try LedgerStoreTests.sqlite(path, Self.schema6)
        #expect(try LedgerStoreCheckTests.query(path, withoutRowid) == "0")
        let refused = #expect(throws: LedgerError.self) { try LedgerStore(path: path, access: .readOnly) }
        #expect(refused?.code == .cannotOpen)
        #expect(refused?.reason.contains("is a Vouch store of schema 6") == true)

        _ = try LedgerStore(path: path)
        #expect(try LedgerStoreCheckTests.query(path, Self.schemaObjects) == made)
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        #expect(try store.statistics().schemaVersion == LedgerStore.schemaVersion)
        try Self.expectHealthy(store, exporting: expected, answeringAs: ledger)

        try Self.expectDamagedRecordKept(from: Self.schema6, in: "schema6-damaged.sqlite") { damagedPath throws in
            #expect(try LedgerStoreCheckTests.query(damagedPath, withoutRowid) == "2")
        }
    }
}
