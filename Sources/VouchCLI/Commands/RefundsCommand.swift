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
        (REFUND_REVERSED). The refunded amount is price × revocationPercentage / 100000, exact
        in milliunits of the transaction's currency in JSON; in text, in units of it rounded to
        its minor unit (1.99 USD, 490 JPY). A summary goes to stderr: totals, then tables by
        month, product, reason and type with a column per currency (reversed revocations
        apart); --summary-json writes it as JSON. A rejected line is reported on stderr and
        not used.
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
    let examples = [
        "vouch refunds --since 2026-01-01 notifications.jsonl",
        "vouch refunds --db ledger.sqlite --json --summary-json refunds-summary.json",
    ]

    var options: [CommandOption] {
        [
            .value("--since", "WHEN", help: "Only revocations dated at or after WHEN (a DATE)"),
            .flag("--json", help: "One JSON record per revocation (default: readable text)"),
            LedgerInput.store, LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
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
            "reason \(Self.reason(revocation.revocationReason))",
            revocation.revocationType?.rawValue ?? "no type",
        ]
        if let percentage = revocation.revocationPercentage {
            fields.append("\(MilliunitAmount(hundredThousandths: Int128(percentage) * 100).description)%")
        }
        if let amount = revocation.refunded { fields.append("refunded \(amount.roundedDescription)") }
        if let reversed = revocation.reversedDate { fields.append("reversed \(reversed.iso8601)") }
        return fields.joined(separator: "  ") + "\n"
    }

    /// The summary for people: the totals, then one table each by month, product, reason and
    /// type, with a column per currency of the amounts refunded, rounded to the currency's
    /// minor unit; no line longer than 120 characters.
    static func describe(_ summary: RevocationSummary) -> String {
        var lines = [
            "  " + Counted.phrase(summary.total.count, "revocation") + ": " + Counted.phrase(summary.refunds, "refund")
                + ", " + Counted.phrase(summary.familyRevocations, "family revocation")
                + (summary.seatRefunds > 0 ? ", " + Counted.phrase(summary.seatRefunds, "seat refund") : "")
                + "; \(summary.reversed) reversed"
        ]
        if !summary.total.refunded.isEmpty {
            lines += TextTable.wrap(summary.total.refundedAmounts.map(\.roundedDescription), lead: "  refunded: ")
        }
        guard summary.total.count > 0 else { return lines.joined(separator: "\n") }
        let currencies = summary.total.refunded.keys.sorted()
        func table(_ title: String, _ buckets: [(name: String, bucket: RevocationSummary.Bucket)]) {
            var table = TextTable([title, "revocations", "refunds", "family"] + currencies)
            for (name, bucket) in buckets {
                table.append(
                    [name, String(bucket.count), String(bucket.refunds), String(bucket.familyRevocations)]
                        + currencies.map { currency in
                            bucket.refunded[currency].map {
                                CurrencyAmount($0, currency: currency).rounded(grouping: true)
                            } ?? "-"
                        })
            }
            lines.append("")
            lines += table.lines()
        }
        table("by month", summary.byMonth.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        table("by product", summary.byProduct.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        table(
            "by reason",
            summary.byRevocationReason.sorted { ($0.key?.rawValue ?? .max) < ($1.key?.rawValue ?? .max) }.map {
                (Self.reason($0.key), $0.value)
            })
        table(
            "by type",
            summary.byRevocationType.sorted { ($0.key?.rawValue ?? "~") < ($1.key?.rawValue ?? "~") }.map {
                ($0.key?.rawValue ?? "none", $0.value)
            })
        return lines.joined(separator: "\n")
    }

    /// A `revocationReason` by name, its value after it: `refundedDueToIssue (1)`; `none`.
    static func reason(_ reason: RevocationReason?) -> String {
        reason.map { "\($0.name) (\($0.rawValue))" } ?? "none"
    }
}
