import Foundation
import Testing

@testable import Vouch

/// The one calendar: instants to dates and back, the ISO 8601 forms of the command-line options
/// and of receipts, and the text every printed date is made of.
struct CivilTimeTests {
    @Test func everyInstantComesBackFromItsCalendarTime() {
        var milliseconds: Int64 = -62_167_219_200_000 - 86_400_000 * 400  // year -1 and before
        while milliseconds < 253_402_300_800_000 + 86_400_000 * 400 {
            let time = CivilTime(milliseconds: milliseconds)
            #expect(time.milliseconds == milliseconds, "\(milliseconds)")
            #expect((1...12).contains(time.month) && time.day >= 1)
            #expect(time.day <= CivilTime.daysIn(month: time.month, year: time.year))
            milliseconds += 86_400_000 * 37 + 3_600_000 * 5 + 61_001
        }
        for edge in [Int64.min + 86_400_000, Int64.max - 86_400_000, -1, 0] {
            #expect(CivilTime(milliseconds: edge).milliseconds == edge)
        }
        #expect(CivilTime(milliseconds: .min).year == -292_275_055)
        #expect(CivilTime(milliseconds: .max).iso8601(fraction: true) == "+292278994-08-17T07:12:55.807Z")
    }

    /// Foundation's Gregorian calendar is Julian before 1582; from then on the two agree.
    @Test func datesAgreeWithFoundationsGregorianCalendarFrom1583() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var seconds: Int64 = -12_212_553_600  // 1583-01-01
        while seconds < 253_402_300_800 {
            let parts = calendar.dateComponents(
                [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds))
            )
            let time = CivilTime(milliseconds: seconds * 1000)
            let expected = [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second].map {
                Int64($0!)
            }
            #expect([time.year, time.month, time.day, time.hour, time.minute, time.second] == expected)
            seconds += 86_400 * 59 + 3_607
        }
    }

    @Test(arguments: [
        ("2025-03-01", 1_740_787_200_000 as Int64?, nil as Int64?),
        ("2025-03-01T12:30:00Z", 1_740_832_200_000, 1_740_832_200_000),
        ("2025-03-01T12:30:00.250Z", 1_740_832_200_250, 1_740_832_200_250),
        ("2025-03-01T14:30:00.25+02:00", 1_740_832_200_250, 1_740_832_200_250),
        ("2025-03-01T14:30:00+0200", nil, 1_740_832_200_000),
        ("2025-03-01T12:30:00.123456789Z", 1_740_832_200_123, 1_740_832_200_123),
        ("2025-03-01T12:30:00.1234567891Z", nil, 1_740_832_200_123),
        ("2024-02-29T23:59:59-00:30", 1_709_252_999_000, 1_709_252_999_000),
        ("2025-02-29", nil, nil),
        ("2025-02-29T00:00:00Z", nil, nil),
        ("2025-03-01T24:00:00Z", nil, nil),
        ("2025-03-01T12:60:00Z", nil, nil),
        ("2025-03-01T12:30:60Z", nil, nil),
        ("2025-03-01T12:30:00", nil, nil),
        ("2025-03-01 12:30:00Z", nil, nil),
        ("2025-03-01T12:30:00.Z", nil, nil),
        ("2025-03-01T12:30:00Zjunk", nil, nil),
        ("2025-03-01T12:30:00+24:00", nil, nil),
        ("2025-3-01", nil, nil),
        ("+2025-03-01", nil, nil),
    ])
    func theOptionAndReceiptFormsAreReadByOneParser(text: String, option: Int64?, receipt: Int64?) {
        #expect(CivilTime.milliseconds(text, .option) == option)
        #expect(CivilTime.milliseconds(text, .receipt) == receipt)
        #expect(CivilTime.date(text, .option).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == option)
    }

    @Test func monthsAreAddedOnTheCalendarWithTheDayClamped() throws {
        func add(_ months: Int64, to text: String) throws -> String {
            let start = try #require(CivilTime.milliseconds(text, .option))
            return CivilTime(milliseconds: CivilTime.adding(months: months, to: start)).iso8601(fraction: true)
        }
        #expect(try add(1, to: "2025-01-31T10:00:00.5Z") == "2025-02-28T10:00:00.500Z")
        #expect(try add(1, to: "2024-01-31") == "2024-02-29T00:00:00.000Z")
        #expect(try add(12, to: "2024-02-29") == "2025-02-28T00:00:00.000Z")
        #expect(try add(-13, to: "2025-01-15") == "2023-12-15T00:00:00.000Z")
    }

    @Test func theTextFormsAreISO8601WithSignedYearsOutsideFourDigits() {
        let time = CivilTime(year: 2023, month: 8, day: 28, hour: 10, minute: 24, second: 5, millisecond: 7)
        #expect(time.iso8601(fraction: true) == "2023-08-28T10:24:05.007Z")
        #expect(time.iso8601(fraction: false) == "2023-08-28T10:24:05Z")
        #expect(time.text(separator: " ", fraction: false) == "2023-08-28 10:24:05")
        #expect(CivilTime(year: 10_000, month: 1, day: 1).iso8601(fraction: false) == "+10000-01-01T00:00:00Z")
        #expect(CivilTime(year: -1, month: 12, day: 31).iso8601(fraction: false) == "-0001-12-31T00:00:00Z")
    }
}
