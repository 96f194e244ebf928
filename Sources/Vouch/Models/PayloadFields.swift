internal import Foundation

/// A payload member that is present but has the wrong JSON type or an out-of-range value.
///
/// Decoding is lenient about what is missing (a missing or `null` member is `nil`) and about
/// what is extra (unknown members are kept in the model's `json`), but never guesses at a
/// value it cannot represent exactly.
///
/// Two errors are equal when their codes are (every one is ``Code/invalidMember``): the member
/// and what it should have been are detail for people.
public struct PayloadFieldError: CodedError {
    /// A stable identifier of the failure.
    public struct Code: ErrorCode {
        /// The code as text: `invalid_member`.
        public let rawValue: String

        /// A present member has the wrong JSON type or a value out of the range of its type.
        public static let invalidMember = Code(rawValue: "invalid_member")
    }

    /// The dotted path of the member, such as `data.bundleId` or `advancedCommerceInfo.items[0].price`.
    public let field: String
    /// What the member should have been, such as `a string` or `a 64-bit integer`.
    public let expected: String

    /// An error for the member at `field` that should have been `expected`.
    public init(field: String, expected: String) {
        self.field = field
        self.expected = expected
    }

    /// ``Code/invalidMember``.
    public var code: Code { .invalidMember }
    /// ``ErrorCategory/input``: the data is not what it must be.
    public var category: ErrorCategory { .input }
    /// `field: expected what`, such as `data.bundleId: expected a string`.
    public var reason: String { "\(field): expected \(expected)" }
    /// The ``reason``: it is the detail of a `bad_payload_json` verification error.
    public var description: String { reason }

    /// The same error for a member found inside `parent` (a member name or an array element).
    func nested(under parent: String) -> PayloadFieldError {
        PayloadFieldError(field: parent + "." + field, expected: expected)
    }
}

/// A typed payload decoded from a JSON object read by the strict parser.
///
/// The source object is kept whole in ``json``, so members this version does not model
/// survive decoding. `Codable` goes through ``json``: encoding writes the payload's own
/// member names and values (see ``JSONValue``'s `Codable`), decoding reads any JSON object
/// and decodes it as ``init(json:)`` does.
public protocol PayloadModel: Sendable, Hashable, Codable {
    /// Decodes the modelled members of `json`; unknown members never fail the decode.
    init(json: JSONObject) throws(PayloadFieldError)
    /// The object the model was decoded from, members in document order.
    var json: JSONObject { get }
}

extension PayloadModel {
    public init(from decoder: any Decoder) throws {
        let object = try JSONObject(from: decoder)
        do {
            try self.init(json: object)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// A payload the App Store signs, which carries the date it was signed.
public protocol SignedPayload: PayloadModel {
    /// When the App Store signed the payload (for an app transaction, its `receiptCreationDate`).
    var signedDate: Timestamp? { get }
}

/// An enum-like field value: the raw value Apple sent, with `static let` constants for the
/// documented values.
///
/// Any raw value is accepted, so a value Apple adds later decodes and keeps its raw value;
/// ``isKnown`` tells whether it is one this version documents. `Codable` as the raw value.
public protocol PayloadEnum: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible
where RawValue: Sendable & Hashable & Codable {
    init(rawValue: RawValue)
    /// Every value Apple documents for this field.
    static var knownValues: [Self] { get }
    /// The name of each documented value's constant, such as `refundedDueToIssue`.
    static var knownNames: [Self: String] { get }
}

extension PayloadEnum {
    /// Whether the value is one Apple documents (as of this version).
    public var isKnown: Bool { Self.knownValues.contains(self) }

    /// A readable name: the constant's name for a documented value (`refundedDueToIssue` for
    /// `revocationReason` 1), `unknown(RAW)` for any other (`unknown(7)`, `unknown(NEW_TYPE)`).
    public var name: String { Self.knownNames[self] ?? "unknown(\(rawValue))" }

    public var description: String { "\(rawValue)" }

    /// Decodes the raw value, whatever it is.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(RawValue.self))
    }

    /// Encodes the raw value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Reads typed members from one payload object: the one place that maps JSON types to model
/// types (the models', the records the entitlement ledger stores, and Stripe's objects). A
/// missing member or JSON `null` reads as `nil`; a present member of the wrong type throws
/// ``PayloadFieldError`` naming it, with its path from this object when it is nested.
package struct PayloadFields {
    package let object: JSONObject
    private let index: JSONObject.NameIndex

    package init(_ object: JSONObject) {
        self.object = object
        index = JSONObject.NameIndex(object)
    }

    package func string(_ name: StaticString) throws(PayloadFieldError) -> String? {
        guard let value = present(name) else { return nil }
        guard case .string(let string) = value else { throw PayloadFieldError(field: "\(name)", expected: "a string") }
        return string
    }

    package func bool(_ name: StaticString) throws(PayloadFieldError) -> Bool? {
        guard let value = present(name) else { return nil }
        guard case .bool(let flag) = value else { throw PayloadFieldError(field: "\(name)", expected: "a boolean") }
        return flag
    }

    package func int64(_ name: StaticString) throws(PayloadFieldError) -> Int64? {
        guard let value = present(name) else { return nil }
        guard case .number(let text) = value, let number = Int64(text) else {
            throw PayloadFieldError(field: "\(name)", expected: "a 64-bit integer")
        }
        return number
    }

    package func int32(_ name: StaticString) throws(PayloadFieldError) -> Int32? {
        guard let value = present(name) else { return nil }
        guard case .number(let text) = value, let number = Int32(text) else {
            throw PayloadFieldError(field: "\(name)", expected: "a 32-bit integer")
        }
        return number
    }

    func timestamp(_ name: StaticString) throws(PayloadFieldError) -> Timestamp? {
        guard let value = present(name) else { return nil }
        guard case .number(let text) = value, let timestamp = Timestamp(rawValue: text) else {
            throw PayloadFieldError(field: "\(name)", expected: "a number of milliseconds within the 64-bit range")
        }
        return timestamp
    }

    func strings(_ name: StaticString) throws(PayloadFieldError) -> [String]? {
        try array(name) { (element, path) throws(PayloadFieldError) in try Self.string(element, at: path) }
    }

    func enumeration<Value: PayloadEnum>(_ name: StaticString) throws(PayloadFieldError) -> Value?
    where Value.RawValue == String {
        try string(name).map { Value(rawValue: $0) }
    }

    func enumeration<Value: PayloadEnum>(_ name: StaticString) throws(PayloadFieldError) -> Value?
    where Value.RawValue == Int32 {
        try int32(name).map { Value(rawValue: $0) }
    }

    func object<Model: PayloadModel>(_ name: StaticString) throws(PayloadFieldError) -> Model? {
        guard let value = present(name) else { return nil }
        return try Self.model(value, at: "\(name)")
    }

    func objects<Model: PayloadModel>(_ name: StaticString) throws(PayloadFieldError) -> [Model]? {
        try array(name) { (element, path) throws(PayloadFieldError) in try Self.model(element, at: path) }
    }

    /// An object member read by `read`: a failure inside it names the member as its parent
    /// (`parent.subscription_details.subscription`).
    package func object<Value>(
        _ name: StaticString,
        _ read: (PayloadFields) throws(PayloadFieldError) -> Value
    ) throws(PayloadFieldError) -> Value? {
        guard let value = present(name) else { return nil }
        return try Self.object(value, at: "\(name)", read)
    }

    /// An array of objects, each read by `read`: a failure names the element
    /// (`items.data[0].current_period_end`).
    package func objects<Value>(
        _ name: StaticString,
        _ read: (PayloadFields) throws(PayloadFieldError) -> Value
    ) throws(PayloadFieldError) -> [Value]? {
        try array(name) { (element, path) throws(PayloadFieldError) in try Self.object(element, at: path, read) }
    }

    /// An object member as it is, for members whose contents a model keeps unread.
    package func jsonObject(_ name: StaticString) throws(PayloadFieldError) -> JSONObject? {
        guard let value = present(name) else { return nil }
        guard case .object(let object) = value else { throw PayloadFieldError(field: "\(name)", expected: "an object") }
        return object
    }

    /// An object member whose values are all strings (Stripe's `metadata`), as a dictionary; a
    /// `null` value is absent, any other value throws naming it (`metadata.account_id`).
    package func stringValues(_ name: StaticString) throws(PayloadFieldError) -> [String: String]? {
        guard let object = try jsonObject(name) else { return nil }
        var result: [String: String] = [:]
        result.reserveCapacity(object.members.count)
        for member in object.members where !member.value.isNull {
            guard case .string(let string) = member.value else {
                throw PayloadFieldError(field: "\(name).\(member.name)", expected: "a string")
            }
            result[member.name] = string
        }
        return result
    }

    /// A member that names another object by its id, or holds that object itself (Stripe's
    /// expandable members: `customer` is `"cus_…"`, or the customer when expanded): the string,
    /// or the object's `id`, which must then be a string. Any other type throws.
    package func idOrObject(_ name: StaticString) throws(PayloadFieldError) -> String? {
        guard let value = present(name) else { return nil }
        switch value {
        case .string(let id):
            return id
        case .object(let object):
            guard case .string(let id)? = object.value("id") else {
                throw PayloadFieldError(field: "\(name).id", expected: "a string (the expanded object's id)")
            }
            return id
        default:
            throw PayloadFieldError(field: "\(name)", expected: "an id string or an object with an id")
        }
    }

    /// An instant written as whole seconds since 1970 (Stripe's timestamps), when it lies in
    /// `range`. A number that is not a whole number of seconds in `range` (a fraction, an
    /// exponent, a negative number, one past the range) reads as `nil`, as a missing member does:
    /// such an instant is unusable, and the caller decides what that means. Any other type throws.
    package func seconds(_ name: StaticString, in range: ClosedRange<Int64>) throws(PayloadFieldError) -> Timestamp? {
        guard let value = present(name) else { return nil }
        guard case .number(let text) = value else {
            throw PayloadFieldError(field: "\(name)", expected: "a number of seconds since 1970")
        }
        guard let seconds = Int64(text), range.contains(seconds) else { return nil }
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? nil : Timestamp(milliseconds: milliseconds)
    }

    private func present(_ name: StaticString) -> JSONValue? {
        guard let value = index.value(name), !value.isNull else { return nil }
        return value
    }

    /// Reads an array member element by element; elements are named `name[index]` in errors.
    private func array<Element>(
        _ name: StaticString,
        _ read: (JSONValue, String) throws(PayloadFieldError) -> Element
    ) throws(PayloadFieldError) -> [Element]? {
        guard let value = present(name) else { return nil }
        guard case .array(let elements) = value else { throw PayloadFieldError(field: "\(name)", expected: "an array") }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            result.append(try read(element, "\(name)[\(index)]"))
        }
        return result
    }

    private static func string(_ value: JSONValue, at path: String) throws(PayloadFieldError) -> String {
        guard case .string(let string) = value else { throw PayloadFieldError(field: path, expected: "a string") }
        return string
    }

    private static func object<Value>(
        _ value: JSONValue,
        at path: String,
        _ read: (PayloadFields) throws(PayloadFieldError) -> Value
    ) throws(PayloadFieldError) -> Value {
        guard case .object(let object) = value else { throw PayloadFieldError(field: path, expected: "an object") }
        do {
            return try read(PayloadFields(object))
        } catch {
            throw error.nested(under: path)
        }
    }

    private static func model<Model: PayloadModel>(
        _ value: JSONValue,
        at path: String
    ) throws(PayloadFieldError) -> Model {
        guard case .object(let object) = value else { throw PayloadFieldError(field: path, expected: "an object") }
        do {
            return try Model(json: object)
        } catch {
            throw error.nested(under: path)
        }
    }
}

/// Writing typed members back: what the models' memberwise initialisers use. A `nil` value
/// adds nothing.
extension JSONObject {
    mutating func add(_ name: String, _ value: String?) {
        if let value { members.append(Member(name, .string(value))) }
    }

    mutating func add(_ name: String, _ value: Bool?) {
        if let value { members.append(Member(name, .bool(value))) }
    }

    mutating func add(_ name: String, _ value: Int64?) {
        if let value { members.append(Member(name, .number(String(value)))) }
    }

    mutating func add(_ name: String, _ value: Int32?) {
        if let value { members.append(Member(name, .number(String(value)))) }
    }

    mutating func add(_ name: String, _ value: Timestamp?) {
        if let value { members.append(Member(name, .number(value.rawValue))) }
    }

    mutating func add(_ name: String, _ value: [String]?) {
        if let value { members.append(Member(name, .array(value.map { .string($0) }))) }
    }

    mutating func add<Value: PayloadEnum>(_ name: String, _ value: Value?) where Value.RawValue == String {
        if let value { members.append(Member(name, .string(value.rawValue))) }
    }

    mutating func add<Value: PayloadEnum>(_ name: String, _ value: Value?) where Value.RawValue == Int32 {
        if let value { members.append(Member(name, .number(String(value.rawValue)))) }
    }

    mutating func add<Model: PayloadModel>(_ name: String, _ value: Model?) {
        if let value { members.append(Member(name, .object(value.json))) }
    }

    mutating func add<Model: PayloadModel>(_ name: String, _ value: [Model]?) {
        if let value { members.append(Member(name, .array(value.map { .object($0.json) }))) }
    }
}
