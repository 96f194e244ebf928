import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchReceipts
import VouchStripe
import VouchTestSupport

/// The PostgreSQL store, against the real server `VOUCH_TEST_POSTGRESQL` names: it answers as
/// the SQLite store and the in-memory ledger byte for byte, whatever the order and split of what
/// several writers at once give it; a repeat changes nothing; a newer schema and a foreign one
/// are refused untouched; a connection ended in the middle of an addition leaves nothing of it.
@Suite(.serialized, .postgreSQLServer) struct PostgreSQLLedgerStoreTests {
    typealias F = LedgerFixtures

    /// A connection string to a new, empty schema of the test server (its `search_path`), so
    /// that no two tests or runs meet.
    static func freshStore() throws -> String {
        let url = try PostgreSQLServer.url()
        let schema = "vouch_store_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        try connection.execute("CREATE SCHEMA \(schema)", phase: .write)
        return url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    /// A verified input of any channel.
    enum Input {
        case payload(VerifiedPayload)
        case receipt(VerifiedReceipt)
        case stripe(VerifiedStripeEvent)
        case grant(EntitlementGrant)
        /// A payload bound to the caller's account (an account claim).
        case bound(VerifiedPayload, UUID)
        /// A Stripe subscription bound to an account after the fact.
        case binding(String, String)

        func add(to ledger: inout EntitlementLedger) {
            switch self {
            case .payload(let payload): ledger.add(payload)
            case .receipt(let receipt): ledger.add(receipt)
            case .stripe(let event): ledger.add(event)
            case .grant(let grant): ledger.add(grant)
            case .bound(let payload, let account): try! ledger.add(payload, account: account)
            case .binding(let subscription, let account):
                try! ledger.bindStripeSubscription(subscription, livemode: false, to: account)
            }
        }
    }

    static let scenario = try! StripeLedgerTests.scenario(.basil)

    /// Grants of a server's own source: two statements of one grant (the newer wins) and another.
    static let grants: [EntitlementGrant] = {
        let account = AccountKey(environment: .production, appAccountToken: UUID(uuidString: F.account)!)
        let manual = EntitlementSource(rawValue: "manual")
        return [
            EntitlementGrant(
                source: manual, id: "g1", account: account, productId: "com.example.pro.monthly",
                startDate: F.time(1), expiresDate: F.time(20), signedDate: F.time(1)),
            EntitlementGrant(
                source: manual, id: "g1", account: account, productId: "com.example.pro.monthly",
                state: .active, startDate: F.time(1), expiresDate: F.time(90), signedDate: F.time(5)),
            EntitlementGrant(
                source: manual, id: "g2",
                account: AccountKey(environment: .sandbox, appAccountToken: UUID(uuidString: F.otherAccount)!),
                productId: "com.example.plus.monthly", startDate: F.time(2), expiresDate: nil, signedDate: F.time(2)),
        ]
    }()

    /// Every kind of record: the SQLite store's differential fixture (generated accounts,
    /// receipts), the two-channel Stripe story and grants, with repeats.
    static let inputs: [Input] = {
        let stripe = scenario.deliveries.compactMap { delivery -> Input? in
            guard case .stripe = delivery.content, case .stripe(let event) = try! StripeLedgerTests.verify(delivery)
            else { return nil }
            return .stripe(event)
        }
        let appStore = scenario.deliveries.compactMap { delivery -> Input? in
            guard case .appStore(let payload) = try! StripeLedgerTests.verify(delivery) else { return nil }
            return .payload(payload)
        }
        let account = UUID(uuidString: scenario.story.account)!
        let bound = appStore.compactMap { input -> Input? in
            guard case .payload(let payload) = input else { return nil }
            return .bound(payload, account)
        }
        return LedgerStoreTests.payloads.map(Input.payload) + LedgerStoreTests.receipts.map(Input.receipt) + stripe
            + appStore + bound + [.binding(scenario.webSubscription, scenario.story.account)] + grants.map(Input.grant)
            + LedgerStoreTests.payloads.prefix(30).map(Input.payload)
            + stripe.prefix(3)
    }()

    static let catalog = ProductCatalog(
        tiers: LedgerDeterminismTests.catalog.tiers + StripeLedgerTests.catalog(scenario).tiers)

    static let instants: [Timestamp] =
        LedgerStoreTests.instants.map(F.at)
        + scenario.moments.all.map { Timestamp(milliseconds: $0.milliseconds + 5_000) }

    /// Everything a ledger answers, each account's own answers, its revocations, as the CLI
    /// writes them.
    static func answers<Ledger: LedgerReading>(_ ledger: Ledger, accounts: [AccountKey]) throws -> String {
        var text = ""
        for instant in instants {
            text += try ledger.entitlements(at: instant).map {
                JSONWriter.string($0.json(at: instant, includeTier: true)) + "\n"
            }.joined()
        }
        let revocations = try ledger.revocations()
        for revocation in revocations { text += JSONWriter.string(revocation.json) + "\n" }
        text += JSONWriter.string(RevocationSummary(revocations).json) + "\n"
        for account in accounts {
            for revocation in try ledger.revocations(of: account) { text += JSONWriter.string(revocation.json) + "\n" }
            text += try ledger.changeInstants(of: account).map { "\($0.milliseconds)" }.joined(separator: ",") + "\n"
            for instant in instants {
                let answer = try ledger.entitlements(of: account, at: instant)
                text += (answer.map { JSONWriter.string($0.json(at: instant, includeTier: true)) } ?? "none") + "\n"
            }
        }
        return text
    }

    static func exported(_ export: (([UInt8]) throws -> Void) throws -> Void) throws -> [String] {
        var lines: [String] = []
        try export { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    /// `inputs`, shuffled by `seed` and cut into ledgers of one to 150 inputs.
    static func parts(seed: UInt64) -> [EntitlementLedger] {
        let shuffled = LedgerDeterminismTests.shuffled(inputs, seed: seed)
        var random = SeededRandom(seed: seed)
        var parts: [EntitlementLedger] = []
        var index = 0
        while index < shuffled.count {
            let size = random.below(3) == 0 ? 1 : random.below(150) + 1
            var part = EntitlementLedger()
            for input in shuffled[index..<min(index + size, shuffled.count)] { input.add(to: &part) }
            parts.append(part)
            index += size
        }
        return parts
    }

    /// Adds `parts` to the store `url` names from `writers` threads at once, each on its own
    /// connection, writer `w` taking every part `i` with `i % writers == w`; the failures.
    static func addConcurrently(_ parts: [EntitlementLedger], to url: String, writers: Int) -> [String] {
        let group = DispatchGroup()
        let failures = Failures()
        for writer in 0..<writers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let store = try PostgreSQLLedgerStore(url, catalog: catalog)
                    defer { store.close() }
                    for (index, part) in parts.enumerated() where index % writers == writer {
                        try store.add(contentsOf: part)
                    }
                } catch {
                    failures.append("writer \(writer): \(error)")
                }
            }
        }
        guard group.wait(timeout: .now() + 300) == .success else { return ["the writers did not end within 300 s"] }
        return failures.all
    }

    @Test(arguments: [(1, 1), (2, 3), (5, 4)] as [(UInt64, Int)])
    func theStoreAnswersAsSQLiteAndTheLedgerForAnyOrderSplitAndWriters(seed: UInt64, writers: Int) throws {
        var memory = EntitlementLedger(catalog: Self.catalog)
        for input in Self.inputs { input.add(to: &memory) }
        let accounts = memory.accounts
        let expected = try Self.answers(memory, accounts: accounts)
        #expect(expected.contains(#""source":"stripe""#) && expected.contains(#""source":"manual""#))

        let parts = Self.parts(seed: seed)
        let path = LedgerStoreTests.path("postgresql-differential-\(seed).sqlite")
        let sqlite = try LedgerStore(path: path, catalog: Self.catalog)
        for part in parts { try sqlite.add(contentsOf: part) }

        let url = try Self.freshStore()
        #expect(Self.addConcurrently(parts, to: url, writers: writers) == [])
        let store = try PostgreSQLLedgerStore(url, access: .readOnly, catalog: Self.catalog)
        defer { store.close() }

        #expect(try Self.answers(sqlite, accounts: accounts) == expected)
        #expect(try Self.answers(store, accounts: accounts) == expected)
        #expect(try Self.answers(try store.ledger(), accounts: accounts) == expected)
        let export = try Self.exported(sqlite.export)
        #expect(try Self.exported(store.export) == export)
        // Account claims of both channels are among the records.
        for channel in ["app_store", "stripe"] {
            #expect(export.contains { $0.hasPrefix(#"{"kind":"accountClaim","channel":"\#(channel)""#) })
        }
        #expect(try store.accounts() == sqlite.accounts())
        for account in accounts {
            for identifier in [account.appAccountToken, account.originalTransactionId].compactMap({ $0 }) {
                #expect(try store.accounts(matching: identifier) == sqlite.accounts(matching: identifier))
            }
        }
        for id in [
            "2000000000000003", "3000000000000002", "2000000000005002", "g1", Self.scenario.webSubscription, "none",
        ] {
            #expect(try store.accounts(withTransactionId: id) == sqlite.accounts(withTransactionId: id))
        }
        let statistics = try store.statistics()
        let expectedStatistics = try sqlite.statistics()
        #expect(statistics.accounts == expectedStatistics.accounts)
        #expect(statistics.chains == expectedStatistics.chains)
        #expect(statistics.transactions == expectedStatistics.transactions)
        #expect(statistics.renewalInfos == expectedStatistics.renewalInfos)
        #expect(statistics.claims == expectedStatistics.claims)
        #expect(statistics.stripeSubscriptions == expectedStatistics.stripeSubscriptions)
        #expect(statistics.stripeRefunds == expectedStatistics.stripeRefunds)
        #expect(statistics.grants == expectedStatistics.grants)
        #expect(statistics.fed == expectedStatistics.fed)
        #expect(statistics.deliveries == expectedStatistics.deliveries)
        #expect(statistics.lastSignedDate == expectedStatistics.lastSignedDate)
        #expect(statistics.schemaVersion == PostgreSQLLedgerStore.schemaVersion)
        #expect(statistics.bytes > 0)
    }

    @Test func addingTheSameDataAgainChangesNothingAndCountsDuplicates() throws {
        let url = try Self.freshStore()
        let store = try PostgreSQLLedgerStore(url, catalog: Self.catalog)
        defer { store.close() }
        var all = EntitlementLedger.batch()
        for input in Self.inputs { input.add(to: &all) }
        let first = try store.add(contentsOf: all)
        #expect(first.changedRecords && first.newNotifications > 0 && first.otherRecords > 0)
        let before = try Self.exported(store.export)
        let statisticsBefore = try store.statistics()
        let again = try store.add(contentsOf: all)
        #expect(!again.changedRecords)
        #expect(again.otherRecords == 0 && again.newNotifications == 0 && again.retriedNotifications == 0)
        #expect(again.duplicateNotifications == first.newNotifications + first.duplicateNotifications)
        #expect(try Self.exported(store.export) == before)
        // The deliveries read again are the addition's duplicates; the store counts each once.
        #expect(LedgerStoreTests.counts(try store.statistics()) == LedgerStoreTests.counts(statisticsBefore))
    }

    @Test func statisticsAfterARerunOrARepeatEqualThoseOfAStoreFedOnce() throws {
        let adds = Self.inputs.map { input in { (ledger: inout EntitlementLedger) in input.add(to: &ledger) } }
        let all = 0..<adds.count
        func statistics(_ runs: [(Range<Int>, batch: Int)]) throws -> LedgerStore.Statistics {
            let store = try PostgreSQLLedgerStore(try Self.freshStore(), catalog: Self.catalog)
            defer { store.close() }
            return try LedgerStoreTests.feed(store, adds, runs: runs)
        }
        let once = LedgerStoreTests.counts(try statistics([(all, batch: 40)]))
        // The SQLite store fed the same batches counts alike.
        #expect(
            once
                == LedgerStoreTests.counts(
                    try LedgerStoreTests.statistics("postgresql-once.sqlite", adds, runs: [(all, batch: 40)])
                ).map {
                    $0.replacingOccurrences(
                        of: "schemaVersion: \(LedgerStore.schemaVersion)",
                        with: "schemaVersion: \(PostgreSQLLedgerStore.schemaVersion)")
                })
        // Killed after three batches, then run again whole, split otherwise; and twice.
        #expect(LedgerStoreTests.counts(try statistics([(0..<120, batch: 40), (all, batch: 70)])) == once)
        #expect(LedgerStoreTests.counts(try statistics([(all, batch: 40), (all, batch: 40)])) == once)
    }

    /// A batch of one grant of a server's own source for each of `range`, each to its own account.
    static func grants(_ range: Range<Int>) -> EntitlementLedger {
        var batch = EntitlementLedger()
        for index in range {
            batch.add(
                EntitlementGrant(
                    source: EntitlementSource(rawValue: "manual"), id: "grant-\(index)",
                    account: AccountKey(environment: .production, appAccountToken: "user-\(index)"),
                    productId: "pro", startDate: Timestamp(milliseconds: 0), expiresDate: nil,
                    signedDate: Timestamp(milliseconds: 1)))
        }
        return batch
    }

    /// A batch touching more records than the server's lock table holds (64 locks for each
    /// of its connections by default) is stored whole: records share a bounded number of locks.
    @Test func aBatchTouchingTenThousandRecordsIsStoredOnAServerOfDefaultSettings() throws {
        let store = try PostgreSQLLedgerStore(try Self.freshStore())
        defer { store.close() }
        let batch = Self.grants(0..<10_000)
        #expect(try store.add(contentsOf: batch).otherRecords == 10_000)
        #expect(try store.accounts().count == 10_000)
        // The check reads them all, a page at a time.
        let report = try store.check()
        #expect(report.records == 10_000)
        #expect(report.isHealthy)
        // So do the export and the whole ledger, in the SQLite store's order and with its records.
        let sqlite = try LedgerStore(path: LedgerStoreTests.path("postgresql-ten-thousand.sqlite"))
        defer { sqlite.close() }
        try sqlite.add(contentsOf: batch)
        let exported = try Self.exported(store.export)
        #expect(exported.count == 10_000)
        #expect(exported == (try Self.exported(sqlite.export)))
        #expect(try store.ledger().accounts.count == 10_000)
    }

    /// An addition of a thousand rows or more has PostgreSQL's statistics of the tables it grew
    /// refreshed, so that lookups after a bulk load use the indexes before autovacuum comes
    /// round (switched off here); a smaller one leaves them to autovacuum.
    @Test func anAdditionOfAThousandRowsRefreshesThePlannersStatistics() throws {
        let url = try Self.freshStore()
        let store = try PostgreSQLLedgerStore(url)
        defer { store.close() }
        try store.add(contentsOf: Self.grants(0..<1))
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        try connection.execute("ALTER TABLE channel_record SET (autovacuum_enabled = false)", phase: .write)
        func analyzed() throws -> (Bool, Int64?) {
            let found = try connection.query(
                "SELECT s.last_analyze IS NOT NULL, c.reltuples::bigint FROM pg_stat_user_tables s "
                    + "JOIN pg_class c ON c.oid = s.relid WHERE s.relid = 'channel_record'::regclass",
                phase: .read)
            return (found.text(0, 0) == "t", found.integer(0, 1))
        }
        #expect(try store.add(contentsOf: Self.grants(1..<999)).otherRecords == 998)
        #expect(try analyzed().0 == false)
        #expect(try store.add(contentsOf: Self.grants(999..<2_000)).otherRecords == 1_001)
        let (done, rows) = try analyzed()
        #expect(done)
        #expect(rows == 2_000)
        #expect(try store.accounts(matching: "user-1500").count == 1)
    }

    /// A fresh store fed every input in one addition, with its connection string.
    static func storeOfEveryInput() throws -> (String, PostgreSQLLedgerStore) {
        let url = try freshStore()
        let store = try PostgreSQLLedgerStore(url, catalog: catalog)
        var all = EntitlementLedger()
        for input in inputs { input.add(to: &all) }
        _ = try store.add(contentsOf: all)
        return (url, store)
    }

    @Test func aChainIndexChangedBesideTheStoreIsFoundByTheCheck() throws {
        let (url, store) = try Self.storeOfEveryInput()
        defer { store.close() }
        #expect(try store.check().isHealthy)
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        let expected = try LedgerStoreCheckTests.indexChanges { sql in
            let found = try connection.query(sql, phase: .write)
            return found.count == 0 ? [] : (0..<found.columns).map { found.text(0, $0) ?? "" }
        }
        let report = try store.check()
        #expect(report.problems.map(\.table) == ["chain", "chain", "chain"])
        #expect(report.problems.map { $0.key ?? "" } == expected.map(\.0))
        #expect(report.problems.map(\.reason) == expected.map(\.1))
    }

    @Test func anOverwrittenDigitOfAStoredBodyIsRefusedAsCorruptStoreNamingTheRecord() throws {
        let (url, store) = try Self.storeOfEveryInput()
        defer { store.close() }
        let instant = try #require(Self.instants.last)
        #expect(try !store.entitlements(at: instant).isEmpty)
        let whole = try store.check()
        #expect(whole.isHealthy)
        #expect(whole.records > 0)

        // One digit of one stored transaction's body, changed by SQL beside the store.
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        let key = "environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id"
        let found = try connection.query(
            "SELECT \(key), body FROM app_store_transaction ORDER BY 1 LIMIT 1", phase: .read)
        let name = try #require(found.text(0, 0))
        var body = Array(try #require(found.text(0, 1)).utf8)
        let digit = try #require(body.lastIndex { (0x30...0x39).contains($0) })
        body[digit] = 0x30 + (body[digit] - 0x30 + 1) % 10
        try connection.query(
            "UPDATE app_store_transaction SET body = $1 WHERE \(key) = $2",
            [.text(String(decoding: body, as: UTF8.self)), .text(name)], phase: .write)

        let password = try #require(URLComponents(string: url)?.password)
        for question in [
            { _ = try store.entitlements(at: instant) },
            { _ = try store.ledger() },
            { try store.export { _ in } },
        ] as [() throws -> Void] {
            let error = #expect(throws: LedgerError.self) { try question() }
            #expect(error?.code == .corruptStore)
            #expect(
                error?.reason.contains("app_store_transaction \(name) does not match its checksum") == true,
                "\(error?.reason ?? "")")
            #expect(error?.reason.contains(password) == false)
        }
        // The check reads every record and names the damaged one only.
        let report = try store.check()
        #expect(report.records == whole.records)
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.table == "app_store_transaction")
        #expect(report.problems.first?.key == name)
        #expect(report.problems.first?.reason == "does not match its checksum")
    }

    /// One account's answer reads all its records in one statement; each is still checked, and
    /// a damaged one is named whatever its table.
    @Test(arguments: [
        // The table, the key naming a row, what finds its account, the change made beside the store.
        (
            "app_store_transaction",
            "environment || ' ' || original_transaction_id || ' ' || ownership || ' ' || transaction_id",
            "original_transaction_id", "body = replace(body, '\"environment\"', '\"environment\" ')"
        ),
        (
            "app_store_renewal", "environment || ' ' || original_transaction_id", "original_transaction_id",
            "body = replace(body, '\"environment\"', '\"environment\" ')"
        ),
        (
            "channel_record", "channel || ' ' || environment || ' ' || id", "id",
            "body = replace(body, '\"environment\"', '\"environment\" ')"
        ),
        ("claim", "channel || ' ' || environment || ' ' || chain", "chain", "account = account || '0'"),
    ])
    func oneAccountsDamagedRecordIsRefusedNamingItWhateverItsTable(
        table: String, key: String, lookup: String, change: String
    ) throws {
        let (url, store) = try Self.storeOfEveryInput()
        defer { store.close() }
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        let instant = try #require(Self.instants.last)
        let filter =
            switch table {
            case "channel_record": "WHERE refund = 0"
            case "claim": "WHERE channel = 'app_store'"
            default: ""
            }
        let found = try connection.query(
            "SELECT \(key), \(lookup) FROM \(table) \(filter) ORDER BY 1 LIMIT 1", phase: .read)
        let name = try #require(found.text(0, 0))
        let accounts = try store.accounts(matching: try #require(found.text(0, 1)))
        try #require(!accounts.isEmpty)
        for account in accounts { _ = try store.entitlements(of: account, at: instant) }
        try connection.query("UPDATE \(table) SET \(change) WHERE \(key) = $1", [.text(name)], phase: .write)
        for account in accounts {
            let error = #expect(throws: LedgerError.self) { try store.entitlements(of: account, at: instant) }
            #expect(error?.code == .corruptStore)
            #expect(
                error?.reason.contains("\(table) \(name) does not match its checksum") == true, "\(error?.reason ?? "")"
            )
            #expect(throws: LedgerError.self) { try store.changeInstants(of: account) }
        }
    }

    @Test func aClaimChangedBesideTheStoreIsRefusedNamingItAndTheCheckFindsIt() throws {
        let (url, store) = try Self.storeOfEveryInput()
        defer { store.close() }
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        let claim = try #require(
            try connection.query(
                "SELECT channel || ' ' || environment || ' ' || chain FROM claim ORDER BY 1 LIMIT 1", phase: .read
            ).text(0, 0))
        try connection.query(
            "UPDATE claim SET account = $1 WHERE channel || ' ' || environment || ' ' || chain = $2",
            [.text(F.otherAccount), .text(claim)], phase: .write)
        let error = #expect(throws: LedgerError.self) { try store.export { _ in } }
        #expect(error?.code == .corruptStore)
        #expect(error?.reason.contains("claim \(claim) does not match its checksum") == true, "\(error?.reason ?? "")")
        let report = try store.check()
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.table == "claim")
        #expect(report.problems.first?.key == claim)
    }

    /// A store of PostgreSQL schema 1 (no input digests, claims and deliveries without
    /// checksums) is brought forward by a writer: the server computes the checksums a write
    /// computes, and the store answers as before.
    @Test func aStoreOfSchema1IsBroughtForwardWithTheChecksumsAWriteComputes() throws {
        let before: [String]
        let url: String
        do {
            let (made, store) = try Self.storeOfEveryInput()
            defer { store.close() }
            url = made
            before = try Self.exported(store.export)
            #expect(try store.check().isHealthy)
        }
        let connection = try PostgreSQLConnection(url)
        defer { connection.close() }
        try connection.execute(
            """
            ALTER TABLE claim DROP COLUMN checksum;
            ALTER TABLE delivery DROP COLUMN checksum;
            DROP TABLE fed_input;
            UPDATE vouch_meta SET schema_version = 1;
            """, phase: .write)
        let refused = #expect(throws: LedgerError.self) { try PostgreSQLLedgerStore(url, access: .readOnly) }
        #expect(refused?.code == .cannotOpen)
        try PostgreSQLLedgerStore(url).close()
        let store = try PostgreSQLLedgerStore(url, access: .readOnly, catalog: Self.catalog)
        defer { store.close() }
        #expect(try store.statistics().schemaVersion == PostgreSQLLedgerStore.schemaVersion)
        let report = try store.check()
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(try connection.query("SELECT count(*) FROM claim", phase: .read).integer(0, 0) ?? 0 > 0)
        #expect(try Self.exported(store.export) == before)
    }

    @Test func aNewerSchemaAndAForeignOneAreRefusedUntouched() throws {
        let url = try Self.freshStore()
        let observer = try PostgreSQLConnection(url)
        defer { observer.close() }
        // Read only, a schema without a store is not one yet, and stays empty.
        let unmade = #expect(throws: LedgerError.self) { try PostgreSQLLedgerStore(url, access: .readOnly) }
        #expect(unmade?.code == .cannotOpen)
        #expect(
            try observer.query("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()", phase: .read)
                .integer(0, 0) == 0)

        try PostgreSQLLedgerStore(url).add(Self.grants[0])
        #expect(
            try observer.query("SELECT application_id, schema_version FROM vouch_meta", phase: .read).text(0, 1)
                == String(PostgreSQLLedgerStore.schemaVersion))
        try observer.execute("UPDATE vouch_meta SET schema_version = 99", phase: .write)
        for access in [LedgerStore.Access.readWrite, .readOnly] {
            let newer = #expect(throws: LedgerError.self) { try PostgreSQLLedgerStore(url, access: access) }
            #expect(newer?.code == .newerSchema)
            #expect(newer?.reason.contains("schema 99") == true)
        }
        #expect(try observer.query("SELECT schema_version FROM vouch_meta", phase: .read).integer(0, 0) == 99)
        #expect(try observer.query("SELECT count(*) FROM channel_record", phase: .read).integer(0, 0) == 1)

        let foreign = try Self.freshStore()
        let other = try PostgreSQLConnection(foreign)
        defer { other.close() }
        try other.execute("CREATE TABLE invoices (id bigint PRIMARY KEY)", phase: .write)
        let refused = #expect(throws: LedgerError.self) { try PostgreSQLLedgerStore(foreign) }
        #expect(refused?.code == .notAStore)
        #expect(
            try other.query(
                "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = current_schema()", phase: .read
            )
            .text(0, 0) == "invoices")
    }

    @Test func twoHostsOpeningANewStoreAtOnceMakeItOnce() throws {
        let url = try Self.freshStore()
        let failures = Failures()
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do { try PostgreSQLLedgerStore(url).close() } catch { failures.append("\(error)") }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(failures.all == [])
        let observer = try PostgreSQLConnection(url)
        defer { observer.close() }
        #expect(try observer.query("SELECT count(*) FROM vouch_meta", phase: .read).integer(0, 0) == 1)
    }

    @Test func aBackendEndedInTheMiddleOfAnAddLeavesNothingAndARerunCompletesIt() throws {
        let url = try Self.freshStore()
        let store = try PostgreSQLLedgerStore(url, catalog: Self.catalog)
        defer { store.close() }
        var first = EntitlementLedger()
        var rest = EntitlementLedger()
        for (index, input) in Self.inputs.enumerated() {
            if index < 20 { input.add(to: &first) } else { input.add(to: &rest) }
        }
        try store.add(contentsOf: first)
        let observer = try PostgreSQLConnection(url)
        defer { observer.close() }
        let stored = try Self.exported(store.export)

        // The counters are written last: holding one, the addition waits after writing its records.
        try observer.execute("BEGIN", phase: .write)
        try observer.query("SELECT value FROM counter WHERE name = 'transactions' FOR UPDATE", phase: .write)
        let failures = Failures()
        let done = DispatchSemaphore(value: 0)
        let remaining = rest
        Thread.detachNewThread {
            do {
                try store.add(contentsOf: remaining)
                failures.append("the addition was not ended")
            } catch let error as LedgerError {
                failures.append(error.code.rawValue)
            } catch {
                failures.append("\(error)")
            }
            done.signal()
        }
        var ended = false
        for _ in 0..<400 where !ended {
            let waiting = try PostgreSQLConnection(url)
            let found = try waiting.query(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO counter%'",
                phase: .read)
            if found.count == 1, let pid = found.integer(0, 0) {
                try waiting.query("SELECT pg_terminate_backend($1::integer)", [.integer(pid)], phase: .write)
                ended = true
            }
            waiting.close()
            if !ended { usleep(25_000) }
        }
        #expect(ended)
        #expect(done.wait(timeout: .now() + 30) == .success)
        try observer.execute("ROLLBACK", phase: .write)
        #expect(failures.all == ["cannot_write"])
        #expect(try Self.exported(store.export) == stored)

        // The same store connects again; running the addition again completes it.
        try store.add(contentsOf: rest)
        var memory = EntitlementLedger(catalog: Self.catalog)
        for input in Self.inputs { input.add(to: &memory) }
        #expect(try Self.answers(store, accounts: memory.accounts) == Self.answers(memory, accounts: memory.accounts))
    }
}

/// Failures gathered from threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []

    func append(_ item: String) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
