internal import Vouch
internal import VouchReceipts

/// What one signed transaction says, reduced to the members the ledger reads.
///
/// A transaction is stated many times (the purchase, each notification about it, every export
/// of the history, each receipt listing it); each statement is dated by its `signedDate` (a
/// receipt's by its creation date), and the newest one is in force (``TransactionRecord``).
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

    /// What an in-app purchase of a verified receipt says, dated by the receipt's creation;
    /// `nil` when a member the ledger cannot do without is missing.
    ///
    /// A receipt does not name a product type: a purchase with a subscription expiration date is
    /// an auto-renewable subscription, one without a non-consumable. It names no ownership (the
    /// receipt is the purchaser's: `PURCHASED`), account token, price or revocation reason; its
    /// cancellation date is a revocation without a type (a refund).
    init?(_ purchase: InAppPurchaseReceipt, environment: String, createdAt: Int64) {
        guard let transactionId = purchase.transactionId,
            let originalTransactionId = purchase.originalTransactionId,
            let productId = purchase.productId,
            let purchaseDate = purchase.purchaseDate?.milliseconds
        else { return nil }
        signedDate = createdAt
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        expiresDate = purchase.subscriptionExpirationDate?.milliseconds
        type = (expiresDate == nil ? ProductType.nonConsumable : .autoRenewableSubscription).rawValue
        subscriptionGroupIdentifier = nil
        self.purchaseDate = purchaseDate
        isUpgraded = false
        ownership = InAppOwnershipType.purchased.rawValue
        appAccountToken = nil
        revocation = purchase.cancellationDate.map { RevocationFacts(date: $0.milliseconds) }
        price = nil
        currency = nil
        quantity = purchase.quantity.flatMap { Int32(exactly: $0) }
        isFreeTrial = purchase.isInTrialPeriod ?? false
    }

    /// A statement from its members, as a stored record holds them.
    init(
        signedDate: Int64, environment: String, transactionId: String, originalTransactionId: String,
        productId: String, type: String, subscriptionGroupIdentifier: String?, purchaseDate: Int64,
        expiresDate: Int64?, isUpgraded: Bool, ownership: String, appAccountToken: String?,
        revocation: RevocationFacts?, price: Int64?, currency: String?, quantity: Int32?, isFreeTrial: Bool
    ) {
        self.signedDate = signedDate
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.type = type
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.isUpgraded = isUpgraded
        self.ownership = ownership
        self.appAccountToken = appAccountToken
        self.revocation = revocation
        self.price = price
        self.currency = currency
        self.quantity = quantity
        self.isFreeTrial = isFreeTrial
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

    init(date: Int64, reason: Int32? = nil, type: String? = nil, percentage: Int32? = nil) {
        self.date = date
        self.reason = reason
        self.type = type
        self.percentage = percentage
    }

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

    /// A statement from its members, as a stored record holds them.
    init(
        signedDate: Int64, isInBillingRetryPeriod: Bool, gracePeriodExpiresDate: Int64?, productId: String?,
        appAccountToken: String?
    ) {
        self.signedDate = signedDate
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.productId = productId
        self.appAccountToken = appAccountToken
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
/// Signed (JWS) statements and receipt statements are kept apart, and the statement in force
/// (``current``) is resolved from them:
///
/// - the newest signed statement, when there is one (a receipt says less than signed data:
///   no price, ownership, account token or revocation reason);
/// - else the newest receipt statement;
/// - either way revoked, when it is not already, by the cancellation date of the newest receipt
///   that carries one, if that receipt was created after the statement in force was signed (or
///   there is no signed statement): a receipt revokes, and never restores what is revoked.
///
/// ``join(_:)`` is commutative, associative and idempotent, so the record is the same for any
/// order of its statements and any repetition of them.
struct TransactionRecord: Sendable, Equatable {
    /// The statement in force, resolved from the parts below.
    private(set) var current: TransactionStatement
    /// The newest signed statement.
    private(set) var signed: TransactionStatement?
    /// The newest receipt statement.
    private(set) var receipt: TransactionStatement?
    /// The newest receipt statement that carried a cancellation: the receipt's creation date and
    /// the cancellation date.
    private(set) var receiptCancellation: (signedDate: Int64, date: Int64)?
    /// The newest statement that carried a revocation, with its signed date.
    private(set) var newestRevocation: (signedDate: Int64, facts: RevocationFacts)?
    /// The latest `signedDate` of a `REFUND_REVERSED` notification about this transaction.
    private(set) var reversalNotified: Int64?

    /// A record of one signed statement.
    init(_ statement: TransactionStatement, reversalNotifiedAt: Int64? = nil) {
        current = statement
        signed = statement
        newestRevocation = statement.revocation.map { (statement.signedDate, $0) }
        reversalNotified = reversalNotifiedAt
    }

    /// A record of one receipt statement.
    init(receipt statement: TransactionStatement) {
        current = statement
        receipt = statement
        if let revocation = statement.revocation {
            receiptCancellation = (statement.signedDate, revocation.date)
            newestRevocation = (statement.signedDate, revocation)
        }
    }

    /// A record from its parts, as a stored record holds them; `nil` when it holds no statement.
    init?(
        signed: TransactionStatement?, receipt: TransactionStatement?,
        receiptCancellation: (signedDate: Int64, date: Int64)?,
        newestRevocation: (signedDate: Int64, facts: RevocationFacts)?, reversalNotified: Int64?
    ) {
        guard let first = signed ?? receipt else { return nil }
        current = first
        self.signed = signed
        self.receipt = receipt
        self.receiptCancellation = receiptCancellation
        self.newestRevocation = newestRevocation
        self.reversalNotified = reversalNotified
        resolve()
    }

    mutating func join(_ other: TransactionRecord) {
        signed = Self.newer(signed, other.signed)
        receipt = Self.newer(receipt, other.receipt)
        if let theirs = other.receiptCancellation {
            if let ours = receiptCancellation {
                if (theirs.signedDate, theirs.date) > (ours.signedDate, ours.date) { receiptCancellation = theirs }
            } else {
                receiptCancellation = theirs
            }
        }
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
        resolve()
    }

    private static func newer(_ ours: TransactionStatement?, _ theirs: TransactionStatement?) -> TransactionStatement? {
        guard let theirs else { return ours }
        guard let ours else { return theirs }
        return theirs.isNewer(than: ours) ? theirs : ours
    }

    /// Sets ``current`` from the parts, by the rules above.
    private mutating func resolve() {
        guard var statement = signed ?? receipt else { return }
        if statement.revocation == nil, let cancellation = receiptCancellation,
            signed == nil || cancellation.signedDate > statement.signedDate
        {
            statement.revocation = RevocationFacts(date: cancellation.date)
        }
        current = statement
    }

    /// Replaces the repeated texts of every statement by the copies in `strings`.
    mutating func share(_ strings: inout Set<String>) {
        current.share(&strings)
        signed?.share(&strings)
        receipt?.share(&strings)
        if let type = newestRevocation?.facts.type {
            newestRevocation?.facts.type = strings.insert(type).memberAfterInsert
        }
    }

    static func == (lhs: TransactionRecord, rhs: TransactionRecord) -> Bool {
        lhs.current == rhs.current && lhs.signed == rhs.signed && lhs.receipt == rhs.receipt
            && lhs.receiptCancellation?.signedDate == rhs.receiptCancellation?.signedDate
            && lhs.receiptCancellation?.date == rhs.receiptCancellation?.date
            && lhs.newestRevocation?.signedDate == rhs.newestRevocation?.signedDate
            && lhs.newestRevocation?.facts == rhs.newestRevocation?.facts
            && lhs.reversalNotified == rhs.reversalNotified
    }

    /// Whether the statement in force revokes the transaction at `instant`.
    func isRevoked(at instant: Int64) -> Bool {
        guard let revocation = current.revocation else { return false }
        return revocation.date <= instant
    }
}
