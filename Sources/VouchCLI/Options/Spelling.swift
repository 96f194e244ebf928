import Foundation
import Vouch

/// How option values are spelled, the same for every command.
enum Spelling {
    /// A value from a closed list, matched without regard to letter case (`--kind
    /// Renewal-Info` and `--environment sandbox` alike).
    static func choice<Value>(
        _ text: String, option: String, among values: [Value], name: (Value) -> String
    ) throws(UsageError) -> Value {
        if let value = values.first(where: { name($0).lowercased() == text.lowercased() }) { return value }
        throw UsageError("\(option) must be one of \(values.map(name).joined(separator: ", ")); got '\(text)'")
    }

    /// One or more values from a closed list, separated by commas (`--environment
    /// Production,Sandbox`), each matched as ``choice(_:option:among:name:)`` matches one.
    static func choices<Value>(
        _ text: String, option: String, among values: [Value], name: (Value) -> String
    ) throws(UsageError) -> [Value] {
        var chosen: [Value] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            chosen.append(try choice(String(item), option: option, among: values, name: name))
        }
        return chosen
    }

    /// An instant: `2025-03-01`, `2025-03-01T12:30:00Z`, `2025-03-01T12:30:00.250Z` or with an
    /// offset (`+02:00`); the same forms for `--at`, `--date` and every validity option.
    static func date(_ text: String, option: String, alternatives: String = "") throws(UsageError) -> Date {
        guard let date = CivilTime.date(text, .option) else {
            throw UsageError(
                "\(option): \"\(text)\" is not \(alternatives)a date such as 2025-03-01 or 2025-03-01T12:30:00Z")
        }
        return date
    }
}
