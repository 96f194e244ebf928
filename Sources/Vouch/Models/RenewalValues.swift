// Enum-like values of JWSRenewalInfoDecodedPayload fields.

/// Why an auto-renewable subscription expired (`expirationIntent`).
public struct ExpirationIntent: PayloadEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The customer canceled their subscription.
    public static let customerCancelled = Self(rawValue: 1)
    /// A billing error occurred.
    public static let billingError = Self(rawValue: 2)
    /// The customer didn't consent to a price increase.
    public static let customerDidNotConsentToPriceIncrease = Self(rawValue: 3)
    /// The product wasn't available for purchase at the time of renewal.
    public static let productNotAvailable = Self(rawValue: 4)
    /// The subscription expired for some other reason.
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

    /// Automatic renewal is off: the subscription expires at the end of its period.
    public static let off = Self(rawValue: 0)
    /// Automatic renewal is on.
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

    /// The customer hasn't yet responded to a price increase that requires consent.
    public static let customerHasNotResponded = Self(rawValue: 0)
    /// The customer consented to the price increase, or the App Store notified them of an increase that doesn't
    /// require consent.
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = Self(rawValue: 1)

    public static let knownValues: [Self] = [
        .customerHasNotResponded, .customerConsentedOrWasNotifiedWithoutNeedingConsent,
    ]
    public static let knownNames: [Self: String] = [
        .customerHasNotResponded: "customerHasNotResponded",
        .customerConsentedOrWasNotifiedWithoutNeedingConsent: "customerConsentedOrWasNotifiedWithoutNeedingConsent",
    ]
}

/// How the next renewal of a subscription with a 12-month commitment is billed
/// (`renewalBillingPlanType`, `commitmentRenewalBillingPlanType`).
public struct RenewalBillingPlanType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The next renewal is billed up front.
    public static let billedUpfront = Self(rawValue: "BILLED_UPFRONT")
    /// The next renewal is billed monthly.
    public static let monthly = Self(rawValue: "MONTHLY")

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
    public static let knownNames: [Self: String] = [.billedUpfront: "billedUpfront", .monthly: "monthly"]
}
