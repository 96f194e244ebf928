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
        string.withUTF8 { utf8 in
            write(maximumLength: JSONOutput.maximumLength(ofText: utf8.count)) { $0.string(utf8: utf8) }
        }
    }

    /// Appends `number` in decimal, as `String(number)` spells it, without making the string.
    package mutating func write(integer number: Int) {
        write(maximumLength: JSONOutput.maximumIntegerLength) { $0.integer(Int64(number)) }
    }

    /// Appends what `body` writes through a ``JSONOutput``, at most `maximumLength` bytes: into
    /// room of that size (on the stack when small), then appended at once.
    package mutating func write(maximumLength: Int, _ body: (inout JSONOutput) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumLength) { room in
            var output = JSONOutput(room)
            body(&output)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: room[..<output.count]))
        }
    }

    /// Appends bytes that are already JSON (for example a validated document).
    package mutating func writeRaw(_ json: some Sequence<UInt8>) {
        bytes.append(contentsOf: json)
    }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
