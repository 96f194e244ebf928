import Foundation
import Vouch
import VouchEntitlements

/// `vouch refunds`: every refund, Family Sharing revocation and reversal in verified dumps.
enum RefundsCommand {
    static let usage = """
        Usage: vouch refunds [--since WHEN] [--json] [--summary-json FILE] [options] [FILE ...|-]

        Verifies every line of the inputs as 'vouch batch' does and prints one record per
        revoked transaction, by the newest signed statement about it: a refund (REFUND_FULL,
        REFUND_PRORATED, or a revocation without a type), a Family Sharing revocation
        (FAMILY_REVOKE: access ends, nothing is refunded), or either since reversed
        (REFUND_REVERSED). The refunded amount is price × revocationPercentage / 100000, exact,
        in milliunits of the transaction's currency. A summary (counts and refunded amounts by
        product, reason, type and month; reversed revocations apart) goes to stderr. A rejected
        line is reported on stderr and not used.

        Options:
          --since WHEN           Only revocations dated at or after WHEN: a date such as
                                 2026-02-01 (midnight UTC) or an ISO-8601 instant
          --json                 One JSON record per revocation (default: readable text):
                                 {"environment":…,"appAccountToken":…|null,"originalTransactionId":…,
                                  "transactionId":…,"productId":…,"type":…,"ownership":…,
                                  "kind":"refund|family_revocation","state":"revoked|reversed",
                                  "revocationDate":…,"revoked":…,"revocationReason":…,"revocationType":…,
                                  "revocationPercentage":…,"price":…,"currency":…,"refundedAmount":…,
                                  "reversedDate":…}
        \(LedgerInput.optionsHelp)
          -h, --help             Show this help

        Records are ordered by revocationDate, then environment and transactionId; the same
        tokens in any order or split across any files give the same bytes.

        Exit status: 0 every line verified, 1 some line rejected (the answer is still printed,
        from the verified lines), 64 usage error, 66 an input cannot be read or is truncated
        (nothing printed), 74 output write error.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, valued: LedgerInput.valued.union(["--since"]), flags: LedgerInput.flags.union(["--json"]))
        let since = try arguments.value("--since").map { text throws(UsageError) in
            guard text != "now" else { throw UsageError("--since must be a date such as 2026-02-01 or an ISO-8601 instant; got 'now'") }
            return try LedgerInput.instant(text, option: "--since")
        }
        let input = try LedgerInput(command: "refunds", arguments: arguments)
        var ledger = EntitlementLedger()
        let reading = try input.read(into: &ledger)

        let revocations = ledger.revocations(since: since)
        var bytes: [UInt8] = []
        for revocation in revocations {
            if arguments.flag("--json") {
                bytes += JSONWriter.encode(revocation.json) + [0x0A]
            } else {
                bytes += Array(describe(revocation).utf8)
            }
            if bytes.count >= 64 * 1024 {
                try EntitlementsCommand.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        try EntitlementsCommand.write(bytes)

        let summary = RevocationSummary(revocations)
        Output.error(input.describe(reading, ledger: ledger) + "\n" + describe(summary))
        var json = JSONObject([.init("input", input.inputJSON(reading, ledger: ledger))])
        json["since"] = since.map { .number(String($0.milliseconds)) } ?? .null
        if case .object(let members) = summary.json { json.members += members.members }
        try LedgerInput.writeSummary(.object(json), to: arguments.value("--summary-json"))
        return input.status(reading)
    }

    /// One line: when, what, whose, why, how much.
    static func describe(_ revocation: Revocation) -> String {
        var fields = [
            revocation.revocationDate.iso8601, revocation.kind.rawValue, revocation.state.rawValue, revocation.environment.rawValue,
            revocation.productId, "transaction \(revocation.transactionId)",
            revocation.appAccountToken.map { "appAccountToken \($0)" } ?? "originalTransactionId \(revocation.originalTransactionId)",
            "reason \(revocation.revocationReason.map { String($0.rawValue) } ?? "none")",
            revocation.revocationType?.rawValue ?? "no type",
        ]
        if let percentage = revocation.revocationPercentage {
            fields.append("\(MilliunitAmount(hundredThousandths: Int128(percentage) * 100).description)%")
        }
        if let amount = revocation.refundedAmount {
            fields.append("refunded \(amount) milliunits \(revocation.currency ?? "")")
        }
        if let reversed = revocation.reversedDate { fields.append("reversed \(reversed.iso8601)") }
        return fields.joined(separator: "  ") + "\n"
    }

    static func describe(_ summary: RevocationSummary) -> String {
        func amounts(_ amounts: [String: MilliunitAmount]) -> String {
            amounts.isEmpty ? "" : " (" + amounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        func buckets(_ buckets: [String: RevocationSummary.Bucket]) -> String {
            buckets.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.count)\(amounts($0.value.refunded))" }.joined(separator: ", ")
        }
        var lines = [
            "  \(summary.total.count) revocations: \(summary.refunds) refunds, \(summary.familyRevocations) family revocations;"
                + " \(summary.reversed) reversed"
        ]
        if !summary.total.refunded.isEmpty { lines.append("  refunded (milliunits):\(amounts(summary.total.refunded))") }
        if summary.total.count > 0 {
            lines.append("  by product: " + buckets(summary.byProduct))
            lines.append("  by reason: " + buckets(summary.byReason))
            lines.append("  by type: " + buckets(summary.byType))
            lines.append("  by month: " + buckets(summary.byMonth))
        }
        return lines.joined(separator: "\n")
    }
}
