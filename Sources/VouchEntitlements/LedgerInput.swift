internal import Foundation
public import VouchBatch

// What the input layer verified, into the ledger and the store: the one step from a verified
// token, receipt or Stripe delivery to the ledger that the CLI and a server both take.

extension EntitlementLedger {
    /// Adds whatever the input layer verified: a token's payload, a receipt, or a Stripe
    /// event (its account named by the metadata key `stripeAccountKey`), as
    /// ``add(_:)-(VerifiedPayload)``, ``add(_:)-(VerifiedReceipt)`` and ``add(_:accountKey:)``
    /// do.
    public mutating func add(_ input: VerifiedInput, stripeAccountKey: String = defaultStripeAccountKey) {
        switch input {
        case .payload(let payload): add(payload)
        case .receipt(let receipt): add(receipt)
        case .stripeEvent(let event): add(event, accountKey: stripeAccountKey)
        }
    }

    /// Adds whatever the input layer verified and binds what it is about to `account` (when
    /// given), the caller's account id: the App Store chains it names (the account must then be a UUID,
    /// the `appAccountToken`), or the Stripe subscription it is about (any id; a UUID is kept
    /// in lower case).
    ///
    /// Throws ``LedgerError/Code/accountConflict`` when what the input is about belongs to
    /// another account, and ``LedgerError/Code/invalidAccount`` when App Store data is named
    /// for an account that is not a UUID; either way nothing of the call is added.
    public mutating func add(
        _ input: VerifiedInput, account: String?, stripeAccountKey: String = defaultStripeAccountKey
    ) throws(LedgerError) {
        guard let account else { return add(input, stripeAccountKey: stripeAccountKey) }
        switch input {
        case .payload(let payload): try add(payload, account: Self.appAccountToken(account))
        case .receipt(let receipt): try add(receipt, account: Self.appAccountToken(account))
        case .stripeEvent(let event): try add(event, account: account, accountKey: stripeAccountKey)
        }
    }

    /// `account` as the `appAccountToken` App Store data names accounts by.
    static func appAccountToken(_ account: String) throws(LedgerError) -> UUID {
        guard let token = UUID(uuidString: account) else {
            throw LedgerError(
                .invalidAccount, "App Store data names accounts by a UUID (appAccountToken), not \(account)")
        }
        return token
    }
}

extension LedgerStore {
    /// Adds whatever the input layer verified, in one transaction, as
    /// ``EntitlementLedger/add(_:account:stripeAccountKey:)`` does; `account`, when given,
    /// binds what the input is about to the caller's account, checked against what the store
    /// holds (``LedgerError/Code/accountConflict`` stores nothing).
    @discardableResult
    public func add(
        _ input: VerifiedInput, account: String? = nil,
        stripeAccountKey: String = EntitlementLedger.defaultStripeAccountKey
    ) throws(LedgerError) -> Change {
        var ledger = EntitlementLedger.batch()
        try ledger.add(input, account: account, stripeAccountKey: stripeAccountKey)
        return try add(contentsOf: ledger)
    }

    /// Binds a Stripe subscription to an account after the fact, in one transaction, as
    /// ``EntitlementLedger/bindStripeSubscription(_:livemode:to:)`` does, checked against what
    /// the store holds.
    @discardableResult
    public func bindStripeSubscription(_ subscriptionId: String, livemode: Bool, to account: String)
        throws(LedgerError) -> Change
    {
        var ledger = EntitlementLedger()
        try ledger.bindStripeSubscription(subscriptionId, livemode: livemode, to: account)
        return try add(contentsOf: ledger)
    }
}

extension EntitlementLedger: LedgerWriting {}

extension LedgerStore: LedgerReading, LedgerWriting {}
