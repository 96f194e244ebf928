internal import Vouch
internal import VouchReceipts

// The statements' members, their initialisers from the payload and from a stored record, their
// interning and their fingerprints come from Schemas/ledger-statements.tsv (Generated/); what
// follows is what is not a list of members.

extension TransactionStatement: OrderedStatement {
    /// Whether the transaction is of a multiseat subscription: it carries `multiSeatInfo` (whose
    /// `invitationManagement` Apple always sets) or is one of several of a period.
    var isMultiSeat: Bool {
        invitationManagement != nil || revokedSeatQuantity != nil || additionalTransactionReason != nil
    }

    /// What an in-app purchase of a verified receipt says, dated by the receipt's creation;
    /// `nil` when a member the ledger cannot do without is missing.
    ///
    /// A receipt does not name a product type: a purchase with a subscription expiration date is
    /// an auto-renewable subscription, one without a non-consumable. It names no ownership (the
    /// receipt is the purchaser's: `PURCHASED`), account token, price or revocation reason; its
    /// cancellation date is a revocation without a type (a refund), and it has no seat members.
    init?(_ purchase: InAppPurchaseReceipt, environment: String, createdAt: Int64) {
        guard let transactionId = purchase.transactionId,
            let originalTransactionId = purchase.originalTransactionId,
            let productId = purchase.productId,
            let purchaseDate = purchase.purchaseDate?.milliseconds
        else { return nil }
        let expiresDate = purchase.subscriptionExpirationDate?.milliseconds
        self.init(
            signedDate: createdAt, environment: environment, transactionId: transactionId,
            originalTransactionId: originalTransactionId, productId: productId,
            type: (expiresDate == nil ? ProductType.nonConsumable : .autoRenewableSubscription).rawValue,
            purchaseDate: purchaseDate, expiresDate: expiresDate, isUpgraded: false,
            ownership: InAppOwnershipType.purchased.rawValue,
            revocation: purchase.cancellationDate.map { RevocationFacts(date: $0.milliseconds) },
            quantity: purchase.quantity.flatMap { Int32(exactly: $0) }, isFreeTrial: purchase.isInTrialPeriod ?? false)
    }

    /// Its place in ``StatementOrder``: its `signedDate`, whether it revokes, its expiry, its
    /// revoked seats, then its members.
    var order: StatementOrder {
        StatementOrder(
            instant: signedDate, revokes: revocation != nil, end: expiresDate,
            revokedSeats: revokedSeatQuantity ?? 0, content: fingerprint)
    }
}

extension RenewalStatement: OrderedStatement {
    /// Its place in ``StatementOrder``: its `signedDate`, then its members.
    var order: StatementOrder { StatementOrder(instant: signedDate, content: fingerprint) }
}

/// Everything known about one transaction: the statement in force, and enough of the older
/// ones to tell a reversed refund and to date a seat-based refund.
///
/// Signed (JWS) statements and receipt statements are kept apart, and the statement in force
/// (``current``) is derived from them:
///
/// - the newest signed statement, when there is one (a receipt says less than signed data:
///   no price, ownership, account token or revocation reason);
/// - else the newest receipt statement;
/// - either way revoked, when it is not already, by the cancellation date of the newest receipt
///   that carries one, if that receipt was created after the statement in force was signed (or
///   there is no signed statement): a receipt revokes, and never restores what is revoked.
///
/// ``join(_:)`` is commutative, associative and idempotent, so the record is the same for any
/// order of its statements and any repetition of them. Receipt statements, which few
/// transactions have, are kept out of line, so a record of signed data alone stays small.
struct TransactionRecord: Sendable, Equatable {
    /// The newest signed statement.
    private(set) var signed: TransactionStatement?
    /// What receipts said, when any did.
    private var receipts: ReceiptStatements?
    /// The newest statement that carried a revocation, with its signed date.
    private(set) var newestRevocation: (signedDate: Int64, facts: RevocationFacts)?
    /// The latest `signedDate` of a `REFUND_REVERSED` notification about this transaction.
    private(set) var reversalNotified: Int64?
    /// The newest seat-based refund: the greatest `revokedSeatQuantity` a statement carried, and
    /// the earliest `signedDate` of a statement carrying it (a seat refund has no
    /// `revocationDate`; that statement dates it).
    private(set) var newestSeatRefund: SeatRefund?

    /// Seats a seat-based refund revoked, and when it was first signed.
    struct SeatRefund: Sendable, Equatable {
        var signedDate: Int64
        var count: Int32

        /// The statement's seat refund, when it carries one.
        init?(_ statement: TransactionStatement) {
            guard let count = statement.revokedSeatQuantity, count > 0 else { return nil }
            self.init(signedDate: statement.signedDate, count: count)
        }

        init(signedDate: Int64, count: Int32) {
            self.signedDate = signedDate
            self.count = count
        }

        /// More seats revoked wins; of two with as many, the earlier signed (so a later
        /// statement repeating the count does not move the refund's date). Commutative,
        /// associative and idempotent, as ``TransactionRecord/join(_:)`` needs.
        static func newer(_ ours: SeatRefund?, _ theirs: SeatRefund?) -> SeatRefund? {
            guard let theirs else { return ours }
            guard let ours else { return theirs }
            return (theirs.count, -theirs.signedDate) > (ours.count, -ours.signedDate) ? theirs : ours
        }
    }

    /// The receipt statements of a transaction: the newest, and the newest that carried a
    /// cancellation (the receipt's creation date and the cancellation date).
    final class ReceiptStatements: Sendable, Equatable {
        let statement: TransactionStatement
        let cancellation: (signedDate: Int64, date: Int64)?

        init(statement: TransactionStatement, cancellation: (signedDate: Int64, date: Int64)?) {
            self.statement = statement
            self.cancellation = cancellation
        }

        static func == (lhs: ReceiptStatements, rhs: ReceiptStatements) -> Bool {
            lhs.statement == rhs.statement && lhs.cancellation?.signedDate == rhs.cancellation?.signedDate
                && lhs.cancellation?.date == rhs.cancellation?.date
        }
    }

    /// A record of one signed statement.
    init(_ statement: TransactionStatement, reversalNotifiedAt: Int64? = nil) {
        signed = statement
        newestRevocation = statement.revocation.map { (statement.signedDate, $0) }
        reversalNotified = reversalNotifiedAt
        newestSeatRefund = SeatRefund(statement)
    }

    /// A record of one receipt statement.
    init(receipt statement: TransactionStatement) {
        receipts = ReceiptStatements(
            statement: statement, cancellation: statement.revocation.map { (statement.signedDate, $0.date) })
        newestRevocation = statement.revocation.map { (statement.signedDate, $0) }
    }

    /// A record from its parts, as a stored record holds them; `nil` when it holds no statement.
    init?(
        signed: TransactionStatement?, receipt: TransactionStatement?,
        receiptCancellation: (signedDate: Int64, date: Int64)?,
        newestRevocation: (signedDate: Int64, facts: RevocationFacts)?, reversalNotified: Int64?,
        newestSeatRefund: SeatRefund? = nil
    ) {
        guard signed != nil || receipt != nil else { return nil }
        self.signed = signed
        receipts = receipt.map { ReceiptStatements(statement: $0, cancellation: receiptCancellation) }
        self.newestRevocation = newestRevocation
        self.reversalNotified = reversalNotified
        self.newestSeatRefund = newestSeatRefund
    }

    /// The newest receipt statement.
    var receipt: TransactionStatement? { receipts?.statement }

    /// The newest receipt statement that carried a cancellation: the receipt's creation date and
    /// the cancellation date.
    var receiptCancellation: (signedDate: Int64, date: Int64)? { receipts?.cancellation }

    /// Members of the statement in force, read without copying it (a receipt's cancellation
    /// changes only its revocation).
    var purchaseDate: Int64 { signed?.purchaseDate ?? receipts!.statement.purchaseDate }
    var transactionId: String { signed?.transactionId ?? receipts!.statement.transactionId }
    var isUpgraded: Bool { signed?.isUpgraded ?? receipts!.statement.isUpgraded }

    /// The statement in force, by the rules above.
    var current: TransactionStatement {
        // Every record holds a signed or a receipt statement.
        guard var statement = signed ?? receipts?.statement else { preconditionFailure("a record without a statement") }
        if statement.revocation == nil, let cancellation = receipts?.cancellation,
            signed == nil || cancellation.signedDate > statement.signedDate
        {
            statement.revocation = RevocationFacts(date: cancellation.date)
        }
        return statement
    }

    mutating func join(_ other: TransactionRecord) {
        signed = TransactionStatement.newer(signed, other.signed)
        if let theirs = other.receipts {
            if let ours = receipts {
                if ours != theirs {
                    var cancellation = ours.cancellation
                    if let candidate = theirs.cancellation,
                        cancellation.map({ Self.order(candidate) > Self.order($0) }) ?? true
                    {
                        cancellation = candidate
                    }
                    receipts = ReceiptStatements(
                        statement: TransactionStatement.newer(ours.statement, theirs.statement)!,
                        cancellation: cancellation)
                }
            } else {
                receipts = theirs
            }
        }
        if let theirs = other.newestRevocation {
            if let ours = newestRevocation {
                if Self.order(theirs) > Self.order(ours) { newestRevocation = theirs }
            } else {
                newestRevocation = theirs
            }
        }
        if let theirs = other.reversalNotified {
            reversalNotified = max(reversalNotified ?? theirs, theirs)
        }
        newestSeatRefund = SeatRefund.newer(newestSeatRefund, other.newestSeatRefund)
    }

    /// A receipt's cancellation in ``StatementOrder``: the receipt's creation, then the earlier
    /// cancellation.
    private static func order(_ cancellation: (signedDate: Int64, date: Int64)) -> StatementOrder {
        StatementOrder(instant: cancellation.signedDate, revokes: true, end: cancellation.date)
    }

    /// A revocation a statement carried in ``StatementOrder``: the statement's signing, then its
    /// facts.
    private static func order(_ revocation: (signedDate: Int64, facts: RevocationFacts)) -> StatementOrder {
        StatementOrder(instant: revocation.signedDate, revokes: true, content: [revocation.facts.fingerprint])
    }

    /// Replaces the repeated texts of every statement by the copies in `strings`.
    mutating func share(_ strings: inout Set<String>) {
        signed?.share(&strings)
        if let receipts {
            var statement = receipts.statement
            statement.share(&strings)
            self.receipts = ReceiptStatements(statement: statement, cancellation: receipts.cancellation)
        }
        newestRevocation?.facts.share(&strings)
    }

    static func == (lhs: TransactionRecord, rhs: TransactionRecord) -> Bool {
        lhs.signed == rhs.signed && lhs.receipts == rhs.receipts
            && lhs.newestRevocation?.signedDate == rhs.newestRevocation?.signedDate
            && lhs.newestRevocation?.facts == rhs.newestRevocation?.facts
            && lhs.reversalNotified == rhs.reversalNotified && lhs.newestSeatRefund == rhs.newestSeatRefund
    }

    /// When a refund last touched the transaction at or before `instant`, while it still grants:
    /// a refund since reversed (its `revocationDate`), or its seats refunded (the seat refund's
    /// signed date).
    func refundTouched(at instant: Int64) -> Int64? {
        let reversed = current.revocation == nil ? newestRevocation?.facts.date : nil
        return [reversed, newestSeatRefund?.signedDate].compactMap { $0 }.filter { $0 <= instant }.max()
    }

    /// Whether the statement in force revokes the transaction at `instant`.
    func isRevoked(at instant: Int64) -> Bool {
        guard let revocation = current.revocation else { return false }
        return revocation.date <= instant
    }
}
