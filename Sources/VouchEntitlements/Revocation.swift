public import Foundation
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
    public var description: String { Self.decimalText(hundredThousandths, digits: 5) }

    /// The amount in units of the currency (1000 milliunits), exactly: `1.99` for 1990.
    public var currencyUnits: Decimal {
        // Exact: the text has at most 8 decimals and 39 digits in all, within Decimal's mantissa
        // for every amount a price and a percentage can make.
        Decimal(string: currencyUnitsText, locale: Locale(identifier: "en_US_POSIX")) ?? 0
    }

    /// ``currencyUnits`` as text with no needless zeros: `1.99`, `3.32996667`, `30`.
    public var currencyUnitsText: String { Self.decimalText(hundredThousandths, digits: 8) }

    /// `value / 10^digits` written out exactly.
    private static func decimalText(_ value: Int128, digits: Int) -> String {
        let negative = value < 0
        let magnitude = negative ? -value : value
        var scale: Int128 = 1
        for _ in 0..<digits { scale *= 10 }
        var text = (negative ? "-" : "") + String(magnitude / scale)
        var fraction = String(magnitude % scale)
        if fraction != "0" {
            fraction = String(repeating: "0", count: digits - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text
    }
}

/// An amount of money in units of its currency, as people read it: `1.99 USD`.
public struct CurrencyAmount: Sendable, Hashable, CustomStringConvertible {
    /// The amount in units of ``currency`` (dollars, not cents), exact.
    public let amount: Decimal
    /// The ISO 4217 currency code; empty when the data named none.
    public let currency: String
    /// The exact amount in milliunits, as Apple's data states prices.
    public let milliunits: MilliunitAmount

    /// `milliunits` of `currency`.
    public init(_ milliunits: MilliunitAmount, currency: String) {
        self.milliunits = milliunits
        self.currency = currency
        amount = milliunits.currencyUnits
    }

    /// `1.99 USD`: the exact amount with no needless zeros, then the currency. People read
    /// ``roundedDescription``.
    public var description: String {
        milliunits.currencyUnitsText + (currency.isEmpty ? "" : " \(currency)")
    }

    /// The decimal places of `currency`'s minor unit by ISO 4217: 0 for JPY, 2 for USD, 3 for
    /// KWD; 2 for a code the table does not hold (or none).
    public static func minorUnitDigits(of currency: String) -> Int {
        minorUnitDigits[currency.uppercased()] ?? 2
    }

    /// The ISO 4217 currencies whose minor unit is not a hundredth (list one, 2024).
    private static let minorUnitDigits: [String: Int] = [
        "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
        "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
        "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
        "CLF": 4, "UYW": 4,
    ]

    /// The amount rounded to its currency's minor unit (half away from zero) as a plain
    /// decimal string, every minor digit written: `129.69`, `0.20`, `49000` (VND), `63.438`
    /// (KWD). What JSON states beside the exact milliunits.
    public var roundedAmount: String { rounded(grouping: false) }

    /// ``roundedAmount`` for people: thousands grouped with commas, then the currency:
    /// `129.69 USD`, `49,000 VND`, `1,234.500 KWD`.
    public var roundedDescription: String {
        rounded(grouping: true) + (currency.isEmpty ? "" : " \(currency)")
    }

    /// ``roundedAmount``, its whole part grouped in thousands when `grouping`.
    public func rounded(grouping: Bool) -> String {
        let digits = Self.minorUnitDigits(of: currency)
        // hundredThousandths of a milliunit: 10^8 to a unit of the currency.
        var quantum: Int128 = 1
        for _ in 0..<(8 - digits) { quantum *= 10 }
        let value = milliunits.hundredThousandths
        let magnitude = value < 0 ? -value : value
        var minor = magnitude / quantum
        if (magnitude % quantum) * 2 >= quantum { minor += 1 }
        var scale: Int128 = 1
        for _ in 0..<digits { scale *= 10 }
        var whole = String(minor / scale)
        if grouping {
            var grouped = ""
            for (offset, digit) in whole.enumerated() {
                if offset > 0 && (whole.count - offset) % 3 == 0 { grouped += "," }
                grouped.append(digit)
            }
            whole = grouped
        }
        var text = (value < 0 && minor != 0 ? "-" : "") + whole
        if digits > 0 {
            let fraction = String(minor % scale)
            text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        return text
    }
}

/// A refund, a Family Sharing revocation, a seat-based refund, or one of those reversed.
public struct Revocation: Sendable, Hashable {
    /// What the revocation took away.
    public enum Kind: String, Sendable, Hashable {
        /// The App Store refunded the transaction (`REFUND_FULL`, `REFUND_PRORATED`, or a
        /// revocation without `revocationType`, as Apple's older data has).
        case refund
        /// The purchaser stopped sharing, or the family member left (`FAMILY_REVOKE`): access
        /// ends, nothing was refunded.
        case familyRevocation = "family_revocation"
        /// A seat-based refund of a multiseat subscription (`REFUND` notification with subtype
        /// `SEATS`): ``revokedSeatQuantity`` of the transaction's seats were refunded, the
        /// transaction carries no `revocationDate` and stays valid for its other seats, so the
        /// purchaser's access goes on.
        case seatRefund = "seat_refund"
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
    /// `PURCHASED`, `FAMILY_SHARED` or `ASSIGNED`.
    public let ownership: InAppOwnershipType
    /// A refund, a Family Sharing revocation or a seat-based refund.
    public let kind: Kind
    /// Revoked, or since reversed.
    public let state: State
    /// `revocationDate`: when the App Store refunded or revoked the transaction; for a seat-based
    /// refund, which has none, the `signedDate` of the first statement that carried its
    /// ``revokedSeatQuantity``.
    public let revocationDate: Timestamp
    /// `revocationReason`: 0 another reason, 1 an issue in the app.
    public let revocationReason: RevocationReason?
    /// `revocationType`: `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public let revocationType: RevocationType?
    /// In milliunits: 100000 is 100 %.
    public let revocationPercentage: Int32?
    /// The transaction's `price`, in milliunits of ``currency`` (for a multiseat subscription,
    /// the average price of one seat).
    public let price: Int64?
    /// The ISO 4217 currency of ``price``.
    public let currency: String?
    /// What was refunded, in milliunits of ``currency``: `price × revocationPercentage / 100000`;
    /// the whole price for `REFUND_FULL` or a refund without a type or percentage (for a
    /// multiseat subscription, `price × quantity`, the whole transaction); `nil` for a Family
    /// Sharing revocation, without a price, for `REFUND_PRORATED` without a percentage, and for
    /// a seat-based refund (Apple's data gives no amount for it, and `price` is an average).
    public let refundedAmount: MilliunitAmount?
    /// For a reversed revocation: the `signedDate` of the latest `REFUND_REVERSED` notification,
    /// or, without one, of the statement that restored the transaction (the reversal happened
    /// at or before it).
    public let reversedDate: Timestamp?
    /// Where the refund comes from: ``EntitlementSource/appStore``, or
    /// ``EntitlementSource/stripe`` for a refunded Stripe charge (``transactionId`` is then the
    /// charge, ``originalTransactionId`` its subscription when the ledger knows it).
    public internal(set) var source: EntitlementSource = .appStore
    /// For a seat-based refund: how many of the transaction's seats were refunded
    /// (`revokedSeatQuantity`); `nil` for every other kind.
    public internal(set) var revokedSeatQuantity: Int32? = nil

    /// ``refundedAmount`` in units of ``currency`` (`1.99 USD`).
    public var refunded: CurrencyAmount? { refundedAmount.map { CurrencyAmount($0, currency: currency ?? "") } }

    /// ``price`` in units of ``currency``.
    public var priceAmount: CurrencyAmount? {
        price.map { CurrencyAmount(MilliunitAmount(milliunits: $0), currency: currency ?? "") }
    }

    /// What a whole transaction cost: its `price`, or for a multiseat subscription (whose price
    /// is the average of one seat) `price × quantity`; `nil` without a price or when the
    /// product does not fit in 64 bits.
    static func amount(of statement: TransactionStatement) -> Int64? {
        guard let price = statement.price else { return nil }
        guard statement.isMultiSeat else { return price }
        let (total, overflow) = price.multipliedReportingOverflow(by: Int64(statement.quantity ?? 1))
        return overflow ? nil : total
    }

    /// The seat-based refund of a transaction, when a statement about it carried
    /// `revokedSeatQuantity`: dated by the first statement that carried the greatest count;
    /// reversed when the statement in force carries fewer seats revoked and no revocation.
    static func seatRefund(of record: TransactionRecord, account: AccountKey?) -> Revocation? {
        guard let refund = record.newestSeatRefund else { return nil }
        let statement = record.current
        let holds = statement.revocation != nil || (statement.revokedSeatQuantity ?? 0) >= refund.count
        var revocation = Revocation(
            environment: AppStoreEnvironment(rawValue: statement.environment),
            appAccountToken: account?.appAccountToken,
            originalTransactionId: statement.originalTransactionId, transactionId: statement.transactionId,
            productId: statement.productId, type: ProductType(rawValue: statement.type),
            ownership: InAppOwnershipType(rawValue: statement.ownership), kind: .seatRefund,
            state: holds ? .revoked : .reversed, revocationDate: Timestamp(milliseconds: refund.signedDate),
            revocationReason: nil, revocationType: nil, revocationPercentage: nil,
            price: statement.price, currency: statement.currency, refundedAmount: nil,
            reversedDate: holds ? nil : Timestamp(milliseconds: statement.signedDate))
        revocation.revokedSeatQuantity = refund.count
        return revocation
    }

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
        /// How many of them are refunds.
        public internal(set) var refunds = 0
        /// How many of them are Family Sharing revocations.
        public internal(set) var familyRevocations = 0
        /// How many of them are seat-based refunds.
        public internal(set) var seatRefunds = 0
        /// Refunded amounts (milliunits) by ISO 4217 currency code.
        public internal(set) var refunded: [String: MilliunitAmount] = [:]

        /// The refunded amounts in units of their currencies, ordered by currency code.
        public var refundedAmounts: [CurrencyAmount] {
            refunded.sorted { $0.key < $1.key }.map { CurrencyAmount($0.value, currency: $0.key) }
        }

        mutating func add(_ revocation: Revocation) {
            count += 1
            switch revocation.kind {
            case .refund: refunds += 1
            case .familyRevocation: familyRevocations += 1
            case .seatRefund: seatRefunds += 1
            }
            if let amount = revocation.refundedAmount {
                refunded[revocation.currency ?? "", default: MilliunitAmount(hundredThousandths: 0)] =
                    (refunded[revocation.currency ?? ""] ?? MilliunitAmount(hundredThousandths: 0)) + amount
            }
        }
    }

    /// Revocations in force (refunds, Family Sharing revocations and seat-based refunds,
    /// reversed ones excepted).
    public internal(set) var total = Bucket()
    /// Refunds in force.
    public internal(set) var refunds = 0
    /// Family Sharing revocations in force.
    public internal(set) var familyRevocations = 0
    /// Seat-based refunds in force.
    public internal(set) var seatRefunds = 0
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
    /// Refunds in force: their count and amounts.
    public internal(set) var refundTotal = Bucket()
    /// Family Sharing revocations in force (nothing refunded).
    public internal(set) var familyRevocationTotal = Bucket()
    /// Seat-based refunds in force (no amount known).
    public internal(set) var seatRefundTotal = Bucket()
    /// By `revocationReason`; `nil` for revocations without one.
    public internal(set) var byRevocationReason: [RevocationReason?: Bucket] = [:]
    /// By `revocationType`; `nil` for revocations without one.
    public internal(set) var byRevocationType: [RevocationType?: Bucket] = [:]

    /// The counts and sums of `revocations`.
    public init(_ revocations: [Revocation]) {
        for revocation in revocations {
            guard revocation.state == .revoked else {
                reversed += 1
                continue
            }
            switch revocation.kind {
            case .refund:
                refunds += 1
                refundTotal.add(revocation)
            case .familyRevocation:
                familyRevocations += 1
                familyRevocationTotal.add(revocation)
            case .seatRefund:
                seatRefunds += 1
                seatRefundTotal.add(revocation)
            }
            total.add(revocation)
            byRevocationReason[revocation.revocationReason, default: Bucket()].add(revocation)
            byRevocationType[revocation.revocationType, default: Bucket()].add(revocation)
            byProduct[revocation.productId, default: Bucket()].add(revocation)
            byReason[revocation.revocationReason.map { String($0.rawValue) } ?? "none", default: Bucket()].add(
                revocation)
            byType[revocation.revocationType?.rawValue ?? "none", default: Bucket()].add(revocation)
            byMonth[String(revocation.revocationDate.iso8601.prefix(7)), default: Bucket()].add(revocation)
        }
    }
}

extension Revocation {
    /// `revocations` by revocation date, then environment, transaction id, ownership and kind:
    /// the order of every answer that lists revocations.
    public static func ordered(_ revocations: [Revocation]) -> [Revocation] {
        revocations.sorted {
            (
                $0.revocationDate.milliseconds, $0.environment.rawValue, $0.transactionId, $0.ownership.rawValue,
                $0.kind.rawValue
            )
                < (
                    $1.revocationDate.milliseconds, $1.environment.rawValue, $1.transactionId, $1.ownership.rawValue,
                    $1.kind.rawValue
                )
        }
    }
}
