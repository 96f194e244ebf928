import Foundation
import Vouch
import VouchEntitlements

/// `vouch refunds`: every refund, Family Sharing revocation and reversal in verified dumps.
struct RefundsCommand: Command {
    let path = ["refunds"]
    let summary = "Refunds and revocations in verified dumps, with a summary"
    let usage = "vouch refunds [--since WHEN] [--json] [--summary-json FILE] [--db FILE] [options] [FILE ...|-]"
    let discussion = """
        Verifies every line of the inputs as 'vouch batch' does and prints one record per
        revoked transaction, by the newest signed statement about it: a refund (REFUND_FULL,
        REFUND_PRORATED, or a revocation without a type), a Family Sharing revocation
        (FAMILY_REVOKE: access ends, nothing is refunded), or either since reversed
        (REFUND_REVERSED). The refunded amount is price × revocationPercentage / 100000, exact:
        in milliunits of the transaction's currency in JSON, in units of it in text (1.99 USD).
        A summary (counts and refunded amounts by product, reason, type and month; reversed
        revocations apart) goes to stderr. A rejected line is reported on stderr and not used.
        With --db, the answer includes what the store holds ('vouch ledger add'), read without
        verifying again (with no FILE, only the records holding a revocation are read).
        Stripe deliveries in the inputs (with --stripe-secret-file) add their refunded
        charges (charge.refunded): all that was refunded of a charge by its newest event,
        in units of its currency, REFUND_FULL when the whole charge was refunded, else
        REFUND_PRORATED; "source" says "stripe".

        With --json, one record per revocation:
          {"environment":…,"appAccountToken":…|null,"originalTransactionId":…,"transactionId":…,
           "productId":…,"type":…,"ownership":…,"kind":"refund|family_revocation",
           "state":"revoked|reversed","revocationDate":…,"revoked":…,"revocationReason":…,
           "revocationType":…,"revocationPercentage":…,"price":…,"currency":…,
           "refundedAmount":…,"reversedDate":…,"source":"app_store|stripe"}
        Records are ordered by revocationDate, then environment and transactionId; the same
        tokens in any order or split across any files give the same bytes.

        WHEN and DATE are 2026-02-01 (midnight UTC), 2026-02-01T12:30:00Z or with an offset.
        """
    let positionals = Positionals.any
    let exitStatus = """
        0 every line verified, 1 some line rejected (the answer
        from the verified lines is still printed), 64 usage error, 65 a --db file that is not a
        Vouch store (or is damaged), 66 an input or the store cannot be read or is truncated
        (nothing printed), 74 output write error.
        """

    var options: [CommandOption] {
        [
            .value("--since", "WHEN", help: "Only revocations dated at or after WHEN (a DATE)"),
            .flag("--json", help: "One JSON record per revocation (default: readable text)"),
            LedgerInput.store,
        ] + LedgerInput.options
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let since = try arguments.value("--since").map { text throws(UsageError) in
            try LedgerInput.instant(text, option: "--since", console: console, allowNow: false)
        }
        let store = arguments.value(LedgerInput.store.name)
        let input = try LedgerInput(
            command: "refunds", arguments: arguments, console: console, readsStandardInput: store == nil)
        let revocations: [Revocation]
        let reading: LedgerInput.Reading
        let totals: LedgerInput.Totals
        let stored = try LedgerInput.openStore(arguments)
        if let stored, input.paths.isEmpty {
            // Only the chains holding a revocation are read.
            reading = LedgerInput.Reading()
            revocations = try stored.revocations(since: since)
            totals = LedgerInput.Totals(try stored.statistics())
        } else {
            var ledger = try stored?.ledger() ?? EntitlementLedger()
            reading = try input.read(into: &ledger, console: console)
            revocations = ledger.revocations(since: since)
            totals = LedgerInput.Totals(ledger)
        }
        var bytes: [UInt8] = []
        for revocation in revocations {
            if arguments.flag("--json") {
                bytes += JSONWriter.encode(revocation.json) + [0x0A]
            } else {
                bytes += Array(Self.describe(revocation).utf8)
            }
            if bytes.count >= 64 * 1024 {
                try console.output.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        if !bytes.isEmpty { try console.output.write(bytes) }

        let summary = RevocationSummary(revocations)
        console.diagnose(input.describe(reading, totals: totals) + "\n" + Self.describe(summary))
        var json = JSONObject([.init("input", input.inputJSON(reading, totals: totals))])
        json["since"] = since.map { .number(String($0.milliseconds)) } ?? .null
        if case .object(let members) = summary.json { json.members += members.members }
        try LedgerInput.writeSummary(.object(json), to: arguments.value("--summary-json"), console: console)
        return input.status(reading)
    }

    /// One line: when, what, whose, why, how much.
    static func describe(_ revocation: Revocation) -> String {
        var fields = [
            revocation.revocationDate.iso8601, revocation.kind.rawValue, revocation.state.rawValue,
            revocation.environment.rawValue,
            revocation.productId,
            (revocation.source == .appStore ? "transaction" : "\(revocation.source) charge")
                + " \(revocation.transactionId)",
            revocation.appAccountToken.map { "appAccountToken \($0)" }
                ?? "originalTransactionId \(revocation.originalTransactionId)",
            "reason \(revocation.revocationReason.map { String($0.rawValue) } ?? "none")",
            revocation.revocationType?.rawValue ?? "no type",
        ]
        if let percentage = revocation.revocationPercentage {
            fields.append("\(MilliunitAmount(hundredThousandths: Int128(percentage) * 100).description)%")
        }
        if let amount = revocation.refunded { fields.append("refunded \(amount)") }
        if let reversed = revocation.reversedDate { fields.append("reversed \(reversed.iso8601)") }
        return fields.joined(separator: "  ") + "\n"
    }

    static func describe(_ summary: RevocationSummary) -> String {
        func amounts(_ bucket: RevocationSummary.Bucket) -> String {
            bucket.refunded.isEmpty
                ? "" : " (" + bucket.refundedAmounts.map(\.description).joined(separator: ", ") + ")"
        }
        func buckets(_ buckets: [String: RevocationSummary.Bucket]) -> String {
            buckets.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.count)\(amounts($0.value))" }
                .joined(separator: ", ")
        }
        var lines = [
            "  \(summary.total.count) revocations: \(summary.refunds) refunds, \(summary.familyRevocations) family revocations"
                + (summary.seatRefunds > 0 ? ", \(summary.seatRefunds) seat refunds" : "")
                + "; \(summary.reversed) reversed"
        ]
        if !summary.total.refunded.isEmpty {
            lines.append("  refunded: " + summary.total.refundedAmounts.map(\.description).joined(separator: ", "))
        }
        if summary.total.count > 0 {
            lines.append("  by product: " + buckets(summary.byProduct))
            lines.append("  by reason: " + buckets(summary.byReason))
            lines.append("  by type: " + buckets(summary.byType))
            lines.append("  by month: " + buckets(summary.byMonth))
        }
        return lines.joined(separator: "\n")
    }
}
