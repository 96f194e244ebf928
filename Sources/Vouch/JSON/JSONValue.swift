/// A JSON value as parsed by ``StrictJSON``: objects keep their members in document order and
/// numbers keep their exact text, so writing a value back yields the same document.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's text exactly as it appeared (RFC 8259 grammar), never rounded.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The number as an exact 64-bit integer, or `nil` when it has a fraction, an exponent or
    /// does not fit.
    public var int64Value: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    /// The number as a `Double` (possibly rounded).
    public var doubleValue: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// A JSON object whose members keep document order. Member names are unique: the strict
/// parser rejects duplicates.
public struct JSONObject: Sendable, Hashable {
    public struct Member: Sendable, Hashable {
        public var name: String
        public var value: JSONValue

        public init(_ name: String, _ value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    public var members: [Member]

    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The value of the member `name`, or `nil` when absent. Setting `nil` removes the member;
    /// setting a new name appends it.
    public subscript(name: String) -> JSONValue? {
        get {
            // Comparing lengths first rejects most members without comparing text.
            let length = name.utf8.count
            for member in members where member.name.utf8.count == length && member.name == name { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.name == name }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(name, newValue))
            }
        }
    }

    public var isEmpty: Bool { members.isEmpty }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(String(value)) }
    public init(nilLiteral: ()) { self = .null }
}
