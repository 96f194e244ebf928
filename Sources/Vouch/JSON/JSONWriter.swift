/// Writes ``JSONValue``s as compact UTF-8 JSON, members in their stored order, numbers as their
/// exact text. The output of one value is always the same bytes.
public struct JSONWriter: Sendable {
    /// What has been written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer whose buffer has room for `capacity` bytes.
    public init(reservingCapacity capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The bytes of `value`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    /// The text of `value`.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    /// Empties ``bytes``, keeping their capacity.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends `value`.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): raw(flag ? "true" : "false")
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let string): write(string: string)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object): write(object: object)
        }
    }

    /// Appends `object`, members in their stored order.
    public mutating func write(object: JSONObject) {
        bytes.append(UInt8(ascii: "{"))
        for (index, member) in object.members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            write(string: member.name)
            bytes.append(UInt8(ascii: ":"))
            write(member.value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `string` as a JSON string, escaped.
    public mutating func write(string: String) {
        var string = string
        string.withUTF8 { write(utf8: $0) }
    }

    /// Appends UTF-8 text, already known to be valid, as a JSON string, escaped: `"`, `\\`,
    /// the control characters and DEL; every other byte as it is.
    package mutating func write(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy them whole.
        var clean = 0
        while clean < utf8.count, Self.needsEscape(utf8[clean]) == false { clean += 1 }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<clean]))
        for byte in utf8[clean...] {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20, 0x7F:
                raw("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `data` as a JSON string of standard base64 with padding.
    package mutating func write(base64 data: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        Base64.encodeStandard(data, appendingTo: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Makes room for `count` more bytes, so that what is written next grows the buffer once.
    package mutating func reserveCapacity(adding count: Int) {
        let needed = bytes.count + count
        // Grown geometrically, as appending would: one writer takes a whole batch's records.
        if needed > bytes.capacity { bytes.reserveCapacity(max(needed, 2 * bytes.capacity)) }
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    /// Appends `number` in decimal, as `String(number)` spells it, without making the string.
    package mutating func write(integer number: Int) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count += 1
                buffer[buffer.count - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(buffer.count - count)...])
        }
    }

    /// Appends bytes that are already JSON (for example a validated document).
    package mutating func writeRaw(_ json: some Sequence<UInt8>) {
        bytes.append(contentsOf: json)
    }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
