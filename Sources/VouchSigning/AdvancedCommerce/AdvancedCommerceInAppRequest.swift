public import Vouch

/// An Advanced Commerce API request an app sends through StoreKit, signed by the server with
/// ``AdvancedCommerceAPIInAppSignatureCreator``: a one-time charge, or a subscription to create,
/// modify or reactivate.
///
/// The request types hold what the app asks for; ``jsonObject()`` checks Apple's field rules
/// (descriptions of at most 45 characters, display names of at most 30, SKUs of at most 128,
/// offers of 1 to 12 periods, item lists that are not empty, every required member present) and
/// writes the JSON Apple documents, member names exactly Apple's, UUIDs in lower case.
/// ``AdvancedCommerceRequests/request(json:)`` reads one from that JSON.
public protocol AdvancedCommerceInAppRequest: Sendable {
    /// The operation: `CREATE_ONE_TIME_CHARGE`, `CREATE_SUBSCRIPTION`, `MODIFY_SUBSCRIPTION`
    /// or `REACTIVATE_SUBSCRIPTION`.
    static var operation: String { get }
    /// The request's JSON, after checking Apple's field rules.
    ///
    /// - Throws: ``SigningError/Code/invalidRequest`` naming the member that breaks a rule.
    func jsonObject() throws(SigningError) -> JSONObject
}

/// Reads any of the four request types from its JSON.
public enum AdvancedCommerceRequests {
    /// The request `json` holds, by its `operation`; `version` must be `"1"` when present.
    /// Every member must be one the request type documents, of the documented type.
    ///
    /// - Throws: ``SigningError/Code/invalidRequest`` naming the member at fault.
    public static func request(json: JSONObject) throws(SigningError) -> any AdvancedCommerceInAppRequest {
        guard let operation = json["operation"]?.stringValue else {
            throw SigningError(.invalidRequest, "operation is missing or not a string")
        }
        if let version = json["version"], version != .string("1") {
            throw SigningError(.invalidRequest, "version is \(JSONWriter.string(version)); \"1\" is supported")
        }
        var fields = try RequestFields(.object(json), path: "")
        fields.markRead("operation", "version")
        guard let request = try read(operation, &fields) else {
            throw SigningError(
                .invalidRequest,
                "operation \"\(operation)\" is not an in-app request; expected "
                    + operations.joined(separator: ", "))
        }
        try fields.requireNoOtherMembers()
        return request
    }

    /// The members every request begins with: `operation` and `version`.
    static func object<Request: AdvancedCommerceInAppRequest>(_ type: Request.Type) -> JSONObject {
        JSONObject([.init("operation", .string(type.operation)), .init("version", "1")])
    }
}

// MARK: Offers and descriptors, shared with the payload models

extension AdvancedCommerceOffer: RequestValue {
    /// The offer's JSON in a request, after checking that every member is there and the period
    /// count is 1 to 12.
    func requestJSON(_ path: String) throws(SigningError) -> JSONValue {
        guard let period, let periodCount, let price, let reason else {
            let missing =
                [("period", period == nil), ("periodCount", periodCount == nil), ("price", price == nil)]
                .first { $0.1 }?.0 ?? "reason"
            throw SigningError(.invalidRequest, "\(path).\(missing) is missing")
        }
        try RequestRules.check(
            RequestRules.periodCounts.contains(Int(periodCount)), "\(path).periodCount", "is not between 1 and 12")
        return .object(
            JSONObject([
                .init("periodCount", .number(String(periodCount))), .init("price", .number(String(price))),
                .init("period", .string(period.rawValue)), .init("reason", .string(reason.rawValue)),
            ]))
    }

    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            let periodCount = try fields.required("periodCount", RequestFields.integer)
            guard let count = Int32(exactly: periodCount) else {
                throw SigningError(.invalidRequest, "\(path).periodCount is out of range")
            }
            return Self(
                period: AdvancedCommerceOfferPeriod(rawValue: try fields.required("period", RequestFields.string)),
                periodCount: count, price: try fields.required("price", RequestFields.integer),
                reason: AdvancedCommerceOfferReason(rawValue: try fields.required("reason", RequestFields.string)))
        }
    }
}

extension AdvancedCommerceDescriptors: RequestValue {
    /// The descriptors' JSON in a request, both members required and within their lengths.
    func requestJSON(_ path: String) throws(SigningError) -> JSONValue {
        guard let description else { throw SigningError(.invalidRequest, "\(path).description is missing") }
        guard let displayName else { throw SigningError(.invalidRequest, "\(path).displayName is missing") }
        try RequestRules.description(description, "\(path).description")
        try RequestRules.displayName(displayName, "\(path).displayName")
        return .object(
            JSONObject([.init("description", .string(description)), .init("displayName", .string(displayName))]))
    }

    static func request(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            Self(
                description: try fields.required("description", RequestFields.string),
                displayName: try fields.required("displayName", RequestFields.string))
        }
    }
}
