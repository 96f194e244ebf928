internal import Vouch

// The App Store channel's answers, by the rules ``EntitlementLedger`` states.
extension AppStoreChannel {
    func entitlements(of account: AccountKey, at instant: Int64, catalog: ProductCatalog) -> [Entitlement] {
        let keys = chains(of: account) ?? []
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
                        (known.purchaseDate, known.transactionId) >= (
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
        for index in found.indices where found[index].refundedDate == nil {
            let entitlement = found[index]
            let chain = ChainKey(
                environment: account.environment.rawValue, originalTransactionId: entitlement.originalTransactionId,
                ownership: entitlement.ownership.rawValue)
            found[index].refundedDate = chains[chain]?[entitlement.transactionId]?.refundTouched(at: instant)
                .map(Timestamp.init(milliseconds:))
        }
        return found
    }

    /// The `originalTransactionId`s of the chains of `account`, ascending.
    func originalTransactionIds(of account: AccountKey) -> [String] {
        var ids: [String] = []
        for key in chains(of: account) ?? [] where ids.last != key.originalTransactionId {
            ids.append(key.originalTransactionId)
        }
        return ids
    }

    func changeInstants(of account: AccountKey, catalog: ProductCatalog) -> Set<Int64> {
        var instants = Set<Int64>()
        for key in chains(of: account) ?? [] {
            if let grace = renewals[key.renewalKey]?.gracePeriodExpiresDate { instants.insert(grace) }
            for record in (chains[key] ?? [:]).values {
                let statement = record.current
                instants.insert(statement.purchaseDate)
                if let expires = statement.expiresDate { instants.insert(expires) }
                if let revocation = statement.revocation { instants.insert(revocation.date) }
                if let refund = record.newestRevocation { instants.insert(refund.facts.date) }
                if let seats = record.newestSeatRefund { instants.insert(seats.signedDate) }
                if let days = catalog.trialDays[statement.productId] {
                    instants.insert(statement.purchaseDate + Int64(days) * Self.day)
                }
                if let days = catalog.lengthDays[statement.productId] {
                    instants.insert(statement.purchaseDate + Int64(days) * Self.day)
                }
            }
        }
        return instants
    }

    /// An upgraded transaction gives way to the next transaction of its chain from that one's
    /// purchase; when the next one is not known, from its own purchase.
    private func isSuperseded(_ record: TransactionRecord, in records: [String: TransactionRecord], at instant: Int64)
        -> Bool
    {
        guard record.isUpgraded else { return false }
        var next: Int64?
        for other in records.values where other.purchaseDate > record.purchaseDate {
            next = min(next ?? other.purchaseDate, other.purchaseDate)
        }
        return instant >= (next ?? record.purchaseDate)
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
        entitlement.refundedDate = period.compactMap { $0.refundTouched(at: instant) }.max()
            .map(Timestamp.init(milliseconds:))
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

    func revocations(since: Int64?, catalog: ProductCatalog) -> [Revocation] {
        var found: [Revocation] = []
        for (key, records) in chains {
            let account = self.account(of: key)
            for record in records.values {
                if let seatRefund = Revocation.seatRefund(of: record, account: account),
                    seatRefund.revocationDate.milliseconds >= since ?? .min
                {
                    found.append(seatRefund)
                }
                guard let revocation = Self.revocation(of: record, account: account) else { continue }
                if let since, revocation.revocationDate.milliseconds < since { continue }
                found.append(revocation)
            }
        }
        return found
    }

    func revocations(of account: AccountKey, catalog: ProductCatalog) -> [Revocation] {
        var found: [Revocation] = []
        for key in chains(of: account) ?? [] {
            for record in (chains[key] ?? [:]).values {
                if let seatRefund = Revocation.seatRefund(of: record, account: account) { found.append(seatRefund) }
                if let revocation = Self.revocation(of: record, account: account) { found.append(revocation) }
            }
        }
        return found
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
