import CSQLite
import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Writers of one ledger file take turns: a writer that finds the write lock taken waits for it
/// up to `--busy-timeout`, so writers started at once all succeed and the store equals one add.
@Suite(.serialized) struct LedgerWritersCommandTests {
    typealias L = LedgerCommandTests

    /// Minted histories of `accounts` accounts, one token a line.
    static func input(_ name: String, accounts: Int) throws -> String {
        let generator = MintHistoryGenerator(seed: 31, date: Date(timeIntervalSince1970: 1_780_272_000))
        let tokens = try (0..<accounts).flatMap { try generator.history($0).tokens(signer: L.signer) }
        return try L.file(tokens, name: name)
    }

    /// What a store answers: its export and every account's entitlements.
    static func answers(_ db: String) throws -> [String] {
        let export = try VouchBinary.run(["ledger", "export", "--db", db])
        let entitlements = try VouchBinary.run(["entitlements", "--db", db, "--at", "2026-06-01", "--json"])
        #expect(export.status == 0 && entitlements.status == 0, "\(export.stderr)\(entitlements.stderr)")
        return [export.stdout, entitlements.stdout]
    }

    @Test func fourWritersAddingTheSameInputAtOnceAllSucceedAndTheStoreEqualsOneAdd() throws {
        let input = try Self.input("writers.jsonl", accounts: 150)
        let once = LedgerStoreCommandTests.database("writers-once.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", once, "--root", L.root, input]).status == 0)

        let db = LedgerStoreCommandTests.database("writers.sqlite")
        let processes = (0..<4).map { _ in
            let process = Process()
            process.executableURL = VouchBinary.url
            process.arguments = ["ledger", "add", "--db", db, "--root", L.root, input]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return process
        }
        for process in processes { try process.run() }
        let deadline = Date().addingTimeInterval(240)
        for process in processes {
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0)
        }
        let answers = try Self.answers(db)
        #expect(!answers[0].isEmpty)
        #expect(answers == (try Self.answers(once)))
    }

    @Test func aWriterWaitsForTheWriteLockUpToItsBusyTimeout() throws {
        let input = try Self.input("busy.jsonl", accounts: 3)
        let db = LedgerStoreCommandTests.database("busy.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, input]).status == 0)

        // Another process's write transaction, held by SQLite itself.
        var handle: OpaquePointer?
        try #require(sqlite3_open(db, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        /// Runs `arguments` while the lock is held for `seconds`: its exit status, stderr and
        /// how long it ran.
        func hold(for seconds: Double, while arguments: [String]) throws -> (Int32, String, Double) {
            try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
            let process = Process()
            process.executableURL = VouchBinary.url
            process.arguments = arguments
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            let started = Date()
            try process.run()
            usleep(UInt32(seconds * 1_000_000))
            #expect(sqlite3_exec(handle, "COMMIT", nil, nil, nil) == SQLITE_OK)
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.terminationStatus, stderr, Date().timeIntervalSince(started))
        }
        let add = ["ledger", "add", "--db", db, "--root", L.root, input]
        let (waited, waitedErrors, took) = try hold(for: 1.5, while: add + ["--busy-timeout", "30"])
        #expect(waited == 0, "\(waitedErrors)")
        #expect(took >= 1.4)

        let (gaveUp, gaveUpErrors, _) = try hold(for: 3, while: add + ["--busy-timeout", "0.3"])
        #expect(gaveUp == 74, "\(gaveUpErrors)")
        #expect(gaveUpErrors.contains("locked"), "\(gaveUpErrors)")

        let wrong = try VouchBinary.run(add + ["--busy-timeout", "soon"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("--busy-timeout takes a number of seconds"))
    }

    @Test func anInputLargerThanABatchIsStoredInSeveralCommitsEqualToOneTransaction() throws {
        let generator = MintHistoryGenerator(seed: 37, date: Date(timeIntervalSince1970: 1_780_272_000))
        let tokens = try (0..<700).flatMap { try generator.history($0).tokens(signer: L.signer) }
        let input = try L.file(tokens, name: "batches.jsonl")

        // The whole input in one transaction, through the library.
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try L.authority.anchorCertificate()]
        let verifier = try Verifier(configuration: configuration)
        var ledger = EntitlementLedger()
        for token in tokens { ledger.add(try verifier.verify(token)) }
        let once = LedgerStoreCommandTests.database("batches-once.sqlite")
        _ = try LedgerStore(path: once).add(contentsOf: ledger)

        // One input, read by one job: a reader sees its batches committed one by one.
        let db = LedgerStoreCommandTests.database("batches.sqlite")
        let process = Process()
        process.executableURL = VouchBinary.url
        process.arguments = ["ledger", "add", "--db", db, "--jobs", "1", "--root", L.root, input]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = Set<Int>()
        let deadline = Date().addingTimeInterval(240)
        while process.isRunning, Date() < deadline {
            if let store = try? LedgerStore(path: db, access: .readOnly), let held = try? store.statistics() {
                seen.insert(held.transactions)
            }
            usleep(20_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let whole = ledger.transactionCount
        let between = seen.filter { $0 > 0 && $0 < whole }
        #expect(!between.isEmpty, "no commit seen before the input's end: \(seen.sorted())")
        #expect(try Self.answers(db) == (try Self.answers(once)))
    }
}
