import Foundation
import Vouch
import VouchEntitlements

/// The HTML page of `vouch report`: its figures as SVG charts and small tables, and the same
/// figures as JSON in `<script type="application/json" id="vouch-report-data">`.
///
/// The page is whole in itself: its style is inline, it runs no script and refers to nothing
/// outside it, so it opens the same from a file, a mail or an archive, with no network.
struct ReportPage {
    let figures: ReportFigures
    /// The figures as `Schemas/report.schema.json` describes them.
    let data: JSONValue

    /// Products drawn one by one in the monthly chart; the rest are summed as "other".
    static let productsDrawn = 7

    static let style = """
        :root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#f5f5f7}
        body{margin:0;padding:12px}
        header{max-width:1400px;margin:0 auto 12px}
        h1{font-size:1.5rem;margin:4px 0}
        h2{font-size:1.05rem;margin:0 0 8px}
        p{margin:4px 0}
        .note{color:#555;font-size:.85rem}
        .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,560px),1fr));gap:12px;max-width:1400px;margin:0 auto}
        .card{background:#fff;border-radius:8px;padding:12px;box-shadow:0 1px 2px rgba(0,0,0,.08);min-width:0}
        .figures{display:flex;flex-wrap:wrap;gap:8px}
        .figure{background:#fff;border-radius:8px;padding:8px 12px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
        .figure b{display:block;font-size:1.25rem}
        svg.chart{display:block;width:100%;height:auto}
        svg .grid{stroke:#e3e3e3;stroke-width:1}
        svg .axis{stroke:#888;stroke-width:1}
        svg .tick{font-size:11px;fill:#555}
        svg .legend{font-size:11px;fill:#1d1d1f}
        svg .bar-label{font-size:12px;fill:#1d1d1f}
        @media (max-width:520px){svg .tick,svg .legend{font-size:13px}}
        svg .hover{fill:transparent}
        svg .hover:hover{fill:rgba(0,0,0,.06)}
        .table{overflow-x:auto}
        table{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums}
        th,td{padding:3px 8px;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
        th:first-child,td:first-child{text-align:left}
        """

    /// The whole page.
    var html: [UInt8] {
        let days = figures.days
        let period = "\(days.first ?? "") to \(days.last ?? "")"
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Vouch report, \(SVGChart.escape(period))</title>
            <style>
            \(Self.style)
            </style>
            </head>
            <body>
            <header>
            <h1>Subscriptions and refunds</h1>
            <p>\(SVGChart.escape(period)), \(days.count) days (UTC). Each day's figures are the
            entitlements at 00:00 UTC of the day, as <code>vouch entitlements --at DAY</code> answers.</p>
            \(keyFigures)
            </header>
            <div class="grid">

            """
        page += card("Subscribers per day by tier", tierChart)
        page += card("Subscribers per day by channel", channelChart)
        page += card(
            "Subscription starts, renewals and expiries per month",
            SVGChart.bars(
                id: "chart-activity", title: "Subscription starts, renewals and expiries per month",
                labels: figures.months,
                series: [
                    .init(name: "starts", values: figures.starts.map(Double.init)),
                    .init(name: "renewals", values: figures.renewals.map(Double.init)),
                    .init(name: "expiries", values: figures.expiries.map(Double.init)),
                ], stacked: false))
        page += card("Refunds per month by product", productChart)
        page += card("Refunds per month by reason", reasonChart)
        page += card("Refunded amounts per month", amountTable)
        page += card("Refund rate per month", rateChart)
        page += card("Most refunded products", topProducts)
        page += """
            </div>
            <script type="application/json" id="vouch-report-data">
            """
        var bytes = Array(page.utf8)
        // `<` occurs only inside JSON strings, where `\u003c` means the same: no text in the
        // data can end the script element.
        for byte in JSONWriter.encode(data) {
            if byte == UInt8(ascii: "<") { bytes += Array("\\u003c".utf8) } else { bytes.append(byte) }
        }
        bytes += Array("</script>\n</body>\n</html>\n".utf8)
        return bytes
    }

    private func card(_ title: String, _ body: String) -> String {
        "<section class=\"card\"><h2>\(SVGChart.escape(title))</h2>\(body)</section>\n"
    }

    private var keyFigures: String {
        let last = figures.days.count - 1
        var items: [(String, String)] = [("subscribers on \(figures.days.last ?? "")", "\(figures.subscribers[last])")]
        for channel in figures.byChannel where channel.values[last] > 0 {
            items.append(("of them via \(Self.channelName(channel.name))", "\(channel.values[last])"))
        }
        let summary = figures.refunds
        items.append(("refunds in the period", "\(summary.refunds)"))
        if summary.familyRevocations > 0 {
            items.append(("Family Sharing revocations", "\(summary.familyRevocations)"))
        }
        for amount in summary.total.refundedAmounts { items.append(("refunded", amount.description)) }
        let periods = figures.months.indices.map(figures.periods).reduce(0, +)
        if let rate = ReportFigures.rate(figures.subscriptionRefunds.reduce(0, +), periods) {
            items.append(("refund rate", SVGChart.label(rate * 100, percent: true)))
        }
        return "<div class=\"figures\">"
            + items.map { "<div class=\"figure\"><b>\(SVGChart.escape($0.1))</b>\(SVGChart.escape($0.0))</div>" }
            .joined() + "</div>"
    }

    /// `App Store`, `Stripe`, or a source's own name.
    static func channelName(_ source: String) -> String {
        switch source {
        case EntitlementSource.appStore.rawValue: "App Store"
        case EntitlementSource.stripe.rawValue: "Stripe"
        default: source
        }
    }

    private var tierChart: String {
        let title = "Subscribers per day by tier"
        guard !figures.tiers.isEmpty else {
            return "<p class=\"note\">No tiers: give --tiers FILE to count accounts by their highest tier."
                + " All subscribers are shown.</p>"
                + SVGChart.lines(
                    id: "chart-subscribers-by-tier", title: title, labels: figures.days,
                    series: [.init(name: "all subscribers", values: figures.subscribers.map(Double.init))])
        }
        return "<p class=\"note\">Accounts by their highest tier (--tiers).</p>"
            + SVGChart.lines(
                id: "chart-subscribers-by-tier", title: title, labels: figures.days,
                series: figures.byTier.map { .init(name: $0.name, values: $0.values.map(Double.init)) })
    }

    private var channelChart: String {
        "<p class=\"note\">An account subscribed through both channels counts in each.</p>"
            + SVGChart.lines(
                id: "chart-subscribers-by-channel", title: "Subscribers per day by channel", labels: figures.days,
                series: [.init(name: "all subscribers", values: figures.subscribers.map(Double.init), dashed: true)]
                    + figures.byChannel.map {
                        .init(name: Self.channelName($0.name), values: $0.values.map(Double.init))
                    })
    }

    /// Monthly counts of the buckets `keys` picks from each month's summary; the keys past
    /// `limit` are summed as "other".
    private func monthly(
        _ buckets: (RevocationSummary) -> [String: RevocationSummary.Bucket], keys: [String], names: (String) -> String,
        limit: Int
    ) -> [SVGChart.Series] {
        let shown = Array(keys.prefix(limit))
        var series = shown.map { key in
            SVGChart.Series(
                name: names(key), values: figures.refundsByMonth.map { Double(buckets($0)[key]?.count ?? 0) },
                notes: figures.refundsByMonth.map { summary in
                    (buckets(summary)[key]?.refundedAmounts ?? []).map(\.description).joined(separator: ", ")
                })
        }
        if keys.count > limit {
            let rest = Set(keys.dropFirst(limit))
            series.append(
                .init(
                    name: "other (\(rest.count))",
                    values: figures.refundsByMonth.map { summary in
                        Double(buckets(summary).filter { rest.contains($0.key) }.map(\.value.count).reduce(0, +))
                    }))
        }
        return series
    }

    private var productChart: String {
        let keys = figures.topProducts(limit: Int.max).map(\.productId)
        return "<p class=\"note\">Refunds and Family Sharing revocations in force, by the month of revocationDate.</p>"
            + SVGChart.bars(
                id: "chart-refunds-by-product", title: "Refunds per month by product", labels: figures.months,
                series: monthly(\.byProduct, keys: keys, names: { $0 }, limit: Self.productsDrawn), stacked: true)
    }

    /// A `revocationReason` key of the summary by its name in Apple's documentation.
    static func reasonName(_ key: String) -> String {
        guard let raw = Int32(key) else { return key == "none" ? "no reason given" : key }
        return RevocationReason.knownNames[RevocationReason(rawValue: raw)].map { "\($0) (\(key))" } ?? "reason \(key)"
    }

    private var reasonChart: String {
        let keys = figures.refunds.byReason.keys.sorted()
        return "<p class=\"note\">Refunds and Family Sharing revocations in force, by revocationReason.</p>"
            + SVGChart.bars(
                id: "chart-refunds-by-reason", title: "Refunds per month by reason", labels: figures.months,
                series: monthly(\.byReason, keys: keys, names: Self.reasonName, limit: 8), stacked: true)
    }

    private var rateChart: String {
        let rates = figures.months.indices.map { month in
            (ReportFigures.rate(figures.subscriptionRefunds[month], figures.periods(month)) ?? 0) * 100
        }
        return "<p class=\"note\">Refunded subscription transactions per subscription start or renewal.</p>"
            + SVGChart.bars(
                id: "chart-refund-rate", title: "Refund rate per month", labels: figures.months,
                series: [.init(name: "refund rate", values: rates)], stacked: false, percent: true)
    }

    /// One row per month, a column per currency, amounts as ``CurrencyAmount`` writes them.
    private var amountTable: String {
        let currencies = Set(figures.refunds.total.refunded.keys).sorted()
        guard !currencies.isEmpty else { return "<p class=\"note\">Nothing refunded in the period.</p>" }
        var rows =
            "<tr><th>month</th><th>refunds</th>"
            + currencies.map { "<th>\(SVGChart.escape($0.isEmpty ? "no currency" : $0))</th>" }.joined() + "</tr>"
        for (month, summary) in zip(figures.months, figures.refundsByMonth) {
            rows += "<tr><td>\(month)</td><td>\(summary.refunds)</td>"
            for currency in currencies {
                let amount = summary.total.refunded[currency].map { CurrencyAmount($0, currency: currency).description }
                rows += "<td>\(SVGChart.escape(amount ?? "–"))</td>"
            }
            rows += "</tr>"
        }
        rows += "<tr><th>all</th><th>\(figures.refunds.refunds)</th>"
        for amount in figures.refunds.total.refundedAmounts {
            rows += "<th>\(SVGChart.escape(amount.description))</th>"
        }
        rows += "</tr>"
        return "<div class=\"table\"><table>\(rows)</table></div>"
    }

    private var topProducts: String {
        let top = figures.topProducts()
        let chart = SVGChart.ranking(
            id: "chart-top-products", title: "Most refunded products",
            items: top.map { product in
                (
                    product.productId, Double(product.bucket.count),
                    "\(product.bucket.count) revocations"
                        + (product.bucket.refunded.isEmpty
                            ? "" : ", " + product.bucket.refundedAmounts.map(\.description).joined(separator: ", "))
                )
            })
        guard !top.isEmpty else { return chart }
        var rows = "<tr><th>product</th><th>revocations</th><th>refunded</th></tr>"
        for product in top {
            rows +=
                "<tr><td>\(SVGChart.escape(product.productId))</td><td>\(product.bucket.count)</td>"
                + "<td>\(SVGChart.escape(product.bucket.refundedAmounts.map(\.description).joined(separator: ", ")))</td></tr>"
        }
        return chart + "<div class=\"table\"><table>\(rows)</table></div>"
    }
}
