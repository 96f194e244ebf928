import Foundation
import Testing

/// Minted data that combines, end to end on the built binary: `mint history` and `mint stripe`
/// of two seeds fed to one ledger answer as each alone, `vouch mint story` writes what
/// `vouch entitlements` and `vouch refunds` read, and a missing authority is named.
@Suite(.serialized) struct MintStoryCommandTests {
    static let date = "2026-06-01T00:00:00Z"

    /// A scratch directory with a CA valid from 2020 to 2040 (`ca/`) and a Stripe secret
    /// (`secrets`).
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-mint-story-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let ca = try! VouchBinary.run([
            "mint", "ca", "--out", url.appendingPathComponent("ca").path, "--not-before", "2020-01-01",
            "--not-after", "2040-01-01",
        ])
        precondition(ca.status == 0, ca.stderr)
        try! Data("whsec_mint_story_test\n".utf8).write(to: url.appendingPathComponent("secrets"))
        return url
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    static var ca: String { path("ca") }
    static var root: String { path("ca/root.der") }

    static func run(_ arguments: [String]) throws -> VouchBinary.Result {
        let result = try VouchBinary.run(arguments)
        #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
        return result
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    static func records(_ text: String) throws -> [[String: Any]] {
        try lines(text).map { try VouchBinary.object($0) }
    }

    @Test func historiesOfTwoSeedsInOneLedgerAnswerAsEachAlone() throws {
        for seed in ["7", "11"] {
            _ = try Self.run([
                "mint", "history", "--ca", Self.ca, "--count", "200", "--seed", seed, "--date", Self.date, "--out",
                Self.path("history-\(seed).jsonl"),
            ])
        }
        let database = Self.path("histories.db")
        _ = try Self.run(["ledger", "add", "--db", database, "--root", Self.root, Self.path("history-7.jsonl")])
        let second = try Self.run([
            "ledger", "add", "--db", database, "--root", Self.root, "--summary-json", "-",
            Self.path("history-11.jsonl"),
        ])
        let stored = try #require(try VouchBinary.object(second.stdout)["stored"] as? [String: Any])
        #expect((stored["newTransactions"] as? Int ?? 0) > 500)
        #expect(stored["changedTransactions"] as? Int == 0)
        #expect(stored["retriedNotifications"] as? Int == 0)
        #expect(stored["duplicateNotifications"] as? Int == 0)

        func answers(_ arguments: [String]) throws -> [String] {
            try Self.run(["entitlements", "--root", Self.root, "--at", Self.date, "--json"] + arguments).stdout
                .split(separator: "\n").map(String.init)
        }
        let seven = try answers([Self.path("history-7.jsonl")])
        let eleven = try answers([Self.path("history-11.jsonl")])
        #expect(seven.count >= 200 && eleven.count >= 200)
        let alone = (seven + eleven).sorted()
        #expect(try answers(["--db", database]).sorted() == alone)
        #expect(try answers([Self.path("history-7.jsonl"), Self.path("history-11.jsonl")]).sorted() == alone)
    }

    @Test func stripeSubscriptionsOfTwoSeedsInOneRunAnswerAsEachAlone() throws {
        for seed in ["7", "11"] {
            _ = try Self.run([
                "mint", "stripe", "--stripe-secret-file", Self.path("secrets"), "--count", "40", "--seed", seed,
                "--date", Self.date, "--out", Self.path("stripe-\(seed).jsonl"),
            ])
        }
        func answers(_ files: [String]) throws -> [String] {
            try Self.run(
                ["entitlements", "--stripe-secret-file", Self.path("secrets"), "--at", Self.date, "--json"]
                    + files.map(Self.path)
            ).stdout.split(separator: "\n").map(String.init)
        }
        let seven = try answers(["stripe-7.jsonl"])
        let eleven = try answers(["stripe-11.jsonl"])
        #expect(seven.count == 40 && eleven.count == 40)
        #expect(try answers(["stripe-7.jsonl", "stripe-11.jsonl"]).sorted() == (seven + eleven).sorted())
        // With the defaults, most subscriptions are current at the date.
        let current = try Self.records(seven.joined(separator: "\n")).filter {
            !(($0["entitlements"] as? [Any]) ?? []).isEmpty
        }
        #expect(current.count >= 25, "\(current.count) of 40 current")
    }

    @Test func aMintedStoryGivesEachAccountItsStorysTierAndBothChannelsRefunds() throws {
        let out = Self.path("story")
        let minted = try Self.run([
            "mint", "story", "--ca", Self.ca, "--stripe-secret-file", Self.path("secrets"), "--count", "10", "--seed",
            "4", "--date", Self.date, "--out", out,
        ])
        let names = ["app-store.jsonl", "stripe.jsonl", "arrivals.jsonl", "accounts.jsonl", "tiers.json"]
        #expect(Self.lines(minted.stdout) == names.map { out + "/" + $0 })
        func text(_ name: String) throws -> String { try String(contentsOfFile: out + "/" + name, encoding: .utf8) }
        let appStore = Self.lines(try text("app-store.jsonl"))
        let stripe = Self.lines(try text("stripe.jsonl"))
        #expect(appStore.contains { $0.hasPrefix("{\"signedPayload\":\"") })
        #expect(appStore.contains { $0.hasPrefix("eyJ") })

        // Every delivery arrives once, in order, before the date.
        let arrivals = try Self.records(try text("arrivals.jsonl"))
        #expect(arrivals.count == appStore.count + stripe.count)
        let instants = arrivals.compactMap { $0["at"] as? Int64 ?? ($0["at"] as? Int).map(Int64.init) }
        #expect(instants.count == arrivals.count && instants == instants.sorted())
        #expect(instants.last.map { $0 < 1_780_272_000_000 } == true)
        for file in ["app-store.jsonl", "stripe.jsonl"] {
            let numbers = arrivals.filter { $0["file"] as? String == file }.compactMap { $0["line"] as? Int }
            #expect(numbers == Array(1...(file == "stripe.jsonl" ? stripe.count : appStore.count)))
        }
        // The Stripe file is what `vouch stripe verify` reads.
        let verified = try Self.run([
            "stripe", "verify", "--stripe-secret-file", Self.path("secrets"), out + "/stripe.jsonl",
        ])
        #expect(Self.lines(verified.stdout).count == stripe.count)

        let entitlements = try Self.records(
            try Self.run([
                "entitlements", "--root", Self.root, "--stripe-secret-file", Self.path("secrets"), "--tiers",
                out + "/tiers.json", "--at", Self.date, "--json", out + "/app-store.jsonl", out + "/stripe.jsonl",
            ]).stdout)
        let expected: [String: (tier: String, source: String)] = [
            "trial": ("plus", "stripe"), "payment-retried": ("pro", "stripe"), "upgrade": ("pro", "app_store"),
            "refunds": ("plus", "stripe"), "no-token": ("plus", "app_store"),
        ]
        let accounts = try Self.records(try text("accounts.jsonl"))
        #expect(accounts.count == 10)
        #expect(Set(accounts.compactMap { $0["story"] as? String }) == Set(expected.keys))
        for account in accounts {
            let story = try #require(account["story"] as? String)
            let originals = account["originalTransactionIds"] as? [String] ?? []
            let record = entitlements.first { record in
                if let token = account["appAccountToken"] as? String {
                    return record["appAccountToken"] as? String == token
                }
                return (record["originalTransactionIds"] as? [String]) == originals
            }
            let tier = try #require(record?["tier"] as? [String: Any], "\(story): \(String(describing: record))")
            #expect(tier["name"] as? String == expected[story]?.tier, "\(story)")
            #expect(tier["source"] as? String == expected[story]?.source, "\(story)")
            #expect(record?["environment"] as? String == "Sandbox")
        }

        let refunds = try Self.records(
            try Self.run([
                "refunds", "--root", Self.root, "--stripe-secret-file", Self.path("secrets"), "--json",
                out + "/app-store.jsonl", out + "/stripe.jsonl",
            ]).stdout)
        let refunded = accounts.filter { $0["story"] as? String == "refunds" }.compactMap { $0["account"] as? String }
        #expect(refunded.count == 2)
        for account in refunded {
            let sources = refunds.filter { $0["appAccountToken"] as? String == account }.compactMap {
                $0["source"] as? String
            }
            #expect(sources.sorted() == ["app_store", "stripe"], "\(account): \(refunds)")
        }
    }

    @Test func aMissingAuthorityIsNamedWithTheOptionAndTheReason() throws {
        let missing = Self.path("no-such-ca")
        for kind in [["transaction"], ["history"], ["receipt"]] {
            let result = try VouchBinary.run(["mint"] + kind + ["--ca", missing])
            #expect(result.status == 66, "\(kind): \(result.stderr)")
            #expect(result.stderr.contains("--ca \(missing): "), "\(result.stderr)")
            #expect(
                result.stderr.contains("does not exist") || result.stderr.contains("No such file or directory"),
                "\(result.stderr)")
            #expect(!result.stderr.contains("could not be completed"))
        }
        let story = try VouchBinary.run([
            "mint", "story", "--ca", missing, "--stripe-secret-file", Self.path("secrets"), "--out", Self.path("x"),
        ])
        #expect(story.status == 66 && story.stderr.contains("--ca \(missing): \(missing) does not exist"))
    }
}
