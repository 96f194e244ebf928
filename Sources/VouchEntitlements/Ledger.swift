public import Foundation
public import Vouch
public import VouchBatch

/// The questions every ledger answers, the in-memory ``EntitlementLedger`` and the stored
/// ``LedgerStore`` alike, so that a server moving from one to the other keeps its calls.
///
/// Instants are `Timestamp`s (whole milliseconds, as Apple writes them); the `Date` forms
/// below round down to a whole millisecond and are written once, here, for every ledger.
/// `Failure` is what a question may throw: nothing for the in-memory ledger (its answers need no
/// `try`), ``LedgerError`` for a store, whose file or server may fail.
public protocol LedgerReading {
    /// What a question may throw: `Never` when answers come from memory.
    associatedtype Failure: Error

    /// Tiers, trials, non-renewing lengths, and whether refunds end access, per channel.
    var catalog: ProductCatalog { get }

    /// The entitlements of one account at `instant`, or `nil` for an account not known. Only
    /// the account's own data is read.
    func entitlements(of account: AccountKey, at instant: Timestamp) throws(Failure) -> AccountEntitlements?

    /// The entitlements of every account at `instant`, accounts in a stable order.
    func entitlements(at instant: Timestamp) throws(Failure) -> [AccountEntitlements]

    /// The accounts an identifier names: an `appAccountToken` (in any case), any
    /// `originalTransactionId` of the account, a Stripe subscription's or a grant's id, in every
    /// environment.
    func accounts(matching identifier: String) throws(Failure) -> [AccountKey]

    /// The accounts holding a transaction `transactionId` (or a Stripe subscription or grant of
    /// that id).
    func accounts(withTransactionId transactionId: String) throws(Failure) -> [AccountKey]

    /// The entitlements at `instant` of every account `identifier` names (as
    /// ``accounts(matching:)`` finds them), in the accounts' order: what `vouch serve`'s
    /// `GET …/entitlements` answers, the records `vouch entitlements --account ID` prints. The
    /// SQLite store finds and answers them in one read transaction.
    func entitlements(ofAccountsMatching identifier: String, at instant: Timestamp) throws(Failure)
        -> [AccountEntitlements]

    /// The instants at which the answer of `account` may change, ascending
    /// (``EntitlementLedger/changeInstants(of:)`` says which).
    func changeInstants(of account: AccountKey) throws(Failure) -> [Timestamp]

    /// The revocations of one account, reading only its data.
    func revocations(of account: AccountKey) throws(Failure) -> [Revocation]

    /// Every revocation dated at or after `since` (all when `nil`), ordered by revocation date,
    /// then environment, transaction id, ownership and kind.
    func revocations(since: Timestamp?) throws(Failure) -> [Revocation]
}

/// What every ledger takes: verified input with the account a caller names, grants of a
/// server's own, and bindings made after the fact, under one conflict rule
/// (``LedgerError/Code/accountConflict`` adds nothing).
public protocol LedgerWriting {
    /// What an addition reports: nothing in memory, a store's ``LedgerStore/Change``.
    associatedtype Addition

    /// Adds whatever the input layer verified; `account`, when given, binds what the input is
    /// about to the caller's account (``EntitlementLedger/add(_:account:stripeAccountKey:)``).
    @discardableResult
    mutating func add(_ input: VerifiedInput, account: String?, stripeAccountKey: String) throws(LedgerError)
        -> Addition

    /// Adds a grant of a source of the server's own; the newest statement of each grant wins.
    @discardableResult
    mutating func add(_ grant: EntitlementGrant) throws(LedgerError) -> Addition

    /// Binds a Stripe subscription to an account after the fact
    /// (``EntitlementLedger/bindStripeSubscription(_:livemode:to:)``).
    @discardableResult
    mutating func bindStripeSubscription(_ subscriptionId: String, livemode: Bool, to account: String)
        throws(LedgerError) -> Addition
}

extension LedgerReading {
    /// The entitlements of one account at `instant` (rounded down to a whole millisecond).
    public func entitlements(of account: AccountKey, at instant: Date) throws(Failure) -> AccountEntitlements? {
        try entitlements(of: account, at: Timestamp(instant))
    }

    /// The entitlements of every account at `instant` (rounded down to a whole millisecond).
    public func entitlements(at instant: Date) throws(Failure) -> [AccountEntitlements] {
        try entitlements(at: Timestamp(instant))
    }

    /// The accounts whose `appAccountToken` is `appAccountToken`, in every environment.
    public func accounts(matching appAccountToken: UUID) throws(Failure) -> [AccountKey] {
        let token = EntitlementLedger.token(appAccountToken)
        return try accounts(matching: token).filter { $0.appAccountToken == token }
    }

    /// The entitlements at `instant` of every account `identifier` names (an
    /// `appAccountToken`, a server's own id or any `originalTransactionId` of the account, in
    /// every environment), in the accounts' order: each account found, then answered.
    public func entitlements(ofAccountsMatching identifier: String, at instant: Timestamp) throws(Failure)
        -> [AccountEntitlements]
    {
        var answers: [AccountEntitlements] = []
        for account in try accounts(matching: identifier).sorted() {
            if let answer = try entitlements(of: account, at: instant) { answers.append(answer) }
        }
        return answers
    }

    /// The revocations of every account `identifier` names, in the order of every answer that
    /// lists revocations (`Revocation.ordered(_:)`).
    public func revocations(ofAccountsMatching identifier: String) throws(Failure) -> [Revocation] {
        var revocations: [Revocation] = []
        for account in try accounts(matching: identifier) { revocations += try self.revocations(of: account) }
        return Revocation.ordered(revocations)
    }

    /// The accounts entitled to `productId` at `instant`.
    public func accounts(entitledTo productId: String, at instant: Timestamp) throws(Failure) -> [AccountKey] {
        try entitlements(at: instant).filter { $0.entitlements.contains { $0.productId == productId } }.map(\.account)
    }

    /// The accounts entitled to `productId` at `instant` (rounded down to a whole millisecond).
    public func accounts(entitledTo productId: String, at instant: Date) throws(Failure) -> [AccountKey] {
        try accounts(entitledTo: productId, at: Timestamp(instant))
    }

    /// The accounts whose highest tier at `instant` is the tier named `tier`.
    public func accounts(inTier tier: String, at instant: Timestamp) throws(Failure) -> [AccountKey] {
        try entitlements(at: instant).filter { $0.tier?.name == tier }.map(\.account)
    }

    /// The accounts whose highest tier at `instant` (rounded down to a whole millisecond) is the
    /// tier named `tier`.
    public func accounts(inTier tier: String, at instant: Date) throws(Failure) -> [AccountKey] {
        try accounts(inTier: tier, at: Timestamp(instant))
    }

    /// The accounts whose highest tier at `instant` is `tier`.
    public func accounts(inTier tier: ServiceTier, at instant: Timestamp) throws(Failure) -> [AccountKey] {
        try entitlements(at: instant).filter { $0.tier?.tier == tier }.map(\.account)
    }

    /// The accounts whose highest tier at `instant` (rounded down to a whole millisecond) is `tier`.
    public func accounts(inTier tier: ServiceTier, at instant: Date) throws(Failure) -> [AccountKey] {
        try accounts(inTier: tier, at: Timestamp(instant))
    }

    /// Every revocation dated at or after `since` (rounded down to a whole millisecond).
    public func revocations(since: Date) throws(Failure) -> [Revocation] {
        try revocations(since: Timestamp(since))
    }

    /// Every revocation (``revocations(since:)-(Timestamp?)`` with no bound).
    public func revocations() throws(Failure) -> [Revocation] {
        try revocations(since: nil)
    }
}

/// One user's entitlements at one instant across environments: the answer of each environment
/// that holds data of the user, and one tier over the environments that count.
///
/// App Review and TestFlight users reach a Production server with Sandbox data, so one user may
/// be an account in Production and another in Sandbox. Each entitlement keeps its environment
/// (``environments`` holds one answer per environment); the tier is the highest among the
/// entitlements of ``tierEnvironments`` only, by the catalog's one rule (the highest rank, then
/// the later end, then the transaction id).
public struct UserEntitlements: Sendable, Hashable {
    /// The user: an `appAccountToken` or a server's own account id, as the ledger keeps it.
    public let account: String
    /// The answer of each environment asked that holds data of the user, in the order asked.
    public let environments: [AccountEntitlements]
    /// The environments whose entitlements count toward ``tier``.
    public let tierEnvironments: Set<AppStoreEnvironment>
    /// The highest tier among the entitlements of ``tierEnvironments``; `nil` when none maps to
    /// a tier.
    public let tier: TierGrant?
    /// The environment of the entitlement that grants ``tier``.
    public let tierEnvironment: AppStoreEnvironment?

    /// Every entitlement, each with its environment, in the order of ``environments``.
    public var entitlements: [(environment: AppStoreEnvironment, entitlement: Entitlement)] {
        environments.flatMap { answer in answer.entitlements.map { (answer.account.environment, $0) } }
    }
}

extension LedgerReading {
    /// The entitlements of the user `account` (an `appAccountToken` in any case, or a server's
    /// own account id) at `instant` in each of `environments` (Production and Sandbox unless
    /// given: the environments a server's trust configuration accepts), and one tier over
    /// `tierEnvironments` (every environment asked unless given; a server that keeps Sandbox
    /// data apart passes `[.production]`).
    public func entitlements(
        ofUser account: String, at instant: Timestamp,
        environments: [AppStoreEnvironment] = [.production, .sandbox],
        tierEnvironments: Set<AppStoreEnvironment>? = nil
    ) throws(Failure) -> UserEntitlements {
        let token = AccountKey.token(account)
        var answers: [AccountEntitlements] = []
        for environment in environments {
            let key = AccountKey(environment: environment.rawValue, appAccountToken: token, originalTransactionId: "")
            if let answer = try entitlements(of: key, at: instant) { answers.append(answer) }
        }
        let counting = tierEnvironments ?? Set(environments)
        var best: (grant: TierGrant, environment: AppStoreEnvironment)?
        for answer in answers where counting.contains(answer.account.environment) {
            guard let grant = catalog.highestTier(answer.entitlements) else { continue }
            if let known = best, catalog.highestTier([known.grant.entitlement, grant.entitlement]) == known.grant {
                continue
            }
            best = (grant, answer.account.environment)
        }
        return UserEntitlements(
            account: token, environments: answers, tierEnvironments: counting, tier: best?.grant,
            tierEnvironment: best?.environment)
    }
}
