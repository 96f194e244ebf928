import Foundation
import Testing
import Vouch
import VouchMint

/// `vouch entitlements`, `vouch refunds` and `vouch mint history`, end to end on the built binary.
@Suite(.serialized) struct LedgerCommandTests {
    static let validity = MintValidity(
        notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
    static let authority: MintAuthority = try! MintAuthority.generate(MintAuthorityOptions(validity: validity))
    static let signer: MintSigner = try! MintSigner(authority: authority)

    /// A scratch directory holding the test CA (`ca/root.der`).
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-ledger-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        _ = try! authority.write(to: url.appendingPathComponent("ca", isDirectory: true))
        return url
    }()
    static var root: String { directory.appendingPathComponent("ca/root.der").path }

    /// 2026-01-01T00:00:00Z, and days after it.
    static func day(_ n: Int64) -> Int64 { 1_767_225_600_000 + n * 86_400_000 }
    /// ``day(_:)`` as a `Timestamp`, as `MintHistory` takes it.
    static func time(_ n: Int64) -> Timestamp { Timestamp(milliseconds: day(n)) }

    static let account = "7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b"

    /// Two accounts: a subscriber who upgrades then falls into a grace period, and a buyer of
    /// the lifetime product refunded in part; a Sandbox purchase on the first account's token.
    static let tokens: [String] = {
        var first = MintHistory(appAccountToken: account)
        let plus = first.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: time(0), price: 4_990, expires: time(31))
        let pro = first.upgrade(plus, to: "com.example.pro.monthly", at: time(10), until: time(41), price: 9_990)
        first.failRenewal(pro, graceUntil: time(57))
        var second = MintHistory(firstTransactionId: 2_000_000_000_001_000)
        let lifetime = second.purchase("com.example.pro.lifetime", type: .nonConsumable, at: time(2), price: 29_990)
        second.refund(lifetime, at: time(33), reason: .refundedDueToIssue, type: .refundProrated, percentage: 33_333)
        second.purchase("com.example.coins.100", type: .consumable, at: time(3), price: 999)
        var sandbox = MintHistory(
            environment: .sandbox, appAccountToken: account, firstTransactionId: 2_000_000_000_002_000)
        let trial = sandbox.purchase("com.example.pro.trial", type: .nonConsumable, at: time(40), price: 0)
        sandbox.refund(trial, at: time(41))
        sandbox.reverseRefund(trial, at: time(42))
        return try! [first, second, sandbox].flatMap { try $0.tokens(signer: signer) }
    }()

    static let tiers = """
        {"tiers":[{"name":"plus","rank":10,"products":["com.example.plus.monthly"]},
                  {"name":"pro","rank":20,"products":["com.example.pro.monthly","com.example.pro.lifetime","com.example.pro.trial"]}],
         "products":{"com.example.pro.trial":{"trialDays":14}}}
        """

    static func file(_ lines: [String], name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: url)
        return url.path
    }

    static func gzip(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-kf", path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return path + ".gz"
    }

    static func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try VouchBinary.object(String($0)) }
    }

    @Test func entitlementsPrintsOneRecordPerAccountInAStableOrder() throws {
        let input = try Self.file(Self.tokens, name: "all.jsonl")
        let at = "2026-02-15T00:00:00Z"  // day 45: in the grace period
        let result = try VouchBinary.run(["entitlements", "--root", Self.root, "--at", at, "--json", input])
        #expect(result.status == 0, "\(result.stderr)")
        let records = try Self.lines(result.stdout)
        // Without a token, each chain is an account: the lifetime purchase and the coins apart.
        #expect(records.map { $0["environment"] as? String } == ["Production", "Production", "Production", "Sandbox"])
        #expect(records.map { $0["appAccountToken"] as? String } == [Self.account, nil, nil, Self.account])
        #expect(
            records.map { $0["originalTransactionIds"] as? [String] }
                == [["2000000000000000"], ["2000000000001000"], ["2000000000001001"], ["2000000000002000"]])
        #expect(records[0]["originalTransactionIds"] as? [String] == ["2000000000000000"])
        let first = try #require((records[0]["entitlements"] as? [[String: Any]])?.first)
        #expect(first["productId"] as? String == "com.example.pro.monthly")
        #expect(first["state"] as? String == "grace_period")
        #expect(first["expiresDate"] as? Int64 == Self.day(57))
        #expect(first["expires"] as? String == "2026-02-27T00:00:00.000Z")
        #expect(first["ownership"] as? String == "PURCHASED")
        #expect(records[0]["tier"] == nil)
        // The lifetime product was refunded on day 33; coins are never entitlements.
        #expect((records[1]["entitlements"] as? [Any])?.isEmpty == true)
        #expect((records[2]["entitlements"] as? [Any])?.isEmpty == true)
        #expect(result.stderr.contains("vouch entitlements: 1 input, 10 tokens: 10 verified, 0 rejected"))
        #expect(result.stderr.contains("4 chains, 5 transactions"))
    }

    @Test func theSameTokensInAnyOrderAndAnySplitGiveTheSameBytes() throws {
        let sorted = try VouchBinary.run([
            "entitlements", "--root", Self.root, "--at", "2026-02-15", "--json", "--tiers",
            try Self.file([Self.tiers], name: "tiers.json"), try Self.file(Self.tokens, name: "sorted.jsonl"),
        ])
        #expect(sorted.status == 0)
        var shuffled = Self.tokens + Self.tokens.prefix(5)
        shuffled.reverse()
        shuffled.swapAt(0, 7)
        let partA = try Self.gzip(try Self.file(Array(shuffled[0..<6]), name: "a.jsonl"))
        let partB = try Self.file(Array(shuffled[6..<14]), name: "b.jsonl")
        // The last part as JSON bodies, the way a webhook receives them.
        let bodies = shuffled[14...].map { "{\"signedPayload\":\"\($0)\"}" }
        let split = try VouchBinary.run(
            [
                "entitlements", "--root", Self.root, "--at", "2026-02-15", "--json", "--tiers",
                try Self.file([Self.tiers], name: "tiers.json"),
                partB, "-", partA,
            ],
            input: Array(bodies.map { $0 + "\n" }.joined().utf8))
        #expect(split.status == 0, "\(split.stderr)")
        #expect(split.stdout == sorted.stdout)
        #expect(
            sorted.stdout.contains(
                #""tier":{"name":"pro","rank":20,"productId":"com.example.pro.monthly","state":"grace_period""#))

        let refundsSorted = try VouchBinary.run([
            "refunds", "--root", Self.root, "--json", try Self.file(Self.tokens, name: "sorted.jsonl"),
        ])
        let refundsSplit = try VouchBinary.run(
            ["refunds", "--root", Self.root, "--json", partA, partB, "-"],
            input: Array(bodies.map { $0 + "\n" }.joined().utf8))
        #expect(refundsSplit.stdout == refundsSorted.stdout)
        #expect(refundsSplit.stdout.split(separator: "\n").count == 2)
    }

    /// The same tokens as App Store Server API response pages, pretty-printed and one after
    /// the other as a history export holds them: the same answers as from lines.
    @Test func entitlementsAndRefundsReadAppStoreServerAPIResponses() throws {
        func page(_ tokens: ArraySlice<String>, hasMore: Bool) -> String {
            "{\n  \"revision\": \"1\",\n  \"hasMore\": \(hasMore),\n  \"signedTransactions\": [\n"
                + tokens.map { "    \"\($0)\"" }.joined(separator: ",\n") + "\n  ]\n}"
        }
        let half = Self.tokens.count / 2
        let pages = try Self.file(
            [page(Self.tokens[..<half], hasMore: true), page(Self.tokens[half...], hasMore: false)], name: "pages.json")
        let lines = try Self.file(Self.tokens, name: "lines.jsonl")
        for command in [["entitlements", "--at", "2026-02-15", "--json"], ["refunds", "--json"]] {
            let fromLines = try VouchBinary.run(command + ["--root", Self.root, lines])
            let fromPages = try VouchBinary.run(command + ["--root", Self.root, pages])
            #expect(fromPages.status == 0, "\(fromPages.stderr)")
            #expect(!fromPages.stdout.isEmpty)
            #expect(fromPages.stdout == fromLines.stdout)
            #expect(fromPages.stderr.contains("\(Self.tokens.count) tokens: \(Self.tokens.count) verified, 0 rejected"))
        }
        // A response naming another app: its tokens are refused, as `vouch batch` refuses them.
        let other = try Self.file(
            ["{\"bundleId\":\"com.example.other\",\"signedTransactions\":[\"\(Self.tokens[0])\"]}"], name: "other.json")
        let refused = try VouchBinary.run(["refunds", "--root", Self.root, other])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("other.json:1 signedTransactions[0]: rejected, not used: wrong_bundle_id"))
    }

    @Test func rejectedTokensAreReportedCountedAndNeverUsed() throws {
        // A refund signed by a foreign CA, which must not revoke anything.
        let foreign = try MintSigner(
            authority: try MintAuthority.generate(MintAuthorityOptions(validity: Self.validity)))
        // The same ids as the real first account's subscription.
        var forged = MintHistory(appAccountToken: Self.account)
        let plus = forged.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: Self.time(0), price: 4_990,
            expires: Self.time(31))
        forged.refund(plus, at: Self.time(5))
        let bad = try forged.tokens(signer: foreign)
        let summary = Self.directory.appendingPathComponent("summary.json").path
        let clean = try VouchBinary.run([
            "entitlements", "--root", Self.root, "--at", "2026-01-20", "--json",
            try Self.file(Self.tokens, name: "clean.jsonl"),
        ])
        let dirty = try VouchBinary.run([
            "entitlements", "--root", Self.root, "--at", "2026-01-20", "--json", "--summary-json", summary,
            try Self.file(bad + [""] + Self.tokens, name: "dirty.jsonl"),
        ])
        #expect(dirty.status == 1)
        #expect(dirty.stdout == clean.stdout)
        #expect(dirty.stdout.contains(#""productId":"com.example.pro.monthly","type":"Auto-Renewable Subscription""#))
        #expect(dirty.stderr.contains("dirty.jsonl:1: rejected, not used: untrusted_chain"))
        #expect(dirty.stderr.contains("dirty.jsonl:2: rejected, not used: untrusted_chain"))
        #expect(dirty.stderr.contains("dirty.jsonl:3: rejected, not used: empty_line"))
        #expect(dirty.stderr.contains("rejected by code: empty_line 1, untrusted_chain 2"))
        let json = try VouchBinary.object(try String(contentsOfFile: summary, encoding: .utf8))
        let input = try #require(json["input"] as? [String: Any])
        #expect(input["lines"] as? Int == 13)
        #expect(input["rejected"] as? Int == 3)
        #expect(input["errors"] as? [String: Int] == ["empty_line": 1, "untrusted_chain": 2])
        #expect(json["accounts"] as? Int == 4)
    }

    @Test func accountsCanBeChosenByTokenOrChain() throws {
        let input = try Self.file(Self.tokens, name: "all.jsonl")
        let result = try VouchBinary.run([
            "entitlements", "--root", Self.root, "--at", "2026-01-05", "--json",
            "--account", "2000000000001000", "--account", Self.account.uppercased(), "--account", "nobody", input,
        ])
        #expect(result.status == 0)
        let records = try Self.lines(result.stdout)
        #expect(records.map { $0["environment"] as? String } == ["Production", "Production", "Sandbox"])
        #expect(
            records.map { $0["originalTransactionIds"] as? [String] } == [
                ["2000000000000000"], ["2000000000001000"], ["2000000000002000"],
            ])
        #expect(result.stderr.contains("vouch entitlements: no account nobody in the input"))
    }

    @Test func refundsPrintsEachRevocationAndASummary() throws {
        let input = try Self.file(Self.tokens, name: "all.jsonl")
        let summary = Self.directory.appendingPathComponent("refunds.json").path
        let result = try VouchBinary.run(["refunds", "--root", Self.root, "--json", "--summary-json", summary, input])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                {"environment":"Production","appAccountToken":null,"originalTransactionId":"2000000000001000","transactionId":"2000000000001000",\
                "productId":"com.example.pro.lifetime","type":"Non-Consumable","ownership":"PURCHASED","kind":"refund","state":"revoked",\
                "revocationDate":\(Self.day(33)),"revoked":"2026-02-03T00:00:00.000Z","revocationReason":1,"revocationType":"REFUND_PRORATED",\
                "revocationPercentage":33333,"price":29990,"currency":"USD","refundedAmount":9996.5667,"reversedDate":null,\
                "source":"app_store"}
                {"environment":"Sandbox","appAccountToken":"\(Self.account)","originalTransactionId":"2000000000002000","transactionId":"2000000000002000",\
                "productId":"com.example.pro.trial","type":"Non-Consumable","ownership":"PURCHASED","kind":"refund","state":"reversed",\
                "revocationDate":\(Self.day(41)),"revoked":"2026-02-11T00:00:00.000Z","revocationReason":0,"revocationType":"REFUND_FULL",\
                "revocationPercentage":100000,"price":0,"currency":"USD","refundedAmount":0,"reversedDate":\(Self.day(42)),\
                "source":"app_store"}

                """)
        let json = try VouchBinary.object(try String(contentsOfFile: summary, encoding: .utf8))
        #expect(json["revocations"] as? Int == 1)
        #expect(json["refunds"] as? Int == 1)
        #expect(json["reversed"] as? Int == 1)
        #expect(
            JSONWriter.string(
                try StrictJSON.parse(Array(try String(contentsOfFile: summary, encoding: .utf8).utf8)).objectValue![
                    "byMonth"]!)
                == #"{"2026-02":{"count":1,"refunded":{"USD":9996.5667},"refundedAmounts":"#
                + #"{"USD":{"amount":"10.00","exact":"9.9965667","unit":"USD"}}}}"#)
        #expect(result.stderr.contains("1 revocation: 1 refund, 0 family revocations; 1 reversed"))

        let since = try VouchBinary.run(["refunds", "--root", Self.root, "--since", "2026-02-05", input])
        #expect(since.stdout.split(separator: "\n").count == 1)
        #expect(since.stdout.contains("reversed 2026-02-12T00:00:00.000Z"))
    }

    @Test(arguments: [
        (["entitlements", "--at", "yesterday"], "--at: \"yesterday\" is not 'now' or a date such as 2025-03-01"),
        (["entitlements", "--at", "signed"], "--at: \"signed\" is not 'now' or a date"),
        (["entitlements", "--chain-at", "soon"], "--chain-at: \"soon\" is not 'signed', 'now' or a date"),
        (["refunds", "--since", "now"], "--since: \"now\" is not a date such as"),
        (["refunds", "--at", "2026-01-01"], "unknown option --at"),
        (["entitlements", "--jobs", "0"], "--jobs must be a whole number"),
        (["entitlements", "--kind", "transaction"], "unknown option --kind"),
    ])
    func usageMistakesExitWith64(arguments: [String], message: String) throws {
        let result = try VouchBinary.run(arguments + ["--root", Self.root, "-"], input: [])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("Error: \(message)"), "\(result.stderr)")
        #expect(result.stderr.contains("Usage: vouch \(arguments[0])"))
    }

    @Test func aWrongTiersFileIsInvalidInputAndAMissingOneUnreadable() throws {
        let wrong = try Self.file([#"{"tiers":[{"name":"pro","rank":"top","products":[]}]}"#], name: "wrong.json")
        let result = try VouchBinary.run(["entitlements", "--root", Self.root, "--tiers", wrong, "-"], input: [])
        #expect(result.status == 65)
        #expect(result.stderr == "Error: --tiers \(wrong): tiers[0].rank must be an integer\n")
        let missing = try VouchBinary.run(
            ["entitlements", "--root", Self.root, "--tiers", "/nonexistent/tiers.json", "-"], input: [])
        #expect(missing.status == 66)
    }

    @Test func anUnreadableOrTruncatedInputPrintsNothingAndExits66() throws {
        let missing = try VouchBinary.run(["refunds", "--root", Self.root, "/nonexistent/dump.jsonl"])
        #expect(missing.status == 66)
        #expect(missing.stdout.isEmpty)
        let compressed = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try Self.gzip(try Self.file(Self.tokens, name: "cut.jsonl")))))
        let cut = try VouchBinary.run(
            ["entitlements", "--root", Self.root, "--json", "-"], input: Array(compressed.prefix(compressed.count / 2)))
        #expect(cut.status == 66)
        #expect(cut.stdout.isEmpty)
        #expect(cut.stderr.contains("the gzip stream is truncated"))
    }

    @Test func historiesOutsideTheSigningCertificatesValidityAreRefusedWithTheDatesThatWork() throws {
        let ca = Self.directory.appendingPathComponent("fresh-ca").path
        #expect(try VouchBinary.run(["mint", "ca", "--out", ca, "--not-before", "2026-05-01"]).status == 0)
        let out = Self.directory.appendingPathComponent("fresh.jwsl").path
        let refused = try VouchBinary.run([
            "mint", "history", "--ca", ca, "--date", "2026-06-01", "--out", out,
        ])
        #expect(refused.status == 65)
        #expect(refused.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: out))
        // The first date whose 121 days fit after the leaf's first second.
        #expect(refused.stderr.contains("pick --date from 2026-08-30T00:00:01Z"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--not-before 2026-01-31T00:00:00Z"), "\(refused.stderr)")
        let accepted = try VouchBinary.run([
            "mint", "history", "--ca", ca, "--date", "2026-08-30T00:00:01Z", "--count", "8", "--out", out,
        ])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let verified = try VouchBinary.run(["batch", "--root", "\(ca)/root.der", "--payload", "none", out])
        #expect(verified.status == 0, "\(verified.stdout)")
    }

    @Test func mintedHistoriesFeedTheLedgerTheSameEachTime() throws {
        let ca = Self.directory.appendingPathComponent("history-ca").path
        #expect(try VouchBinary.run(["mint", "ca", "--out", ca, "--not-before", "2025-01-01"]).status == 0)
        var outputs: [String] = []
        for run in 0..<2 {
            let out = Self.directory.appendingPathComponent("history-\(run).jwsl").path
            let mint = try VouchBinary.run([
                "mint", "history", "--ca", ca, "--count", "64", "--seed", "3", "--date", "2026-06-01", "--out", out,
            ])
            #expect(mint.status == 0, "\(mint.stderr)")
            let result = try VouchBinary.run([
                "entitlements", "--root", "\(ca)/root.der", "--at", "2026-06-01", "--json", out,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            outputs.append(result.stdout)
        }
        // Signatures differ between runs; the payloads, and so the answers, do not.
        #expect(outputs[0] == outputs[1])
        for state in ["active", "grace_period"] {
            #expect(outputs[0].contains("\"state\":\"\(state)\""), "no \(state)")
        }
        #expect(outputs[0].contains("\"ownership\":\"FAMILY_SHARED\"") == false)  // revoked before the end
        let refunds = try VouchBinary.run([
            "refunds", "--root", "\(ca)/root.der", "--json",
            Self.directory.appendingPathComponent("history-0.jwsl").path,
        ])
        for kind in [
            "\"state\":\"reversed\"", "\"kind\":\"family_revocation\"", "\"productId\":\"com.example.coins.100\"",
        ] {
            #expect(refunds.stdout.contains(kind), "no \(kind)")
        }
    }

    @Test func mintedTeamPlansFeedTheLedgerWithTheirSeats() throws {
        let ca = Self.directory.appendingPathComponent("team-ca").path
        #expect(try VouchBinary.run(["mint", "ca", "--out", ca, "--not-before", "2025-01-01"]).status == 0)
        let out = Self.directory.appendingPathComponent("team.jwsl").path
        let mint = try VouchBinary.run([
            "mint", "history", "--ca", ca, "--count", "3", "--story", "multiseat", "--date", "2026-06-01", "--out", out,
        ])
        #expect(mint.status == 0, "\(mint.stderr)")
        let result = try VouchBinary.run([
            "entitlements", "--root", "\(ca)/root.der", "--at", "2026-06-01", "--json", out,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        // Each of the three purchasers renews four seats; one member of each keeps a seat.
        #expect(lines.filter { $0.contains("\"ownership\":\"PURCHASED\"") }.count == 3)
        #expect(lines.filter { $0.contains("\"seats\":4,\"invitationManagement\":\"APPLE\"") }.count == 3)
        #expect(lines.filter { $0.contains("\"ownership\":\"ASSIGNED\"") }.count == 3)
        let refunds = try VouchBinary.run(["refunds", "--root", "\(ca)/root.der", "--json", out])
        #expect(refunds.status == 0, "\(refunds.stderr)")
        let seatRefunds = refunds.stdout.split(separator: "\n").filter { $0.contains("\"kind\":\"seat_refund\"") }
        #expect(seatRefunds.count == 3)
        #expect(seatRefunds.allSatisfy { $0.contains("\"revokedSeatQuantity\":2") })

        let unknown = try VouchBinary.run(["mint", "history", "--ca", ca, "--story", "teams", "--out", out])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("Error: --story must be one of renewing, upgrade,"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("multiseat, multiseat-claims; got 'teams'"), "\(unknown.stderr)")
    }
}
