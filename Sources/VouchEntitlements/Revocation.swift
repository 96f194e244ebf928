public import Vouch

/// An exact amount in milliunits of a currency (Apple's unit for `price`): a refund's share of
/// a price is `price × revocationPercentage / 100000`, which need not be a whole milliunit, so
/// it is kept as a whole number of 1/100000 milliunits.
public struct MilliunitAmount: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The amount in 1/100000 of a milliunit.
    public let hundredThousandths: Int128

    /// The amount of `hundredThousandths` 1/100000 milliunits.
    public init(hundredThousandths: Int128) {
        self.hundredThousandths = hundredThousandths
    }

    /// A whole number of milliunits.
    public init(milliunits: Int64) {
        hundredThousandths = Int128(milliunits) * 100_000
    }

    /// `price × percentage / 100000`, exactly.
    public static func share(of price: Int64, percentage: Int32) -> MilliunitAmount {
        MilliunitAmount(hundredThousandths: Int128(price) * Int128(percentage))
    }

    /// The exact sum.
    public static func + (lhs: MilliunitAmount, rhs: MilliunitAmount) -> MilliunitAmount {
        MilliunitAmount(hundredThousandths: lhs.hundredThousandths + rhs.hundredThousandths)
    }

    public static func < (lhs: MilliunitAmount, rhs: MilliunitAmount) -> Bool {
        lhs.hundredThousandths < rhs.hundredThousandths
    }

    /// Milliunits as a decimal number with no needless zeros: `4995`, `3329.96667`, `-0.5`.
    public var description: String {
        let negative = hundredThousandths < 0
        let magnitude = negative ? -hundredThousandths : hundredThousandths
        var text = (negative ? "-" : "") + String(magnitude / 100_000)
        var fraction = String(magnitude % 100_000)
        if fraction != "0" {
            fraction = String(repeating: "0", count: 5 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text
    }
}

/// A refund, a Family Sharing revocation, or one of those reversed.
public struct Revocation: Sendable, Hashable {
    /// What the revocation took away.
    public enum Kind: String, Sendable, Hashable {
        /// The App Store refunded the transaction (`REFUND_FULL`, `REFUND_PRORATED`, or a
        /// revocation without `revocationType`, as Apple's older data has).
        case refund
        /// The purchaser stopped sharing, or the family member left (`FAMILY_REVOKE`): access
        /// ends, nothing was refunded.
        case familyRevocation = "family_revocation"
    }

    /// Whether the revocation still holds.
    public enum State: String, Sendable, Hashable {
        /// The newest statement about the transaction carries the revocation.
        case revoked
        /// A newer statement without `revocationDate` restored the transaction (`REFUND_REVERSED`).
        case reversed
    }

    /// The environment of the transaction.
    public let environment: AppStoreEnvironment
    /// The account's `appAccountToken`, when it has one.
    public let appAccountToken: String?
    /// The chain of the revoked transaction.
    public let originalTransactionId: String
    /// The revoked transaction.
    public let transactionId: String
    /// Its product.
    public let productId: String
    /// Its product type (consumables included).
    public let type: ProductType
    /// `PURCHASED` or `FAMILY_SHARED`.
    public let ownership: InAppOwnershipType
    /// A refund or a Family Sharing revocation.
    public let kind: Kind
    /// Revoked, or since reversed.
    public let state: State
    /// `revocationDate`: when the App Store refunded or revoked the transaction.
    public let revocationDate: Timestamp
    /// `revocationReason`: 0 another reason, 1 an issue in the app.
    public let revocationReason: RevocationReason?
    /// `revocationType`: `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public let revocationType: RevocationType?
    /// In milliunits: 100000 is 100 %.
    public let revocationPercentage: Int32?
    /// The transaction's `price`, in milliunits of ``currency``.
    public let price: Int64?
    /// The ISO 4217 currency of ``price``.
    public let currency: String?
    /// What was refunded, in milliunits of ``currency``: `price × revocationPercentage / 100000`;
    /// the whole price for `REFUND_FULL` or a refund without a type or percentage; `nil` for a
    /// Family Sharing revocation, without a price, or for `REFUND_PRORATED` without a percentage.
    public let refundedAmount: MilliunitAmount?
    /// For a reversed revocation: the `signedDate` of the latest `REFUND_REVERSED` notification,
    /// or, without one, of the statement that restored the transaction (the reversal happened
    /// at or before it).
    public let reversedDate: Timestamp?

    static func refundedAmount(kind: Kind, facts: RevocationFacts, price: Int64?) -> MilliunitAmount? {
        guard kind == .refund, let price else { return nil }
        if let percentage = facts.percentage { return .share(of: price, percentage: percentage) }
        if facts.type == RevocationType.refundProrated.rawValue { return nil }
        return MilliunitAmount(milliunits: price)
    }
}

/// Counts and amounts of revocations, by product, reason, type and month.
public struct RevocationSummary: Sendable, Hashable {
    /// A count and the refunded amounts by currency.
    public struct Bucket: Sendable, Hashable {
        /// How many revocations.
        public internal(set) var count = 0
        /// Refunded amounts (milliunits) by ISO 4217 currency code.
        public internal(set) var refunded: [String: MilliunitAmount] = [:]

        mutating func add(_ revocation: Revocation) {
            count += 1
            if let amount = revocation.refundedAmount {
                refunded[revocation.currency ?? "", default: MilliunitAmount(hundredThousandths: 0)] =
                    (refunded[revocation.currency ?? ""] ?? MilliunitAmount(hundredThousandths: 0)) + amount
            }
        }
    }

    /// Revocations in force (refunds and Family Sharing revocations, reversed ones excepted).
    public internal(set) var total = Bucket()
    /// Refunds in force.
    public internal(set) var refunds = 0
    /// Family Sharing revocations in force.
    public internal(set) var familyRevocations = 0
    /// Revocations since reversed; they are in no other count.
    public internal(set) var reversed = 0
    /// By `productId`.
    public internal(set) var byProduct: [String: Bucket] = [:]
    /// By `revocationReason` (`0`, `1`, or `none`).
    public internal(set) var byReason: [String: Bucket] = [:]
    /// By `revocationType` (`REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`, or `none`).
    public internal(set) var byType: [String: Bucket] = [:]
    /// By the UTC month of `revocationDate`, `YYYY-MM`.
    public internal(set) var byMonth: [String: Bucket] = [:]

    /// The counts and sums of `revocations`.
    public init(_ revocations: [Revocation]) {
        for revocation in revocations {
            guard revocation.state == .revoked else {
                reversed += 1
                continue
            }
            switch revocation.kind {
            case .refund: refunds += 1
            case .familyRevocation: familyRevocations += 1
            }
            total.add(revocation)
            byProduct[revocation.productId, default: Bucket()].add(revocation)
            byReason[revocation.revocationReason.map { String($0.rawValue) } ?? "none", default: Bucket()].add(
                revocation)
            byType[revocation.revocationType?.rawValue ?? "none", default: Bucket()].add(revocation)
            byMonth[String(revocation.revocationDate.iso8601.prefix(7)), default: Bucket()].add(revocation)
        }
    }
}
