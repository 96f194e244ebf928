public import Foundation

/// Strict date text for the command-line options: `2025-03-01` (midnight UTC),
/// `2025-03-01T12:30:00Z`, `2025-03-01T12:30:00.250Z` (one to nine fraction digits, kept to the
/// millisecond) or an offset instead of `Z` (`2025-03-01T14:30:00+02:00`). No locale.
public enum MintDate {
    /// The instant `text` names, or `nil` when it is not one of the accepted forms or not a real
    /// calendar date.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is character: Unicode.Scalar) -> Bool {
            index < bytes.count && bytes[index] == UInt8(ascii: character)
        }
        guard bytes.count >= 10, let year = number(0..<4), byte(4, is: "-"), let month = number(5..<7),
            byte(7, is: "-"), let day = number(8..<10),
            (1...12).contains(month), (1...UTCCalendar.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var milliseconds = 0
        var offset = 0
        if bytes.count > 10 {
            guard byte(10, is: "T"), let h = number(11..<13), byte(13, is: ":"), let m = number(14..<16),
                byte(16, is: ":"), let s = number(17..<19), h < 24, m < 60, s < 60
            else { return nil }
            (hour, minute, second) = (h, m, s)
            var index = 19
            if byte(19, is: ".") {
                // One to nine digits; digits past the millisecond are dropped.
                var digits = 0
                while let digit = number((20 + digits)..<(21 + digits)), digits < 9 {
                    if digits < 3 { milliseconds = milliseconds * 10 + digit }
                    digits += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 3) { milliseconds *= 10 }
                index = 20 + digits
            }
            if byte(index, is: "Z") {
                guard index + 1 == bytes.count else { return nil }
            } else {
                guard byte(index, is: "+") || byte(index, is: "-"), let h = number((index + 1)..<(index + 3)),
                    byte(index + 3, is: ":"), let m = number((index + 4)..<(index + 6)), h < 24, m < 60,
                    index + 6 == bytes.count
                else { return nil }
                offset = (byte(index, is: "+") ? 1 : -1) * (h * 3600 + m * 60)
            }
        }
        let seconds =
            UTCCalendar.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
            - Int64(offset)
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(milliseconds) / 1000)
    }

    /// `date` moved by whole calendar years in UTC (February 29 becomes February 28).
    public static func adding(years: Int, to date: Date) -> Date {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return Date(timeIntervalSince1970: TimeInterval(UTCCalendar.addingMonths(12 * years, to: milliseconds)) / 1000)
    }

    /// `date` as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, rounded down).
    public static func format(_ date: Date) -> String {
        let (year, month, day, hour, minute, second) = UTCCalendar.components(
            seconds: Int64(date.timeIntervalSince1970.rounded(.down)))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))Z"
    }
}

/// Proleptic Gregorian calendar arithmetic in UTC, without Foundation's calendars (and so
/// without their time zone and locale state).
enum UTCCalendar {
    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64 {
        days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    static func components(seconds: Int64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day, secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
    }

    /// `milliseconds` moved by whole calendar months, the day clamped to the target month's end
    /// (January 31 plus one month is the last day of February).
    static func addingMonths(_ months: Int, to milliseconds: Int64) -> Int64 {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let remainder = milliseconds - seconds * 1000
        let c = components(seconds: seconds)
        let total = c.year * 12 + (c.month - 1) + months
        let year = total >= 0 ? total / 12 : (total - 11) / 12
        let month = total - year * 12 + 1
        let day = min(c.day, daysIn(month: month, year: year))
        return Self.seconds(year: year, month: month, day: day, hour: c.hour, minute: c.minute, second: c.second) * 1000
            + remainder
    }
}
