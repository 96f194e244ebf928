import Foundation
import Testing
import Vouch
import VouchMint
import VouchTestSupport

/// `vouch entitlements`, `vouch refunds` and `vouch ledger add` reading Stripe deliveries beside
/// App Store data, as a user runs them on the two-channel story.
@Suite(.serialized) struct StripeLedgerCommandTests {
    typealias L = LedgerCommandTests
    static let secret = "whsec_cli_ledger"

    /// The story, minted for each test (a value kept in a static would outlive the test run,
    /// where LeakSanitizer counts what it holds as leaked).
    static func scenario() throws -> MintStory.TwoChannel {
        try MintStory.twoChannel(
            signer: L.signer, stripeSigner: try MintStripeSigner(secrets: [secret]),
            stripe: MintStripe(seed: 5, date: Date(timeIntervalSince1970: 0)))
    }

    static func files(_ scenario: MintStory.TwoChannel, through instant: Timestamp, name: String) throws -> (
        secrets: String, tiers: String, input: String
    ) {
        let secrets = try L.file([secret], name: "\(name)-secrets")
        let tiers = L.directory.appendingPathComponent("\(name)-tiers.json").path
        try Data(
            """
            {"tiers":[{"name":"plus","rank":1,"products":["\(scenario.webPlus.id)"]},
                      {"name":"pro","rank":2,"products":["\(scenario.appPro)"]}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: tiers))
        let input = try L.file(
            scenario.deliveries.filter { $0.instant <= instant }.map(\.line), name: "\(name).jsonl")
        return (secrets, tiers, input)
    }

    static func later(_ instant: Timestamp) -> Timestamp { Timestamp(milliseconds: instant.milliseconds + 5_000) }

    /// After the App Store's refund, the tier is Stripe's Plus, past due; the store answers the
    /// same bytes; `vouch refunds` lists the App Store refund.
    @Test func theTierAfterTheRefundIsStripesPlusPastDueFromInputsAndFromTheStore() throws {
        let scenario = try Self.scenario()
        let at = Self.later(scenario.moments.appRefund)
        let (secrets, tiers, input) = try Self.files(scenario, through: at, name: "refund")
        let options = ["--stripe-secret-file", secrets, "--root", L.root, "--tiers", tiers, "--at", at.iso8601]
        let result = try VouchBinary.run(["entitlements", "--json"] + options + [input])
        #expect(result.status == 0, "\(result.stderr)")
        let record = try VouchBinary.object(result.stdout)
        let tier = try #require(record["tier"] as? [String: Any])
        #expect(tier["name"] as? String == "plus")
        #expect(tier["source"] as? String == "stripe")
        #expect(tier["state"] as? String == "past_due")
        #expect(tier["transactionId"] as? String == scenario.webSubscription)
        #expect(record["appAccountToken"] as? String == scenario.story.account)

        let text = try VouchBinary.run(["entitlements"] + options + [input])
        #expect(text.stdout.contains("tier plus (rank 1) until "))
        #expect(text.stdout.contains("(stripe, past_due), stripe \(scenario.webSubscription)"))

        let db = L.directory.appendingPathComponent("stripe-\(UUID().uuidString).sqlite").path
        let added = try VouchBinary.run([
            "ledger", "add", "--db", db, "--stripe-secret-file", secrets, "--root", L.root, input,
        ])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stderr.contains("1 Stripe record"))
        let stored = try VouchBinary.run(["entitlements", "--db", db, "--tiers", tiers, "--at", at.iso8601, "--json"])
        #expect(stored.stdout == result.stdout)
        let again = try VouchBinary.run([
            "ledger", "add", "--db", db, "--stripe-secret-file", secrets, "--root", L.root, input,
        ])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("stored 0 new and 0 changed transactions"), "\(again.stderr)")
        #expect(!again.stderr.contains("Stripe records"), "\(again.stderr)")

        let refunds = try VouchBinary.run([
            "refunds", "--json", "--stripe-secret-file", secrets, "--root", L.root, input,
        ])
        #expect(refunds.status == 0)
        let refund = try VouchBinary.object(refunds.stdout)
        #expect(refund["source"] as? String == "app_store")
        #expect(refund["productId"] as? String == scenario.appPro)
    }

    /// Stripe deliveries without a secret are rejected and never used; a wrong secret too.
    @Test func deliveriesWithoutTheirSecretAreRejectedAndNotUsed() throws {
        let scenario = try Self.scenario()
        let at = Self.later(scenario.moments.webPlus)
        let (_, tiers, input) = try Self.files(scenario, through: at, name: "nosecret")
        let without = try VouchBinary.run(["entitlements", "--tiers", tiers, "--at", at.iso8601, "--json", input])
        #expect(without.status == 1)
        #expect(without.stdout.isEmpty)
        #expect(
            without.stderr.contains(
                " Stripe webhook deliveries rejected, not used: give --stripe-secret-file FILE (the endpoint's"
                    + " signing secrets) to verify them\n"))
        #expect(without.stderr.contains("rejected by code: malformed_token "))
        let wrong = try L.file(["whsec_not_it"], name: "wrong-secrets")
        let refused = try VouchBinary.run([
            "entitlements", "--stripe-secret-file", wrong, "--tiers", tiers, "--at", at.iso8601, "--json", input,
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("rejected, not used: stripe_bad_signature"))
        let tolerance = try VouchBinary.run(["entitlements", "--tolerance", "300", input])
        #expect(tolerance.status == 64)
        #expect(tolerance.stderr.contains("give --stripe-secret-file too"))
    }
}
