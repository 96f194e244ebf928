internal import Foundation
public import Vouch

// The questions: entitlements of accounts at an instant, accounts by product or tier, and
// revocations. Every channel answers for its own data; the ledger merges the answers.
extension EntitlementLedger: LedgerReading {
    /// The in-memory ledger's answers cannot fail.
    public typealias Failure = Never

    // MARK: Entitlements

    /// The entitlements of every account at `instant`, accounts in a stable order; accounts
    /// with none are included, with an empty list.
    public func entitlements(at instant: Timestamp) -> [AccountEntitlements] {
        accounts.map { answer(of: $0, at: instant.milliseconds) }
    }

    /// The entitlements of one account at `instant`, or `nil` for an unknown account. Only the
    /// account's own data is read.
    public func entitlements(of account: AccountKey, at instant: Timestamp) -> AccountEntitlements? {
        guard knows(account) else { return nil }
        return answer(of: account, at: instant.milliseconds)
    }

    /// Every channel's entitlements of `account` at `instant`: purchased ones first, then by
    /// ownership, source, product and transaction id; and the highest tier among them.
    private func answer(of account: AccountKey, at instant: Int64) -> AccountEntitlements {
        var found = ask(ChannelQuestion(.entitlements(of: account, at: instant), catalog: catalog)).entitlements
        found.sort {
            ($0.ownership == .purchased ? 0 : 1, $0.ownership.rawValue, $0.source, $0.productId, $0.transactionId)
                < ($1.ownership == .purchased ? 0 : 1, $1.ownership.rawValue, $1.source, $1.productId, $1.transactionId)
        }
        return AccountEntitlements(
            account: account, originalTransactionIds: appStore.originalTransactionIds(of: account),
            entitlements: found, tier: catalog.highestTier(found))
    }

    /// The instants at which the entitlements of `account` may change, ascending and distinct;
    /// empty for an unknown account. Its answer at any instant is its answer at the latest of
    /// these at or before that instant, or, before the first, the answer at any earlier instant
    /// (none). So a series of answers over many instants (every day of a year, say) needs
    /// ``entitlements(of:at:)-(AccountKey,Timestamp)`` only at these.
    ///
    /// They are every date the rules compare the instant with: purchase dates (a purchase
    /// begins, an upgrade gives way), expiry, revocation and grace-period end dates, the end of a
    /// catalog trial or non-renewing length, and the start and end of each grant and Stripe
    /// subscription period. Some may leave the answer as it was.
    public func changeInstants(of account: AccountKey) -> [Timestamp] {
        ask(ChannelQuestion(.changeInstants(of: account), catalog: catalog)).instants.sorted()
            .map(Timestamp.init(milliseconds:))
    }

    // MARK: Revocations

    /// Every revocation with a `revocationDate` at or after `since` (all when `nil`), ordered
    /// by revocation date, then environment and transaction id.
    public func revocations(since: Timestamp?) -> [Revocation] {
        Revocation.ordered(ask(ChannelQuestion(.revocations(since: since?.milliseconds), catalog: catalog)).revocations)
    }

    /// The revocations of one account: of its App Store chains, and the refunded Stripe charges
    /// told with it (``revocations(since:)-(Timestamp?)`` says how), in the same order. Only the
    /// account's own data is read, so the cost grows with it alone.
    public func revocations(of account: AccountKey) -> [Revocation] {
        Revocation.ordered(ask(ChannelQuestion(.accountRevocations(of: account), catalog: catalog)).revocations)
    }
}
