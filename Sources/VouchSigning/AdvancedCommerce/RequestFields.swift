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

    /// The JSON array of `items`, each written (and checked) at its own path.
    static func encode<Item>(
        _ items: [Item], _ path: String, _ json: (Item, String) throws(SigningError) -> JSONValue
    ) throws(SigningError) -> JSONValue {
        var values: [JSONValue] = []
        for (index, item) in items.enumerated() { values.append(try json(item, "\(path)[\(index)]")) }
        return .array(values)
    }

    static func items(_ count: Int, _ path: String) throws(SigningError) {
        try check(count > 0, path, "is empty; at least one item is needed")
    }
}

/// The members of every priced item (`SKU`, `description`, `displayName`, `price`): read,
/// checked against Apple's lengths and written in one place.
struct PricedItem {
    let sku: String
    let description: String
    let displayName: String
    let price: Int64

    init(sku: String, description: String, displayName: String, price: Int64) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.price = price
    }

    init(_ fields: inout RequestFields) throws(SigningError) {
        sku = try fields.required("SKU", RequestFields.string)
        description = try fields.required("description", RequestFields.string)
        displayName = try fields.required("displayName", RequestFields.string)
        price = try fields.required("price", RequestFields.integer)
    }

    /// The item's members at `path`, after checking their lengths.
    func object(_ path: String) throws(SigningError) -> JSONObject {
        try RequestRules.sku(sku, "\(path).SKU")
        try RequestRules.description(description, "\(path).description")
        try RequestRules.displayName(displayName, "\(path).displayName")
        return JSONObject([
            .init("SKU", .string(sku)), .init("description", .string(description)),
            .init("displayName", .string(displayName)), .init("price", .number(String(price))),
        ])
    }
}

extension JSONObject {
    /// Appends `name` with `value` when there is one.
    mutating func appendIfPresent(_ name: String, _ value: JSONValue?) {
        if let value { members.append(Member(name, value)) }
    }
}
