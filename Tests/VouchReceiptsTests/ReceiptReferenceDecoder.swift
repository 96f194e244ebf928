@testable import Vouch
@testable import VouchReceipts

// The receipt payload decoder as it was when every attribute value was its own array and
// every typed value a String read on the spot: the reference the decoder of ranges is held to
// (ReceiptDecoderDifferentialTests). Kept as it was; do not optimise.

/// The BER reader receipts were decoded with before attribute values became ranges of the
/// payload, kept unchanged as the reference for the decoder differential.
///
/// Definite lengths must be minimal (no leading zero octets, the long form only from 128 on)
/// and at most four octets; indefinite lengths are allowed for constructed values only, which
/// Xcode's receipts use. Tags are single-octet. Every element lies inside its parent, nesting
/// is bounded, and a reader is done only when its range is consumed to the last byte.
struct ReferenceBERReader {
    /// Why bytes are not well-formed BER; the caller turns it into an error code.
    struct Failure: Error {
        let message: String
        /// A more specific code than the caller's default, when the rule broken has one.
        let code: VerificationError.Code?
        init(_ message: String, code: VerificationError.Code? = nil) {
            self.message = message
            self.code = code
        }
    }

    struct Element {
        /// The identifier octet: class, constructed bit and tag number.
        let tag: UInt8
        /// The whole TLV, end-of-contents octets included.
        let whole: Range<Int>
        /// The contents, without the end-of-contents octets of an indefinite length.
        let contents: Range<Int>
        let indefinite: Bool

        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    static let maximumDepth = 16

    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int
    let depth: Int

    init(_ bytes: [UInt8], range: Range<Int>? = nil, depth: Int = 0) {
        self.bytes = bytes
        let range = range ?? 0..<bytes.count
        self.position = range.lowerBound
        self.end = range.upperBound
        self.depth = depth
    }

    /// A reader over the contents of a constructed element.
    func children(of element: Element) throws(Failure) -> ReferenceBERReader {
        guard element.isConstructed else { throw Failure("a primitive value where a constructed one is required") }
        guard depth + 1 < Self.maximumDepth else { throw Failure("nesting deeper than \(Self.maximumDepth)") }
        return ReferenceBERReader(bytes, range: element.contents, depth: depth + 1)
    }

    var isAtEnd: Bool { position >= end }

    /// The next element, or `nil` at the end of the range.
    mutating func next() throws(Failure) -> Element? {
        guard position < end else { return nil }
        let element = try Self.element(in: bytes, at: position, end: end, depth: depth)
        position = element.whole.upperBound
        return element
    }

    /// The next element, which must exist and carry `tag`.
    mutating func read(_ tag: UInt8, _ what: @autoclosure () -> String) throws(Failure) -> Element {
        guard let element = try next() else { throw Failure("\(what()) is missing") }
        guard element.tag == tag else {
            throw Failure("\(what()) has tag 0x\(String(element.tag, radix: 16)), expected 0x\(String(tag, radix: 16))")
        }
        return element
    }

    /// The next element if it carries `tag`, without consuming anything otherwise.
    mutating func readIfPresent(_ tag: UInt8) throws(Failure) -> Element? {
        guard position < end, bytes[position] == tag else { return nil }
        return try next()
    }

    func requireEnd(_ what: @autoclosure () -> String) throws(Failure) {
        guard position == end else { throw Failure("\(end - position) unexpected bytes after \(what())") }
    }

    /// Parses the TLV at `start`, which must end by `end`.
    static func element(in bytes: [UInt8], at start: Int, end: Int, depth: Int) throws(Failure) -> Element {
        var cursor = start
        guard cursor < end else { throw Failure("truncated: no tag") }
        let tag = bytes[cursor]
        cursor += 1
        guard tag & 0x1F != 0x1F else { throw Failure("multi-octet tags are not used here") }
        guard !(tag == 0 && cursor < end && bytes[cursor] == 0) else {
            throw Failure("unexpected end-of-contents octets")
        }
        guard cursor < end else { throw Failure("truncated: no length") }
        let first = bytes[cursor]
        cursor += 1
        if first == 0x80 {
            guard tag & 0x20 != 0 else { throw Failure("an indefinite length on a primitive value") }
            guard depth + 1 < maximumDepth else { throw Failure("nesting deeper than \(maximumDepth)") }
            // Children up to the end-of-contents octets 00 00.
            let contentStart = cursor
            while true {
                guard cursor + 1 < end else { throw Failure("truncated: an indefinite length without end-of-contents") }
                if bytes[cursor] == 0 && bytes[cursor + 1] == 0 {
                    return Element(
                        tag: tag, whole: start..<(cursor + 2), contents: contentStart..<cursor, indefinite: true)
                }
                cursor = try element(in: bytes, at: cursor, end: end, depth: depth + 1).whole.upperBound
            }
        }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4 else { throw Failure("a length of \(count) octets") }
            guard end - cursor >= count else { throw Failure("truncated: length octets") }
            guard bytes[cursor] != 0 else { throw Failure("a length with a leading zero octet") }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[cursor])
                cursor += 1
            }
            guard length >= 0x80 else { throw Failure("a long-form length below 128") }
        }
        guard length <= end - cursor else {
            throw Failure("a length of \(length) beyond the \(end - cursor) bytes left")
        }
        return Element(
            tag: tag, whole: start..<(cursor + length), contents: cursor..<(cursor + length), indefinite: false)
    }

    /// The bytes of an OCTET STRING: its contents when primitive, or its segments joined when
    /// constructed (BER). Returned as ranges of `bytes`, so DER content is never copied.
    func octetStringSegments(_ element: Element) throws(Failure) -> [Range<Int>] {
        guard element.tag & 0xDF == 0x04 else { throw Failure("an OCTET STRING was expected") }
        guard element.isConstructed else { return [element.contents] }
        var segments: [Range<Int>] = []
        var reader = try children(of: element)
        while let child = try reader.next() {
            segments += try reader.octetStringSegments(child)
        }
        return segments
    }

    func octetString(_ element: Element) throws(Failure) -> [UInt8] {
        if element.tag == 0x04 { return Array(bytes[element.contents]) }
        return try octetStringSegments(element).flatMap { bytes[$0] }
    }

    /// A minimally encoded INTEGER that fits in `Int64`.
    func integer(_ element: Element) throws(Failure) -> Int64 {
        guard element.tag == 0x02 else { throw Failure("an INTEGER was expected") }
        return try Self.integer(bytes[element.contents])
    }

    static func integer(_ contents: ArraySlice<UInt8>) throws(Failure) -> Int64 {
        guard let first = contents.first, contents.count <= 8 else {
            throw Failure("an INTEGER that is empty or over 64 bits")
        }
        if contents.count > 1 {
            let second = contents[contents.startIndex + 1]
            guard !(first == 0 && second & 0x80 == 0) && !(first == 0xFF && second & 0x80 != 0) else {
                throw Failure("an INTEGER that is not minimally encoded")
            }
        }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for byte in contents { value = value << 8 | Int64(byte) }
        return value
    }
}

/// The attribute-set reader of the reference decoder.
enum ReferenceAttributeSet {
    static let maximumAttributes = 100_000

    /// The attributes of `bytes`, in order. A type may occur once, except `repeatable` ones.
    static func parse(_ bytes: [UInt8], repeatable: [Int], what: String) throws(VerificationError) -> [ReceiptAttribute]
    {
        do throws(ReferenceBERReader.Failure) {
            var outer = ReferenceBERReader(bytes)
            let set = try outer.read(0x31, "the \(what) attribute SET")
            try outer.requireEnd("the \(what) attribute SET")
            var reader = try outer.children(of: set)
            var attributes: [ReceiptAttribute] = []
            while let sequence = try reader.next() {
                guard sequence.tag == 0x30 else {
                    throw ReferenceBERReader.Failure("an attribute that is not a SEQUENCE")
                }
                var fields = try reader.children(of: sequence)
                let type = try fields.integer(try fields.read(0x02, "an attribute type"))
                let version = try fields.integer(try fields.read(0x02, "an attribute version"))
                let value = try fields.octetString(try fields.read(0x04, "an attribute value"))
                try fields.requireEnd("an attribute")
                guard let type = Int(exactly: type), let version = Int(exactly: version) else {
                    throw ReferenceBERReader.Failure("an attribute type or version out of range")
                }
                attributes.append(ReceiptAttribute(type: type, version: version, value: value))
                guard attributes.count <= maximumAttributes else {
                    throw ReferenceBERReader.Failure("more than \(maximumAttributes) attributes")
                }
            }
            // Sorted, a repeated type sits beside its twin: no hashing per attribute.
            let types = attributes.map(\.type).filter { !repeatable.contains($0) }.sorted()
            for (first, second) in zip(types, types.dropFirst()) where first == second {
                throw ReferenceBERReader.Failure(
                    "attribute type \(first) occurs twice in the \(what); a reader taking the first and one taking the last would disagree",
                    code: .receiptDuplicateAttribute)
            }
            return attributes
        } catch {
            throw VerificationError(error.code ?? .receiptMalformedPayload, "receipt payload: \(error.message)")
        }
    }
}

/// The typed value readings of the reference decoder.
struct ReferenceValueReader {
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
        do throws(ReferenceBERReader.Failure) {
            return try ReferenceBERReader.integer(contents)
        } catch {
            throw malformed(type, "is \(error.message)")
        }
    }

    /// An IA5String RFC 3339 date; an empty string (which Apple writes for "none") is `nil`.
    func date(_ type: Int) throws(VerificationError) -> Timestamp? {
        guard let text = try string(type), !text.isEmpty else { return nil }
        guard let milliseconds = ReferenceDate.milliseconds(text) else {
            throw malformed(type, "is not an RFC 3339 date: \(text)")
        }
        return Timestamp(milliseconds: milliseconds)
    }

    func bytes(_ type: Int) -> [UInt8]? { attribute(type)?.value }

    private func tlv(_ value: [UInt8], type: Int) throws(VerificationError) -> (UInt8, ArraySlice<UInt8>) {
        do throws(ReferenceBERReader.Failure) {
            var reader = ReferenceBERReader(value)
            let element = try reader.read(value.first ?? 0, "the value")
            try reader.requireEnd("the value")
            guard !element.isConstructed else { throw ReferenceBERReader.Failure("constructed") }
            return (element.tag, value[element.contents])
        } catch {
            throw malformed(type, "is not one DER value (\(error.message))")
        }
    }

    private func malformed(_ type: Int, _ detail: String) -> VerificationError {
        VerificationError(.receiptMalformedPayload, "receipt payload: \(what) attribute \(type) \(detail)")
    }
}

/// The reference decoder's RFC 3339 dates, as receipts write them: `2015-09-16T19:48:24Z`, Xcode's `+0300` offsets,
/// optional fractional seconds.
enum ReferenceDate {
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

struct ReferenceAppReceipt {
    /// The environment that issued the receipt (0): `Production`, `ProductionSandbox`, `Xcode`, …
    let receiptType: ReceiptType?
    /// The app's App Store item id (1); 0 in the sandbox.
    let appItemId: Int64?
    /// The bundle identifier (2).
    let bundleId: String
    /// The app version the receipt was issued for (3): `CFBundleVersion` on iOS,
    /// `CFBundleShortVersionString` on macOS.
    let applicationVersion: String?
    /// The opaque value used in the device hash (4).
    let opaqueValue: [UInt8]?
    /// SHA-1 over device identifier, opaque value and bundle id (5).
    let sha1Hash: [UInt8]?
    /// When the receipt was created (12): the instant the chain is validated at by default.
    let receiptCreationDate: Timestamp?
    /// When the app was first purchased (18).
    let originalPurchaseDate: Timestamp?
    /// The version originally purchased (19).
    let originalApplicationVersion: String?
    /// When the receipt expires (21): volume-purchase and Xcode receipts.
    let receiptExpirationDate: Timestamp?
    /// When a preorder was placed (32), for apps bought before release.
    let preorderDate: Timestamp?
    /// The in-app purchase receipts (17), in the order signed.
    let inApp: [ReferenceInAppPurchase]
    /// Every attribute in the order signed, raw.
    let attributes: [ReceiptAttribute]

    /// Decodes a receipt payload (the signed content). Throws
    /// ``VerificationError/Code/receiptMalformedPayload`` or
    /// ``VerificationError/Code/receiptDuplicateAttribute``.
    init(payload: [UInt8]) throws(VerificationError) {
        let attributes = try ReferenceAttributeSet.parse(payload, repeatable: [17], what: "receipt")
        let reader = ReferenceValueReader(attributes: attributes, what: "receipt")
        guard let bundleId = try reader.string(2) else {
            throw VerificationError(.receiptMalformedPayload, "receipt payload: no bundle id (attribute 2)")
        }
        self.bundleId = bundleId
        receiptType = try reader.string(0).map(ReceiptType.init(rawValue:))
        appItemId = try reader.integer(1)
        applicationVersion = try reader.string(3)
        opaqueValue = reader.bytes(4)
        sha1Hash = reader.bytes(5)
        receiptCreationDate = try reader.date(12)
        originalPurchaseDate = try reader.date(18)
        originalApplicationVersion = try reader.string(19)
        receiptExpirationDate = try reader.date(21)
        preorderDate = try reader.date(32)
        var inApp: [ReferenceInAppPurchase] = []
        for attribute in attributes where attribute.type == 17 {
            inApp.append(try ReferenceInAppPurchase(payload: attribute.value))
        }
        self.inApp = inApp
        self.attributes = attributes
    }

}

/// One in-app purchase receipt (attribute 17 of an app receipt): Apple's fields 1701–1721.
struct ReferenceInAppPurchase {
    /// Items purchased (1701).
    let quantity: Int64?
    /// Product identifier (1702).
    let productId: String?
    /// Transaction identifier (1703): what the App Store Server API takes.
    let transactionId: String?
    /// Purchase date (1704).
    let purchaseDate: Timestamp?
    /// Original transaction identifier (1705).
    let originalTransactionId: String?
    /// Original purchase date (1706).
    let originalPurchaseDate: Timestamp?
    /// Product type (1707), undocumented: 1 is seen for consumables.
    let productType: Int64?
    /// Subscription expiration date (1708).
    let subscriptionExpirationDate: Timestamp?
    /// Web order line item id (1711).
    let webOrderLineItemId: Int64?
    /// Cancellation date (1712): refunded or revoked.
    let cancellationDate: Timestamp?
    /// In a free trial period (1713).
    let isInTrialPeriod: Bool?
    /// In an introductory price period (1719).
    let isInIntroOfferPeriod: Bool?
    /// Promotional offer identifier (1721).
    let promotionalOfferId: String?
    /// Every attribute in the order signed, raw.
    let attributes: [ReceiptAttribute]

    /// Decodes one in-app purchase receipt (the value of attribute 17); a malformed one is ``VerificationError``.
    init(payload: [UInt8]) throws(VerificationError) {
        let attributes = try ReferenceAttributeSet.parse(payload, repeatable: [], what: "in-app purchase")
        let reader = ReferenceValueReader(attributes: attributes, what: "in-app purchase")
        quantity = try reader.integer(1701)
        productId = try reader.string(1702)
        transactionId = try reader.string(1703)
        purchaseDate = try reader.date(1704)
        originalTransactionId = try reader.string(1705)
        originalPurchaseDate = try reader.date(1706)
        productType = try reader.integer(1707)
        subscriptionExpirationDate = try reader.date(1708)
        webOrderLineItemId = try reader.integer(1711)
        cancellationDate = try reader.date(1712)
        isInTrialPeriod = try reader.integer(1713).map { $0 != 0 }
        isInIntroOfferPeriod = try reader.integer(1719).map { $0 != 0 }
        promotionalOfferId = try reader.string(1721)
        self.attributes = attributes
    }
}

extension ReferenceAppReceipt {
    /// `AppReceipt.jsonObject` as it was built from the reference decoder's fields.
    var jsonObject: JSONObject {
        var object = JSONObject([])
        object.add("receiptType", receiptType.map { .string($0.rawValue) })
        object.add("appItemId", appItemId.map { .number(String($0)) })
        object.add("bundleId", .string(bundleId))
        object.add("applicationVersion", applicationVersion.map(JSONValue.string))
        object.add("originalApplicationVersion", originalApplicationVersion.map(JSONValue.string))
        object.add("opaqueValue", opaqueValue.map(JSONValue.base64))
        object.add("sha1Hash", sha1Hash.map(JSONValue.base64))
        object.add("receiptCreationDate", receiptCreationDate.map(JSONValue.milliseconds))
        object.add("originalPurchaseDate", originalPurchaseDate.map(JSONValue.milliseconds))
        object.add("receiptExpirationDate", receiptExpirationDate.map(JSONValue.milliseconds))
        object.add("preorderDate", preorderDate.map(JSONValue.milliseconds))
        object.add("inApp", .array(inApp.map { .object($0.jsonObject) }))
        object.add("otherAttributes", JSONValue.otherAttributes(attributes, typed: AppReceipt.typedTypes))
        return object
    }
}

extension ReferenceInAppPurchase {
    var jsonObject: JSONObject {
        var object = JSONObject([])
        object.add("quantity", quantity.map { .number(String($0)) })
        object.add("productId", productId.map(JSONValue.string))
        object.add("transactionId", transactionId.map(JSONValue.string))
        object.add("originalTransactionId", originalTransactionId.map(JSONValue.string))
        object.add("purchaseDate", purchaseDate.map(JSONValue.milliseconds))
        object.add("originalPurchaseDate", originalPurchaseDate.map(JSONValue.milliseconds))
        object.add("subscriptionExpirationDate", subscriptionExpirationDate.map(JSONValue.milliseconds))
        object.add("cancellationDate", cancellationDate.map(JSONValue.milliseconds))
        object.add("webOrderLineItemId", webOrderLineItemId.map { .number(String($0)) })
        object.add("isInTrialPeriod", isInTrialPeriod.map(JSONValue.bool))
        object.add("isInIntroOfferPeriod", isInIntroOfferPeriod.map(JSONValue.bool))
        object.add("promotionalOfferId", promotionalOfferId.map(JSONValue.string))
        object.add("productType", productType.map { .number(String($0)) })
        object.add("otherAttributes", JSONValue.otherAttributes(attributes, typed: InAppPurchaseReceipt.typedTypes))
        return object
    }
}
