public import Foundation
internal import Vouch

/// Strict date text for the command-line options: `2025-03-01` (midnight UTC),
/// `2025-03-01T12:30:00Z`, `2025-03-01T12:30:00.250Z` (one to nine fraction digits, kept to the
/// millisecond) or an offset instead of `Z` (`2025-03-01T14:30:00+02:00`). No locale. The
/// calendar is Vouch's one ISO 8601 reader and writer; these are its `Date` forms.
public enum MintDate {
    /// The instant `text` names, or `nil` when it is not one of the accepted forms or not a real
    /// calendar date.
    public static func parse(_ text: String) -> Date? {
        CivilTime.date(text, .option)
    }

    /// `date` moved by whole calendar years in UTC (February 29 becomes February 28).
    public static func adding(years: Int, to date: Date) -> Date {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return Date(
            timeIntervalSince1970: TimeInterval(CivilTime.adding(months: 12 * Int64(years), to: milliseconds)) / 1000)
    }

    /// `date` as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, rounded down).
    public static func format(_ date: Date) -> String {
        CivilTime(milliseconds: Int64(date.timeIntervalSince1970.rounded(.down)) * 1000).iso8601(fraction: false)
    }
}
