import Vouch
internal import VouchMintPKI

/// Which members each kind of payload has and in what order, for each signing style: the App
/// Store and Xcode write the same fields in different orders, and Xcode leaves some out.
///
/// A builder computes a payload's values once, by name; the table of its kind and style lays
/// them out. A member the table does not name is not written in that style, and a name
/// without a value is left out (an optional field absent from this item).
enum MintLayout {
    static func members(of kind: MintKind, style: MintAuthority.Style) -> [String] {
        switch (kind, style) {
        case (.transaction, .appStore): transaction
        case (.transaction, .xcode): xcodeTransaction
        case (.renewalInfo, .appStore): renewalInfo
        case (.renewalInfo, .xcode): xcodeRenewalInfo
        case (.appTransaction, .appStore): appTransaction
        case (.appTransaction, .xcode): xcodeAppTransaction
        case (.notification, _): notification
        case (.realtimeRequest, _): realtimeRequest
        }
    }

    /// `values` in the order of `kind` and `style`.
    static func object(_ values: [String: JSONValue], _ kind: MintKind, style: MintAuthority.Style) -> JSONObject {
        object(values, order: members(of: kind, style: style))
    }

    static func object(_ values: [String: JSONValue], order: [String]) -> JSONObject {
        JSONObject(order.compactMap { name in values[name].map { JSONObject.Member(name, $0) } })
    }

    static let transaction = [
        "transactionId", "originalTransactionId", "webOrderLineItemId", "bundleId", "productId",
        "subscriptionGroupIdentifier", "purchaseDate", "originalPurchaseDate", "expiresDate", "quantity", "type",
        "appAccountToken", "inAppOwnershipType", "signedDate", "revocationReason", "revocationDate", "isUpgraded",
        "offerType", "offerIdentifier", "environment", "transactionReason", "storefront", "storefrontId", "price",
        "currency", "offerDiscountType", "offerPeriod", "revocationType", "revocationPercentage", "appTransactionId",
        "multiSeatInfo",
    ]

    static let xcodeTransaction = [
        "inAppOwnershipType", "purchaseDate", "subscriptionGroupIdentifier", "signedDate", "originalPurchaseDate",
        "isUpgraded", "deviceVerification", "offerType", "offerIdentifier", "quantity", "transactionId", "type",
        "transactionReason", "productId", "expiresDate", "revocationDate", "revocationReason", "environment",
        "storefrontId", "originalTransactionId", "bundleId", "deviceVerificationNonce", "webOrderLineItemId",
        "storefront", "price", "currency", "appAccountToken",
    ]

    static let renewalInfo = [
        "expirationIntent", "originalTransactionId", "autoRenewProductId", "productId", "autoRenewStatus",
        "renewalPrice", "currency", "isInBillingRetryPeriod", "priceIncreaseStatus", "gracePeriodExpiresDate",
        "offerType", "offerIdentifier", "offerDiscountType", "offerPeriod", "signedDate", "environment",
        "recentSubscriptionStartDate", "renewalDate", "eligibleWinBackOfferIds", "appTransactionId", "appAccountToken",
        "renewalQuantity", "multiSeatInfo",
    ]

    static let xcodeRenewalInfo = [
        "deviceVerification", "productId", "deviceVerificationNonce", "renewalDate", "originalTransactionId",
        "recentSubscriptionStartDate", "autoRenewStatus", "expirationIntent", "isInBillingRetryPeriod",
        "priceIncreaseStatus", "gracePeriodExpiresDate", "signedDate", "environment", "autoRenewProductId",
        "renewalPrice", "currency", "appAccountToken",
    ]

    static let appTransaction = [
        "receiptType", "appAppleId", "bundleId", "applicationVersion", "versionExternalIdentifier",
        "receiptCreationDate", "requestDate", "originalPurchaseDate", "originalApplicationVersion",
        "deviceVerification", "deviceVerificationNonce", "preorderDate", "appTransactionId", "originalPlatform",
    ]

    static let xcodeAppTransaction = [
        "bundleId", "applicationVersion", "deviceVerificationNonce", "receiptType", "receiptCreationDate",
        "deviceVerification", "requestDate", "originalApplicationVersion", "originalPurchaseDate",
    ]

    static let notification = ["notificationType", "subtype", "notificationUUID", "data", "version", "signedDate"]

    /// The `data` member of a notification.
    static let notificationData = [
        "appAppleId", "bundleId", "bundleVersion", "environment", "signedTransactionInfo", "signedRenewalInfo",
        "status", "consumptionRequestReason",
    ]

    static let realtimeRequest = [
        "originalTransactionId", "appAppleId", "productId", "userLocale", "requestIdentifier", "signedDate",
        "environment",
    ]
}
