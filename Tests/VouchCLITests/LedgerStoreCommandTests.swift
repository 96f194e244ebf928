import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchReceipts

/// `vouch ledger add|stats|export` and `--db` of `vouch entitlements` and `vouch refunds`, on
/// the built binary: the store answers as the inputs do, refuses what is not a store, and a
/// killed `ledger add` loses only the input it was reading.
@Suite(.serialized) struct LedgerStoreCommandTests {
    typealias L = LedgerCommandTests

    /// A fresh store path in the scratch directory.
    static func database(_ name: String) -> String {
        let path = L.directory.appendingPathComponent(name).path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return path
    }

    static let at = "2026-02-15"

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    @Test func ledgerAddStoresWhatVerifiedAndTheStoreAnswersAsTheInputs() throws {
        let tokens = try L.file(L.tokens, name: "store-tokens.jsonl")
        let input = try L.file(L.tokens + ["not a token"], name: "store-input.jsonl")
        let tiers = try L.file([L.tiers], name: "store-tiers.json")
        let db = Self.database("answers.sqlite")
        let added = try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, input])
        #expect(added.status == 1, "\(added.stderr)")
        #expect(added.stderr.contains("store-input.jsonl:11: rejected, not used: malformed_token"))
        #expect(added.stderr.contains("11 tokens: 10 verified, 1 rejected; stored 5 new and 0 changed transactions"))

        for command in [
            ["entitlements", "--at", Self.at, "--json", "--tiers", tiers], ["entitlements", "--at", Self.at],
            ["refunds", "--json"], ["refunds"],
        ] {
            let direct = try VouchBinary.run(command + ["--root", L.root, tokens])
            let stored = try VouchBinary.run(command + ["--db", db])
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(!direct.stdout.isEmpty)
            #expect(stored.stdout == direct.stdout, "\(command)")
            #expect(stored.stderr.contains("0 inputs, 0 tokens: 0 verified, 0 rejected"))
            #expect(stored.stderr.contains("4 chains, 5 transactions"))
        }
        // One account, found through the store's indexes.
        let one = try VouchBinary.run(["entitlements", "--db", db, "--account", L.account, "--at", Self.at, "--json"])
        let direct = try VouchBinary.run([
            "entitlements", "--root", L.root, "--account", L.account, "--at", Self.at, "--json", tokens,
        ])
        #expect(one.stdout == direct.stdout)
        #expect(Self.lines(one.stdout).count == 2)  // Production and Sandbox
        // Read through a memory map: the same answer; a size that is not a number of MiB is refused.
        let mapped = try VouchBinary.run([
            "entitlements", "--db", db, "--memory-map", "64", "--account", L.account, "--at", Self.at, "--json",
        ])
        #expect(mapped.status == 0, "\(mapped.stderr)")
        #expect(mapped.stdout == one.stdout)
        let wrong = try VouchBinary.run(["entitlements", "--db", db, "--memory-map", "-1", "--account", L.account])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("--memory-map takes a whole number of MiB from 0 to 1048576, not '-1'"))

        // The same input again changes nothing.
        let export = try VouchBinary.run(["ledger", "export", "--db", db])
        let again = try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, tokens])
        #expect(again.status == 0)
        #expect(again.stderr.contains("stored 0 new and 0 changed transactions, 0 renewal infos"))
        #expect(try VouchBinary.run(["ledger", "export", "--db", db]).stdout == export.stdout)
        #expect(Self.lines(export.stdout).count == 5 + 1)  // five transactions, one renewal info

        let stats = try VouchBinary.object(try VouchBinary.run(["ledger", "stats", "--db", db, "--json"]).stdout)
        #expect(stats["transactions"] as? Int == 5)
        #expect(stats["chains"] as? Int == 4)
        #expect(stats["accounts"] as? Int == 4)
        #expect(stats["renewalInfos"] as? Int == 1)
        #expect(stats["schemaVersion"] as? Int == LedgerStore.schemaVersion)
        // Every notification was read twice; the store counts each delivery once.
        #expect((stats["notifications"] as? Int ?? 0) > 0)
        #expect(stats["duplicates"] as? Int == 0)
        #expect(stats["retries"] as? Int == 0)
        #expect(stats["lastSigned"] as? String == "2026-02-12T00:00:00.000Z")
        let text = try VouchBinary.run(["ledger", "stats", "--db", db])
        #expect(text.stdout.contains("accounts 4, chains 4, transactions 5, renewal infos 1"))
    }

    /// `ledger stats --json` of a store, less its path and size.
    static func counts(_ db: String) throws -> NSDictionary {
        let stats = try VouchBinary.run(["ledger", "stats", "--db", db, "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        var object = try VouchBinary.object(stats.stdout)
        object["path"] = nil
        object["bytes"] = nil
        return NSDictionary(dictionary: object)
    }

    @Test func ledgerStatsAfterARerunOrARepeatEqualThoseOfAStoreFedOnce() throws {
        let first = try L.file(Array(L.tokens[..<(L.tokens.count / 2)]), name: "rerun-first.jsonl")
        let all = try L.file(L.tokens, name: "rerun-all.jsonl")
        func add(_ db: String, _ input: String) throws {
            let added = try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, input])
            #expect(added.status == 0, "\(added.stderr)")
        }
        let once = Self.database("stats-once.sqlite")
        try add(once, all)
        let expected = try Self.counts(once)
        #expect((expected["statements"] as? Int ?? 0) > 0 && (expected["notifications"] as? Int ?? 0) > 0)
        // A run that stored part of the input before it was killed, then the whole input again.
        let rerun = Self.database("stats-rerun.sqlite")
        try add(rerun, first)
        try add(rerun, all)
        #expect(try Self.counts(rerun) == expected)
        let twice = Self.database("stats-twice.sqlite")
        try add(twice, all)
        try add(twice, all)
        #expect(try Self.counts(twice) == expected)
    }

    @Test func theStoreAndMoreInputsAnswerAsAllOfThemTogether() throws {
        let half = L.tokens.count / 2
        let first = try L.file(Array(L.tokens[..<half]), name: "first-half.jsonl")
        let second = try L.file(Array(L.tokens[half...]), name: "second-half.jsonl")
        let all = try L.file(L.tokens, name: "both-halves.jsonl")
        let db = Self.database("halves.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, first]).status == 0)
        for command in [["entitlements", "--at", Self.at, "--json"], ["refunds", "--json"]] {
            let together = try VouchBinary.run(command + ["--root", L.root, all])
            let stored = try VouchBinary.run(command + ["--db", db, "--root", L.root, second])
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(stored.stdout == together.stdout)
            #expect(stored.stderr.contains("\(L.tokens.count - half) tokens"))
        }
        // Standard input is read only when named.
        let fromStandardInput = try VouchBinary.run(
            ["entitlements", "--at", Self.at, "--json", "--db", db, "--root", L.root, "-"],
            input: Array(L.tokens[half...].map { $0 + "\n" }.joined().utf8))
        #expect(
            fromStandardInput.stdout
                == (try VouchBinary.run(["entitlements", "--at", Self.at, "--json", "--root", L.root, all])).stdout)
    }

    @Test func aReceiptsPurchasesCountForEntitlements() throws {
        let validity = L.validity
        let authority = try MintReceiptAuthority.generate(.init(validity: validity))
        let root = L.directory.appendingPathComponent("receipt-root.der")
        try Data(try authority.anchorCertificate()).write(to: root)
        var content = MintReceiptContent(receiptCreationDate: Date(timeIntervalSince1970: 1_768_000_000))
        var purchase = MintInAppPurchase(
            productId: "com.example.pro.lifetime", transactionId: "2000000000009000",
            purchaseDate: Date(timeIntervalSince1970: 1_767_500_000))
        purchase.originalTransactionId = "2000000000009000"
        content.inApp = [purchase]
        let receipt = try MintReceiptSigner(authority: authority).sign(content)
        let line = try L.file([String(decoding: Base64.encodeStandard(receipt), as: UTF8.self)], name: "receipt.b64l")
        let result = try VouchBinary.run([
            "entitlements", "--receipt-root", root.path, "--at", Self.at, "--json", line,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let record = try VouchBinary.object(String(result.stdout.dropLast()))
        #expect(record["environment"] as? String == "Sandbox")
        #expect(record["originalTransactionIds"] as? [String] == ["2000000000009000"])
        let entitlement = try #require((record["entitlements"] as? [[String: Any]])?.first)
        #expect(entitlement["productId"] as? String == "com.example.pro.lifetime")
        #expect(entitlement["state"] as? String == "active")
        // Into a store, and from it.
        let db = Self.database("receipt.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--receipt-root", root.path, line]).status == 0)
        #expect(
            try VouchBinary.run(["entitlements", "--db", db, "--at", Self.at, "--json"]).stdout == result.stdout)
        // Refused by a receipt anchor that did not sign it, and then never used.
        let refused = try VouchBinary.run(["entitlements", "--at", Self.at, "--json", line])
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("receipt.b64l:1: rejected, not used: untrusted_chain"))
    }

    @Test func everyExportRecordFollowsTheSchemaAndItsMemberOrder() throws {
        let schemaText = try Data(
            contentsOf: VouchBinary.packageRoot.appendingPathComponent("Schemas/ledger-export.schema.json"))
        let schema = JSONValue.object(try StrictJSON.parseObject(schemaText))
        let branches = try #require(schema.objectValue?["oneOf"]?.arrayValue)
        // A store holding every kind of record: a caller's account claim too.
        let db = Self.database("export.sqlite")
        let tokens = try L.file(L.tokens, name: "export-tokens.jsonl")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, tokens]).status == 0)
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try L.authority.anchorCertificate()]
        var history = MintHistory(firstTransactionId: 2_000_000_000_007_000)
        history.purchase("com.example.pro.lifetime", type: .nonConsumable, at: L.time(4), price: 29_990, notify: false)
        do {
            let store = try LedgerStore(path: db)
            try store.add(
                try Verifier(configuration: configuration).verify(try history.tokens(signer: L.signer)[0]),
                account: UUID(uuidString: L.account)!)
        }
        let export = try VouchBinary.run(["ledger", "export", "--db", db])
        #expect(export.status == 0, "\(export.stderr)")
        var kinds = Set<String>()
        for line in Self.lines(export.stdout) {
            let value = JSONValue.object(try StrictJSON.parseObject(Array(line.utf8)))
            let problems = RecordSchemaTests.validate(value, against: schema, at: "record")
            #expect(problems.isEmpty, "\(problems) in \(line)")
            let kind = try #require(value.objectValue?["kind"]?.stringValue)
            kinds.insert(kind)
            let branch = try #require(
                branches.first {
                    $0.objectValue?["properties"]?.objectValue?["kind"]?.objectValue?["const"] == .string(kind)
                })
            let order = (branch.objectValue?["x-member-order"]?.arrayValue ?? []).compactMap(\.stringValue)
            #expect(value.objectValue?.members.map(\.name) == order, "members out of order: \(line)")
        }
        #expect(kinds == ["transaction", "renewalInfo", "accountClaim"])
        #expect(export.stdout.contains(#""revocationType":"REFUND_PRORATED","revocationPercentage":33333"#))
        // A record that breaks the schema is caught.
        let broken = JSONValue.object(JSONObject([.init("kind", "transaction"), .init("channel", "stripe")]))
        #expect(!RecordSchemaTests.validate(broken, against: schema, at: "record").isEmpty)
    }

    /// `vouch ledger add` closes the store before it returns: its log is checkpointed into the
    /// file and removed, so the file alone (copied, backed up) holds everything stored, as the
    /// damaged-file cases below rely on.
    @Test func ledgerAddLeavesEverythingInTheFileItself() throws {
        let tokens = try L.file(L.tokens, name: "closed-tokens.jsonl")
        let db = Self.database("closed.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, tokens]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: db + "-wal"))
        let copy = Self.database("closed-copy.sqlite")
        try FileManager.default.copyItem(atPath: db, toPath: copy)
        let stats = try VouchBinary.object(try VouchBinary.run(["ledger", "stats", "--db", copy, "--json"]).stdout)
        #expect(stats["transactions"] as? Int == 5)
    }

    @Test func aFileThatIsNotAStoreOrCannotBeUsedExitsWithItsStatus() throws {
        let notes = L.directory.appendingPathComponent("notes.txt").path
        try Data("not a store\n".utf8).write(to: URL(fileURLWithPath: notes))
        let missing = L.directory.appendingPathComponent("missing.sqlite").path
        let tokens = try L.file(L.tokens, name: "status-tokens.jsonl")
        let whole = Self.database("whole.sqlite")
        #expect(try VouchBinary.run(["ledger", "add", "--db", whole, "--root", L.root, tokens]).status == 0)
        let cut = Self.database("cut.sqlite")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let unwritable = L.directory.appendingPathComponent("no-such-directory/store.sqlite").path
        for (arguments, status, message) in [
            (["ledger", "stats", "--db", notes], 65, "is not a Vouch store"),
            (["ledger", "export", "--db", notes], 65, "is not a Vouch store"),
            (["ledger", "add", "--db", notes, tokens], 65, "is not a Vouch store"),
            (["entitlements", "--db", notes], 65, "is not a Vouch store"),
            (["refunds", "--db", notes], 65, "is not a Vouch store"),
            (["ledger", "stats", "--db", missing], 66, "there is no such file"),
            (["entitlements", "--db", missing], 66, "there is no such file"),
            (["ledger", "export", "--db", cut], 65, "is damaged"),
            (["entitlements", "--db", cut], 65, "is damaged"),
            (["refunds", "--db", cut], 65, "is damaged"),
            (["ledger", "add", "--db", unwritable, tokens], 74, "cannot write"),
            (["ledger", "stats"], 64, "needs --db FILE"),
        ] as [([String], Int32, String)] {
            let result = try VouchBinary.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "not a store\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A reader that may not write to the store's folder: with the shared-memory file a writer
    /// left, it answers with the changes the write-ahead log holds; without it, it refuses (66)
    /// rather than answer without them. A file made but never written is a store not made yet.
    @Test func aReaderThatCannotReadTheLogRefusesRatherThanAnswerWithoutIt() throws {
        // Root may write anywhere: the reader runs as nobody; another user makes the folder
        // read-only for itself.
        let launcher = geteuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
        if !launcher.isEmpty {
            let probe = try VouchBinary.run(["--version"], launcher: launcher)
            try #require(probe.status == 0, "the binary cannot be run as nobody: \(probe.stderr)")
        }
        let directory = L.directory.appendingPathComponent("read-only-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        defer {
            chmod(directory.path, 0o755)
            try? FileManager.default.removeItem(at: directory)
        }
        let db = directory.appendingPathComponent("store.sqlite").path
        let tokens = try L.file(L.tokens, name: "read-only-tokens.jsonl")
        #expect(try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root, tokens]).status == 0)
        let before = try VouchBinary.object(try VouchBinary.run(["ledger", "stats", "--db", db, "--json"]).stdout)
        let transactions = try #require(before["transactions"] as? Int)
        // A writer that committed a change and was killed before the log reached the file.
        let python = """
            import os, sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute("PRAGMA wal_autocheckpoint = 0")
            k = "environment, original_transaction_id, ownership, transaction_id"
            c.execute(f"DELETE FROM app_store_transaction WHERE ({k}) = (SELECT {k} FROM app_store_transaction ORDER BY {k} LIMIT 1)")
            os._exit(0)
            """
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["python3", "-c", python, db]
        try writer.run()
        writer.waitUntilExit()
        try #require(writer.terminationStatus == 0)
        for file in [db, db + "-wal", db + "-shm"] { chmod(file, 0o644) }
        #expect(((try? FileManager.default.attributesOfItem(atPath: db + "-wal"))?[.size] as? Int ?? 0) > 0)
        if launcher.isEmpty { chmod(directory.path, 0o555) }

        let seen = try VouchBinary.run(["ledger", "stats", "--db", db, "--json"], launcher: launcher)
        #expect(seen.status == 0, "\(seen.stderr)")
        #expect(try VouchBinary.object(seen.stdout)["transactions"] as? Int == transactions - 1)

        if launcher.isEmpty { chmod(directory.path, 0o755) }
        try FileManager.default.removeItem(atPath: db + "-shm")
        if launcher.isEmpty { chmod(directory.path, 0o555) }
        for command in [["ledger", "stats"], ["ledger", "export"], ["entitlements"], ["refunds"]] {
            let refused = try VouchBinary.run(command + ["--db", db], launcher: launcher)
            #expect(refused.status == 66, "\(command): \(refused.stderr)")
            #expect(refused.stderr.contains("its write-ahead log \(db)-wal holds changes"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
        }

        if launcher.isEmpty { chmod(directory.path, 0o755) }
        let empty = directory.appendingPathComponent("empty.sqlite").path
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        for command in [["ledger", "stats"], ["entitlements"]] {
            let notMade = try VouchBinary.run(command + ["--db", empty])
            #expect(notMade.status == 66, "\(command): \(notMade.stderr)")
            #expect(notMade.stderr.contains("no store has been made in it yet"), "\(notMade.stderr)")
        }
    }

    /// `vouch ledger add` killed (SIGKILL) after its first batch is stored: the store holds
    /// exactly the batches stored before (what the first tokens of its inputs give), and running
    /// it again completes it.
    @Test func aKilledAddKeepsTheInputsStoredBeforeAndARerunCompletesIt() throws {
        let generator = MintHistoryGenerator(seed: 29, date: Date(timeIntervalSince1970: 1_780_272_000))
        let files = 8
        let accountsPerFile = 60
        var tokens: [[String]] = []
        for file in 0..<files {
            tokens.append(
                try (file * accountsPerFile..<(file + 1) * accountsPerFile).flatMap {
                    try generator.history($0).tokens(signer: L.signer)
                })
        }
        let paths = try (0..<files).map { try L.file(tokens[$0], name: "killed-\($0).jsonl") }
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try L.authority.anchorCertificate()]
        let verifier = try Verifier(configuration: configuration)
        let instant = Timestamp(milliseconds: 1_777_000_000_000)
        func answers(_ ledger: EntitlementLedger) -> [String] {
            ledger.entitlements(at: instant).map { JSONWriter.string($0.json(at: instant, includeTier: false)) }
                + ledger.revocations().map { JSONWriter.string($0.json) }
        }
        let verified = try tokens.joined().map { try verifier.verify($0) }
        var everything = EntitlementLedger()
        for payload in verified { everything.add(payload) }

        let db = Self.database("killed.sqlite")
        let process = Process()
        process.executableURL = VouchBinary.url
        process.arguments = ["ledger", "add", "--db", db, "--jobs", "1", "--root", L.root] + paths
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var killed = false
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning, Date() < deadline {
            if let store = try? LedgerStore(path: db, access: .readOnly), let held = try? store.statistics(),
                held.transactions > 0
            {
                kill(process.processIdentifier, SIGKILL)
                killed = true
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        try #require(killed, "vouch ledger add ended before it could be stopped")
        #expect(process.terminationReason == .uncaughtSignal)

        // Batches are stored whole and in order (one job verifies in input order): the store
        // holds what the first k tokens give, for some k short of all of them.
        let store = try LedgerStore(path: db, access: .readOnly)
        let held = answers(try store.ledger())
        let heldTransactions = try store.statistics().transactions
        var prefix = EntitlementLedger()
        var stored: Int?
        for (index, payload) in verified.enumerated() {
            prefix.add(payload)
            if prefix.transactionCount == heldTransactions, answers(prefix) == held {
                stored = index + 1
                break
            }
        }
        let tokensStored = try #require(stored, "the store holds no prefix of the inputs")
        #expect(tokensStored < verified.count, "\(tokensStored) of \(verified.count) tokens stored")

        let rerun = try VouchBinary.run(["ledger", "add", "--db", db, "--root", L.root] + paths)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(answers(try LedgerStore(path: db, access: .readOnly).ledger()) == answers(everything))
    }
}
