internal import Foundation

/// A JSON value as the strict parser reads it: objects keep their members in document order and
/// numbers keep their exact text, so writing a value back yields the same document.
public enum JSONValue: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// The number's text exactly as it appeared (RFC 8259 grammar), never rounded.
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array, in document order.
    case array([JSONValue])
    /// An object, members in document order.
    case object(JSONObject)

    /// The object, or `nil` for any other value.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, or `nil` for any other value.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The boolean, or `nil` for any other value.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The array's elements, or `nil` for any other value.
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

    /// Whether the value is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// A JSON object whose members keep document order. Member names are unique: the strict
/// parser rejects duplicates.
public struct JSONObject: Sendable, Hashable {
    /// One member of an object: its name and value.
    public struct Member: Sendable, Hashable {
        /// The member's name, unescaped.
        public var name: String {
            didSet { fingerprint = JSONObject.fingerprint(name) }
        }
        /// The member's value.
        public var value: JSONValue
        /// The name's ``JSONObject/fingerprint(_:)``, kept beside it: lookups by name compare
        /// it first. Derived from the name, so equality and hashing are the name's.
        private(set) var fingerprint: UInt64

        /// A member named `name` with `value`.
        public init(_ name: String, _ value: JSONValue) {
            self.init(name, value, fingerprint: JSONObject.fingerprint(name))
        }

        /// A member whose name's fingerprint the parser has already taken from its bytes.
        init(_ name: String, _ value: JSONValue, fingerprint: UInt64) {
            self.name = name
            self.value = value
            self.fingerprint = fingerprint
        }
    }

    /// The members, in document order.
    public var members: [Member]

    /// An object with `members`, in that order (empty by default).
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The value of the member `name`, or `nil` when absent. Setting `nil` removes the member;
    /// setting a new name appends it.
    public subscript(name: String) -> JSONValue? {
        get {
            // Comparing fingerprints first rejects most members without comparing text; through
            // the buffer, so that passing a member copies (and retains) nothing.
            let key = Self.fingerprint(name)
            return members.withUnsafeBufferPointer { members in
                for index in members.indices
                where
                    (members[index].fingerprint == key || members[index].fingerprint == Self.anyName
                    || key == Self.anyName) && members[index].name == name
                {
                    return members[index].value
                }
                return nil
            }
        }
        set {
            if let index = members.firstIndex(where: { $0.name == name }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(name, newValue))
            }
        }
    }

    /// Whether the object has no member.
    public var isEmpty: Bool { members.isEmpty }

    /// The value of the member `name`, for the models' reads of Apple's names: the name's
    /// fingerprint is taken from its static bytes and compared with each member's before any
    /// text is.
    func value(_ name: StaticString) -> JSONValue? {
        let key = name.withUTF8Buffer { Self.fingerprint(ascii: $0) }
        // Through the buffer, so that passing a member copies (and retains) nothing.
        return members.withUnsafeBufferPointer { members in
            for index in members.indices
            where members[index].fingerprint == key || members[index].fingerprint == Self.anyName
                || key == Self.anyName
            {
                var text = members[index].name
                let equal = text.withUTF8 { bytes in
                    bytes.count == name.utf8CodeUnitCount
                        && (bytes.isEmpty || memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0)
                }
                if equal { return members[index].value }
            }
            return nil
        }
    }
}

extension JSONObject {
    /// The members of one object by name, for the models, which read some thirty names from
    /// an object of about twenty members: a 64-slot table of member positions, by fingerprint,
    /// built once (no allocation), so that a read looks at one or two members instead of all.
    /// Objects it cannot serve (over 32 members, or names outside ASCII) are read through
    /// ``JSONObject/value(_:)``.
    struct NameIndex {
        let object: JSONObject
        /// Position + 1 of a member in each slot, 0 for none; `nil` when not used.
        private let slots: SIMD64<UInt8>?

        init(_ object: JSONObject) {
            self.object = object
            // The table is written through its bytes and the members read in place: a SIMD
            // lane written by index goes through memory each time, and a member taken out of
            // the array is a copy (its name and value retained).
            var slots = SIMD64<UInt8>(repeating: 0)
            let usable = object.members.withUnsafeBufferPointer { members in
                guard members.count <= 32 else { return false }
                return withUnsafeMutableBytes(of: &slots) { table in
                    for index in members.indices {
                        let fingerprint = members[index].fingerprint
                        if fingerprint == JSONObject.anyName { return false }
                        var slot = Self.slot(fingerprint)
                        while table[slot] != 0 { slot = (slot + 1) & 63 }
                        table[slot] = UInt8(index + 1)
                    }
                    return true
                }
            }
            self.slots = usable ? slots : nil
        }

        @inline(__always)
        static func slot(_ fingerprint: UInt64) -> Int {
            Int(truncatingIfNeeded: (fingerprint &* 0x9E37_79B9_7F4A_7C15) >> 58)
        }

        /// The value of the member `name` (ASCII, as every name Apple uses).
        func value(_ name: StaticString) -> JSONValue? {
            guard let slots else { return object.value(name) }
            let key = name.withUTF8Buffer { JSONObject.fingerprint(ascii: $0) }
            var slot = Self.slot(key)
            return withUnsafeBytes(of: slots) { table in
                object.members.withUnsafeBufferPointer { members in
                    while table[slot] != 0 {
                        let index = Int(table[slot]) - 1
                        if members[index].fingerprint == key {
                            var text = members[index].name
                            let equal = text.withUTF8 { bytes in
                                bytes.count == name.utf8CodeUnitCount
                                    && (bytes.isEmpty || memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0)
                            }
                            if equal { return members[index].value }
                        }
                        slot = (slot + 1) & 63
                    }
                    return nil
                }
            }
        }
    }

    /// The fingerprint of names with a byte outside ASCII: Swift compares strings by canonical
    /// equivalence, so such a name can equal one of another length or other first bytes ("é"
    /// precomposed and decomposed). It must be compared with every name.
    static let anyName = UInt64.max

    /// A name's length and first six bytes: names with different fingerprints differ (unless
    /// one is ``anyName``), so most comparisons of text can be skipped.
    static func fingerprint(_ name: String) -> UInt64 {
        var name = name
        return name.withUTF8 { $0.contains { $0 >= 0x80 } ? anyName : fingerprint(ascii: $0) }
    }

    /// The fingerprint of an ASCII name's bytes: the same value as ``fingerprint(_:)``.
    @inline(__always)
    static func fingerprint(ascii name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var value = UInt64(truncatingIfNeeded: name.count) << 48
        for index in 0..<min(6, name.count) { value |= UInt64(name[index]) << (8 * index) }
        return value
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(String(value)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral members: (String, JSONValue)...) {
        self = .object(JSONObject(members.map { JSONObject.Member($0.0, $0.1) }))
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object with these members, in this order (`JSON null` is written `.null`).
    public init(dictionaryLiteral members: (String, JSONValue)...) {
        self.init(members.map { Member($0.0, $0.1) })
    }
}

/// `Codable` for storing values with Foundation's coders.
///
/// Encoding writes the value back: every member (in order for an encoder that keeps order;
/// `JSONEncoder` does not, so set `.sortedKeys` for a stable text), numbers as the same number (integers
/// with their exact text; other numbers through `Decimal`, exact to 38 significant digits, so
/// `1697679936049.7297` stays `1697679936049.7297` while `1e3` becomes `1000`). Decoding takes
/// what the decoder gives: numbers as integers where they are, else as `Decimal`; object
/// members in the decoder's order (`JSONDecoder` does not keep document order).
extension JSONValue: Codable {
    struct MemberKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: MemberKey.self) {
            var members: [JSONObject.Member] = []
            for key in container.allKeys {
                members.append(JSONObject.Member(key.stringValue, try container.decode(JSONValue.self, forKey: key)))
            }
            self = .object(JSONObject(members))
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !container.isAtEnd {
                elements.append(try container.decode(JSONValue.self))
            }
            self = .array(elements)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let integer = try? container.decode(Int64.self) {
            self = .number(String(integer))
        } else if let integer = try? container.decode(UInt64.self) {
            self = .number(String(integer))
        } else if let decimal = try? container.decode(Decimal.self), decimal.isFinite {
            self = .number(decimal.description)
        } else if let double = try? container.decode(Double.self), double.isFinite {
            self = .number(String(double))
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .number(let text):
            var container = encoder.singleValueContainer()
            if let integer = Int64(text) {
                try container.encode(integer)
            } else if let integer = UInt64(text) {
                try container.encode(integer)
            } else if let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), decimal.isFinite {
                try container.encode(decimal)
            } else if let double = Double(text), double.isFinite {
                try container.encode(double)
            } else {
                throw EncodingError.invalidValue(
                    text,
                    EncodingError.Context(
                        codingPath: encoder.codingPath, debugDescription: "the number \(text) has no finite value"))
            }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements {
                try container.encode(element)
            }
        case .object(let object):
            try object.encode(to: encoder)
        }
    }
}

extension JSONObject: Codable {
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected a JSON object"))
        }
        self = object
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONValue.MemberKey.self)
        for member in members {
            try container.encode(member.value, forKey: JSONValue.MemberKey(stringValue: member.name))
        }
    }
}
