/// JSON's lexical pieces written through a pointer into room made beforehand: escaped text,
/// decimal integers, standard base64, punctuation. Every write is checked against the end of
/// the room. ``JSONWriter`` writes its strings and numbers with it, and so does a writer that
/// knows a bound for a whole record (a receipt's, from its payload) and fills it in one go.
package struct JSONOutput {
    private let room: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes have been written.
    package private(set) var count = 0

    /// Writes into `room`, from its start.
    package init(_ room: UnsafeMutableBufferPointer<UInt8>) {
        self.room = room
    }

    /// The most bytes ``string(utf8:)`` writes for `count` bytes of text: each as a six-byte
    /// escape (`\u00XX`), and the quotes.
    package static func maximumLength(ofText count: Int) -> Int { 6 * count + 2 }

    /// The most bytes ``integer(_:)`` writes: `-9223372036854775808`.
    package static let maximumIntegerLength = 20

    /// The most bytes ``base64(_:)`` writes for `count` bytes: four for three, and the quotes.
    package static func maximumLength(ofBase64 count: Int) -> Int { (count + 2) / 3 * 4 + 2 }

    package mutating func put(_ byte: UInt8) {
        precondition(count < room.count, "JSON over the room made for it")
        room[count] = byte
        count += 1
    }

    package mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        precondition(room.count - count >= bytes.count, "JSON over the room made for it")
        (room.baseAddress! + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    package mutating func raw(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// UTF-8 text, already known to be valid, as a JSON string: `"`, `\`, the control characters
    /// and DEL escaped (the common ones as `\n`, `\r`, `\t`), every other byte as it is.
    package mutating func string(utf8 text: UnsafeBufferPointer<UInt8>) {
        put(UInt8(ascii: "\""))
        // Most strings need no escape: copy them whole.
        var clean = 0
        while clean < text.count, !Self.needsEscape(text[clean]) { clean += 1 }
        put(UnsafeBufferPointer(rebasing: text[..<clean]))
        for byte in text[clean...] {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20, 0x7F:
                raw("\\u00")
                put(Self.hexDigit(byte >> 4))
                put(Self.hexDigit(byte & 0x0F))
            default: put(byte)
            }
        }
        put(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// `value` in decimal, as `String(value)` spells it.
    package mutating func integer(_ value: Int64) {
        // Digits from the last, into room for the longest.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumIntegerLength) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { put(UInt8(ascii: "-")) }
            put(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// `data` as a JSON string of standard base64 with padding.
    package mutating func base64(_ data: UnsafeBufferPointer<UInt8>) {
        precondition(room.count - count >= Self.maximumLength(ofBase64: data.count), "JSON over the room made for it")
        put(UInt8(ascii: "\""))
        count += Base64.encodeStandard(data, into: room.baseAddress! + count)
        put(UInt8(ascii: "\""))
    }
}
