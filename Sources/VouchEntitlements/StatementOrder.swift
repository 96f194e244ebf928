/// The one rule by which the ledger keeps the newest of two statements about one thing (a
/// transaction, a chain's renewal info, the revocation a transaction last carried, a receipt's
/// cancellation, a grant, a Stripe subscription's object, payment or Checkout session, a
/// refunded charge):
///
/// 1. the later signed instant wins (`signedDate`; a receipt's creation; a Stripe event's
///    `created`);
/// 2. between statements signed at the same instant, the one that grants less: a revocation
///    over none, then an access that ends over one that does not, the earlier end over a later
///    one, then more seats revoked by a seat-based refund over fewer;
/// 3. then the greater content, compared member by member as text (a Stripe statement's event
///    id first).
///
/// So the choice never depends on the order statements arrive in, on repeats or on how the data
/// was split, and a tie never opens access.
struct StatementOrder: Comparable, Sendable {
    /// When the statement was signed, in milliseconds since 1970.
    var instant: Int64
    /// Whether it revokes (or, for a statement that cannot, grants nothing).
    var revokes = false
    /// When the access it grants ends, in milliseconds; `nil` for an access without an end.
    var end: Int64? = nil
    /// How many seats a seat-based refund revoked (`revokedSeatQuantity`; 0 for none).
    var revokedSeats: Int32 = 0
    /// Its content, the last tie-break.
    var content: [String] = []

    /// Whether `lhs` gives way to `rhs`: `rhs` is the newer statement.
    static func < (lhs: StatementOrder, rhs: StatementOrder) -> Bool {
        if lhs.instant != rhs.instant { return lhs.instant < rhs.instant }
        if lhs.revokes != rhs.revokes { return rhs.revokes }
        switch (lhs.end, rhs.end) {
        case (nil, .some): return true
        case (.some, nil): return false
        case (.some(let ours), .some(let theirs)) where ours != theirs: return ours > theirs
        default: break
        }
        if lhs.revokedSeats != rhs.revokedSeats { return lhs.revokedSeats < rhs.revokedSeats }
        return lhs.content.lexicographicallyPrecedes(rhs.content)
    }

    static func == (lhs: StatementOrder, rhs: StatementOrder) -> Bool {
        !(lhs < rhs) && !(rhs < lhs)
    }
}

/// A statement the ledger keeps the newest of, by ``StatementOrder``.
protocol OrderedStatement {
    /// Where the statement stands in the one order of statements.
    var order: StatementOrder { get }
}

extension OrderedStatement {
    /// Whether this statement supersedes `other`, a statement about the same thing.
    func isNewer(than other: some OrderedStatement) -> Bool { order > other.order }

    /// The newer of two statements about one thing, either of which may be missing.
    static func newer(_ ours: Self?, _ theirs: Self?) -> Self? {
        guard let theirs else { return ours }
        guard let ours else { return theirs }
        return theirs.isNewer(than: ours) ? theirs : ours
    }
}
