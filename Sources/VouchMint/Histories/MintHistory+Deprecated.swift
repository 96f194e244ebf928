public import Foundation
public import Vouch

// The earlier spellings of the history steps, with dates in UNIX milliseconds and environments,
// revocation reasons and types as text; each forwards to the typed step.

extension MintHistory {
    /// Starts an empty history of one account in the environment named `environment`.
    @available(*, deprecated, message: "pass an AppStoreEnvironment, such as .sandbox")
    public init(
        environment: String, bundleId: String = "com.example.app", appAppleId: Int64 = 1_234_567_890,
        appAccountToken: String? = nil, firstTransactionId: Int64 = 2_000_000_000_000_000
    ) {
        self.init(
            environment: AppStoreEnvironment(rawValue: environment), bundleId: bundleId, appAppleId: appAppleId,
            appAccountToken: appAccountToken, firstTransactionId: firstTransactionId)
    }

    /// A purchase at `date` milliseconds.
    @available(*, deprecated, message: "pass the dates as Timestamps")
    @discardableResult
    public mutating func purchase(
        _ productId: String, type: ProductType, at date: Int64, price: Int64, currency: String = "USD",
        expires: Int64? = nil, group: String? = nil, freeTrial: Bool = false, quantity: Int = 1, notify: Bool = true
    ) -> Transaction {
        purchase(
            productId, type: type, at: Timestamp(milliseconds: date), price: price, currency: currency,
            expires: expires.map(Timestamp.init(milliseconds:)), group: group, freeTrial: freeTrial,
            quantity: quantity, notify: notify)
    }

    /// The next period of a subscription, until `expires` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    @discardableResult
    public mutating func renew(_ previous: Transaction, until expires: Int64, price: Int64? = nil) -> Transaction {
        renew(previous, until: Timestamp(milliseconds: expires), price: price)
    }

    /// An upgrade at `date` milliseconds, until `expires` milliseconds.
    @available(*, deprecated, message: "pass the dates as Timestamps")
    @discardableResult
    public mutating func upgrade(
        _ current: Transaction, to productId: String, at date: Int64, until expires: Int64, price: Int64
    ) -> Transaction {
        upgrade(
            current, to: productId, at: Timestamp(milliseconds: date), until: Timestamp(milliseconds: expires),
            price: price)
    }

    /// A failed renewal with a grace period until `graceUntil` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    public mutating func failRenewal(_ current: Transaction, graceUntil: Int64) {
        failRenewal(current, graceUntil: Timestamp(milliseconds: graceUntil))
    }

    /// The end of the grace period at `date` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    public mutating func endGracePeriod(_ current: Transaction, at date: Int64) {
        endGracePeriod(current, at: Timestamp(milliseconds: date))
    }

    /// A refund at `date` milliseconds, with the reason and type as their raw values.
    @available(
        *, deprecated,
        message: "pass the date as a Timestamp, the reason and type as RevocationReason and RevocationType"
    )
    public mutating func refund(
        _ transaction: Transaction, at date: Int64, reason: Int32 = 0, type: String = "REFUND_FULL",
        percentage: Int32? = nil
    ) {
        refund(
            transaction, at: Timestamp(milliseconds: date), reason: RevocationReason(rawValue: reason),
            type: RevocationType(rawValue: type), percentage: percentage)
    }

    /// The reversal of a refund at `date` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    public mutating func reverseRefund(_ transaction: Transaction, at date: Int64) {
        reverseRefund(transaction, at: Timestamp(milliseconds: date))
    }

    /// A purchase shared with a family member at `date` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    @discardableResult
    public mutating func shareWithFamily(_ transaction: Transaction, at date: Int64) -> Transaction {
        shareWithFamily(transaction, at: Timestamp(milliseconds: date))
    }

    /// The revocation of a family member's transaction at `date` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    public mutating func revokeFamilySharing(_ shared: Transaction, at date: Int64) {
        revokeFamilySharing(shared, at: Timestamp(milliseconds: date))
    }

    /// A statement of the transaction at `date` milliseconds.
    @available(*, deprecated, message: "pass the date as a Timestamp")
    public mutating func restate(_ transaction: Transaction, at date: Int64) {
        restate(transaction, at: Timestamp(milliseconds: date))
    }
}

extension MintHistoryGenerator {
    /// Histories ending at `date`, derived from `seed`, in the environment named `environment`.
    @available(*, deprecated, message: "pass an AppStoreEnvironment, such as .sandbox")
    public init(
        seed: UInt64, date: Date, environment: String, bundleId: String = "com.example.app",
        appAppleId: Int64 = 1_234_567_890
    ) {
        self.init(
            seed: seed, date: date, environment: AppStoreEnvironment(rawValue: environment), bundleId: bundleId,
            appAppleId: appAppleId)
    }
}
