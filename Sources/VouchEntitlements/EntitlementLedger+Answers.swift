public import Foundation
public import Vouch

// The questions: entitlements of accounts at an instant, accounts by product or tier, and
// revocations.
extension EntitlementLedger {
    // MARK: Entitlements

    /// The entitlements of every account at `instant`, accounts in a stable order; accounts
    /// with none are included, with an empty list.
    public func entitlements(at instant: Timestamp) -> [AccountEntitlements] {
        accounts.map { entitlements(of: $0, chains: chains(of: $0) ?? [], at: instant.milliseconds) }
    }

    /// The entitlements of every account at `instant` (rounded down to a whole millisecond).
    public func entitlements(at instant: Date) -> [AccountEntitlements] {
        entitlements(at: Timestamp(instant))
    }

    /// The entitlements of one account at `instant`, or `nil` for an unknown account. Only the
    /// account's own chains are read.
    public func entitlements(of account: AccountKey, at instant: Timestamp) -> AccountEntitlements? {
        guard knows(account) else { return nil }
        return entitlements(of: account, chains: chains(of: account) ?? [], at: instant.milliseconds)
    }

    /// The entitlements of one account at `instant` (rounded down to a whole millisecond), or
    /// `nil` for an unknown account.
    public func entitlements(of account: AccountKey, at instant: Date) -> AccountEntitlements? {
        entitlements(of: account, at: Timestamp(instant))
    }

    /// The accounts entitled to `productId` at `instant`.
    public func accounts(entitledTo productId: String, at instant: Timestamp) -> [AccountKey] {
        entitlements(at: instant).filter { $0.entitlements.contains { $0.productId == productId } }.map(\.account)
    }

    /// The accounts entitled to `productId` at `instant` (rounded down to a whole millisecond).
    public func accounts(entitledTo productId: String, at instant: Date) -> [AccountKey] {
        accounts(entitledTo: productId, at: Timestamp(instant))
    }

    /// The accounts whose highest tier at `instant` is `tier`.
    public func accounts(inTier tier: String, at instant: Timestamp) -> [AccountKey] {
        entitlements(at: instant).filter { $0.tier?.name == tier }.map(\.account)
    }

    /// The accounts whose highest tier at `instant` (rounded down to a whole millisecond) is the
    /// tier named `tier`.
    public func accounts(inTier tier: String, at instant: Date) -> [AccountKey] {
        accounts(inTier: tier, at: Timestamp(instant))
    }

    /// The accounts whose highest tier at `instant` (rounded down to a whole millisecond) is `tier`.
    public func accounts(inTier tier: ServiceTier, at instant: Date) -> [AccountKey] {
        entitlements(at: Timestamp(instant)).filter { $0.tier?.tier == tier }.map(\.account)
    }

    /// The accounts whose highest tier at `instant` is `tier`.
    public func accounts(inTier tier: ServiceTier, at instant: Timestamp) -> [AccountKey] {
        entitlements(at: instant).filter { $0.tier?.tier == tier }.map(\.account)
    }

    func entitlements(of account: AccountKey, chains keys: [ChainKey], at instant: Int64) -> AccountEntitlements {
        var found: [Entitlement] = []
        var nonRenewing: [String: TransactionStatement] = [:]  // by ownership and product
        for key in keys {
            guard let records = chains[key] else { continue }
            var latestSubscription: TransactionRecord?
            for record in records.values {
                let statement = record.current
                guard statement.purchaseDate <= instant else { continue }
                switch ProductType(rawValue: statement.type) {
                case .nonConsumable:
                    guard !record.isRevoked(at: instant) else { continue }
                    if let days = catalog.trialDays[statement.productId] {
                        let end = statement.purchaseDate + Int64(days) * Self.day
                        if instant < end { found.append(Self.entitlement(statement, state: .trial, expires: end)) }
                    } else {
                        found.append(Self.entitlement(statement, state: .active, expires: nil))
                    }
                case .autoRenewableSubscription:
                    guard !isSuperseded(record, in: records, at: instant) else { continue }
                    if let known = latestSubscription,
                        (known.current.purchaseDate, known.current.transactionId) >= (
                            statement.purchaseDate, statement.transactionId
                        )
                    {
                        continue
                    }
                    latestSubscription = record
                case .nonRenewingSubscription:
                    let slot = statement.ownership + "\u{0}" + statement.productId
                    if let known = nonRenewing[slot],
                        (known.purchaseDate, known.transactionId) >= (statement.purchaseDate, statement.transactionId)
                    {
                        continue
                    }
                    nonRenewing[slot] = statement
                default:
                    continue  // consumables and unknown types entitle to nothing
                }
            }
            if let record = latestSubscription,
                let entitlement = periodEntitlement(record, in: records, key: key, at: instant)
            {
                found.append(entitlement)
            }
        }
        for statement in nonRenewing.values {
            guard
                let record = chains[
                    ChainKey(
                        environment: statement.environment, originalTransactionId: statement.originalTransactionId,
                        ownership: statement.ownership)]?[statement.transactionId],
                !record.isRevoked(at: instant)
            else { continue }
            let end = catalog.lengthDays[statement.productId].map { statement.purchaseDate + Int64($0) * Self.day }
            if let end, instant >= end { continue }
            found.append(Self.entitlement(statement, state: .nonRenewing, expires: end))
        }
        found += grantedEntitlements(of: account, at: instant)
        found.sort {
            ($0.ownership == .purchased ? 0 : 1, $0.ownership.rawValue, $0.source, $0.productId, $0.transactionId)
                < ($1.ownership == .purchased ? 0 : 1, $1.ownership.rawValue, $1.source, $1.productId, $1.transactionId)
        }
        var ids: [String] = []
        for key in keys where ids.last != key.originalTransactionId { ids.append(key.originalTransactionId) }
        return AccountEntitlements(
            account: account, originalTransactionIds: ids, entitlements: found, tier: highestTier(found))
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
        var instants = Set<Int64>()
        for key in chains(of: account) ?? [] {
            if let grace = renewals[key.renewalKey]?.gracePeriodExpiresDate { instants.insert(grace) }
            for record in (chains[key] ?? [:]).values {
                let statement = record.current
                instants.insert(statement.purchaseDate)
                if let expires = statement.expiresDate { instants.insert(expires) }
                if let revocation = statement.revocation { instants.insert(revocation.date) }
                if let days = catalog.trialDays[statement.productId] {
                    instants.insert(statement.purchaseDate + Int64(days) * Self.day)
                }
                if let days = catalog.lengthDays[statement.productId] {
                    instants.insert(statement.purchaseDate + Int64(days) * Self.day)
                }
            }
        }
        var grants = (accountGrants[account] ?? []).compactMap { self.grants[$0] }
        for key in accountSubscriptions[account] ?? [] {
            grants += stripeSubscriptions[key]?.grants(key: key, account: account, catalog: catalog) ?? []
        }
        for grant in grants {
            instants.insert(grant.startDate.milliseconds)
            if let expires = grant.expiresDate { instants.insert(expires.milliseconds) }
        }
        return instants.sorted().map(Timestamp.init(milliseconds:))
    }

    /// An upgraded transaction gives way to the next transaction of its chain from that one's
    /// purchase; when the next one is not known, from its own purchase.
    private func isSuperseded(_ record: TransactionRecord, in records: [String: TransactionRecord], at instant: Int64)
        -> Bool
    {
        guard record.current.isUpgraded else { return false }
        var next: Int64?
        for other in records.values where other.current.purchaseDate > record.current.purchaseDate {
            next = min(next ?? other.current.purchaseDate, other.current.purchaseDate)
        }
        return instant >= (next ?? record.current.purchaseDate)
    }

    /// The entitlement of a chain's latest subscription transaction and the period it belongs
    /// to. When more than one transaction represents the period (`additionalTransactionReason`:
    /// seats added partway through), the period is every transaction of the chain purchased by
    /// the instant, not superseded, carrying that reason and ending when the latest ends; access
    /// ends only when every one of them is revoked, and the latest one not revoked grants it.
    /// A multiseat period counts its seats: each standing transaction's `quantity` less its
    /// `revokedSeatQuantity`, which never revokes access by itself.
    private func periodEntitlement(
        _ latest: TransactionRecord, in records: [String: TransactionRecord], key: ChainKey, at instant: Int64
    ) -> Entitlement? {
        let statement = latest.current
        var period = [latest]
        if statement.additionalTransactionReason != nil {
            period = records.values.filter { record in
                let other = record.current
                return other.additionalTransactionReason != nil && other.expiresDate == statement.expiresDate
                    && other.purchaseDate <= instant && other.type == statement.type
                    && !isSuperseded(record, in: records, at: instant)
            }
        }
        let standing = period.filter { !$0.isRevoked(at: instant) }
        guard
            let granting = standing.max(by: {
                ($0.current.purchaseDate, $0.current.transactionId) < (
                    $1.current.purchaseDate, $1.current.transactionId
                )
            }),
            var entitlement = subscriptionEntitlement(granting, key: key, at: instant)
        else { return nil }
        if period.contains(where: { $0.current.isMultiSeat }) {
            entitlement.seats = standing.reduce(0) { total, record in
                total + max(0, Int(record.current.quantity ?? 1) - Int(record.current.revokedSeatQuantity ?? 0))
            }
            let invitations =
                granting.current.invitationManagement
                ?? period.compactMap(\.current.invitationManagement).min()
            entitlement.invitationManagement = invitations.map(InvitationManagement.init(rawValue:))
        }
        return entitlement
    }

    private func subscriptionEntitlement(_ record: TransactionRecord, key: ChainKey, at instant: Int64) -> Entitlement?
    {
        let statement = record.current
        guard !record.isRevoked(at: instant), let expires = statement.expiresDate else { return nil }
        if instant < expires {
            return Self.entitlement(statement, state: statement.isFreeTrial ? .trial : .active, expires: expires)
        }
        let renewal = renewals[
            RenewalKey(environment: key.environment, originalTransactionId: key.originalTransactionId)]
        if let renewal, renewal.isInBillingRetryPeriod, let grace = renewal.gracePeriodExpiresDate, grace > expires,
            instant < grace
        {
            return Self.entitlement(statement, state: .gracePeriod, expires: grace)
        }
        return nil
    }

    private static let day: Int64 = 86_400_000

    private static func entitlement(_ statement: TransactionStatement, state: Entitlement.State, expires: Int64?)
        -> Entitlement
    {
        Entitlement(
            productId: statement.productId, type: ProductType(rawValue: statement.type),
            subscriptionGroupIdentifier: statement.subscriptionGroupIdentifier, state: state,
            expiresDate: expires.map(Timestamp.init(milliseconds:)),
            ownership: InAppOwnershipType(rawValue: statement.ownership),
            transactionId: statement.transactionId, originalTransactionId: statement.originalTransactionId,
            purchaseDate: Timestamp(milliseconds: statement.purchaseDate))
    }

    /// The highest rank; then the later end (none is latest); then the transaction id.
    private func highestTier(_ entitlements: [Entitlement]) -> TierGrant? {
        var best: TierGrant?
        for entitlement in entitlements {
            guard let tier = catalog.tier(of: entitlement.productId) else { continue }
            let candidate = TierGrant(name: tier.name, rank: tier.rank, entitlement: entitlement)
            guard let known = best else {
                best = candidate
                continue
            }
            func order(_ grant: TierGrant) -> (Int, Int64, String) {
                (grant.rank, grant.entitlement.expiresDate?.milliseconds ?? Int64.max, grant.entitlement.transactionId)
            }
            if order(candidate) > order(known) { best = candidate }
        }
        return best
    }

    // MARK: Revocations

    /// Every revocation with a `revocationDate` at or after `since` (rounded down to a whole
    /// millisecond), ordered by revocation date, then environment and transaction id.
    public func revocations(since: Date) -> [Revocation] {
        revocations(since: Timestamp(since))
    }

    /// Every revocation with a `revocationDate` at or after `since` (all when `nil`), ordered
    /// by revocation date, then environment and transaction id.
    public func revocations(since: Timestamp? = nil) -> [Revocation] {
        var found: [Revocation] = []
        for (key, records) in chains {
            let account = self.account(of: key)
            for record in records.values {
                if let seatRefund = Revocation.seatRefund(of: record, account: account),
                    seatRefund.revocationDate.milliseconds >= since?.milliseconds ?? .min
                {
                    found.append(seatRefund)
                }
                guard let revocation = Self.revocation(of: record, account: account) else { continue }
                if let since, revocation.revocationDate < since { continue }
                found.append(revocation)
            }
        }
        found += stripeRevocations(since: since)
        return Self.ordered(found)
    }

    /// The revocations of one account: of its App Store chains, and the refunded Stripe charges
    /// told with it (``revocations(since:)-(Timestamp?)`` says how), in the same order. Only the
    /// account's own data is read, so the cost grows with it alone.
    public func revocations(of account: AccountKey) -> [Revocation] {
        var found: [Revocation] = []
        for key in chains(of: account) ?? [] {
            for record in (chains[key] ?? [:]).values {
                if let seatRefund = Revocation.seatRefund(of: record, account: account) { found.append(seatRefund) }
                if let revocation = Self.revocation(of: record, account: account) { found.append(revocation) }
            }
        }
        return Self.ordered(found + stripeRevocations(of: account))
    }

    /// Revocations by revocation date, then environment, transaction id, ownership and kind.
    private static func ordered(_ revocations: [Revocation]) -> [Revocation] {
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

    /// The revocation a transaction's record tells, if it ever carried one: in force, or
    /// reversed since.
    private static func revocation(of record: TransactionRecord, account: AccountKey?) -> Revocation? {
        guard let newest = record.newestRevocation else { return nil }
        let statement = record.current
        let facts: RevocationFacts
        let state: Revocation.State
        var reversedDate: Int64?
        if let current = statement.revocation {
            facts = current
            state = .revoked
        } else {
            facts = newest.facts
            state = .reversed
            if let notified = record.reversalNotified, notified > newest.signedDate {
                reversedDate = notified
            } else {
                reversedDate = statement.signedDate
            }
        }
        let kind: Revocation.Kind = facts.type == RevocationType.familyRevoke.rawValue ? .familyRevocation : .refund
        return Revocation(
            environment: AppStoreEnvironment(rawValue: statement.environment),
            appAccountToken: account?.appAccountToken,
            originalTransactionId: statement.originalTransactionId, transactionId: statement.transactionId,
            productId: statement.productId, type: ProductType(rawValue: statement.type),
            ownership: InAppOwnershipType(rawValue: statement.ownership), kind: kind, state: state,
            revocationDate: Timestamp(milliseconds: facts.date),
            revocationReason: facts.reason.map(RevocationReason.init(rawValue:)),
            revocationType: facts.type.map(RevocationType.init(rawValue:)),
            revocationPercentage: facts.percentage,
            price: statement.price, currency: statement.currency,
            refundedAmount: Revocation.refundedAmount(
                kind: kind, facts: facts, price: Revocation.amount(of: statement)),
            reversedDate: reversedDate.map(Timestamp.init(milliseconds:)))
    }
}
