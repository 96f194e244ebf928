import Foundation
import Testing

@testable import VouchCLI

/// `vouch refunds`' summary as people read it: aligned tables by month, product, reason and
/// type, a column per currency, amounts rounded to the currency's minor unit, no line longer
/// than 120 characters; its JSON keeps its members and adds the amounts in currency units.
@Suite struct RefundsSummaryTests {
    typealias L = LedgerCommandTests

    @Test func theSummaryIsTablesWithReasonsByNameAndRoundedAmounts() throws {
        let tokens = try L.file(L.tokens, name: "refunds-summary.jsonl")
        let result = try VouchBinary.run(["refunds", "--root", L.root, tokens])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(
            separator: "\n")
        #expect(
            summary == """
                  1 revocation: 1 refund, 0 family revocations; 1 reversed
                  refunded: 10.00 USD

                  by month  revocations  refunds  family    USD
                  2026-02             1        1       0  10.00

                  by product                revocations  refunds  family    USD
                  com.example.pro.lifetime            1        1       0  10.00

                  by reason               revocations  refunds  family    USD
                  refundedDueToIssue (1)            1        1       0  10.00

                  by type          revocations  refunds  family    USD
                  REFUND_PRORATED            1        1       0  10.00

                """)
        // Each record: the reason by name, the amount rounded.
        #expect(
            result.stdout.contains("  reason refundedDueToIssue (1)  REFUND_PRORATED  33.333%  refunded 10.00 USD\n"))
        #expect(result.stdout.contains("  reason refundedForOtherReason (0)  REFUND_FULL  100%  refunded 0.00 USD  "))
    }

    @Test func theSummaryJSONKeepsItsMembersAndAddsAmountsInCurrencyUnits() throws {
        let tokens = try L.file(L.tokens, name: "refunds-summary-json.jsonl")
        let result = try VouchBinary.run(["refunds", "--root", L.root, "--summary-json", "-", tokens])
        let json = try VouchBinary.object(String(result.stdout.split(separator: "\n").last ?? ""))
        #expect(
            Array(json.keys).sorted() == [
                "byMonth", "byProduct", "byReason", "byType", "familyRevocations", "input", "refunded",
                "refundedAmounts", "refunds", "reversed", "revocations", "since",
            ])
        #expect((json["refunded"] as? [String: Any])?["USD"] as? Double == 9996.5667)
        let usd = try #require((json["refundedAmounts"] as? [String: Any])?["USD"] as? [String: String])
        #expect(usd == ["amount": "10.00", "exact": "9.9965667", "unit": "USD"])
        let month = try #require((json["byMonth"] as? [String: Any])?["2026-02"] as? [String: Any])
        #expect(month["count"] as? Int == 1)
        #expect(((month["refundedAmounts"] as? [String: Any])?["USD"] as? [String: String])?["amount"] == "10.00")
    }

    @Test func aTableWiderThan120CharactersContinuesBelowRepeatingTheNames() {
        let currencies = (0..<40).map { String(format: "C%02d", $0) }
        var table = TextTable(["by product", "revocations", "refunds", "family"] + currencies)
        let long = "com.example." + String(repeating: "x", count: 80)
        table.append([long, "12", "10", "2"] + currencies.map { _ in "1,234.56" })
        table.append(["com.example.short", "1", "1", "0"] + currencies.map { _ in "-" })
        let lines = table.lines()
        #expect(lines.allSatisfy { $0.count <= 120 }, "\(lines.map(\.count))")
        let parts = lines.split(separator: "", omittingEmptySubsequences: false)
        #expect(parts.count > 1)
        let cut = "com.example." + String(repeating: "x", count: TextTable.maximumNameWidth - 13) + "…"
        for part in parts {
            #expect(part.count == 3)
            #expect(part[part.startIndex].hasPrefix("  by product "))
            #expect(part[part.startIndex + 1].hasPrefix("  " + cut + "  "))
            #expect(part[part.startIndex + 2].hasPrefix("  com.example.short "))
        }
        // Every currency column is shown once, the counts in the first part only.
        let headers = parts.flatMap { $0.first!.split(separator: " ").map(String.init) }
        #expect(headers.filter { $0.hasPrefix("C") }.count == 40)
        #expect(headers.filter { $0 == "revocations" }.count == 1)
        #expect(lines[1].hasSuffix("1,234.56") && lines[2].hasSuffix("-"))
    }
}
