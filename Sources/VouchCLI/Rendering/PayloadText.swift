import Vouch

/// Readable text for payloads: indented `name: value` lines.
enum PayloadText {
    /// Writes a JSON value as indented `name: value` lines; numbers of `…Date` members get
    /// their ISO-8601 form beside the raw milliseconds.
    static func describe(_ object: JSONObject, indent: Int, into lines: inout [String]) {
        let pad = String(repeating: "  ", count: indent)
        for member in object.members {
            switch member.value {
            case .object(let inner):
                lines.append("\(pad)\(member.name):")
                describe(inner, indent: indent + 1, into: &lines)
            case .array(let elements) where elements.contains(where: { $0.objectValue != nil }):
                lines.append("\(pad)\(member.name):")
                for (index, element) in elements.enumerated() {
                    if let inner = element.objectValue {
                        lines.append("\(pad)  [\(index)]")
                        describe(inner, indent: indent + 2, into: &lines)
                    } else {
                        lines.append("\(pad)  [\(index)] \(JSONWriter.string(element))")
                    }
                }
            default:
                lines.append("\(pad)\(member.name): \(scalar(member.value, name: member.name))")
            }
        }
    }

    static func scalar(_ value: JSONValue, name: String) -> String {
        let text = JSONWriter.string(value)
        if name.hasSuffix("Date"), case .number(let number) = value, let timestamp = Timestamp(rawValue: number) {
            return "\(text) (\(timestamp.iso8601))"
        }
        return text
    }
}
