// Enum-like values of Advanced Commerce API fields inside transactions and renewal info.

/// The duration of one cycle of an Advanced Commerce subscription (`period`).
public struct AdvancedCommercePeriod: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let p1W = Self(rawValue: "P1W")
    public static let p1M = Self(rawValue: "P1M")
    public static let p2M = Self(rawValue: "P2M")
    public static let p3M = Self(rawValue: "P3M")
    public static let p6M = Self(rawValue: "P6M")
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

    public static let p3D = Self(rawValue: "P3D")
    public static let p1W = Self(rawValue: "P1W")
    public static let p2W = Self(rawValue: "P2W")
    public static let p1M = Self(rawValue: "P1M")
    public static let p2M = Self(rawValue: "P2M")
    public static let p3M = Self(rawValue: "P3M")
    public static let p6M = Self(rawValue: "P6M")
    public static let p9M = Self(rawValue: "P9M")
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

    public static let acquisition = Self(rawValue: "ACQUISITION")
    public static let winBack = Self(rawValue: "WIN_BACK")
    public static let retention = Self(rawValue: "RETENTION")

    public static let knownValues: [Self] = [.acquisition, .winBack, .retention]
    public static let knownNames: [Self: String] = [.acquisition: "acquisition", .winBack: "winBack", .retention: "retention"]
}

/// Why an Advanced Commerce item was refunded (`refundReason`).
public struct AdvancedCommerceRefundReason: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let unintendedPurchase = Self(rawValue: "UNINTENDED_PURCHASE")
    public static let fulfillmentIssue = Self(rawValue: "FULFILLMENT_ISSUE")
    public static let unsatisfiedWithPurchase = Self(rawValue: "UNSATISFIED_WITH_PURCHASE")
    public static let legal = Self(rawValue: "LEGAL")
    public static let other = Self(rawValue: "OTHER")
    public static let modifyItemsRefund = Self(rawValue: "MODIFY_ITEMS_REFUND")
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

    public static let full = Self(rawValue: "FULL")
    public static let prorated = Self(rawValue: "PRORATED")
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

    public static let scheduled = Self(rawValue: "SCHEDULED")
    public static let pending = Self(rawValue: "PENDING")
    public static let accepted = Self(rawValue: "ACCEPTED")

    public static let knownValues: [Self] = [.scheduled, .pending, .accepted]
    public static let knownNames: [Self: String] = [.scheduled: "scheduled", .pending: "pending", .accepted: "accepted"]
}
