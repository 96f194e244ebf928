import CSQLite
import Foundation
import Synchronization
import Testing
import Vouch
import VouchMint
import VouchOpenSSL
import VouchReceipts
import VouchTestSupport

@testable import VouchEntitlements

/// The SQLite store answers as the in-memory ledger, byte for byte, whatever the order and split
/// of what it was given; it refuses files that are not its own and reports damage.
@Suite(.serialized) struct LedgerStoreTests {
    typealias F = LedgerFixtures

    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-store-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static func path(_ name: String) -> String {
        let path = folder.appendingPathComponent(name).path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return path
    }

    /// The determinism fixture, 80 generated accounts and two receipts: every kind of record.
    static let payloads: [VerifiedPayload] = {
        let generator = MintHistoryGenerator(seed: 7, date: Date(timeIntervalSince1970: 1_780_272_000))
        return LedgerDeterminismTests.payloads
            + (0..<80).flatMap { try! generator.history($0).tokens(signer: F.signer) }.map {
                try! F.verifier.verify($0)
            }
    }()

    static let receipts: [VerifiedReceipt] = [
        try! ReceiptLedgerTests.receipt(
            created: F.day(30),
            [
                ReceiptLedgerTests.purchase(
                    "com.example.pro.lifetime", id: "2000000000000003", chain: "2000000000000003", at: F.day(3),
                    cancelled: F.day(28)),
                ReceiptLedgerTests.purchase("com.example.pro.lifetime", id: "3000000000000001", at: F.day(9)),
            ]),
        try! ReceiptLedgerTests.receipt(
            created: F.day(40),
            [
                ReceiptLedgerTests.purchase(
                    "com.example.plus.monthly", id: "3000000000000002", at: F.day(31), expires: F.day(62))
            ]),
    ]

    static let instants = LedgerDeterminismTests.instants

    /// Everything a ledger answers, and each account's own answer, as the CLI writes them.
    static func answers(_ ledger: EntitlementLedger) -> String {
        var text = LedgerDeterminismTests.answers(ledger)
        for account in ledger.accounts {
            for instant in instants {
                text +=
                    JSONWriter.string(
                        ledger.entitlements(of: account, at: F.at(instant))!.json(at: F.at(instant), includeTier: true))
                    + "\n"
            }
        }
        return text
    }

    /// The same questions asked of the store, each through its own lookup.
    static func answers(_ store: LedgerStore) throws -> String {
        var text = ""
        for instant in instants {
            text += try store.entitlements(at: F.at(instant)).map {
                JSONWriter.string($0.json(at: F.at(instant), includeTier: true)) + "\n"
            }.joined()
        }
        let revocations = try store.revocations()
        for revocation in revocations { text += JSONWriter.string(revocation.json) + "\n" }
        text += JSONWriter.string(RevocationSummary(revocations).json) + "\n"
        for account in try store.accounts() {
            for instant in instants {
                text +=
                    JSONWriter.string(
                        try store.entitlements(of: account, at: F.at(instant))!.json(
                            at: F.at(instant), includeTier: true)) + "\n"
            }
        }
        return text
    }

    static func memory() -> EntitlementLedger {
        var ledger = F.ledger(payloads, catalog: LedgerDeterminismTests.catalog)
        for receipt in receipts { ledger.add(receipt) }
        return ledger
    }

    @Test(arguments: [1, 2, 5] as [UInt64])
    func theStoreAnswersAsTheLedgerForAnyOrderAndSplit(seed: UInt64) throws {
        let memory = Self.memory()
        let expected = Self.answers(memory)
        let path = Self.path("differential-\(seed).sqlite")
        do {
            let store = try LedgerStore(path: path, catalog: LedgerDeterminismTests.catalog)
            enum Input {
                case token(VerifiedPayload)
                case receipt(VerifiedReceipt)
            }
            let inputs = LedgerDeterminismTests.shuffled(
                Self.payloads.map(Input.token) + Self.receipts.map(Input.receipt)
                    + Self.payloads.prefix(30).map(Input.token),
                seed: seed)
            // Parts of every size: one payload at a time, and ledgers of many.
            var index = 0
            var random = SeededRandom(seed: seed)
            while index < inputs.count {
                let size = random.below(3) == 0 ? 1 : random.below(200) + 1
                var part = EntitlementLedger()
                for input in inputs[index..<min(index + size, inputs.count)] {
                    switch input {
                    case .token(let payload): part.add(payload)
                    case .receipt(let receipt): part.add(receipt)
                    }
                }
                try store.add(contentsOf: part)
                index += size
            }
            #expect(try Self.answers(store) == expected)
            #expect(Self.answers(try store.ledger()) == expected)
            #expect(try store.accounts() == memory.accounts)
            for account in memory.accounts {
                let identifiers =
                    [account.appAccountToken].compactMap { $0 }
                    + (memory.entitlements(of: account, at: F.at(0))?.originalTransactionIds ?? [])
                for identifier in identifiers {
                    #expect(try store.accounts(matching: identifier) == memory.accounts(matching: identifier))
                }
                if let uuid = account.appAccountTokenUUID {
                    #expect(try store.accounts(matching: uuid) == memory.accounts(matching: uuid))
                }
            }
            for id in ["2000000000000003", "3000000000000002", "2000000000005002", "none"] {
                #expect(try store.accounts(withTransactionId: id) == memory.accounts(withTransactionId: id))
            }
            var fed = EntitlementLedger()
            for input in inputs {
                switch input {
                case .token(let payload): fed.add(payload)
                case .receipt(let receipt): fed.add(receipt)
                }
            }
            let statistics = try store.statistics()
            #expect(statistics.accounts == memory.accounts.count)
            #expect(statistics.chains == memory.chainCount)
            #expect(statistics.transactions == memory.transactionCount)
            #expect(statistics.fed == fed.statistics)
            #expect(statistics.fed.receipts == 2)
        }
        // Opened again, read only: the same answers.
        let reopened = try LedgerStore(path: path, access: .readOnly, catalog: LedgerDeterminismTests.catalog)
        #expect(try Self.answers(reopened) == expected)
    }

    /// A store read through a memory map answers as one that copies its pages, a writer and a
    /// reader kept open while the file grows alike; SQLite maps what the options ask.
    @Test func aMemoryMappedStoreAnswersAsOneThatCopiesItsPages() throws {
        let path = Self.path("mapped.sqlite")
        let catalog = LedgerDeterminismTests.catalog
        let options = LedgerStore.Options(memoryMapBytes: 64 << 20)
        let writer = try LedgerStore(path: path, catalog: catalog, options: options)
        try writer.add(contentsOf: F.ledger(Array(Self.payloads.prefix(40)), catalog: catalog))
        let mapped = try LedgerStore(path: path, access: .readOnly, catalog: catalog, options: options)
        let copying = try LedgerStore(path: path, access: .readOnly, catalog: catalog)
        #expect(try Self.mappedBytes(writer) == 64 << 20)
        #expect(try Self.mappedBytes(mapped) == 64 << 20)
        #expect(try Self.mappedBytes(copying) == 0)
        #expect(try Self.answers(mapped) == Self.answers(copying))
        try writer.add(contentsOf: Self.memory())
        let expected = Self.answers(Self.memory())
        #expect(try Self.answers(mapped) == expected)
        #expect(try Self.answers(writer) == expected)
        #expect(try Self.answers(copying) == expected)
        #expect(LedgerStore.Options(memoryMapBytes: -1).memoryMapBytes == 0)
    }

    /// The bytes SQLite maps of `store`'s file (`PRAGMA mmap_size`).
    static func mappedBytes(_ store: LedgerStore) throws -> Int64? {
        try store.reading { () throws(LedgerError) -> Int64? in
            var bytes: Int64?
            try store.statement("PRAGMA mmap_size", phase: .read).rows { bytes = $0.integer(0) }
            return bytes
        }
    }

    /// A store kept open (a server's) answers from what is committed when it is asked, after
    /// any question, a refused one included.
    @Test func aStoreKeptOpenSeesWhatAnotherWriterCommitsAfterItsQuestions() throws {
        let path = Self.path("kept-open.sqlite")
        let writer = try LedgerStore(path: path, catalog: LedgerDeterminismTests.catalog)
        try writer.add(Self.payloads[0])
        let reader = try LedgerStore(path: path, access: .readOnly, catalog: LedgerDeterminismTests.catalog)
        let before = try reader.statistics()
        _ = try reader.entitlements(at: F.at(F.day(40)))
        try writer.add(contentsOf: F.ledger(Self.payloads))
        let after = try reader.statistics()
        #expect(after.transactions > before.transactions)
        #expect(Self.counts(after) == Self.counts(try writer.statistics()))
        #expect(try Self.answers(reader) == Self.answers(writer))
    }

    /// A grant to an account named by the grant's own id is found by two of the lookup's
    /// branches (its chain and its id): it is still one account, in `accounts()` too.
    @Test func aRecordTwoLookupsFindIsOneAccount() throws {
        let store = try LedgerStore(path: Self.path("one-account.sqlite"))
        let account = AccountKey(environment: .production, originalTransactionId: "grant-7")
        try store.add(
            EntitlementGrant(
                source: EntitlementSource(rawValue: "manual"), id: "grant-7", account: account, productId: "pro",
                startDate: Timestamp(milliseconds: 0), expiresDate: nil, signedDate: Timestamp(milliseconds: 1)))
        #expect(try store.accounts(matching: "grant-7") == [account])
        #expect(try store.accounts() == [account])
    }

    /// Texts are stored whole, a NUL inside one too: two grant ids that differ only after it
    /// stay two records and two accounts, as in memory.
    @Test func identifiersThatDifferOnlyAfterANulStayApart() throws {
        let store = try LedgerStore(path: Self.path("nul.sqlite"))
        var memory = EntitlementLedger()
        for id in ["grant\u{0}7", "grant\u{0}8"] {
            let grant = EntitlementGrant(
                source: EntitlementSource(rawValue: "manual"), id: id,
                account: AccountKey(environment: .production, originalTransactionId: id), productId: "pro",
                startDate: Timestamp(milliseconds: 0), expiresDate: nil, signedDate: Timestamp(milliseconds: 1))
            try store.add(grant)
            _ = try memory.add(grant)
        }
        #expect(memory.accounts.count == 2)
        #expect(try store.accounts() == memory.accounts)
        for account in memory.accounts {
            #expect(try store.accounts(matching: account.originalTransactionId ?? "") == [account])
            #expect(
                try store.entitlements(of: account, at: Timestamp(milliseconds: 5))
                    == memory.entitlements(of: account, at: Timestamp(milliseconds: 5)))
        }
    }

    @Test func addingTheSameDataAgainChangesNothing() throws {
        let path = Self.path("again.sqlite")
        let store = try LedgerStore(path: path)
        let ledger = F.ledger(LedgerDeterminismTests.payloads)
        let first = try store.add(contentsOf: ledger)
        #expect(first.newTransactions == ledger.transactionCount)
        #expect(first.changedRecords)
        var export = [String]()
        try store.export { export.append(String(decoding: $0, as: UTF8.self)) }
        let again = try store.add(contentsOf: F.ledger(LedgerDeterminismTests.payloads.reversed()))
        #expect(!again.changedRecords)
        #expect(again.newTransactions == 0 && again.changedTransactions == 0 && again.renewalInfos == 0)
        var second = [String]()
        try store.export { second.append(String(decoding: $0, as: UTF8.self)) }
        #expect(second == export)
        #expect(export.count == ledger.transactionCount + (try store.statistics()).renewalInfos)
        #expect(export.count > ledger.transactionCount)
    }

    /// A store's statistics with its size left out: what a store fed the same inputs counts
    /// alike, whatever the size of its file.
    static func counts(_ statistics: LedgerStore.Statistics) -> [String] {
        Mirror(reflecting: statistics).children.filter { $0.label != "bytes" }.map { "\($0.label ?? ""): \($0.value)" }
    }

    /// The statistics of a store fed `runs` of `adds`, each run in batches of its size (as
    /// `vouch ledger add` stores them): a run that stops early stands for one killed after
    /// some batches.
    static func statistics(
        _ name: String, _ adds: [(inout EntitlementLedger) -> Void], runs: [(Range<Int>, batch: Int)]
    ) throws -> LedgerStore.Statistics {
        try feed(LedgerStore(path: path(name), catalog: LedgerDeterminismTests.catalog), adds, runs: runs)
    }

    /// Feeds `store` `runs` of `adds` as ``statistics(_:_:runs:)`` says, and returns its statistics.
    static func feed(
        _ store: any LedgerStoring, _ adds: [(inout EntitlementLedger) -> Void], runs: [(Range<Int>, batch: Int)]
    ) throws -> LedgerStore.Statistics {
        for (range, size) in runs {
            for start in stride(from: range.lowerBound, to: range.upperBound, by: size) {
                var batch = EntitlementLedger.batch()
                for add in adds[start..<min(start + size, range.upperBound)] { add(&batch) }
                try store.add(contentsOf: batch)
            }
        }
        return try store.statistics()
    }

    @Test func statisticsAfterARerunOrARepeatEqualThoseOfAStoreFedOnce() throws {
        let adds: [(inout EntitlementLedger) -> Void] =
            Self.payloads.map { payload in { $0.add(payload) } } + Self.receipts.map { receipt in { $0.add(receipt) } }
        let all = 0..<adds.count
        let once = try Self.statistics("once.sqlite", adds, runs: [(all, batch: 40)])
        #expect(once.fed.receipts == 2)
        #expect(once.fed.notifications > 0 && once.deliveries.notifications > 0)
        #expect(once.statements >= once.transactions + once.renewalInfos)
        // Killed after three batches, then run again whole, split otherwise.
        let rerun = try Self.statistics("rerun.sqlite", adds, runs: [(0..<120, batch: 40), (all, batch: 70)])
        #expect(Self.counts(rerun) == Self.counts(once))
        let twice = try Self.statistics("twice.sqlite", adds, runs: [(all, batch: 40), (all, batch: 40)])
        #expect(Self.counts(twice) == Self.counts(once))
        // One input at a time, through the store's own additions, twice.
        let store = try LedgerStore(path: Self.path("each.sqlite"), catalog: LedgerDeterminismTests.catalog)
        for _ in 0..<2 {
            for payload in Self.payloads { try store.add(payload) }
            for receipt in Self.receipts { try store.add(receipt) }
        }
        #expect(Self.counts(try store.statistics()) == Self.counts(once))
    }

    @Test func notificationsSeenAgainAreDuplicatesOfTheAdditionAndCountedOnceInTheStatistics() throws {
        var history = MintHistory(appAccountToken: F.account)
        history.purchase("com.example.pro.lifetime", type: .nonConsumable, at: F.time(1), price: 29_990)
        guard case .notification(var payload, let transaction, let renewal) = history.items.last! else {
            Issue.record("the purchase has no notification")
            return
        }
        let first = try F.verifier.verify(try MintHistory.sign(history.items.last!, signer: F.signer))
        payload["signedDate"] = .number(String(F.day(2)))  // Apple sent it again, signed anew
        let retry = try F.verifier.verify(
            try MintHistory.sign(
                .notification(payload, transaction: transaction, renewalInfo: renewal), signer: F.signer))

        let store = try LedgerStore(path: Self.path("deliveries.sqlite"))
        #expect(try store.add(first).newNotifications == 1)
        let duplicate = try store.add(first)
        #expect(duplicate.duplicateNotifications == 1 && duplicate.newNotifications == 0 && !duplicate.changedRecords)
        #expect(try store.add(retry).retriedNotifications == 1)
        // The store holds two deliveries of one notification, each read once.
        let statistics = try store.statistics()
        #expect(statistics.deliveries.notifications == 1)
        #expect(statistics.deliveries.duplicates == 0)
        #expect(statistics.deliveries.retries == 1)
        #expect(statistics.fed.notifications == 2)

        var ledger = EntitlementLedger()
        for payload in [first, retry] { ledger.add(payload) }
        #expect(ledger.notificationDeliveries == statistics.deliveries)
    }

    @Test func aClaimTheStoreHoldsForAnotherAccountIsRefusedAndNothingIsStored() throws {
        let store = try LedgerStore(path: Self.path("claims.sqlite"))
        let receipt = Self.receipts[1]
        let mine = UUID(uuidString: F.account)!
        #expect(try store.add(receipt, account: mine).claims == 1)
        #expect(try store.accounts() == [AccountKey(environment: .sandbox, appAccountToken: mine)])
        let before = try store.statistics()
        let error = #expect(throws: LedgerError.self) {
            // New chains: stored. Then a chain the store holds for another account: refused.
            try store.add(Self.receipts[0], account: UUID(uuidString: F.otherAccount)!)
            try store.add(receipt, account: UUID(uuidString: F.otherAccount)!)
        }
        #expect(error?.code == .accountConflict)
        // The first call (new chains) was stored; the refused one left nothing.
        let after = try store.statistics()
        #expect(after.claims == before.claims + 2)
        #expect(after.fed.receipts == before.fed.receipts + 1)
    }

    /// A webhook answers a refused claim 400 (a verdict on the data) and a store it cannot use
    /// 500 (the App Store sends the notification again, which may then be kept).
    @Test func aStoreErrorSaysHowAWebhookAnswersIt() throws {
        let path = Self.path("webhook.sqlite")
        let store = try LedgerStore(path: path)
        try store.add(Self.receipts[1], account: UUID(uuidString: F.account)!)
        let conflict = #expect(throws: LedgerError.self) {
            try store.add(Self.receipts[1], account: UUID(uuidString: F.otherAccount)!)
        }
        #expect(conflict?.code == .accountConflict)
        #expect(conflict.map(WebhookStatus.answering) == WebhookStatus.refused)

        let readOnly = try LedgerStore(path: path, access: .readOnly)
        let unwritable = #expect(throws: LedgerError.self) { try readOnly.add(Self.receipts[0]) }
        #expect(unwritable?.code == .cannotWrite)
        #expect(unwritable.map(WebhookStatus.answering) == WebhookStatus.failed)

        let notes = Self.path("webhook-notes.txt")
        try Data("not a database\n".utf8).write(to: URL(fileURLWithPath: notes))
        let foreign = #expect(throws: LedgerError.self) { try LedgerStore(path: notes) }
        #expect(foreign?.code == .notAStore)
        #expect(foreign.map(WebhookStatus.answering) == WebhookStatus.failed)
    }

    @Test func aFileThatIsNotAVouchStoreIsRefusedAndLeftAsItIs() throws {
        let text = Self.path("notes.txt")
        try Data("not a database, just notes\n".utf8).write(to: URL(fileURLWithPath: text))
        let foreign = Self.path("foreign.sqlite")
        try Self.sqlite(foreign, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')")
        let newer = Self.path("newer.sqlite")
        _ = try LedgerStore(path: newer)
        try Self.sqlite(newer, "PRAGMA user_version = \(LedgerStore.schemaVersion + 1)")
        for (path, code) in [
            (text, LedgerError.Code.notAStore), (foreign, .notAStore), (newer, .newerSchema),
        ] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for access in [LedgerStore.Access.readWrite, .readOnly] {
                let error = #expect(throws: LedgerError.self) { try LedgerStore(path: path, access: access) }
                #expect(error?.code == code, "\(path) \(access): \(String(describing: error))")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "\(path) was changed")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal") || path == newer)
        }
    }

    @Test func aMissingOrEmptyFileIsNotReadButMadeWhenWritten() throws {
        let missing = Self.path("missing.sqlite")
        let error = #expect(throws: LedgerError.self) { try LedgerStore(path: missing, access: .readOnly) }
        #expect(error?.code == .cannotOpen)
        #expect(!FileManager.default.fileExists(atPath: missing))
        let empty = Self.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        let notMade = #expect(throws: LedgerError.self) { try LedgerStore(path: empty, access: .readOnly) }
        #expect(notMade?.code == .cannotOpen)
        #expect(notMade?.reason.contains("no store has been made in it yet") == true)
        let store = try LedgerStore(path: empty)
        #expect(try store.statistics().transactions == 0)
        let readOnly = try LedgerStore(path: empty, access: .readOnly)
        let refused = #expect(throws: LedgerError.self) { try readOnly.add(contentsOf: EntitlementLedger()) }
        #expect(refused?.code == .cannotWrite)
    }

    /// Writers opening a store that does not exist yet, at once: one makes it and every other
    /// opens what it made. A writer reading the file's identity while another commits the schema
    /// saw tables without the application id, and refused the store as another application's.
    @Test func writersOpeningANewStoreAtOnceAllOpenIt() throws {
        let failures = Mutex<[String]>([])
        for round in 0..<30 {
            let path = Self.path("opened-at-once-\(round).sqlite")
            let done = DispatchGroup()
            for _ in 0..<6 {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    do {
                        try LedgerStore(path: path).close()
                    } catch {
                        failures.withLock { $0.append("round \(round): \(error)") }
                    }
                }
            }
            #expect(done.wait(timeout: .now() + 60) == .success)
        }
        #expect(failures.withLock { $0 } == [])
    }

    @Test(arguments: [0.02, 0.3, 0.6, 0.9])
    func aTruncatedOrOverwrittenStoreIsReportedNeverReadAsData(cut: Double) throws {
        let path = Self.path("damaged-\(cut).sqlite")
        do {
            let store = try LedgerStore(path: path)
            try store.add(contentsOf: Self.memory())
        }
        // The last connection closed: the log is in the file, which is whole.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(whole.count > 40_000)
        for damage in ["truncated", "overwritten"] {
            var bytes = whole
            let at = Int(Double(whole.count) * cut)
            if damage == "truncated" {
                bytes = bytes.prefix(at)
            } else {
                for offset in at..<min(at + 3_000, bytes.count) {
                    bytes[offset] = UInt8(truncatingIfNeeded: offset &* 131)
                }
            }
            try bytes.write(to: URL(fileURLWithPath: path))
            var failures: [LedgerError.Code] = []
            do {
                let store = try LedgerStore(path: path, access: .readOnly, catalog: LedgerDeterminismTests.catalog)
                _ = try Self.answers(store)
                var lines = 0
                try store.export { _ in lines += 1 }
                _ = try store.statistics()
            } catch let error as LedgerError {
                failures.append(error.code)
                #expect(error.reason.contains(path))
            }
            // A cut in the file always shows; an overwrite shows unless it fell in free space.
            if damage == "truncated" { #expect(!failures.isEmpty, "\(damage) at \(at) went unnoticed") }
            #expect(
                failures.allSatisfy { [.corruptStore, .notAStore].contains($0) }, "\(damage) at \(at): \(failures)")
        }
    }

    @Test(arguments: [
        "not json", #"{"kind":"transaction"}"#,
        #"{"kind":"unknown","channel":"app_store","environment":"Production","originalTransactionId":"1"}"#,
    ])
    func aStoredRecordThatDoesNotReadIsReportedAsDamage(body: String) throws {
        let path = Self.path("bad-record.sqlite")
        do {
            let store = try LedgerStore(path: path)
            try store.add(contentsOf: F.ledger(LedgerDeterminismTests.payloads))
        }
        // With a checksum that matches: what is found is a body that does not read.
        let checksum = SHA256Digest.hash(Array(body.utf8)).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        try Self.sqlite(
            path,
            "UPDATE app_store_transaction SET body = vouch_pack('\(body)'), checksum = \(checksum) "
                + "WHERE \(LedgerStoreCheckTests.firstTransaction())"
        )
        let store = try LedgerStore(path: path, access: .readOnly)
        for question in [
            { _ = try store.ledger() },
            {
                var lines = 0
                try store.export { _ in lines += 1 }
            },
        ]
            as [() throws -> Void]
        {
            let error = #expect(throws: LedgerError.self) { try question() }
            #expect(error?.code == .corruptStore)
            #expect(error?.reason.contains("holds a record that does not read") == true)
        }
    }

    /// A store whose table was dropped is damage (`corrupt_store`), not a failure of SQLite
    /// that trying again could mend.
    @Test(arguments: ["app_store_renewal", "channel_record", "delivery"])
    func aStoreMissingATableIsReportedAsDamage(table: String) throws {
        let path = Self.path("dropped-\(table).sqlite")
        do {
            let store = try LedgerStore(path: path)
            try store.add(contentsOf: F.ledger(LedgerDeterminismTests.payloads))
        }
        try Self.sqlite(path, "DROP TABLE \(table)")
        let error = #expect(throws: LedgerError.self) {
            let store = try LedgerStore(path: path, access: .readOnly)
            _ = try store.ledger()
            _ = try store.statistics()
        }
        #expect(error?.code == .corruptStore)
        #expect(error?.reason.contains("its schema was altered") == true)
        #expect(error?.reason.contains("no such table: \(table)") == true)
    }

    @Test(.enabled(if: geteuid() != 0, "root may write anywhere"))
    func aStoreThatCannotBeWrittenIsRefusedForWritingAndReadInAReadOnlyDirectory() throws {
        let directory = Self.folder.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let store = try LedgerStore(path: path)
            try store.add(contentsOf: F.ledger(LedgerDeterminismTests.payloads))
        }
        chmod(directory.path, 0o555)
        defer { chmod(directory.path, 0o755) }
        let reader = try LedgerStore(path: path, access: .readOnly)
        #expect(try reader.statistics().transactions > 0)
        let error = #expect(throws: LedgerError.self) {
            let writer = try LedgerStore(path: path)
            try writer.add(contentsOf: F.ledger(LedgerDeterminismTests.payloads))
        }
        #expect(error?.code == .cannotWrite)
        let created = #expect(throws: LedgerError.self) {
            try LedgerStore(path: directory.appendingPathComponent("new.sqlite").path)
        }
        #expect(created?.code == .cannotWrite)
    }

    /// Runs `sql` on `path` with SQLite itself, as another application would.
    static func sqlite(_ path: String, _ sql: String) throws {
        try SQLiteFile.execute(path, sql, functions: StoredBody.defineFunctions)
    }

    /// A connection of SQLite itself to `path`, beside the store's, with the store's functions
    /// (`vouch_pack(json)`, `vouch_unpack(body)`, `vouch_checksum(body)`), by which a test reads
    /// and writes the JSON of stored bodies.
    static func connect(_ path: String) throws -> OpaquePointer? {
        try SQLiteFile.open(path, functions: StoredBody.defineFunctions)
    }

    /// SQL that turns every stored body back into its JSON, with the checksum of its JSON, as a
    /// store of schema 4 or older kept it: the first step of making such a store from one of
    /// this schema.
    static let unpackBodies = """
        UPDATE app_store_transaction SET body = vouch_unpack(body), checksum = vouch_checksum(vouch_unpack(body));
        UPDATE app_store_renewal SET body = vouch_unpack(body), checksum = vouch_checksum(vouch_unpack(body));
        UPDATE channel_record SET body = vouch_unpack(body), checksum = vouch_checksum(vouch_unpack(body));
        """
}
