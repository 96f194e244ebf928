// Enum-like values of Advanced Commerce API fields inside transactions and renewal info.

/// The duration of one cycle of an Advanced Commerce subscription (`period`).
public struct AdvancedCommercePeriod: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// One week.
    public static let p1W = Self(rawValue: "P1W")
    /// One month.
    public static let p1M = Self(rawValue: "P1M")
    /// Two months.
    public static let p2M = Self(rawValue: "P2M")
    /// Three months.
    public static let p3M = Self(rawValue: "P3M")
    /// Six months.
    public static let p6M = Self(rawValue: "P6M")
    /// One year.
    public static let p1Y = Self(rawValue: "P1Y")

    public static let knownValues: [Self] = [.p1W, .p1M, .p2M, .p3M, .p6M, .p1Y]
    public static let knownNames: [Self: String] = [
        .p1W: "p1W",
        .p1M: "p1M",
        .p2M: "p2M",
        .p3M: "p3M",
        .p6M: "p6M",
        .p1Y: "p1Y",
    ]
}

/// The period of an Advanced Commerce offer (`offer.period`).
public struct AdvancedCommerceOfferPeriod: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Three days.
    public static let p3D = Self(rawValue: "P3D")
    /// One week.
    public static let p1W = Self(rawValue: "P1W")
    /// Two weeks.
    public static let p2W = Self(rawValue: "P2W")
    /// One month.
    public static let p1M = Self(rawValue: "P1M")
    /// Two months.
    public static let p2M = Self(rawValue: "P2M")
    /// Three months.
    public static let p3M = Self(rawValue: "P3M")
    /// Six months.
    public static let p6M = Self(rawValue: "P6M")
    /// Nine months.
    public static let p9M = Self(rawValue: "P9M")
    /// One year.
    public static let p1Y = Self(rawValue: "P1Y")

    public static let knownValues: [Self] = [.p3D, .p1W, .p2W, .p1M, .p2M, .p3M, .p6M, .p9M, .p1Y]
    public static let knownNames: [Self: String] = [
        .p3D: "p3D",
        .p1W: "p1W",
        .p2W: "p2W",
        .p1M: "p1M",
        .p2M: "p2M",
        .p3M: "p3M",
        .p6M: "p6M",
        .p9M: "p9M",
        .p1Y: "p1Y",
    ]
}

/// Why an Advanced Commerce offer applies (`offer.reason`).
public struct AdvancedCommerceOfferReason: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// An offer to acquire new customers.
    public static let acquisition = Self(rawValue: "ACQUISITION")
    /// An offer to win back former customers.
    public static let winBack = Self(rawValue: "WIN_BACK")
    /// An offer to retain current customers.
    public static let retention = Self(rawValue: "RETENTION")

    public static let knownValues: [Self] = [.acquisition, .winBack, .retention]
    public static let knownNames: [Self: String] = [
        .acquisition: "acquisition", .winBack: "winBack", .retention: "retention",
    ]
}

/// Why an Advanced Commerce item was refunded (`refundReason`).
public struct AdvancedCommerceRefundReason: PayloadEnum {
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
    /// A refund for a legal reason.
    public static let legal = Self(rawValue: "LEGAL")
    /// A refund for another reason.
    public static let other = Self(rawValue: "OTHER")
    /// A refund that results from modifying the items of a subscription.
    public static let modifyItemsRefund = Self(rawValue: "MODIFY_ITEMS_REFUND")
    /// In the sandbox, simulates a declined refund.
    public static let simulateRefundDecline = Self(rawValue: "SIMULATE_REFUND_DECLINE")

    public static let knownValues: [Self] = [
        .unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other, .modifyItemsRefund,
        .simulateRefundDecline,
    ]
    public static let knownNames: [Self: String] = [
        .unintendedPurchase: "unintendedPurchase",
        .fulfillmentIssue: "fulfillmentIssue",
        .unsatisfiedWithPurchase: "unsatisfiedWithPurchase",
        .legal: "legal",
        .other: "other",
        .modifyItemsRefund: "modifyItemsRefund",
        .simulateRefundDecline: "simulateRefundDecline",
    ]
}

/// How much of an Advanced Commerce item was refunded (`refundType`).
public struct AdvancedCommerceRefundType: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The whole price was refunded.
    public static let full = Self(rawValue: "FULL")
    /// A prorated share of the price was refunded.
    public static let prorated = Self(rawValue: "PRORATED")
    /// A custom amount was refunded (see `refundAmount`).
    public static let custom = Self(rawValue: "CUSTOM")

    public static let knownValues: [Self] = [.full, .prorated, .custom]
    public static let knownNames: [Self: String] = [.full: "full", .prorated: "prorated", .custom: "custom"]
}

/// Where a scheduled Advanced Commerce price increase stands (`priceIncreaseInfo.status`).
public struct AdvancedCommercePriceIncreaseInfoStatus: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The price increase is scheduled.
    public static let scheduled = Self(rawValue: "SCHEDULED")
    /// The price increase is pending the customer's response.
    public static let pending = Self(rawValue: "PENDING")
    /// The customer accepted the price increase.
    public static let accepted = Self(rawValue: "ACCEPTED")

    public static let knownValues: [Self] = [.scheduled, .pending, .accepted]
    public static let knownNames: [Self: String] = [
        .scheduled: "scheduled", .pending: "pending", .accepted: "accepted",
    ]
}
