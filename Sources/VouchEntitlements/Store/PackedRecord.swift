/// The members of a record in the SQLite store's packed form, read without a parse: each in a
/// fixed order, the order of the record's writer.
///
/// - An integer is a LEB128 varint of its zigzag encoding (small magnitudes of either sign in
///   few bytes; a date in milliseconds in six).
/// - Text is a varint: an even one is twice its UTF-8 length, its bytes following; an odd one
///   names a word of ``words`` (twice its index, plus one), the values Apple repeats in every
///   record.
/// - A Boolean is one byte, 0 or 1.
/// - An optional value is a byte, 0 for nil or 1, followed by the value when 1.
/// - A nested value (a statement) is its length as a varint, then its members.
///
/// A nested value may end before its last members: an optional member past its end reads as
/// nil, so that a member added last to a statement (Schemas/ledger-statements.tsv) reads as
/// absent in a record packed before it. Anything else that does not read is a
/// ``RecordFormatError``.
enum PackedRecord {
    /// The texts a packed record names by their index, written once here. Part of the format
    /// (schema 6): a word is only ever added last, never changed or removed.
    static let words: [String] = [
        "Production", "Sandbox", "Xcode", "LocalTesting",
        "PURCHASED", "FAMILY_SHARED",
        "Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription",
        "REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE",
        "APPLE", "DEVELOPER", "SEAT_ADDITION",
        "USD", "EUR", "GBP", "JPY", "CNY", "CAD", "AUD", "CHF", "INR", "BRL", "KRW", "MXN",
    ]

    /// The index of each of ``words``.
    private static let wordIndex: [String: UInt64] = Dictionary(
        uniqueKeysWithValues: words.enumerated().map { ($1, UInt64($0)) })

    struct Writer {
        private(set) var bytes: [UInt8] = []

        init(reservingCapacity capacity: Int = 0) {
            bytes.reserveCapacity(capacity)
        }

        mutating func byte(_ value: UInt8) {
            bytes.append(value)
        }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func integer(_ value: Int64) {
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        mutating func integer(_ value: Int64?) {
            optional(value) { $0.integer($1) }
        }

        mutating func integer(_ value: Int32) {
            integer(Int64(value))
        }

        mutating func integer(_ value: Int32?) {
            optional(value) { $0.integer(Int64($1)) }
        }

        mutating func text(_ value: String) {
            if let index = PackedRecord.wordIndex[value] { return varint(index << 1 | 1) }
            var value = value
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count) << 1)
                bytes.append(contentsOf: utf8)
            }
        }

        mutating func text(_ value: String?) {
            optional(value) { $0.text($1) }
        }

        mutating func bool(_ value: Bool) {
            bytes.append(value ? 1 : 0)
        }

        /// `value` after its presence byte: 0 for nil, else 1 and what `write` writes of it.
        mutating func optional<Value>(_ value: Value?, _ write: (inout Writer, Value) -> Void) {
            guard let value else { return bytes.append(0) }
            bytes.append(1)
            write(&self, value)
        }

        /// What `write` writes, after its length.
        mutating func nested(_ write: (inout Writer) -> Void) {
            var inner = Writer()
            write(&inner)
            varint(UInt64(inner.bytes.count))
            bytes += inner.bytes
        }
    }

    /// Reads members in the order they were written, from bytes it does not own: a reader
    /// lives only within the call that lends them.
    struct Reader {
        private let bytes: UnsafeRawBufferPointer
        private var position: Int
        private let end: Int

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            position = 0
            end = bytes.count
        }

        private init(_ bytes: UnsafeRawBufferPointer, from position: Int, to end: Int) {
            self.bytes = bytes
            self.position = position
            self.end = end
        }

        /// Whether every byte was read.
        var isAtEnd: Bool { position == end }

        private func ended(_ what: String) -> RecordFormatError {
            RecordFormatError(reason: "a packed record ends inside its \(what)")
        }

        mutating func byte() throws(RecordFormatError) -> UInt8 {
            guard position < end else { throw ended("members") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func varint() throws(RecordFormatError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard position < end else { throw ended("numbers") }
                let byte = bytes[position]
                position += 1
                guard shift < 64, shift < 63 || byte <= 1 else {
                    throw RecordFormatError(reason: "a packed record holds a number of over 64 bits")
                }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        mutating func integer() throws(RecordFormatError) -> Int64 {
            let zigzag = try varint()
            return Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
        }

        mutating func optionalInteger() throws(RecordFormatError) -> Int64? {
            try optional { reader throws(RecordFormatError) in try reader.integer() }
        }

        mutating func int32() throws(RecordFormatError) -> Int32 {
            let value = try integer()
            guard let narrow = Int32(exactly: value) else {
                throw RecordFormatError(reason: "a packed record holds \(value) where a 32-bit number belongs")
            }
            return narrow
        }

        mutating func optionalInt32() throws(RecordFormatError) -> Int32? {
            try optional { reader throws(RecordFormatError) in try reader.int32() }
        }

        mutating func text() throws(RecordFormatError) -> String {
            let code = try varint()
            if code & 1 == 1 {
                guard code >> 1 < UInt64(PackedRecord.words.count) else {
                    throw RecordFormatError(reason: "a packed record names word \(code >> 1), which is not one")
                }
                return PackedRecord.words[Int(code >> 1)]
            }
            let count = code >> 1
            guard count <= UInt64(end - position) else { throw ended("text") }
            let utf8 = UnsafeRawBufferPointer(rebasing: bytes[position..<position + Int(count)])
            position += Int(count)
            // Nearly every text is ASCII, which is UTF-8 as it stands; Swift's generic validation
            // cost more than the rest of reading a record.
            if Self.isASCII(utf8) { return String(decoding: utf8.bindMemory(to: UInt8.self), as: UTF8.self) }
            guard let text = String(validating: utf8.bindMemory(to: UInt8.self), as: UTF8.self) else {
                throw RecordFormatError(reason: "a packed record holds text that is not UTF-8")
            }
            return text
        }

        /// Whether every byte of `bytes` is below 0x80, read eight at a time.
        static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
            var high: UInt64 = 0
            var offset = 0
            while offset + 8 <= bytes.count {
                high |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < bytes.count {
                high |= UInt64(bytes[offset])
                offset += 1
            }
            return high & 0x8080_8080_8080_8080 == 0
        }

        mutating func optionalText() throws(RecordFormatError) -> String? {
            try optional { reader throws(RecordFormatError) in try reader.text() }
        }

        mutating func bool() throws(RecordFormatError) -> Bool {
            switch try byte() {
            case 0: return false
            case 1: return true
            case let byte: throw RecordFormatError(reason: "a packed record holds \(byte) where a Boolean belongs")
            }
        }

        /// A value after its presence byte (``Writer/optional(_:_:)``); nil past the end of a
        /// nested value, for a member its writer did not have yet.
        mutating func optional<Value>(_ read: (inout Reader) throws(RecordFormatError) -> Value)
            throws(RecordFormatError) -> Value?
        {
            guard !isAtEnd else { return nil }
            switch try byte() {
            case 0: return nil
            case 1: return try read(&self)
            case let byte: throw RecordFormatError(reason: "a packed record holds \(byte) where a presence belongs")
            }
        }

        /// A nested value (``Writer/nested(_:)``), read whole by `read`: bytes it leaves are
        /// damage.
        mutating func nested<Value>(_ read: (inout Reader) throws(RecordFormatError) -> Value)
            throws(RecordFormatError) -> Value
        {
            let count = try varint()
            guard count <= UInt64(end - position) else { throw ended("statements") }
            var inner = Reader(bytes, from: position, to: position + Int(count))
            let value = try read(&inner)
            guard inner.isAtEnd else {
                throw RecordFormatError(reason: "a packed record holds bytes after the members of a statement")
            }
            position += Int(count)
            return value
        }
    }
}
