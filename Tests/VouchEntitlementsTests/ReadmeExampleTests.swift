import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// The ledger example of `docs/entitlement-rules.md`, compiled here and run on minted data; a
/// test keeps the two texts equal.
struct ReadmeExampleTests {
    typealias F = LedgerFixtures

    /// The example, between the markers exactly as in `docs/entitlement-rules.md` (less this
    /// indentation).
    static func example(verifier: Verifier, tokens: [String], tiersFile: String, now: Timestamp) throws -> [String] {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
        // README begin
        let catalog = try ProductCatalog(json: try Data(contentsOf: URL(fileURLWithPath: tiersFile)))
        var ledger = EntitlementLedger(catalog: catalog)
        for token in tokens {  // webhook bodies, API exports: any order, repeats are harmless
            ledger.add(try verifier.verify(token))  // only verified payloads go in
        }
        for account in ledger.accounts(matching: "7F0A4C2E-3B5D-4E6F-8A9B-0C1D2E3F4A5B") {  // the app's account id
            let answer = ledger.entitlements(of: account, at: now)!
            print(
                account.environment, answer.tier?.name ?? "free",
                answer.tier?.entitlement.expiresDate?.iso8601 ?? "no end")
            for entitlement in answer.entitlements {
                print(" ", entitlement.productId, entitlement.state.rawValue, entitlement.transactionId)
            }
        }
        for revocation in ledger.revocations() where revocation.kind == .refund && revocation.state == .revoked {
            print(
                revocation.productId, revocation.revocationReason?.rawValue ?? -1,
                revocation.refundedAmount?.description ?? "?", revocation.currency ?? "")  // milliunits, exact
        }
        // README end
        return printed
    }

    @Test func theExampleRunsOnMintedData() throws {
        var history = MintHistory(appAccountToken: F.account)
        let plus = history.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: F.time(0), price: 4_990,
            expires: F.time(31)
        )
        let lifetime = history.purchase("com.example.pro.lifetime", type: .nonConsumable, at: F.time(1), price: 29_990)
        history.refund(lifetime, at: F.time(4), reason: .refundedDueToIssue, type: .refundProrated, percentage: 90_000)
        let tiers = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-tiers-\(UUID().uuidString).json")
        try Data(TierTests.catalogJSON.utf8).write(to: tiers)
        defer { try? FileManager.default.removeItem(at: tiers) }
        let tokens = try F.tokens(history)
        let printed = try Self.example(
            verifier: F.verifier, tokens: tokens + tokens.reversed(), tiersFile: tiers.path, now: F.at(F.day(10)))
        #expect(
            printed == [
                "Production plus 2026-02-01T00:00:00.000Z",
                "  com.example.plus.monthly active \(plus.transactionId)",
                "com.example.pro.lifetime 1 26991 USD",
            ])
    }

    @Test func theReadmeShowsTheExampleAsCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let readme = try String(
            contentsOf: root.appendingPathComponent("docs/entitlement-rules.md"), encoding: .utf8)
        let begin = try #require(source.range(of: "        // README begin\n"))
        let end = try #require(source.range(of: "        // README end\n"))
        let example = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.dropFirst(8) }.joined(separator: "\n")
        #expect(
            readme.contains(
                "```swift\nimport Foundation\nimport Vouch\nimport VouchEntitlements\n\n" + example + "```\n"))
    }
}
