internal import Vouch

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

/// One attribute set of a payload: the payload's bytes and, in signed order, where each
/// attribute's value lies in them. Decoded receipts keep this instead of a copy of every
/// value, and read their text from it when asked.
struct ReceiptAttributeTable: Sendable {
    struct Field: Sendable {
        let type: Int
        let version: Int
        /// The OCTET STRING's contents, in ``ReceiptAttributeTable/bytes``.
        let value: Range<Int>
    }

    /// The whole payload (shared, not copied, by the receipt and its in-app purchases).
    let bytes: [UInt8]
    let fields: [Field]

    /// The first attribute of `type`; with repeated types refused, the only one.
    func field(_ type: Int) -> Field? {
        for field in fields where field.type == type { return field }
        return nil
    }

    /// The text at `range`, which decoding checked is UTF-8.
    func string(_ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    func bytes(_ range: Range<Int>) -> [UInt8] { Array(bytes[range]) }

    /// Whether the text at `range` equals `expected` as `String` compares (canonical
    /// equivalence): equal bytes are equal strings, and so are no two different ASCII texts.
    func text(_ range: Range<Int>, equals expected: String) -> Bool {
        var expected = expected
        return expected.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { buffer in
                let text = UnsafeBufferPointer(rebasing: buffer[range])
                if text.elementsEqual(wanted) { return true }
                if text.allSatisfy({ $0 < 0x80 }) && wanted.allSatisfy({ $0 < 0x80 }) { return false }
                return String(decoding: text, as: UTF8.self) == String(decoding: wanted, as: UTF8.self)
            }
        }
    }

    var attributes: [ReceiptAttribute] {
        fields.map { ReceiptAttribute(type: $0.type, version: $0.version, value: Array(bytes[$0.value])) }
    }

    /// The same attributes, in the same order: what makes two decoded receipts equal, since
    /// every typed field is read from them.
    func sameAttributes(as other: ReceiptAttributeTable) -> Bool {
        guard fields.count == other.fields.count else { return false }
        for (mine, theirs) in zip(fields, other.fields) {
            guard mine.type == theirs.type, mine.version == theirs.version,
                bytes[mine.value].elementsEqual(other.bytes[theirs.value])
            else { return false }
        }
        return true
    }

    func hashAttributes(into hasher: inout Hasher) {
        hasher.combine(fields.count)
        for field in fields {
            hasher.combine(field.type)
            hasher.combine(field.version)
            hasher.combine(field.value.count)
            bytes.withUnsafeBytes { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0[field.value])) }
        }
    }
}

/// Reads receipt attribute sets: `SET OF ReceiptAttribute` in DER or BER.
enum ReceiptAttributeSet {
    static let maximumAttributes = 100_000

    /// Room reused from one attribute set to the next while a receipt is decoded, so that
    /// each set costs one array of the right size.
    struct Scratch {
        var fields: [ReceiptAttributeTable.Field] = []
        var types: [Int] = []

        init() {
            fields.reserveCapacity(32)
            types.reserveCapacity(32)
        }
    }

    /// The attributes of the SET at `range` of `bytes`, in order. A type may occur once,
    /// except `repeatable` (17, the in-app purchases, in a receipt).
    static func parse(
        _ bytes: [UInt8], range: Range<Int>, repeatable: Int?, what: String, scratch: inout Scratch
    ) throws(VerificationError) -> ReceiptAttributeTable {
        do throws(BERReader.Failure) {
            scratch.fields.removeAll(keepingCapacity: true)
            try bytes.withUnsafeBufferPointer { buffer throws(BERReader.Failure) in
                try Self.fields(buffer, range: range, what: what, into: &scratch.fields)
            }
            // Sorted, a repeated type sits beside its twin: no hashing per attribute.
            scratch.types.removeAll(keepingCapacity: true)
            for field in scratch.fields where field.type != repeatable { scratch.types.append(field.type) }
            scratch.types.sort()
            let types = scratch.types
            for index in types.indices.dropFirst() where types[index] == types[index - 1] {
                throw BERReader.Failure(
                    "attribute type \(types[index]) occurs twice in the \(what); a reader taking the first and one taking the last would disagree",
                    code: .receiptDuplicateAttribute)
            }
            return ReceiptAttributeTable(bytes: bytes, fields: Array(scratch.fields))
        } catch {
            throw VerificationError(error.code ?? .receiptMalformedPayload, "receipt payload: \(error.message)")
        }
    }

    private static func fields(
        _ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, what: String,
        into fields: inout [ReceiptAttributeTable.Field]
    ) throws(BERReader.Failure) {
        var outer = BERCursor(bytes, range: range)
        let set = try outer.read(0x31, "the \(what) attribute SET")
        try outer.requireEnd("the \(what) attribute SET")
        var reader = try outer.children(of: set)
        while true {
            if let (type, version, value) = reader.nextPlainAttribute() {
                try append(
                    ReceiptAttributeTable.Field(type: Int(type), version: Int(version), value: value), to: &fields)
                continue
            }
            guard let sequence = try reader.next() else { break }
            guard sequence.tag == 0x30 else { throw BERReader.Failure("an attribute that is not a SEQUENCE") }
            var parts = try reader.children(of: sequence)
            let type = try parts.integer(try parts.read(0x02, "an attribute type"))
            let version = try parts.integer(try parts.read(0x02, "an attribute version"))
            // A primitive OCTET STRING only: its contents are the value, in place.
            let value = try parts.read(0x04, "an attribute value").contents
            try parts.requireEnd("an attribute")
            guard let type = Int(exactly: type), let version = Int(exactly: version) else {
                throw BERReader.Failure("an attribute type or version out of range")
            }
            try append(ReceiptAttributeTable.Field(type: type, version: version, value: value), to: &fields)
        }
    }

    private static func append(
        _ field: ReceiptAttributeTable.Field, to fields: inout [ReceiptAttributeTable.Field]
    ) throws(BERReader.Failure) {
        fields.append(field)
        guard fields.count <= maximumAttributes else {
            throw BERReader.Failure("more than \(maximumAttributes) attributes")
        }
    }
}

/// Typed readings of attribute values (each a whole DER value inside the OCTET STRING),
/// checked where they lie; what they read is kept as a range of the payload or a number.
struct ReceiptValueReader {
    let table: ReceiptAttributeTable
    let what: String

    /// A UTF8String or IA5String value: the range of its text.
    func string(_ type: Int) throws(VerificationError) -> Range<Int>? {
        guard let field = table.field(type) else { return nil }
        let (tag, contents) = try tlv(field, type: type)
        guard tag == 0x0C || tag == 0x16 else { throw malformed(type, "is not a UTF8String or IA5String") }
        try table.bytes.withUnsafeBufferPointer { buffer throws(VerificationError) in
            let text = UnsafeBufferPointer(rebasing: buffer[contents])
            // ASCII is UTF-8 and IA5; anything else goes to the standard library's validation.
            guard !text.allSatisfy({ $0 < 0x80 }) else { return }
            guard String(validating: text, as: UTF8.self) != nil else { throw malformed(type, "is not valid UTF-8") }
            if tag == 0x16 { throw malformed(type, "is an IA5String with non-ASCII bytes") }
        }
        return contents
    }

    func integer(_ type: Int) throws(VerificationError) -> Int64? {
        guard let field = table.field(type) else { return nil }
        let (tag, contents) = try tlv(field, type: type)
        guard tag == 0x02 else { throw malformed(type, "is not an INTEGER") }
        do throws(BERReader.Failure) {
            return try table.bytes.withUnsafeBufferPointer { buffer throws(BERReader.Failure) in
                try BERCursor.integer(UnsafeBufferPointer(rebasing: buffer[contents]))
            }
        } catch {
            throw malformed(type, "is \(error.message)")
        }
    }

    /// An IA5String RFC 3339 date, in milliseconds since 1970; an empty string (which Apple
    /// writes for "none") is `nil`.
    func date(_ type: Int) throws(VerificationError) -> Int64? {
        guard let text = try string(type), !text.isEmpty else { return nil }
        let milliseconds = table.bytes.withUnsafeBufferPointer { buffer in
            CivilTime.milliseconds(UnsafeBufferPointer(rebasing: buffer[text]), .receipt)
        }
        guard let milliseconds else {
            throw malformed(type, "is not an RFC 3339 date: \(table.string(text))")
        }
        return milliseconds
    }

    /// The whole value: the range of the OCTET STRING's contents.
    func bytes(_ type: Int) -> Range<Int>? { table.field(type)?.value }

    private func tlv(_ field: ReceiptAttributeTable.Field, type: Int) throws(VerificationError) -> (UInt8, Range<Int>) {
        do throws(BERReader.Failure) {
            return try table.bytes.withUnsafeBufferPointer { buffer throws(BERReader.Failure) in
                if let value = BERCursor.shortPrimitive(in: buffer, field.value) { return value }
                var reader = BERCursor(buffer, range: field.value)
                let element = try reader.read(field.value.isEmpty ? 0 : buffer[field.value.lowerBound], "the value")
                try reader.requireEnd("the value")
                guard !element.isConstructed else { throw BERReader.Failure("constructed") }
                return (element.tag, element.contents)
            }
        } catch {
            throw malformed(type, "is not one DER value (\(error.message))")
        }
    }

    private func malformed(_ type: Int, _ detail: String) -> VerificationError {
        VerificationError(.receiptMalformedPayload, "receipt payload: \(what) attribute \(type) \(detail)")
    }
}
