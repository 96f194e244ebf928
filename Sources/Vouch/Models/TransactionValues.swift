// Enum-like values of JWSTransactionDecodedPayload fields.

/// The type of In-App Purchase product (`type`).
public struct ProductType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// An auto-renewable subscription.
    public static let autoRenewableSubscription = Self(rawValue: "Auto-Renewable Subscription")
    /// A non-consumable In-App Purchase.
    public static let nonConsumable = Self(rawValue: "Non-Consumable")
    /// A consumable In-App Purchase.
    public static let consumable = Self(rawValue: "Consumable")
    /// A non-renewing subscription.
    public static let nonRenewingSubscription = Self(rawValue: "Non-Renewing Subscription")

    public static let knownValues: [Self] = [
        .autoRenewableSubscription, .nonConsumable, .consumable, .nonRenewingSubscription,
    ]
    public static let knownNames: [Self: String] = [
        .autoRenewableSubscription: "autoRenewableSubscription",
        .nonConsumable: "nonConsumable",
        .consumable: "consumable",
        .nonRenewingSubscription: "nonRenewingSubscription",
    ]
}

/// Whether the customer bought the product or has it through Family Sharing (`inAppOwnershipType`).
public struct InAppOwnershipType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The transaction belongs to a family member who benefits from the product through Family Sharing.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
    /// The transaction belongs to the customer who bought the product.
    public static let purchased = Self(rawValue: "PURCHASED")

    public static let knownValues: [Self] = [.familyShared, .purchased]
    public static let knownNames: [Self: String] = [.familyShared: "familyShared", .purchased: "purchased"]
}

/// Why the App Store refunded or revoked a transaction (`revocationReason`).
public struct RevocationReason: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Refunded for another reason, such as an accidental purchase.
    public static let refundedForOtherReason = Self(rawValue: 0)
    /// Refunded because of an actual or perceived issue in the app.
    public static let refundedDueToIssue = Self(rawValue: 1)

    public static let knownValues: [Self] = [.refundedForOtherReason, .refundedDueToIssue]
    public static let knownNames: [Self: String] = [
        .refundedForOtherReason: "refundedForOtherReason", .refundedDueToIssue: "refundedDueToIssue",
    ]
}

/// The kind of refund or revocation that applies to a transaction (`revocationType`).
public struct RevocationType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The App Store refunded the whole transaction.
    public static let refundFull = Self(rawValue: "REFUND_FULL")
    /// The App Store refunded part of the transaction (see `revocationPercentage`).
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    /// The customer lost access to the product through Family Sharing.
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")

    public static let knownValues: [Self] = [.refundFull, .refundProrated, .familyRevoke]
    public static let knownNames: [Self: String] = [
        .refundFull: "refundFull", .refundProrated: "refundProrated", .familyRevoke: "familyRevoke",
    ]
}

/// The type of subscription offer (`offerType`).
public struct OfferType: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// An introductory offer.
    public static let introductoryOffer = Self(rawValue: 1)
    /// A promotional offer.
    public static let promotionalOffer = Self(rawValue: 2)
    /// An offer with a subscription offer code.
    public static let offerCode = Self(rawValue: 3)
    /// A win-back offer.
    public static let winBackOffer = Self(rawValue: 4)

    public static let knownValues: [Self] = [.introductoryOffer, .promotionalOffer, .offerCode, .winBackOffer]
    public static let knownNames: [Self: String] = [
        .introductoryOffer: "introductoryOffer",
        .promotionalOffer: "promotionalOffer",
        .offerCode: "offerCode",
        .winBackOffer: "winBackOffer",
    ]
}

/// The payment mode of a discount offer (`offerDiscountType`).
public struct OfferDiscountType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A free trial.
    public static let freeTrial = Self(rawValue: "FREE_TRIAL")
    /// A pay-as-you-go discount: a discounted price for each period of the offer.
    public static let payAsYouGo = Self(rawValue: "PAY_AS_YOU_GO")
    /// A pay-up-front discount: one discounted payment for the offer's whole duration.
    public static let payUpFront = Self(rawValue: "PAY_UP_FRONT")
    /// A one-time discount, for consumables, non-consumables and non-renewing subscriptions.
    public static let oneTime = Self(rawValue: "ONE_TIME")

    public static let knownValues: [Self] = [.freeTrial, .payAsYouGo, .payUpFront, .oneTime]
    public static let knownNames: [Self: String] = [
        .freeTrial: "freeTrial",
        .payAsYouGo: "payAsYouGo",
        .payUpFront: "payUpFront",
        .oneTime: "oneTime",
    ]
}

/// Whether a transaction is a customer's purchase or a system-initiated renewal (`transactionReason`).
public struct TransactionReason: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer initiated the purchase.
    public static let purchase = Self(rawValue: "PURCHASE")
    /// The App Store renewed an auto-renewable subscription.
    public static let renewal = Self(rawValue: "RENEWAL")

    public static let knownValues: [Self] = [.purchase, .renewal]
    public static let knownNames: [Self: String] = [.purchase: "purchase", .renewal: "renewal"]
}

/// How a monthly subscription with a 12-month commitment is billed (`billingPlanType`).
public struct BillingPlanType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The 12-month commitment is billed up front.
    public static let billedUpfront = Self(rawValue: "BILLED_UPFRONT")
    /// The 12-month commitment is billed monthly.
    public static let monthly = Self(rawValue: "MONTHLY")

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
    public static let knownNames: [Self: String] = [.billedUpfront: "billedUpfront", .monthly: "monthly"]
}
