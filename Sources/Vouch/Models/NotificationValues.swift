// Enum-like values of App Store Server Notifications V2 fields.

/// The event a version 2 notification reports (`notificationType`).
public struct NotificationType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer subscribed to an auto-renewable subscription (subtype `INITIAL_BUY` or `RESUBSCRIBE`).
    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    /// The customer changed their subscription plan (subtype `UPGRADE` or `DOWNGRADE`, or none to cancel a downgrade).
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// The customer changed the subscription's renewal status (subtype `AUTO_RENEW_ENABLED` or `AUTO_RENEW_DISABLED`).
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// The customer redeemed a promotional offer, offer code or win-back offer.
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    /// The subscription renewed (subtype `BILLING_RECOVERY` after a billing retry).
    public static let didRenew = Self(rawValue: "DID_RENEW")
    /// The subscription expired (subtype `VOLUNTARY`, `BILLING_RETRY`, `PRICE_INCREASE` or `PRODUCT_NOT_FOR_SALE`).
    public static let expired = Self(rawValue: "EXPIRED")
    /// The subscription failed to renew because of a billing issue (subtype `GRACE_PERIOD` while a grace period
    /// applies).
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    /// The billing grace period ended without renewing the subscription.
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    /// The system informed the customer of a price increase (subtype `PENDING` or `ACCEPTED`).
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    /// The App Store refunded a transaction.
    public static let refund = Self(rawValue: "REFUND")
    /// The App Store declined a refund request.
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    /// The customer requested a refund for a consumable or auto-renewable subscription and the App Store asks for
    /// consumption data.
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    /// The App Store extended the renewal date of one subscription.
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    /// A family member lost access to the product through Family Sharing.
    public static let revoke = Self(rawValue: "REVOKE")
    /// A test notification requested through the App Store Server API.
    public static let test = Self(rawValue: "TEST")
    /// The App Store is extending the renewal date of all eligible subscribers (subtype `SUMMARY` or `FAILURE`).
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    /// The App Store reversed a previously granted refund.
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    /// An external purchase token (subtype `UNREPORTED`, `ACTIVE_TOKEN_REMINDER` or `CREATED`).
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// The customer bought a consumable, non-consumable or non-renewing subscription.
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

    /// The customer subscribed to the subscription group for the first time, or received access to it through
    /// Family Sharing.
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    /// The customer resubscribed to the same subscription or another one in its group.
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    /// The customer downgraded; it takes effect at the next renewal.
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    /// The customer upgraded; it takes effect immediately.
    public static let upgrade = Self(rawValue: "UPGRADE")
    /// The customer turned automatic renewal on.
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    /// The customer turned automatic renewal off, or the App Store did after a refund.
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    /// The subscription expired after the customer turned off automatic renewal.
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    /// The subscription expired after the billing retry period ended without a renewal.
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    /// The subscription expired because the customer didn't consent to a price increase.
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    /// The subscription failed to renew and is in its billing grace period.
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    /// The customer hasn't yet responded to a price increase that requires consent.
    public static let pending = Self(rawValue: "PENDING")
    /// The customer consented to the price increase, or it did not require consent.
    public static let accepted = Self(rawValue: "ACCEPTED")
    /// An expired subscription that was in billing retry renewed.
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    /// The subscription expired because the product wasn't available for purchase at renewal.
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// The renewal-date extension for all eligible subscribers completed.
    public static let summary = Self(rawValue: "SUMMARY")
    /// The renewal-date extension failed for one subscription.
    public static let failure = Self(rawValue: "FAILURE")
    /// An external purchase token that was not reported.
    public static let unreported = Self(rawValue: "UNREPORTED")
    /// A reminder that an external purchase token is still active.
    public static let activeTokenReminder = Self(rawValue: "ACTIVE_TOKEN_REMINDER")
    /// The system created an external purchase token.
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

    /// The subscription is active.
    public static let active = Self(rawValue: 1)
    /// The subscription has expired.
    public static let expired = Self(rawValue: 2)
    /// The subscription is in its billing retry period.
    public static let billingRetry = Self(rawValue: 3)
    /// The subscription is in its billing grace period.
    public static let billingGracePeriod = Self(rawValue: 4)
    /// The App Store revoked the subscription.
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

    /// The customer didn't intend to make the purchase.
    public static let unintendedPurchase = Self(rawValue: "UNINTENDED_PURCHASE")
    /// The customer had issues receiving or using the purchase.
    public static let fulfillmentIssue = Self(rawValue: "FULFILLMENT_ISSUE")
    /// The customer wasn't satisfied with the purchase.
    public static let unsatisfiedWithPurchase = Self(rawValue: "UNSATISFIED_WITH_PURCHASE")
    /// The customer requested a refund for a legal reason.
    public static let legal = Self(rawValue: "LEGAL")
    /// The customer requested a refund for another reason.
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

    /// A custom link token for acquiring new customers.
    public static let acquisition = Self(rawValue: "ACQUISITION")
    /// A custom link token for services offered to existing customers.
    public static let services = Self(rawValue: "SERVICES")

    public static let knownValues: [Self] = [.acquisition, .services]
    public static let knownNames: [Self: String] = [.acquisition: "acquisition", .services: "services"]
}
