package import Foundation

/// A calendar date and time of day in UTC, in the proleptic Gregorian calendar that ISO 8601
/// uses (no switch to the Julian calendar in 1582), to the millisecond.
///
/// The one conversion between instants and calendar dates (H. Hinnant's `days_from_civil` and
/// `civil_from_days`, valid for the whole `Int64` millisecond range) and the one reader and
/// writer of ISO 8601 text, for every date Vouch reads or prints: payload timestamps, receipt
/// dates, the command-line options and the test data VouchMint signs. No Foundation calendar,
/// time zone or locale takes part.
package struct CivilTime: Sendable, Hashable {
    package var year: Int64
    /// 1 to 12.
    package var month: Int64
    /// 1 to the month's length.
    package var day: Int64
    package var hour: Int64
    package var minute: Int64
    package var second: Int64
    package var millisecond: Int64

    package init(
        year: Int64, month: Int64, day: Int64, hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0,
        millisecond: Int64 = 0
    ) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = millisecond
    }

    /// The calendar time `milliseconds` after 1970-01-01T00:00:00Z (before it when negative).
    package init(milliseconds: Int64) {
        let millisecondsPerDay: Int64 = 86_400_000
        var days = milliseconds / millisecondsPerDay
        var timeOfDay = milliseconds % millisecondsPerDay
        if timeOfDay < 0 {
            timeOfDay += millisecondsPerDay
            days -= 1
        }
        (year, month, day) = Self.civilDate(daysSince1970: days)
        hour = timeOfDay / 3_600_000
        minute = timeOfDay / 60_000 % 60
        second = timeOfDay / 1000 % 60
        millisecond = timeOfDay % 1000
    }

    /// Milliseconds since 1970-01-01T00:00:00Z (for calendar times within a day of the ends of
    /// the `Int64` range at most).
    package var milliseconds: Int64 {
        (Self.daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second) * 1000
            + millisecond
    }

    package static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    package static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a calendar date (`days_from_civil`).
    package static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The calendar date of a day since 1970-01-01 (`civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // March is 0
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `milliseconds` moved by whole calendar months, the day clamped to the target month's end
    /// (January 31 plus one month is the last day of February; February 29 plus twelve months
    /// is February 28).
    package static func adding(months: Int64, to milliseconds: Int64) -> Int64 {
        var time = CivilTime(milliseconds: milliseconds)
        let total = time.year * 12 + (time.month - 1) + months
        time.year = total >= 0 ? total / 12 : (total - 11) / 12
        time.month = total - time.year * 12 + 1
        time.day = min(time.day, daysIn(month: time.month, year: time.year))
        return time.milliseconds
    }

    // MARK: Writing

    /// `YYYY-MM-DD`, `separator`, `hh:mm:ss`, and `.sss` with `fraction`: years outside
    /// 0000...9999 take a sign and as many digits as needed.
    package func text(separator: String = "T", fraction: Bool) -> String {
        let yearText =
            switch year {
            case 0...9999: Self.pad(year, 4)
            case ..<0: "-" + Self.pad(-year, 4)
            default: "+" + String(year)
            }
        let time = Self.pad(hour, 2) + ":" + Self.pad(minute, 2) + ":" + Self.pad(second, 2)
        return yearText + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2) + separator + time
            + (fraction ? "." + Self.pad(millisecond, 3) : "")
    }

    /// ISO 8601 in UTC: `YYYY-MM-DDThh:mm:ss.sssZ`, or `YYYY-MM-DDThh:mm:ssZ` without `fraction`.
    package func iso8601(fraction: Bool) -> String {
        text(fraction: fraction) + "Z"
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // MARK: Reading

    /// The ISO 8601 forms a reader accepts. Every form has a four-digit year and two-digit
    /// fields, a real calendar date, hours below 24, minutes and seconds below 60, and digits
    /// of a fraction past the millisecond dropped.
    package struct Grammar: Sendable {
        /// A date alone (`2025-03-01`) means its midnight UTC.
        var dateAlone: Bool
        /// At most this many fraction digits; `nil` for any number.
        var maximumFractionDigits: Int?
        /// An offset may be written without its colon (`+0300`).
        var offsetColonOptional: Bool

        /// The command-line options: `2025-03-01` (midnight UTC), `2025-03-01T12:30:00Z`,
        /// `2025-03-01T12:30:00.250Z` (one to nine fraction digits) or an offset instead of `Z`
        /// (`2025-03-01T14:30:00+02:00`).
        package static let option = Grammar(dateAlone: true, maximumFractionDigits: 9, offsetColonOptional: false)
        /// RFC 3339 as receipts write it: `2015-09-16T19:48:24Z`, Xcode's `+0300` offsets, any
        /// number of fraction digits.
        package static let receipt = Grammar(dateAlone: false, maximumFractionDigits: nil, offsetColonOptional: true)
    }

    /// The instant `text` names in `grammar`, as milliseconds since 1970; `nil` when it is not
    /// one of the grammar's forms or not a real calendar date.
    package static func milliseconds(_ text: String, _ grammar: Grammar) -> Int64? {
        Array(text.utf8).withUnsafeBufferPointer { milliseconds($0, grammar) }
    }

    /// The instant the UTF-8 `text` names in `grammar` (see ``milliseconds(_:_:)-(String,_)``).
    package static func milliseconds(_ text: UnsafeBufferPointer<UInt8>, _ grammar: Grammar) -> Int64? {
        instant(text, grammar).map { $0.seconds * 1000 + $0.millisecond }
    }

    /// The instant `text` names in `grammar` as a `Date`: the whole seconds plus the
    /// millisecond (so a date given to the millisecond reads back as that millisecond).
    package static func date(_ text: String, _ grammar: Grammar) -> Date? {
        guard let instant = Array(text.utf8).withUnsafeBufferPointer({ instant($0, grammar) }) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(instant.seconds) + TimeInterval(instant.millisecond) / 1000)
    }

    /// The instant the UTF-8 `text` names in `grammar`: whole seconds since 1970 and the
    /// millisecond within the second.
    package static func instant(_ b: UnsafeBufferPointer<UInt8>, _ grammar: Grammar) -> (
        seconds: Int64, millisecond: Int64
    )? {
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= b.count else { return nil }
            var value: Int64 = 0
            for index in range {
                guard b[index] >= UInt8(ascii: "0"), b[index] <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(b[index] - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is character: Unicode.Scalar) -> Bool {
            index < b.count && b[index] == UInt8(ascii: character)
        }
        guard let year = number(0..<4), byte(4, is: "-"), let month = number(5..<7), byte(7, is: "-"),
            let day = number(8..<10), (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var time = CivilTime(year: year, month: month, day: day)
        if b.count == 10 && grammar.dateAlone { return (time.milliseconds / 1000, 0) }
        guard byte(10, is: "T"), let hour = number(11..<13), byte(13, is: ":"), let minute = number(14..<16),
            byte(16, is: ":"), let second = number(17..<19), hour < 24, minute < 60, second < 60
        else { return nil }
        (time.hour, time.minute, time.second) = (hour, minute, second)
        var index = 19
        var millisecond: Int64 = 0
        if byte(index, is: ".") {
            index += 1
            var digits = 0
            while let digit = number(index..<(index + 1)) {
                if digits < 3 { millisecond = millisecond * 10 + digit }
                digits += 1
                index += 1
            }
            guard digits > 0, digits <= grammar.maximumFractionDigits ?? digits else { return nil }
            for _ in digits..<max(digits, 3) { millisecond *= 10 }
        }
        var offsetMinutes: Int64 = 0
        if byte(index, is: "Z") {
            index += 1
        } else {
            guard byte(index, is: "+") || byte(index, is: "-"), let hours = number((index + 1)..<(index + 3)) else {
                return nil
            }
            let sign: Int64 = byte(index, is: "+") ? 1 : -1
            index += 3
            if byte(index, is: ":") {
                index += 1
            } else if !grammar.offsetColonOptional {
                return nil
            }
            guard let minutes = number(index..<(index + 2)), hours < 24, minutes < 60 else { return nil }
            index += 2
            offsetMinutes = sign * (hours * 60 + minutes)
        }
        guard index == b.count else { return nil }
        return (time.milliseconds / 1000 - offsetMinutes * 60, millisecond)
    }
}
