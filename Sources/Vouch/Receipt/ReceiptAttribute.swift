/// One attribute of a receipt payload, exactly as signed: `SEQUENCE { type INTEGER,
/// version INTEGER, value OCTET STRING }`. Unknown types are kept, so nothing Apple adds is lost.
public struct ReceiptAttribute: Sendable, Hashable {
    /// The attribute's type, such as 2 for the bundle id or 17 for an in-app purchase.
    public let type: Int
    /// The attribute's version, as signed.
    public let version: Int
    /// The OCTET STRING's contents: for most types itself a DER value (UTF8String, IA5String,
    /// INTEGER), for type 17 a nested attribute set.
    public let value: [UInt8]

    /// An attribute of `type` and `version` holding `value`.
    public init(type: Int, version: Int, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }
}

/// Reads receipt attribute sets: `SET OF ReceiptAttribute` in DER or BER.
enum ReceiptAttributeSet {
    static let maximumAttributes = 100_000

    /// The attributes of `bytes`, in order. A type may occur once, except `repeatable` ones.
    static func parse(_ bytes: [UInt8], repeatable: [Int], what: String) throws(VerificationError) -> [ReceiptAttribute]
    {
        do throws(BERReader.Failure) {
            var outer = BERReader(bytes)
            let set = try outer.read(0x31, "the \(what) attribute SET")
            try outer.requireEnd("the \(what) attribute SET")
            var reader = try outer.children(of: set)
            var attributes: [ReceiptAttribute] = []
            while let sequence = try reader.next() {
                guard sequence.tag == 0x30 else { throw BERReader.Failure("an attribute that is not a SEQUENCE") }
                var fields = try reader.children(of: sequence)
                let type = try fields.integer(try fields.read(0x02, "an attribute type"))
                let version = try fields.integer(try fields.read(0x02, "an attribute version"))
                let value = try fields.octetString(try fields.read(0x04, "an attribute value"))
                try fields.requireEnd("an attribute")
                guard let type = Int(exactly: type), let version = Int(exactly: version) else {
                    throw BERReader.Failure("an attribute type or version out of range")
                }
                attributes.append(ReceiptAttribute(type: type, version: version, value: value))
                guard attributes.count <= maximumAttributes else {
                    throw BERReader.Failure("more than \(maximumAttributes) attributes")
                }
            }
            // Sorted, a repeated type sits beside its twin: no hashing per attribute.
            let types = attributes.map(\.type).filter { !repeatable.contains($0) }.sorted()
            for (first, second) in zip(types, types.dropFirst()) where first == second {
                throw BERReader.Failure(
                    "attribute type \(first) occurs twice in the \(what); a reader taking the first and one taking the last would disagree",
                    code: .receiptDuplicateAttribute)
            }
            return attributes
        } catch {
            throw VerificationError(error.code ?? .receiptMalformedPayload, "receipt payload: \(error.message)")
        }
    }
}

/// Typed readings of attribute values (each a whole DER value inside the OCTET STRING).
struct ReceiptValueReader {
    let attributes: [ReceiptAttribute]
    let what: String

    func attribute(_ type: Int) -> ReceiptAttribute? { attributes.first { $0.type == type } }

    /// A UTF8String or IA5String value.
    func string(_ type: Int) throws(VerificationError) -> String? {
        guard let value = attribute(type)?.value else { return nil }
        let (tag, contents) = try tlv(value, type: type)
        guard tag == 0x0C || tag == 0x16 else { throw malformed(type, "is not a UTF8String or IA5String") }
        guard let string = String(validating: contents, as: UTF8.self) else {
            throw malformed(type, "is not valid UTF-8")
        }
        if tag == 0x16, !contents.allSatisfy({ $0 < 0x80 }) {
            throw malformed(type, "is an IA5String with non-ASCII bytes")
        }
        return string
    }

    func integer(_ type: Int) throws(VerificationError) -> Int64? {
        guard let value = attribute(type)?.value else { return nil }
        let (tag, contents) = try tlv(value, type: type)
        guard tag == 0x02 else { throw malformed(type, "is not an INTEGER") }
        do throws(BERReader.Failure) {
            return try BERReader.integer(contents)
        } catch {
            throw malformed(type, "is \(error.message)")
        }
    }

    /// An IA5String RFC 3339 date; an empty string (which Apple writes for "none") is `nil`.
    func date(_ type: Int) throws(VerificationError) -> Timestamp? {
        guard let text = try string(type), !text.isEmpty else { return nil }
        guard let milliseconds = ReceiptDate.milliseconds(text) else {
            throw malformed(type, "is not an RFC 3339 date: \(text)")
        }
        return Timestamp(milliseconds: milliseconds)
    }

    func bytes(_ type: Int) -> [UInt8]? { attribute(type)?.value }

    private func tlv(_ value: [UInt8], type: Int) throws(VerificationError) -> (UInt8, ArraySlice<UInt8>) {
        do throws(BERReader.Failure) {
            var reader = BERReader(value)
            let element = try reader.read(value.first ?? 0, "the value")
            try reader.requireEnd("the value")
            guard !element.isConstructed else { throw BERReader.Failure("constructed") }
            return (element.tag, value[element.contents])
        } catch {
            throw malformed(type, "is not one DER value (\(error.message))")
        }
    }

    private func malformed(_ type: Int, _ detail: String) -> VerificationError {
        VerificationError(.receiptMalformedPayload, "receipt payload: \(what) attribute \(type) \(detail)")
    }
}

/// RFC 3339 dates as receipts write them: `2015-09-16T19:48:24Z`, Xcode's `+0300` offsets,
/// optional fractional seconds.
enum ReceiptDate {
    static func milliseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= b.count else { return nil }
            var value: Int64 = 0
            for index in range {
                guard b[index] >= 0x30, b[index] <= 0x39 else { return nil }
                value = value * 10 + Int64(b[index] - 0x30)
            }
            return value
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if b[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < b.count, b[index] >= 0x30, b[index] <= 0x39 {
                if digits < 3 { fraction = fraction * 10 + Int64(b[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { fraction *= 10 }
        }
        guard index < b.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch b[index] {
        case UInt8(ascii: "Z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[index] == UInt8(ascii: "+") ? 1 : -1
            index += 1
            guard let hours = number(index..<(index + 2)) else { return nil }
            index += 2
            if index < b.count, b[index] == UInt8(ascii: ":") { index += 1 }
            guard let minutes = number(index..<(index + 2)), hours < 24, minutes < 60 else { return nil }
            index += 2
            offsetMinutes = sign * (hours * 60 + minutes)
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + fraction
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// H. Hinnant's `days_from_civil`.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
