import Foundation

/// An aligned text table for people, within a width: the first column (the row's name) left-
/// aligned, the others right-aligned, two spaces apart. Columns that do not fit go to a
/// continuation table below, which repeats the first column; a name longer than
/// ``maximumNameWidth`` is cut with `…`.
struct TextTable {
    /// The header of each column, the first naming the rows.
    var headers: [String]
    /// The cells of each row, as many as headers.
    var rows: [[String]] = []

    /// The widest a row's name is shown.
    static let maximumNameWidth = 48

    init(_ headers: [String]) {
        self.headers = headers
    }

    mutating func append(_ row: [String]) {
        rows.append(row)
    }

    /// The table's lines, each `indent` and at most `width` characters long; the tables of
    /// columns that did not fit follow, each after a blank line.
    func lines(width: Int = 120, indent: String = "  ") -> [String] {
        let names = [headers[0]] + rows.map { Self.cut($0[0]) }
        let nameWidth = names.map(\.count).max() ?? 0
        let widths = headers.indices.dropFirst().map { column in
            ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        // Columns after the first, packed into parts that fit.
        var parts: [[Int]] = [[]]
        var used = indent.count + nameWidth
        for column in headers.indices.dropFirst() {
            let needed = 2 + widths[column - 1]
            if used + needed > width, !parts[parts.count - 1].isEmpty {
                parts.append([])
                used = indent.count + nameWidth
            }
            parts[parts.count - 1].append(column)
            used += needed
        }
        var lines: [String] = []
        for (number, part) in parts.enumerated() {
            if number > 0 { lines.append("") }
            for (row, name) in names.enumerated() {
                var line = indent + name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                for column in part {
                    let cell = row == 0 ? headers[column] : rows[row - 1][column]
                    line += "  " + String(repeating: " ", count: widths[column - 1] - cell.count) + cell
                }
                lines.append(line)
            }
        }
        return lines
    }

    /// `name`, cut to ``maximumNameWidth`` with `…` at its end.
    static func cut(_ name: String) -> String {
        name.count <= maximumNameWidth ? name : String(name.prefix(maximumNameWidth - 1)) + "…"
    }

    /// `items` joined with `, ` into lines of at most `width` characters, the first starting
    /// with `lead`, the next with as many spaces.
    static func wrap(_ items: [String], lead: String, width: Int = 120) -> [String] {
        var lines: [String] = []
        var line = lead
        for (index, item) in items.enumerated() {
            let piece = item + (index < items.count - 1 ? "," : "")
            if line.count > lead.count, line.count + 1 + piece.count > width {
                lines.append(line)
                line = String(repeating: " ", count: lead.count) + piece
            } else {
                line += (line.count > lead.count ? " " : "") + piece
            }
        }
        lines.append(line)
        return lines
    }
}
