import Foundation

/// Charts as inline SVG text: lines over days, bars over months, ranked horizontal bars.
///
/// Every chart has a `viewBox` and no fixed size, so the page's style sets its width (100 % of
/// its box) and it scales from a phone to a wide screen. Each series has a legend entry and
/// each bar or point group a `<title>`, which browsers show as a tooltip. Nothing here reads or
/// loads anything: the text is the whole chart.
enum SVGChart {
    /// One named row of values, drawn in one colour.
    struct Series {
        let name: String
        let values: [Double]
        /// Drawn dashed (a total over the other lines), on top of them.
        var dashed = false
        /// What a bar's tooltip adds after its value, by position (amounts, say); may be empty.
        var notes: [String] = []
    }

    /// The width and height of the drawing area of every chart, in `viewBox` units.
    static let width = 480.0
    static let height = 270.0
    private static let left = 44.0
    private static let right = 10.0
    private static let bottom = 34.0

    /// Colours told apart by people with the common colour-vision deficiencies (Okabe and Ito).
    static let palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7A7A7A", "#F0E442"]

    static func colour(_ index: Int) -> String { palette[index % palette.count] }

    /// Text for an SVG or HTML text node or attribute value.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A number as SVG coordinates need it: at most one decimal.
    private static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)
    }

    /// A value as people read it on an axis or in a tooltip.
    static func label(_ value: Double, percent: Bool = false) -> String {
        if percent { return String(format: "%.1f %%", value) }
        return value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
    }

    /// A rounded top for the value axis and its step, so ticks fall on round numbers.
    /// Counts step by whole numbers; percentages may step by fractions.
    private static func scale(_ maximum: Double, percent: Bool) -> (top: Double, step: Double) {
        guard maximum > 0 else { return (1, 1) }
        let rough = maximum / 4
        let magnitude = pow(10, log10(rough).rounded(.down))
        var step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
        if !percent { step = max(step.rounded(.up), 1) }
        return ((maximum / step).rounded(.up) * step, step)
    }

    /// The legend rows above the plot: as many entries per row as fit, with room for the
    /// larger text the page sets at narrow widths.
    private static func legend(_ names: [String], into svg: inout String) -> Double {
        var x = left
        var y = 16.0
        for (index, name) in names.enumerated() {
            let shown = name.count > 28 ? String(name.prefix(27)) + "…" : name
            let entry = 18 + Double(shown.count) * 7.8 + 12
            if x + entry > width - right && x > left {
                x = left
                y += 18
            }
            svg +=
                "<rect x=\"\(number(x))\" y=\"\(number(y - 9))\" width=\"11\" height=\"11\" fill=\"\(colour(index))\"/>"
                + "<text x=\"\(number(x + 16))\" y=\"\(number(y + 1))\" class=\"legend\"><title>\(escape(name))</title>\(escape(shown))</text>"
            x += entry
        }
        return y + 14
    }

    /// The frame: the value axis with its ticks and grid lines, and the category labels.
    private static func axes(
        top plotTop: Double, maximum: Double, labels: [String], x: (Int) -> Double, percent: Bool,
        into svg: inout String
    ) -> (Double) -> Double {
        let (top, step) = scale(maximum, percent: percent)
        let plotBottom = height - bottom
        let y = { (value: Double) in plotBottom - (value / top) * (plotBottom - plotTop) }
        var tick = 0.0
        while tick <= top + step / 2 {
            svg +=
                "<line x1=\"\(number(left))\" x2=\"\(number(width - right))\" y1=\"\(number(y(tick)))\" y2=\"\(number(y(tick)))\" class=\"grid\"/>"
                + "<text x=\"\(number(left - 5))\" y=\"\(number(y(tick) + 4))\" class=\"tick\" text-anchor=\"end\">\(escape(label(tick, percent: percent)))</text>"
            tick += step
        }
        svg +=
            "<line x1=\"\(number(left))\" x2=\"\(number(width - right))\" y1=\"\(number(plotBottom))\" y2=\"\(number(plotBottom))\" class=\"axis\"/>"
        // Days of one year are labelled without it. As many labels as fit, evenly spread, the
        // last always shown and kept inside the chart.
        let year = labels.first.map { String($0.prefix(5)) } ?? ""
        let shorten = labels.first?.count == 10 && labels.allSatisfy { $0.hasPrefix(year) }
        let texts = shorten ? labels.map { String($0.dropFirst(5)) } : labels
        let longest = Double(texts.map(\.count).max() ?? 1)
        let fitting = max(2, Int((width - left - right) / (longest * 6.6 + 16)))
        let every = max(1, Int((Double(labels.count) / Double(fitting)).rounded(.up)))
        for index in labels.indices where (labels.count - 1 - index) % every == 0 {
            let place = x(index)
            let anchor = place + longest * 3.3 > width ? "end" : "middle"
            svg +=
                "<text x=\"\(number(anchor == "end" ? width - 2 : place))\" y=\"\(number(plotBottom + 16))\" class=\"tick\""
                + " text-anchor=\"\(anchor)\">\(escape(texts[index]))</text>"
        }
        return y
    }

    private static func open(id: String, title: String) -> String {
        "<svg id=\"\(escape(id))\" class=\"chart\" viewBox=\"0 0 \(number(width)) \(number(height))\" role=\"img\""
            + " aria-label=\"\(escape(title))\"><title>\(escape(title))</title>"
    }

    /// A line per series over `labels` (days). With `labels` of at most 400 entries, each has a
    /// column whose tooltip gives every series' value there.
    static func lines(id: String, title: String, labels: [String], series: [Series], percent: Bool = false) -> String {
        var svg = open(id: id, title: title)
        let plotTop = legend(series.map(\.name), into: &svg)
        let count = labels.count
        let span = (width - right - left) / Double(max(count - 1, 1))
        let x = { (index: Int) in count == 1 ? (left + width - right) / 2 : left + Double(index) * span }
        let maximum = series.flatMap(\.values).max() ?? 0
        let y = axes(top: plotTop, maximum: maximum, labels: labels, x: x, percent: percent, into: &svg)
        // Dashed lines last, so a total stays visible over the lines it sums.
        for (index, line) in series.enumerated().sorted(by: {
            ($0.element.dashed ? 1 : 0, $0.offset) < ($1.element.dashed ? 1 : 0, $1.offset)
        }) {
            let points = line.values.enumerated().map { "\(number(x($0.offset))),\(number(y($0.element)))" }
            svg +=
                "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(colour(index))\" stroke-width=\"2\""
                + (line.dashed ? " stroke-dasharray=\"5 4\"" : "") + "><title>\(escape(line.name))</title></polyline>"
        }
        if count <= 400 {
            for index in 0..<count {
                let values = series.map { "\($0.name) \(label($0.values[index], percent: percent))" }
                svg +=
                    "<rect x=\"\(number(x(index) - span / 2))\" y=\"\(number(plotTop))\" width=\"\(number(max(span, 1)))\""
                    + " height=\"\(number(height - bottom - plotTop))\" class=\"hover\"><title>\(escape(labels[index])): "
                    + "\(escape(values.joined(separator: ", ")))</title></rect>"
            }
        }
        return svg + "</svg>"
    }

    /// Bars per label (months): side by side, or stacked into one bar when `stacked`. Each bar
    /// has a tooltip with its label, series and value.
    static func bars(
        id: String, title: String, labels: [String], series: [Series], stacked: Bool, percent: Bool = false
    ) -> String {
        var svg = open(id: id, title: title)
        let plotTop = legend(series.map(\.name), into: &svg)
        let count = max(labels.count, 1)
        let band = (width - right - left) / Double(count)
        let x = { (index: Int) in left + (Double(index) + 0.5) * band }
        let maximum =
            stacked
            ? labels.indices.map { index in series.reduce(0) { $0 + $1.values[index] } }.max() ?? 0
            : series.flatMap(\.values).max() ?? 0
        let y = axes(top: plotTop, maximum: maximum, labels: labels, x: x, percent: percent, into: &svg)
        let inner = band * 0.8
        for index in labels.indices {
            var base = 0.0
            for (position, row) in series.enumerated() {
                let value = row.values[index]
                guard value > 0 else { continue }
                let barX: Double
                let barWidth: Double
                let low: Double
                if stacked {
                    barWidth = inner
                    barX = x(index) - inner / 2
                    low = base
                    base += value
                } else {
                    barWidth = inner / Double(max(series.count, 1))
                    barX = x(index) - inner / 2 + Double(position) * barWidth
                    low = 0
                }
                let high = low + value
                svg +=
                    "<rect x=\"\(number(barX))\" y=\"\(number(y(high)))\" width=\"\(number(max(barWidth - 1, 0.5)))\""
                    + " height=\"\(number(max(y(low) - y(high), 0.5)))\" fill=\"\(colour(position))\">"
                    + "<title>\(escape(labels[index])): \(escape(row.name)) \(escape(label(value, percent: percent)))"
                    + (index < row.notes.count && !row.notes[index].isEmpty ? " (\(escape(row.notes[index])))" : "")
                    + "</title></rect>"
            }
        }
        return svg + "</svg>"
    }

    /// One horizontal bar per item, largest first as given, its label and value written on it.
    static func ranking(id: String, title: String, items: [(label: String, value: Double, detail: String)]) -> String {
        let rowHeight = 24.0
        let chartHeight = max(Double(items.count) * rowHeight + 12, 40)
        var svg =
            "<svg id=\"\(escape(id))\" class=\"chart\" viewBox=\"0 0 \(number(width)) \(number(chartHeight))\" role=\"img\""
            + " aria-label=\"\(escape(title))\"><title>\(escape(title))</title>"
        let maximum = items.map(\.value).max() ?? 0
        let full = width - right - 8
        for (index, item) in items.enumerated() {
            let top = 6 + Double(index) * rowHeight
            let length = maximum > 0 ? max(item.value / maximum * full, 2) : 2
            let shown = item.label.count > 44 ? String(item.label.prefix(43)) + "…" : item.label
            svg +=
                "<rect x=\"8\" y=\"\(number(top))\" width=\"\(number(length))\" height=\"\(number(rowHeight - 4))\" fill=\"\(colour(0))\" fill-opacity=\"0.28\">"
                + "<title>\(escape(item.label)): \(escape(item.detail))</title></rect>"
                + "<text x=\"12\" y=\"\(number(top + 15))\" class=\"bar-label\">\(escape(shown)) · \(escape(label(item.value)))</text>"
        }
        if items.isEmpty {
            svg += "<text x=\"12\" y=\"24\" class=\"bar-label\">none in the period</text>"
        }
        return svg + "</svg>"
    }
}
