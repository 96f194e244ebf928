// Enum-like values of JWSRenewalInfoDecodedPayload fields.

/// Why an auto-renewable subscription expired (`expirationIntent`).
public struct ExpirationIntent: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public static let customerCancelled = Self(rawValue: 1)
    public static let billingError = Self(rawValue: 2)
    public static let customerDidNotConsentToPriceIncrease = Self(rawValue: 3)
    public static let productNotAvailable = Self(rawValue: 4)
    public static let other = Self(rawValue: 5)

    public static let knownValues: [Self] = [
        .customerCancelled, .billingError, .customerDidNotConsentToPriceIncrease, .productNotAvailable, .other,
    ]
    public static let knownNames: [Self: String] = [
        .customerCancelled: "customerCancelled",
        .billingError: "billingError",
        .customerDidNotConsentToPriceIncrease: "customerDidNotConsentToPriceIncrease",
        .productNotAvailable: "productNotAvailable",
        .other: "other",
    ]
}

/// Whether an auto-renewable subscription renews at the end of its period (`autoRenewStatus`).
public struct AutoRenewStatus: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public static let off = Self(rawValue: 0)
    public static let on = Self(rawValue: 1)

    public static let knownValues: [Self] = [.off, .on]
    public static let knownNames: [Self: String] = [.off: "off", .on: "on"]
}

/// Whether the customer has responded to a subscription price increase (`priceIncreaseStatus`).
public struct PriceIncreaseStatus: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public static let customerHasNotResponded = Self(rawValue: 0)
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = Self(rawValue: 1)

    public static let knownValues: [Self] = [
        .customerHasNotResponded, .customerConsentedOrWasNotifiedWithoutNeedingConsent,
    ]
    public static let knownNames: [Self: String] = [.customerHasNotResponded: "customerHasNotResponded", .customerConsentedOrWasNotifiedWithoutNeedingConsent: "customerConsentedOrWasNotifiedWithoutNeedingConsent"]
}

/// How the next renewal of a subscription with a 12-month commitment is billed
/// (`renewalBillingPlanType`, `commitmentRenewalBillingPlanType`).
public struct RenewalBillingPlanType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let billedUpfront = Self(rawValue: "BILLED_UPFRONT")
    public static let monthly = Self(rawValue: "MONTHLY")

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
    public static let knownNames: [Self: String] = [.billedUpfront: "billedUpfront", .monthly: "monthly"]
}
