internal import Vouch

/// What one signed transaction says, reduced to the members the ledger reads.
///
/// A transaction is stated many times (the purchase, each notification about it, every export
/// of the history); each statement is dated by its `signedDate`, and the newest one is in force.
struct TransactionStatement: Sendable, Equatable {
    var signedDate: Int64
    var environment: String
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    var type: String
    var subscriptionGroupIdentifier: String?
    var purchaseDate: Int64
    var expiresDate: Int64?
    var isUpgraded: Bool
    var ownership: String
    /// Lowercased, so the UUID joins however the app wrote it.
    var appAccountToken: String?
    var revocation: RevocationFacts?
    var price: Int64?
    var currency: String?
    var quantity: Int32?
    var isFreeTrial: Bool

    /// `nil` when a member the ledger cannot do without is missing.
    init?(_ payload: JWSTransactionDecodedPayload) {
        guard let signedDate = payload.signedDate?.milliseconds,
            let transactionId = payload.transactionId,
            let originalTransactionId = payload.originalTransactionId,
            let productId = payload.productId,
            let purchaseDate = payload.purchaseDate?.milliseconds
        else { return nil }
        self.signedDate = signedDate
        // Apple's data always names its environment; data without one stays apart from all.
        environment = payload.environment?.rawValue ?? ""
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        type = payload.type?.rawValue ?? ""
        subscriptionGroupIdentifier = payload.subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        expiresDate = payload.expiresDate?.milliseconds
        isUpgraded = payload.isUpgraded ?? false
        ownership = payload.inAppOwnershipType?.rawValue ?? InAppOwnershipType.purchased.rawValue
        appAccountToken = payload.appAccountToken.map { $0.lowercased() }
        if let date = payload.revocationDate?.milliseconds {
            revocation = RevocationFacts(
                date: date, reason: payload.revocationReason?.rawValue, type: payload.revocationType?.rawValue,
                percentage: payload.revocationPercentage)
        }
        price = payload.price
        currency = payload.currency
        quantity = payload.quantity
        isFreeTrial = payload.offerDiscountType == .freeTrial
    }

    /// Replaces the repeated texts by the copies in `strings` (adding those not there yet).
    mutating func share(_ strings: inout Set<String>) {
        func shared(_ text: String) -> String { strings.insert(text).memberAfterInsert }
        environment = shared(environment)
        productId = shared(productId)
        type = shared(type)
        ownership = shared(ownership)
        subscriptionGroupIdentifier = subscriptionGroupIdentifier.map(shared)
        appAccountToken = appAccountToken.map(shared)
        currency = currency.map(shared)
        if let type = revocation?.type { revocation?.type = shared(type) }
    }

    /// The order between two statements about one transaction: the later `signedDate` wins.
    /// Statements signed at the same instant are ordered by their content, so the choice never
    /// depends on input order; a revoked statement ranks above an unrevoked one (the safe side).
    func isNewer(than other: TransactionStatement) -> Bool {
        if signedDate != other.signedDate { return signedDate > other.signedDate }
        if (revocation != nil) != (other.revocation != nil) { return revocation != nil }
        return other.fingerprint.lexicographicallyPrecedes(fingerprint)
    }

    private var fingerprint: [String] {
        [
            environment, transactionId, originalTransactionId, productId, type, subscriptionGroupIdentifier ?? "",
            String(purchaseDate), expiresDate.map(String.init) ?? "", String(isUpgraded), ownership,
            appAccountToken ?? "",
            revocation?.fingerprint ?? "", price.map(String.init) ?? "", currency ?? "",
            quantity.map(String.init) ?? "",
            String(isFreeTrial),
        ]
    }
}

/// The revocation members of a transaction.
struct RevocationFacts: Sendable, Equatable {
    var date: Int64
    var reason: Int32?
    var type: String?
    var percentage: Int32?

    var fingerprint: String {
        "\(date)|\(reason.map(String.init) ?? "")|\(type ?? "")|\(percentage.map(String.init) ?? "")"
    }
}

/// What one signed renewal info says, reduced to the members the ledger reads.
struct RenewalStatement: Sendable, Equatable {
    var signedDate: Int64
    var isInBillingRetryPeriod: Bool
    var gracePeriodExpiresDate: Int64?
    var productId: String?
    var appAccountToken: String?

    init?(_ payload: JWSRenewalInfoDecodedPayload) {
        guard let signedDate = payload.signedDate?.milliseconds, payload.originalTransactionId != nil else {
            return nil
        }
        self.signedDate = signedDate
        isInBillingRetryPeriod = payload.isInBillingRetryPeriod ?? false
        gracePeriodExpiresDate = payload.gracePeriodExpiresDate?.milliseconds
        productId = payload.productId
        appAccountToken = payload.appAccountToken.map { $0.lowercased() }
    }

    /// As for transactions: the later `signedDate` wins, ties are broken by content.
    func isNewer(than other: RenewalStatement) -> Bool {
        if signedDate != other.signedDate { return signedDate > other.signedDate }
        return other.fingerprint.lexicographicallyPrecedes(fingerprint)
    }

    private var fingerprint: [String] {
        [
            String(isInBillingRetryPeriod), gracePeriodExpiresDate.map(String.init) ?? "", productId ?? "",
            appAccountToken ?? "",
        ]
    }
}

/// Everything known about one transaction: the statement in force, and enough of the older
/// ones to tell a reversed refund.
///
/// ``join(_:)`` is commutative, associative and idempotent, so the record is the same for any
/// order of its statements and any repetition of them.
struct TransactionRecord: Sendable, Equatable {
    /// The newest statement.
    var current: TransactionStatement
    /// The newest statement that carried a revocation, with its signed date.
    var newestRevocation: (signedDate: Int64, facts: RevocationFacts)?
    /// The latest `signedDate` of a `REFUND_REVERSED` notification about this transaction.
    var reversalNotified: Int64?

    init(_ statement: TransactionStatement, reversalNotifiedAt: Int64? = nil) {
        current = statement
        newestRevocation = statement.revocation.map { (statement.signedDate, $0) }
        reversalNotified = reversalNotifiedAt
    }

    mutating func join(_ other: TransactionRecord) {
        if other.current.isNewer(than: current) { current = other.current }
        if let theirs = other.newestRevocation {
            if let ours = newestRevocation {
                if theirs.signedDate > ours.signedDate
                    || (theirs.signedDate == ours.signedDate && theirs.facts.fingerprint > ours.facts.fingerprint)
                {
                    newestRevocation = theirs
                }
            } else {
                newestRevocation = theirs
            }
        }
        if let theirs = other.reversalNotified {
            reversalNotified = max(reversalNotified ?? theirs, theirs)
        }
    }

    static func == (lhs: TransactionRecord, rhs: TransactionRecord) -> Bool {
        lhs.current == rhs.current && lhs.newestRevocation?.signedDate == rhs.newestRevocation?.signedDate
            && lhs.newestRevocation?.facts == rhs.newestRevocation?.facts
            && lhs.reversalNotified == rhs.reversalNotified
    }

    /// Whether the statement in force revokes the transaction at `instant`.
    func isRevoked(at instant: Int64) -> Bool {
        guard let revocation = current.revocation else { return false }
        return revocation.date <= instant
    }
}
