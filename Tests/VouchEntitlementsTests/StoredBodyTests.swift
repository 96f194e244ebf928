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

    /// Every body of every table is a blob of the packed format and unpacks to the JSON its
    /// checksum is of, a record object; together they are a fraction of the JSON's size.
    @Test func everyRecordBodyIsStoredPacked() throws {
        let (path, _) = try LedgerStoreCheckTests.store("packed.sqlite")
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var packedBytes = 0
        var jsonBytes = 0
        var bodies = 0
        for table in ["app_store_transaction", "app_store_renewal", "channel_record"] {
            var statement: OpaquePointer?
            try #require(
                sqlite3_prepare_v2(handle, "SELECT body, typeof(body), checksum FROM \(table)", -1, &statement, nil)
                    == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            while sqlite3_step(statement) == SQLITE_ROW {
                let stored = Array(
                    UnsafeRawBufferPointer(
                        start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0))))
                #expect(String(cString: sqlite3_column_text(statement, 1)) == "blob", "\(table)")
                #expect(stored.first == StoredBody.deflated, "\(table)")
                let json = try #require(StoredBody.unpack(stored), "\(table)")
                #expect(LedgerStore.checksum(json) == sqlite3_column_int64(statement, 2), "\(table)")
                #expect(json.starts(with: Array(#"{"kind":"#.utf8)), "\(table)")
                packedBytes += stored.count
                jsonBytes += json.count
                bodies += 1
            }
        }
        #expect(bodies > 10)
        #expect(packedBytes * 3 < jsonBytes, "\(packedBytes) bytes packed of \(jsonBytes) of JSON")
    }

    /// One byte of a packed body overwritten: the record is refused as `corrupt_store` naming it,
    /// whether what is left fails to unpack or unpacks to other JSON, and `check()` reports it.
    @Test(arguments: [0, 1, 9, -1])
    func anOverwrittenByteOfAPackedBodyIsRefusedNamingTheRecord(offset: Int) throws {
        let (path, ledger) = try LedgerStoreCheckTests.store("flipped-\(offset).sqlite")
        let rowid = "(SELECT min(rowid) FROM app_store_transaction)"
        let key = try #require(
            try LedgerStoreCheckTests.query(
                path,
                "SELECT environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id "
                    + "FROM app_store_transaction WHERE rowid = \(rowid)"))
        try Self.overwrite(path, rowid: rowid) { body in
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

    /// Changes the stored body of the transaction at `rowid` (an SQL expression) in place.
    static func overwrite(_ path: String, rowid: String, _ change: (inout [UInt8]) -> Void) throws {
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        try #require(
            sqlite3_prepare_v2(
                handle, "SELECT body FROM app_store_transaction WHERE rowid = \(rowid)", -1, &statement, nil)
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
                handle, "UPDATE app_store_transaction SET body = ? WHERE rowid = \(rowid)", -1, &statement, nil)
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
        #expect(try store.statistics().schemaVersion == 5)
        for table in ["app_store_transaction", "app_store_renewal", "channel_record"] {
            #expect(
                try LedgerStoreCheckTests.query(
                    path, "SELECT count(*) FROM \(table) WHERE typeof(body) != 'blob' OR vouch_unpack(body) IS NULL")
                    == "0", "\(table)")
        }
        #expect(try store.check().isHealthy)
        var exported = [String]()
        try store.export { exported.append(String(decoding: $0, as: UTF8.self)) }
        #expect(exported == expected)
        #expect(try store.entitlements(at: F.at(F.day(40))) == ledger.entitlements(at: F.at(F.day(40))))
    }
}
