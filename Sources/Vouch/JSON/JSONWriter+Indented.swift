extension JSONWriter {
    /// Appends `value` spread over lines, `indent` spaces a level deeper each (`level` levels in
    /// already): `"name": value`, one member or element a line, empty containers as `{}` and
    /// `[]`; strings and numbers as ``write(_:)`` writes them. The shape of the bodies Stripe
    /// sends to webhooks, which test data reproduces byte for byte.
    package mutating func write(_ value: JSONValue, indent: Int, level: Int = 0) {
        func newline(_ depth: Int) {
            writeRaw(CollectionOfOne(0x0A))
            writeRaw(repeatElement(UInt8(ascii: " "), count: indent * depth))
        }
        switch value {
        case .array(let elements) where !elements.isEmpty:
            raw("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { raw(",") }
                newline(level + 1)
                write(element, indent: indent, level: level + 1)
            }
            newline(level)
            raw("]")
        case .object(let object) where !object.isEmpty:
            raw("{")
            for (index, member) in object.members.enumerated() {
                if index > 0 { raw(",") }
                newline(level + 1)
                write(string: member.name)
                raw(": ")
                write(member.value, indent: indent, level: level + 1)
            }
            newline(level)
            raw("}")
        default:
            write(value)
        }
    }
}
