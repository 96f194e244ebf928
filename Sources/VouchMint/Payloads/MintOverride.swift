public import Vouch
public import VouchMintPKI

/// One `--set FIELD=VALUE` (or `--unset FIELD`) applied to minted payloads.
///
/// The path addresses a member: `price`, `data.status`, and inside a notification's nested
/// tokens `data.signedTransactionInfo.price` or `data.signedRenewalInfo.autoRenewStatus`.
/// A few fields describe the whole scenario and keep related payloads consistent instead of
/// being written at one place: `environment`, `bundleId`, `appAppleId`, `productId`, `type`,
/// `storefront`, `originalTransactionId`, `appTransactionId`, `appAccountToken`, `signedDate`,
/// `notificationType` and `subtype` (see ``MintGenerator``).
public struct MintOverride: Sendable, Hashable {
    /// The member's path, one component per name (`["data", "status"]`).
    public var path: [String]
    /// The new value, or `nil` to remove the member.
    public var value: JSONValue?

    /// Sets the member at `path` to `value`, or removes it when `value` is `nil`.
    public init(path: [String], value: JSONValue?) {
        self.path = path
        self.value = value
    }

    /// Parses `FIELD=VALUE`, VALUE converted to the JSON type Apple documents for FIELD (see
    /// ``MintFieldType``): `transactionId=1001` is the string `"1001"`, `price=990` the number
    /// 990, `isUpgraded=true` the boolean; a VALUE that is not of that type is an error that
    /// says so. Written as a JSON string literal (`quantity="7"`) or `null`, VALUE is taken as
    /// it is, to make deliberately mistyped data. A member Apple does not document gets VALUE as
    /// JSON when it parses (`[1,2]`), otherwise as text.
    public init(parsing assignment: String) throws(MintError) {
        guard let equals = assignment.firstIndex(of: "=") else {
            throw MintError(.invalidOverride, "expected FIELD=VALUE, got \"\(assignment)\"")
        }
        let path = try Self.path(String(assignment[..<equals]))
        let text = String(assignment[assignment.index(after: equals)...])
        let literal = try? StrictJSON.parse(Array(text.utf8))
        let value: JSONValue
        switch (literal, MintFieldType.of(path[path.count - 1])) {
        case (.string?, _), (.null?, _):
            value = literal!
        case (_, let type?):
            guard let converted = type.value(from: text) else {
                throw MintError(
                    .invalidOverride,
                    "\(path.joined(separator: ".")) is \(type.description) in Apple's documentation; \"\(text)\" is not"
                )
            }
            value = converted
        case (let parsed?, nil):
            value = parsed
        case (nil, nil):
            value = .string(text)
        }
        self.init(path: path, value: value)
    }

    /// Parses a dotted member path such as `data.status`.
    public static func path(_ text: String) throws(MintError) -> [String] {
        let components = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.isEmpty, !components.contains(where: \.isEmpty) else {
            throw MintError(.invalidOverride, "\"\(text)\" is not a member path such as price or data.status")
        }
        return components
    }

    /// Sets (or removes) the member at ``path`` in `object`, creating intermediate objects as
    /// needed; fails when the path runs through a member that is not an object.
    public func apply(to object: inout JSONObject) throws(MintError) {
        try Self.apply(value, at: path[...], to: &object, fullPath: path)
    }

    private static func apply(
        _ value: JSONValue?, at path: ArraySlice<String>, to object: inout JSONObject, fullPath: [String]
    ) throws(MintError) {
        let name = path[path.startIndex]
        if path.count == 1 {
            object[name] = value
            return
        }
        var child: JSONObject
        switch object[name] {
        case nil:
            guard value != nil else { return }
            child = JSONObject()
        case .object(let existing):
            child = existing
        default:
            throw MintError(.invalidOverride, "\(fullPath.joined(separator: ".")): \(name) is not an object")
        }
        try apply(value, at: path.dropFirst(), to: &child, fullPath: fullPath)
        object[name] = .object(child)
    }
}
