import Foundation
import Vouch
import VouchEntitlements

/// `vouch report`: one self-contained HTML page of charts, from the answers `vouch entitlements`
/// and `vouch refunds` give on the same data.
struct ReportCommand: Command {
    let path = ["report"]
    let summary = "An HTML page of charts: subscribers per day, starts and refunds per month"
    let usage =
        "vouch report --out FILE.html [--from DATE] [--to DATE] [--tiers FILE] [--db FILE] [options] [FILE ...|-]"
    let discussion = """
        Reads and verifies the inputs as 'vouch entitlements' does (or answers from --db) and
        writes one HTML page with its charts drawn as inline SVG, needing no network, script,
        font or style from elsewhere:
          subscribers per day by tier (--tiers) and by channel (App Store, Stripe);
          subscription starts, renewals and expiries per month;
          refunds per month by product and by reason, refunded amounts per currency;
          the refund rate; the most refunded products.
        A day's figures are the answer at 00:00 UTC of that day, exactly what
        'vouch entitlements --at DAY' answers: a subscriber is an account with an auto-renewable
        subscription entitlement (App Store or Stripe), counted under each channel that grants
        one; by tier, accounts count under their highest tier. A start is a subscription chain
        entitled on a day and not the day before, a renewal the same chain entitled by a newer
        transaction or to a later end, an expiry a chain entitled the day before and not on the
        day. Refunds are those 'vouch refunds' lists, dated within the period; the refund rate
        is refunded subscription transactions per start or renewal.
        The period runs from --from's day through --to's day (UTC): --to defaults to now,
        --from to 89 days before --to (90 days in all); at most 3,660 days.
        The figures are embedded in the page as JSON (<script type="application/json"
        id="vouch-report-data">, described by Schemas/report.schema.json). A summary goes to
        stderr.

        DATE is 2026-02-01 (midnight UTC), 2026-02-01T12:30:00Z or with an offset.
        """
    let positionals = Positionals.any
    let exitStatus = """
        0 every line verified, 1 some line rejected (the page from the
        verified lines is still written), 64 usage error, 65 a --tiers file that is not a
        catalog or a --db file that is not a Vouch store (or is damaged), 66 an input or the
        store cannot be read or is truncated (nothing written), 74 output write error.
        """

    /// The period's default length, and the longest one accepted.
    static let defaultDays = 90
    static let maximumDays = 3_660

    var examples: [String] {
        [
            "vouch report --root testca/root.der --tiers tiers.json --out report.html histories.jwsl",
            "vouch report --db ledger.sqlite --from 2026-01-01 --to 2026-06-30 --out h1.html",
        ]
    }

    var options: [CommandOption] {
        [
            .value("--out", short: "o", "FILE", help: "Write the HTML page to FILE (- for stdout); required"),
            .value("--from", "DATE", help: "The period's first day (default: 89 days before --to)"),
            .value("--to", "DATE", help: "The period's last day: now (default) or a DATE"),
            .value(
                "--tiers", "FILE",
                help: "A JSON catalog ('vouch entitlements --tiers'): subscribers\nare also counted by tier"),
            LedgerInput.store, LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
        ] + LedgerInput.options
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let out = arguments.value("--out") else { throw UsageError("report needs --out FILE.html") }
        let to = try LedgerInput.instant(arguments.value("--to") ?? "now", option: "--to", console: console)
        let lastDay = ReportFigures.day(of: to)
        let firstDay =
            try arguments.value("--from").map { text throws(UsageError) in
                ReportFigures.day(
                    of: try LedgerInput.instant(text, option: "--from", console: console, allowNow: false))
            } ?? lastDay - Int64(Self.defaultDays - 1)
        guard firstDay <= lastDay else { throw UsageError("--from must not be after --to") }
        guard lastDay - firstDay < Int64(Self.maximumDays) else {
            throw UsageError("the period from --from to --to is longer than \(Self.maximumDays) days")
        }
        let store = arguments.value(LedgerInput.store.name)
        let input = try LedgerInput(
            command: "report", arguments: arguments, console: console, readsStandardInput: store == nil)
        let catalog = try LedgerInput.catalog(arguments.value("--tiers"))

        var ledger =
            try LedgerInput.openStore(arguments, catalog: catalog)?.ledger() ?? EntitlementLedger(catalog: catalog)
        let reading = try input.read(into: &ledger, console: console)
        let totals = LedgerInput.Totals(ledger)

        let started = Date()
        let figures = ReportFigures(ledger: ledger, firstDay: firstDay, lastDay: lastDay)
        let data = figures.json(input: input.inputJSON(reading, totals: totals))
        let page = ReportPage(figures: figures, data: data).html
        let destination = try console.destination(out)
        try destination.write(page)
        try destination.close()
        let seconds = Date().timeIntervalSince(started)

        console.diagnose(
            input.describe(reading, totals: totals)
                + "\n  report \(figures.days.first ?? "") to \(figures.days.last ?? ""): \(figures.days.count) days,"
                + " \(ledger.accounts.count) accounts, \(figures.revocations.count) revocations; "
                + "\(page.count) bytes written in " + String(format: "%.2f s", seconds))
        try LedgerInput.writeSummary(
            .object(
                JSONObject([
                    .init("input", input.inputJSON(reading, totals: totals)),
                    .init("from", .string(figures.days.first ?? "")),
                    .init("to", .string(figures.days.last ?? "")),
                    .init("days", .number(String(figures.days.count))),
                    .init("accounts", .number(String(ledger.accounts.count))),
                    .init("bytes", .number(String(page.count))),
                ])), to: arguments.value("--summary-json"), console: console)
        return input.status(reading)
    }
}

/// The figures of a report, each from the ledger's own answers: the entitlements of every
/// account at 00:00 UTC of each day, and the revocations.
struct ReportFigures {
    static let dayMilliseconds: Int64 = 86_400_000

    /// Days since 1970-01-01 of the UTC day `instant` falls in.
    static func day(of instant: Timestamp) -> Int64 {
        let (quotient, remainder) = instant.milliseconds.quotientAndRemainder(dividingBy: dayMilliseconds)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// A subscription chain as the daily answers name it, and what entitles it on a day.
    private struct Chain: Hashable {
        let source: EntitlementSource
        let originalTransactionId: String
        let ownership: String
    }

    private struct Grant {
        let transactionId: String
        let expires: Int64?
        let state: Entitlement.State
    }

    /// A counted series: a tier (by name) or a channel (by source).
    struct Counts {
        let name: String
        var values: [Int]
    }

    /// `YYYY-MM-DD` of each day of the period, and `YYYY-MM` of each month it touches.
    let days: [String]
    let months: [String]
    /// The catalog's tiers, highest rank first.
    let tiers: [ProductCatalog.Tier]
    /// Per day: accounts with a subscription entitlement; by tier; by channel.
    private(set) var subscribers: [Int]
    private(set) var byTier: [Counts]
    private(set) var byChannel: [Counts]
    /// Per month.
    private(set) var starts: [Int]
    private(set) var renewals: [Int]
    private(set) var expiries: [Int]
    /// Every revocation dated within the period (reversed ones too), as `vouch refunds` lists them.
    let revocations: [Revocation]
    /// Their summary, and one summary per month.
    let refunds: RevocationSummary
    let refundsByMonth: [RevocationSummary]
    /// Refunded subscription transactions per month, for the refund rate.
    let subscriptionRefunds: [Int]

    init(ledger: EntitlementLedger, firstDay: Int64, lastDay: Int64) {
        let dayCount = Int(lastDay - firstDay + 1)
        days = (firstDay...lastDay).map {
            String(Timestamp(milliseconds: $0 * Self.dayMilliseconds).iso8601.prefix(10))
        }
        var months: [String] = []
        for day in days where months.last != String(day.prefix(7)) { months.append(String(day.prefix(7))) }
        self.months = months
        let monthIndex = Dictionary(uniqueKeysWithValues: months.enumerated().map { ($0.element, $0.offset) })
        let dayMonth = days.map { monthIndex[String($0.prefix(7))]! }
        tiers = ledger.catalog.tiers.sorted { ($0.rank, $1.name) > ($1.rank, $0.name) }

        subscribers = Array(repeating: 0, count: dayCount)
        byTier = tiers.map { Counts(name: $0.name, values: Array(repeating: 0, count: dayCount)) }
        byChannel = [EntitlementSource.appStore, .stripe].map {
            Counts(name: $0.rawValue, values: Array(repeating: 0, count: dayCount))
        }
        starts = Array(repeating: 0, count: months.count)
        renewals = starts
        expiries = starts
        let tierIndex = Dictionary(tiers.enumerated().map { ($0.element.name, $0.offset) }) { first, _ in first }

        // Each account is answered on the day before the period (so that the first day's
        // starts and expiries are changes from it) and again only on the days one of its
        // change instants passed: between them its answer is the same (the ledger's
        // `changeInstants(of:)`). Counts over each stretch of days go into difference arrays.
        var subscriberSteps = Array(repeating: 0, count: dayCount + 1)
        var tierSteps = Array(repeating: Array(repeating: 0, count: dayCount + 1), count: tiers.count)
        var channelSteps = Array(repeating: Array(repeating: 0, count: dayCount + 1), count: byChannel.count)
        let channelIndex = Dictionary(uniqueKeysWithValues: byChannel.enumerated().map { ($0.element.name, $0.offset) })
        for account in ledger.accounts {
            let changes = ledger.changeInstants(of: account).map(\.milliseconds)
            var next = 0
            var previous: [Chain: Grant] = [:]
            var channels = Set<Int>()
            var tier: Int?
            var stretch = 0
            func close(_ end: Int) {
                guard end > stretch else { return }
                if !channels.isEmpty {
                    subscriberSteps[stretch] += 1
                    subscriberSteps[end] -= 1
                }
                for channel in channels {
                    channelSteps[channel][stretch] += 1
                    channelSteps[channel][end] -= 1
                }
                if let tier {
                    tierSteps[tier][stretch] += 1
                    tierSteps[tier][end] -= 1
                }
            }
            for offset in -1..<dayCount {
                let instant = (firstDay + Int64(offset)) * Self.dayMilliseconds
                var changed = offset < 0
                while next < changes.count, changes[next] <= instant {
                    changed = true
                    next += 1
                }
                guard changed, let answer = ledger.entitlements(of: account, at: Timestamp(milliseconds: instant))
                else { continue }
                var current: [Chain: Grant] = [:]
                var now = Set<Int>()
                for entitlement in answer.entitlements where entitlement.type == .autoRenewableSubscription {
                    if let index = channelIndex[entitlement.source.rawValue] { now.insert(index) }
                    current[
                        Chain(
                            source: entitlement.source, originalTransactionId: entitlement.originalTransactionId,
                            ownership: entitlement.ownership.rawValue)] = Grant(
                            transactionId: entitlement.transactionId, expires: entitlement.expiresDate?.milliseconds,
                            state: entitlement.state)
                }
                if offset >= 0 {
                    close(offset)
                    stretch = offset
                    let month = dayMonth[offset]
                    for (chain, grant) in current {
                        if let before = previous[chain] {
                            if Self.renews(before, grant) { renewals[month] += 1 }
                        } else {
                            starts[month] += 1
                        }
                    }
                    for chain in previous.keys where current[chain] == nil { expiries[month] += 1 }
                }
                previous = current
                channels = now
                tier = answer.tier.flatMap { tierIndex[$0.name] }
            }
            close(dayCount)
        }
        func sums(_ steps: [Int]) -> [Int] {
            var total = 0
            return steps.dropLast().map {
                total += $0
                return total
            }
        }
        subscribers = sums(subscriberSteps)
        for index in byTier.indices { byTier[index].values = sums(tierSteps[index]) }
        for index in byChannel.indices { byChannel[index].values = sums(channelSteps[index]) }

        let start = Timestamp(milliseconds: firstDay * Self.dayMilliseconds)
        let end = (lastDay + 1) * Self.dayMilliseconds
        revocations = ledger.revocations(since: start).filter { $0.revocationDate.milliseconds < end }
        refunds = RevocationSummary(revocations)
        var monthly = Array(repeating: [Revocation](), count: months.count)
        var subscriptionRefunds = Array(repeating: 0, count: months.count)
        for revocation in revocations {
            guard let month = monthIndex[String(revocation.revocationDate.iso8601.prefix(7))] else { continue }
            monthly[month].append(revocation)
            if revocation.state == .revoked, revocation.kind == .refund,
                revocation.type == .autoRenewableSubscription
            {
                subscriptionRefunds[month] += 1
            }
        }
        refundsByMonth = monthly.map(RevocationSummary.init)
        self.subscriptionRefunds = subscriptionRefunds
    }

    /// A newer transaction of the chain, or the same one running to a later end (a Stripe
    /// subscription's next period), outside a grace period (whose end is Apple's retry window).
    private static func renews(_ before: Grant, _ after: Grant) -> Bool {
        if before.transactionId != after.transactionId { return true }
        guard before.state != .gracePeriod, after.state != .gracePeriod, let old = before.expires,
            let new = after.expires
        else { return false }
        return new > old
    }

    /// Starts and renewals of a month: the subscription periods the refund rate is taken over.
    func periods(_ month: Int) -> Int { starts[month] + renewals[month] }

    /// The refund rate of `refunds` over `periods`, rounded to 1/10000; `nil` with no period.
    static func rate(_ refunds: Int, _ periods: Int) -> Double? {
        periods == 0 ? nil : (Double(refunds) / Double(periods) * 10_000).rounded() / 10_000
    }

    /// The most refunded products (refunds and Family Sharing revocations in force), at most
    /// `limit`, by count then product id; their amounts are the summary's `byProduct`.
    func topProducts(limit: Int = 10) -> [(productId: String, bucket: RevocationSummary.Bucket)] {
        refunds.byProduct.sorted { ($1.value.count, $0.key) < ($0.value.count, $1.key) }.prefix(limit).map {
            ($0.key, $0.value)
        }
    }

    /// The figures as `Schemas/report.schema.json` describes them, members in its order.
    func json(input: JSONValue) -> JSONValue {
        func numbers(_ values: [Int]) -> JSONValue { .array(values.map { .number(String($0)) }) }
        let totalRefunds = subscriptionRefunds.reduce(0, +)
        let totalPeriods = months.indices.map(periods).reduce(0, +)
        return .object(
            JSONObject([
                .init("from", .string(days.first ?? "")),
                .init("to", .string(days.last ?? "")),
                .init("days", .array(days.map(JSONValue.string))),
                .init("months", .array(months.map(JSONValue.string))),
                .init("input", input),
                .init(
                    "subscribers",
                    .object(
                        JSONObject([
                            .init("total", numbers(subscribers)),
                            .init(
                                "byTier",
                                .array(
                                    zip(tiers, byTier).map { tier, counts in
                                        .object(
                                            JSONObject([
                                                .init("name", .string(tier.name)),
                                                .init("rank", .number(String(tier.rank))),
                                                .init("counts", numbers(counts.values)),
                                            ]))
                                    })),
                            .init(
                                "byChannel",
                                .array(
                                    byChannel.map {
                                        .object(
                                            JSONObject([
                                                .init("source", .string($0.name)), .init("counts", numbers($0.values)),
                                            ]))
                                    })),
                        ]))),
                .init(
                    "activity",
                    .object(
                        JSONObject([
                            .init("starts", numbers(starts)), .init("renewals", numbers(renewals)),
                            .init("expiries", numbers(expiries)),
                        ]))),
                .init(
                    "refunds",
                    .object(
                        JSONObject([
                            .init("summary", refunds.json),
                            .init("byMonth", .array(refundsByMonth.map(\.json))),
                            .init(
                                "rate",
                                .object(
                                    JSONObject([
                                        .init("refunds", numbers(subscriptionRefunds)),
                                        .init("periods", numbers(months.indices.map(periods))),
                                        .init("totalRefunds", .number(String(totalRefunds))),
                                        .init("totalPeriods", .number(String(totalPeriods))),
                                        .init(
                                            "total",
                                            Self.rate(totalRefunds, totalPeriods).map {
                                                .number(String(format: "%.4f", $0))
                                            } ?? .null),
                                    ]))),
                            .init(
                                "topProducts",
                                .array(
                                    topProducts().map { product in
                                        .object(
                                            JSONObject([
                                                .init("productId", .string(product.productId)),
                                                .init("count", .number(String(product.bucket.count))),
                                            ]))
                                    })),
                        ]))),
            ]))
    }
}
