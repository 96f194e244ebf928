// Enum-like values of App Store Server Notifications V2 fields.

/// The event a version 2 notification reports (`notificationType`).
public struct NotificationType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    public static let didRenew = Self(rawValue: "DID_RENEW")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let refund = Self(rawValue: "REFUND")
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    public static let revoke = Self(rawValue: "REVOKE")
    public static let test = Self(rawValue: "TEST")
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    /// Advanced Commerce API: subscription metadata changed.
    public static let metadataUpdate = Self(rawValue: "METADATA_UPDATE")
    /// Advanced Commerce API: a subscription was migrated.
    public static let migration = Self(rawValue: "MIGRATION")
    /// Advanced Commerce API: a subscription price changed.
    public static let priceChange = Self(rawValue: "PRICE_CHANGE")
    /// A parent or guardian withdrew consent for a child's use of the app.
    public static let rescindConsent = Self(rawValue: "RESCIND_CONSENT")

    public static let knownValues: [Self] = [
        .subscribed, .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .didRenew, .expired,
        .didFailToRenew, .gracePeriodExpired, .priceIncrease, .refund, .refundDeclined, .consumptionRequest,
        .renewalExtended, .revoke, .test, .renewalExtension, .refundReversed, .externalPurchaseToken,
        .oneTimeCharge, .metadataUpdate, .migration, .priceChange, .rescindConsent,
    ]
    public static let knownNames: [Self: String] = [
        .subscribed: "subscribed",
        .didChangeRenewalPref: "didChangeRenewalPref",
        .didChangeRenewalStatus: "didChangeRenewalStatus",
        .offerRedeemed: "offerRedeemed",
        .didRenew: "didRenew",
        .expired: "expired",
        .didFailToRenew: "didFailToRenew",
        .gracePeriodExpired: "gracePeriodExpired",
        .priceIncrease: "priceIncrease",
        .refund: "refund",
        .refundDeclined: "refundDeclined",
        .consumptionRequest: "consumptionRequest",
        .renewalExtended: "renewalExtended",
        .revoke: "revoke",
        .test: "test",
        .renewalExtension: "renewalExtension",
        .refundReversed: "refundReversed",
        .externalPurchaseToken: "externalPurchaseToken",
        .oneTimeCharge: "oneTimeCharge",
        .metadataUpdate: "metadataUpdate",
        .migration: "migration",
        .priceChange: "priceChange",
        .rescindConsent: "rescindConsent",
    ]
}

/// Details of some notification types (`subtype`).
public struct NotificationSubtype: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    public static let upgrade = Self(rawValue: "UPGRADE")
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    public static let pending = Self(rawValue: "PENDING")
    public static let accepted = Self(rawValue: "ACCEPTED")
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let summary = Self(rawValue: "SUMMARY")
    public static let failure = Self(rawValue: "FAILURE")
    public static let unreported = Self(rawValue: "UNREPORTED")
    public static let activeTokenReminder = Self(rawValue: "ACTIVE_TOKEN_REMINDER")
    public static let created = Self(rawValue: "CREATED")

    public static let knownValues: [Self] = [
        .initialBuy, .resubscribe, .downgrade, .upgrade, .autoRenewEnabled, .autoRenewDisabled, .voluntary,
        .billingRetry, .priceIncrease, .gracePeriod, .pending, .accepted, .billingRecovery, .productNotForSale,
        .summary, .failure, .unreported, .activeTokenReminder, .created,
    ]
    public static let knownNames: [Self: String] = [
        .initialBuy: "initialBuy",
        .resubscribe: "resubscribe",
        .downgrade: "downgrade",
        .upgrade: "upgrade",
        .autoRenewEnabled: "autoRenewEnabled",
        .autoRenewDisabled: "autoRenewDisabled",
        .voluntary: "voluntary",
        .billingRetry: "billingRetry",
        .priceIncrease: "priceIncrease",
        .gracePeriod: "gracePeriod",
        .pending: "pending",
        .accepted: "accepted",
        .billingRecovery: "billingRecovery",
        .productNotForSale: "productNotForSale",
        .summary: "summary",
        .failure: "failure",
        .unreported: "unreported",
        .activeTokenReminder: "activeTokenReminder",
        .created: "created",
    ]
}

/// The status of an auto-renewable subscription when the notification was signed (`status`).
public struct SubscriptionStatus: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public static let active = Self(rawValue: 1)
    public static let expired = Self(rawValue: 2)
    public static let billingRetry = Self(rawValue: 3)
    public static let billingGracePeriod = Self(rawValue: 4)
    public static let revoked = Self(rawValue: 5)

    public static let knownValues: [Self] = [.active, .expired, .billingRetry, .billingGracePeriod, .revoked]
    public static let knownNames: [Self: String] = [
        .active: "active",
        .expired: "expired",
        .billingRetry: "billingRetry",
        .billingGracePeriod: "billingGracePeriod",
        .revoked: "revoked",
    ]
}

/// The customer's reason for a refund request (`consumptionRequestReason`).
public struct ConsumptionRequestReason: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let unintendedPurchase = Self(rawValue: "UNINTENDED_PURCHASE")
    public static let fulfillmentIssue = Self(rawValue: "FULFILLMENT_ISSUE")
    public static let unsatisfiedWithPurchase = Self(rawValue: "UNSATISFIED_WITH_PURCHASE")
    public static let legal = Self(rawValue: "LEGAL")
    public static let other = Self(rawValue: "OTHER")

    public static let knownValues: [Self] = [
        .unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other,
    ]
    public static let knownNames: [Self: String] = [
        .unintendedPurchase: "unintendedPurchase",
        .fulfillmentIssue: "fulfillmentIssue",
        .unsatisfiedWithPurchase: "unsatisfiedWithPurchase",
        .legal: "legal",
        .other: "other",
    ]
}

/// The type of an external purchase custom link token (`tokenType`).
public struct ExternalPurchaseTokenType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let acquisition = Self(rawValue: "ACQUISITION")
    public static let services = Self(rawValue: "SERVICES")

    public static let knownValues: [Self] = [.acquisition, .services]
    public static let knownNames: [Self: String] = [.acquisition: "acquisition", .services: "services"]
}
