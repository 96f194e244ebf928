public import Vouch

/// The JSON type Apple documents for a payload member, by member name.
///
/// Member names mean the same thing in every kind of App Store signed data (`price` is a
/// number of milliunits wherever it appears, `transactionId` always a string of digits), so
/// one table serves every payload and nested path: the last component of `data.status` or
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

    /// The documented type of member `name`, or `nil` for a member Apple does not document.
    public static func of(_ name: String) -> MintFieldType? { table[name] }

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

    private static let table: [String: MintFieldType] = {
        var table: [String: MintFieldType] = [:]
        let strings = [
            // Transactions and renewal info
            "appAccountToken", "appTransactionId", "autoRenewProductId", "bundleId", "currency", "environment",
            "inAppOwnershipType", "offerDiscountType", "offerIdentifier", "offerPeriod", "originalTransactionId",
            "productId", "revocationType", "storefront", "storefrontId", "subscriptionGroupIdentifier",
            "transactionId", "transactionReason", "type", "webOrderLineItemId",
            // Notifications
            "notificationType", "subtype", "notificationUUID", "version", "bundleVersion", "signedTransactionInfo",
            "signedRenewalInfo", "consumptionRequestReason", "requestIdentifier", "externalPurchaseId",
            // App transactions and retention messaging
            "applicationVersion", "originalApplicationVersion", "deviceVerification", "deviceVerificationNonce",
            "receiptType", "originalPlatform", "userLocale",
        ]
        let integers = [
            "appAppleId", "autoRenewStatus", "expirationIntent", "offerType", "price", "priceIncreaseStatus",
            "quantity", "renewalPrice", "revocationReason", "revocationPercentage", "status",
            "versionExternalIdentifier", "failedCount", "succeededCount",
        ]
        let numbers = [
            "expiresDate", "gracePeriodExpiresDate", "originalPurchaseDate", "preorderDate", "purchaseDate",
            "receiptCreationDate", "recentSubscriptionStartDate", "renewalDate", "requestDate", "revocationDate",
            "signedDate", "tokenCreationDate",
        ]
        for name in strings { table[name] = .string }
        for name in integers { table[name] = .integer }
        for name in numbers { table[name] = .number }
        for name in ["isUpgraded", "isInBillingRetryPeriod"] { table[name] = .boolean }
        for name in ["eligibleWinBackOfferIds", "storefrontCountryCodes"] { table[name] = .array }
        for name in ["data", "summary", "externalPurchaseToken", "advancedCommerceInfo"] { table[name] = .object }
        return table
    }()
}
