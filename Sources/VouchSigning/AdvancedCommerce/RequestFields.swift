internal import Foundation
internal import Vouch

/// Reads an Advanced Commerce request's members strictly: every member must be one the request
/// type documents, of the documented JSON type; a failure names the member's path.
struct RequestFields {
    let object: JSONObject
    let path: String
    private var known: Set<String> = []

    /// Reads `value`, which must be an object, at `path`.
    init(_ value: JSONValue, path: String) throws(SigningError) {
        guard let object = value.objectValue else { throw Self.wrongType(path, "an object") }
        self.object = object
        self.path = path
    }

    func place(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    static func wrongType(_ path: String, _ expected: String) -> SigningError {
        SigningError(.invalidRequest, "\(path.isEmpty ? "the request" : path) is not \(expected)")
    }

    private mutating func value(_ name: String) -> JSONValue? {
        known.insert(name)
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    mutating func required<T>(_ name: String, _ read: (JSONValue, String) throws(SigningError) -> T)
        throws(SigningError) -> T
    {
        guard let value = value(name) else { throw SigningError(.invalidRequest, "\(place(name)) is missing") }
        return try read(value, place(name))
    }

    mutating func optional<T>(_ name: String, _ read: (JSONValue, String) throws(SigningError) -> T)
        throws(SigningError) -> T?
    {
        guard let value = value(name) else { return nil }
        return try read(value, place(name))
    }

    /// The member `name`, which must be there, read as its type reads it.
    mutating func required<T: RequestValue>(_ name: String) throws(SigningError) -> T {
        try required(name, T.request)
    }

    /// The member `name` read as its type reads it, or `nil` when it is absent or `null`.
    mutating func optional<T: RequestValue>(_ name: String) throws(SigningError) -> T? {
        try optional(name, T.request)
    }

    /// Counts `names` as read (members checked elsewhere).
    mutating func markRead(_ names: String...) {
        known.formUnion(names)
    }

    /// Fails when the object has a member no read asked for (a misspelt name, most often).
    func requireNoOtherMembers() throws(SigningError) {
        if let other = object.members.first(where: { !known.contains($0.name) }) {
            throw SigningError(.invalidRequest, "\(place(other.name)) is not a member of this request")
        }
    }

    /// Reads the object `value` at `path` with `build`, then refuses any member `build` did not
    /// read.
    static func object<T>(
        _ value: JSONValue, _ path: String, _ build: (inout RequestFields) throws(SigningError) -> T
    ) throws(SigningError) -> T {
        var fields = try RequestFields(value, path: path)
        let result = try build(&fields)
        try fields.requireNoOtherMembers()
        return result
    }

    // MARK: Value readers

    static func string(_ value: JSONValue, _ path: String) throws(SigningError) -> String {
        guard let string = value.stringValue else { throw wrongType(path, "a string") }
        return string
    }

    static func integer(_ value: JSONValue, _ path: String) throws(SigningError) -> Int64 {
        guard let number = value.int64Value else { throw wrongType(path, "an integer") }
        return number
    }

    static func bool(_ value: JSONValue, _ path: String) throws(SigningError) -> Bool {
        guard let flag = value.boolValue else { throw wrongType(path, "true or false") }
        return flag
    }

    static func uuid(_ value: JSONValue, _ path: String) throws(SigningError) -> UUID {
        guard let text = value.stringValue, let uuid = UUID(uuidString: text) else { throw wrongType(path, "a UUID") }
        return uuid
    }

    static func array<T>(
        _ value: JSONValue, _ path: String, _ element: (JSONValue, String) throws(SigningError) -> T
    ) throws(SigningError) -> [T] {
        guard let elements = value.arrayValue else { throw wrongType(path, "an array") }
        var result: [T] = []
        for (index, item) in elements.enumerated() {
            result.append(try element(item, "\(path)[\(index)]"))
        }
        return result
    }
}

/// Apple's field rules for Advanced Commerce requests, as its libraries enforce them.
enum RequestRules {
    static let maximumDescriptionLength = 45
    static let maximumDisplayNameLength = 30
    static let maximumSKULength = 128
    static let periodCounts = 1...12

    static func check(_ condition: Bool, _ path: String, _ rule: String) throws(SigningError) {
        guard condition else { throw SigningError(.invalidRequest, "\(path) \(rule)") }
    }

    static func sku(_ value: String, _ path: String) throws(SigningError) {
        try check(value.count <= maximumSKULength, path, "is longer than \(maximumSKULength) characters")
    }

    static func description(_ value: String, _ path: String) throws(SigningError) {
        try check(
            value.count <= maximumDescriptionLength, path, "is longer than \(maximumDescriptionLength) characters")
    }

    static func displayName(_ value: String, _ path: String) throws(SigningError) {
        try check(
            value.count <= maximumDisplayNameLength, path, "is longer than \(maximumDisplayNameLength) characters")
    }

    static func items<Item>(_ items: [Item], _ path: String) throws(SigningError) {
        try check(!items.isEmpty, path, "is empty; at least one item is needed")
    }
}

/// A value an Advanced Commerce request holds: written to the request's JSON at a path (after
/// the checks of Apple's rules its type makes) and read back from it strictly. The request types
/// and their objects are generated from Schemas/advanced-commerce-requests.tsv; the conformances
/// below are the member types they are made of.
protocol RequestValue {
    /// The value's JSON at `path`, after checking Apple's rules for it.
    func requestJSON(_ path: String) throws(SigningError) -> JSONValue
    /// Reads the value at `path` from `value`.
    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self
}

/// Writes an object's members in order: each present member, after the rule given for it, at its
/// own path below the object's.
struct RequestWriter {
    private(set) var object: JSONObject
    let path: String

    init(_ object: JSONObject, path: String) {
        self.object = object
        self.path = path
    }

    /// Appends `name` with `value`, checked by `rule`; nothing when `value` is `nil`.
    mutating func write<Value: RequestValue>(
        _ name: String, _ value: Value?, _ rule: (Value, String) throws(SigningError) -> Void = { _, _ in }
    ) throws(SigningError) {
        guard let value else { return }
        let place = path.isEmpty ? name : "\(path).\(name)"
        try rule(value, place)
        object.members.append(JSONObject.Member(name, try value.requestJSON(place)))
    }
}

extension String: RequestValue {
    func requestJSON(_ path: String) -> JSONValue { .string(self) }
    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.string(value, path)
    }
}

extension Int64: RequestValue {
    func requestJSON(_ path: String) -> JSONValue { .number(String(self)) }
    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.integer(value, path)
    }
}

extension Bool: RequestValue {
    func requestJSON(_ path: String) -> JSONValue { .bool(self) }
    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.bool(value, path)
    }
}

/// A UUID is written in lower case, as Apple's libraries write it.
extension UUID: RequestValue {
    func requestJSON(_ path: String) -> JSONValue { .string(uuidString.lowercased()) }
    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.uuid(value, path)
    }
}

/// A list: each element at its own path (`items[0]`).
extension Array: RequestValue where Element: RequestValue {
    func requestJSON(_ path: String) throws(SigningError) -> JSONValue {
        var values: [JSONValue] = []
        for (index, item) in enumerated() { values.append(try item.requestJSON("\(path)[\(index)]")) }
        return .array(values)
    }

    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.array(value, path, Element.request)
    }
}

/// An enum-like value: its raw text, documented or not.
extension RequestValue where Self: PayloadEnum, RawValue == String {
    func requestJSON(_ path: String) -> JSONValue { .string(rawValue) }
    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        Self(rawValue: try RequestFields.string(value, path))
    }
}
