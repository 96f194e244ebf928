public import Foundation

/// A payload date: a UNIX time in milliseconds, kept as the exact number text Apple sent.
///
/// The App Store sends integers; Xcode's StoreKit testing sends fractions such as
/// `1697679936049.7297` and negative values for year-1 dates. ``rawValue`` keeps the text,
/// ``milliseconds`` is its floor, so comparisons on whole milliseconds never round up into the
/// future.
///
/// Timestamps order by the instant they denote, fractions included; two texts of one instant
/// (`1000` and `1e3`) are ordered by their text, so the order is total and agrees with `==`
/// (which compares the text). Encoded with `Codable`, a timestamp is the JSON number itself.
///
/// To and from `Date`: ``date`` is the instant as a `Date`, and ``init(_:)`` reads a `Date` as
/// the whole millisecond it falls in, so a timestamp of whole milliseconds (all the App Store
/// sends) comes back from its `Date` exactly: `Timestamp(t.date) == t`. A `Date` holds binary
/// seconds since 2001, which cannot spell every millisecond exactly; Vouch never takes the
/// floor of that arithmetic, which would read a millisecond's own `Date` as the millisecond
/// before it. Xcode's fractional timestamps come back from a `Date` as their whole millisecond.
public struct Timestamp: Sendable, Hashable, RawRepresentable, Comparable, Codable, CustomStringConvertible {
    /// The number exactly as it appeared in the payload.
    public let rawValue: String
    /// The number rounded down to a whole millisecond (exact for integers).
    public let milliseconds: Int64

    /// Reads a JSON number (RFC 8259 grammar: sign, fraction and exponent allowed); `nil` when
    /// the text is not a JSON number or its floor does not fit in `Int64`.
    public init?(rawValue: String) {
        guard let milliseconds = Self.floor(ofNumber: rawValue) else { return nil }
        self.rawValue = rawValue
        self.milliseconds = milliseconds
    }

    /// The instant `milliseconds` after the UNIX epoch, written as that integer.
    public init(milliseconds: Int64) {
        self.rawValue = String(milliseconds)
        self.milliseconds = milliseconds
    }

    /// The whole millisecond `date` falls in: the latest millisecond whose ``date`` is not after
    /// `date` (clamped to the `Int64` range). `Timestamp(Timestamp(milliseconds: m).date)` is
    /// `m` for every instant within 100,000 years of 1970, and a `Date` between two
    /// milliseconds reads as the earlier one.
    public init(_ date: Date) {
        let estimate = (date.timeIntervalSince1970 * 1000).rounded(.down)
        if estimate >= 0x1p63 {
            self.init(milliseconds: .max)
        } else if estimate < -0x1p63 || estimate.isNaN {
            self.init(milliseconds: estimate.isNaN ? 0 : .min)
        } else {
            // The estimate is within one of the answer: the product above rounds, and so did
            // the making of `date` from its millisecond.
            var milliseconds = Int64(estimate)
            if milliseconds < .max, Self.date(milliseconds: milliseconds + 1) <= date {
                milliseconds += 1
            } else if milliseconds > .min, Self.date(milliseconds: milliseconds) > date {
                milliseconds -= 1
            }
            self.init(milliseconds: milliseconds)
        }
    }

    /// A whole number of seconds since 1970 (certificate validity), clamped to the range.
    init(seconds: Int64) {
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        self.init(milliseconds: overflow ? (seconds < 0 ? .min : .max) : milliseconds)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        if lhs.milliseconds != rhs.milliseconds { return lhs.milliseconds < rhs.milliseconds }
        if lhs.rawValue == rhs.rawValue { return false }
        // Same whole millisecond: compare what lies below it, then the text.
        let left = lhs.fraction
        let right = rhs.fraction
        if left != right { return left < right }
        return lhs.rawValue < rhs.rawValue
    }

    /// The part below the whole millisecond, as a decimal in [0, 1) (exact to 38 digits).
    private var fraction: Decimal {
        guard let exact = Decimal(string: rawValue, locale: Locale(identifier: "en_US_POSIX")) else { return 0 }
        return exact - Decimal(milliseconds)
    }

    /// Decodes a JSON number (its text kept where the decoder allows: integers exactly,
    /// fractions through `Decimal`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard case .number(let text) = try JSONValue(from: decoder), let timestamp = Timestamp(rawValue: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a timestamp is a number of milliseconds within the 64-bit range")
        }
        self = timestamp
    }

    /// Encodes the JSON number (see ``JSONValue/encode(to:)``).
    public func encode(to encoder: any Encoder) throws {
        try JSONValue.number(rawValue).encode(to: encoder)
    }

    /// The instant, fraction included (to `Double` precision); ``init(_:)`` reads it back as
    /// ``milliseconds``.
    public var date: Date {
        Date(timeIntervalSince1970: (Double(rawValue) ?? Double(milliseconds)) / 1000)
    }

    /// The `Date` of a whole millisecond, as ``date`` makes it from an integer's text: what
    /// ``init(_:)`` compares with.
    private static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// ``milliseconds`` in UTC as `YYYY-MM-DDThh:mm:ss.sssZ`, in the proleptic Gregorian calendar
    /// ISO 8601 uses. Years outside 0000...9999 take a sign and as many digits as needed.
    ///
    /// Foundation's calendar switches to Julian before 1582, so Xcode's "0001-01-01"
    /// (`-62135769600000`) prints here as `0000-12-30T00:00:00.000Z`.
    public var iso8601: String {
        CivilTime(milliseconds: milliseconds).iso8601(fraction: true)
    }

    public var description: String { iso8601 }

    /// The floor of a JSON number, computed on its decimal digits so no binary rounding occurs.
    private static func floor(ofNumber text: String) -> Int64? {
        // The common case, a plain positive integer of up to 18 digits, needs no general parse
        // (read from the string's contiguous bytes: a byte at a time through `utf8` costs
        // more than the arithmetic).
        var contiguous = text
        let plain: Int64? = contiguous.withUTF8 { utf8 in
            guard utf8.count <= 18, let first = utf8.first, first != UInt8(ascii: "0") || utf8.count == 1 else {
                return nil
            }
            var value: Int64 = 0
            for byte in utf8 {
                guard isDigit(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        if let plain { return plain }
        var bytes = text.utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }

        let integerDigits = bytes.prefix(while: isDigit)
        guard !integerDigits.isEmpty, integerDigits.count == 1 || integerDigits.first != UInt8(ascii: "0") else {
            return nil
        }
        bytes = bytes.dropFirst(integerDigits.count)

        var fractionDigits = bytes.prefix(0)
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fractionDigits = bytes.prefix(while: isDigit)
            guard !fractionDigits.isEmpty else { return nil }
            bytes = bytes.dropFirst(fractionDigits.count)
        }

        var exponent = 0
        if let marker = bytes.first, marker | 0x20 == UInt8(ascii: "e") {
            bytes = bytes.dropFirst()
            var exponentSign = 1
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                if sign == UInt8(ascii: "-") { exponentSign = -1 }
                bytes = bytes.dropFirst()
            }
            let exponentDigits = bytes.prefix(while: isDigit)
            guard !exponentDigits.isEmpty else { return nil }
            bytes = bytes.dropFirst(exponentDigits.count)
            // Saturate: beyond a million the result is zero or out of range either way.
            for digit in exponentDigits {
                exponent = min(exponent * 10 + Int(digit - UInt8(ascii: "0")), 1_000_000)
            }
            exponent *= exponentSign
        }
        guard bytes.isEmpty else { return nil }

        // value = significand × 10^scale, with the significand's leading zeros dropped.
        let significand = Array((Array(integerDigits) + Array(fractionDigits)).drop(while: { $0 == UInt8(ascii: "0") }))
        guard !significand.isEmpty else { return 0 }
        let scale = exponent - fractionDigits.count

        let wholeDigits: ArraySlice<UInt8>
        let trailingZeros: Int
        let hasFraction: Bool
        if scale >= 0 {
            wholeDigits = significand[...]
            trailingZeros = scale
            hasFraction = false
        } else if -scale >= significand.count {
            wholeDigits = []
            trailingZeros = 0
            hasFraction = true
        } else {
            wholeDigits = significand.dropLast(-scale)
            trailingZeros = 0
            hasFraction = significand.suffix(-scale).contains { $0 != UInt8(ascii: "0") }
        }
        // More than 19 digits is at least 10^19, beyond Int64 either way.
        guard wholeDigits.count + trailingZeros <= 19 else { return nil }

        var magnitude: UInt64 = 0
        for digit in wholeDigits {
            magnitude = magnitude * 10 + UInt64(digit - UInt8(ascii: "0"))
        }
        for _ in 0..<trailingZeros {
            magnitude *= 10
        }
        // At most 19 digits, so magnitude < 10^19 < 2^64 and neither step above nor the
        // rounding below can wrap.
        if negative {
            if hasFraction { magnitude += 1 }
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
