public import Vouch

/// The JSON type Apple documents for a payload member, by member name.
///
/// The types come from the payload table the models are generated from (`Schemas/payloads.tsv`).
/// Member names mean the same thing in every object a `--set` path reaches (`price` is a number
/// of milliunits wherever it appears, `transactionId` always a string of digits; the generator
/// fails on a name that would not), so the last component of `data.status` or
/// `data.signedTransactionInfo.price` decides.
public enum MintFieldType: String, Sendable, Hashable {
    /// A JSON string.
    case string
    /// A whole JSON number (ids such as `appAppleId`, milliunit prices, enum codes).
    case integer
    /// Any JSON number (dates in milliseconds, fractional in Xcode's data).
    case number
    /// `true` or `false`.
    case boolean
    /// A JSON array.
    case array
    /// A JSON object.
    case object

    /// The documented type of member `name`, or `nil` for a member the payload table lacks.
    public static func of(_ name: String) -> MintFieldType? { documented[name] }

    /// Converts `text` to this type: a string is the text itself; anything else must parse as
    /// a JSON value of the type.
    public func value(from text: String) -> JSONValue? {
        if self == .string { return .string(text) }
        guard let value = try? StrictJSON.parse(Array(text.utf8)) else { return nil }
        switch (self, value) {
        case (.integer, .number(let number)) where Int64(number) != nil: return value
        case (.number, .number), (.boolean, .bool), (.array, .array), (.object, .object): return value
        default: return nil
        }
    }

    /// How an error names the type.
    public var description: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "true or false"
        case .array: "a JSON array"
        case .object: "a JSON object"
        }
    }
}
