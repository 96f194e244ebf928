import Foundation
import Testing
import Vouch
import VouchBatch
import VouchEntitlements
import VouchMint
import VouchStripe

/// A caller names the account of what it adds: App Store chains and Stripe subscriptions alike,
/// at the time of adding or after the fact, with one conflict rule, in memory and in the store.
@Suite struct AccountBindingTests {
    typealias S = StripeLedgerTests

    /// A subscription whose events name no account.
    static let anonymous = S.subscription(status: "active", created: 100, periodEnd: 10_000, metadata: [:])
    static let web = "user-42"
    static let catalog = ProductCatalog(tiers: [.init(name: "plus", rank: 1, products: ["price_plus"])])

    static func temporaryStore() throws -> (LedgerStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-binding-\(UUID().uuidString).sqlite"
        ).path
        return (try LedgerStore(path: path, catalog: catalog), path)
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test func aStripeSubscriptionThatNamesNoAccountIsBoundToOneAfterTheFact() throws {
        var ledger = EntitlementLedger(catalog: Self.catalog)
        ledger.add(try S.verified(Self.anonymous))
        let own = AccountKey(environment: .sandbox, originalTransactionId: "sub_1")
        #expect(ledger.accounts == [own])

        try ledger.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
        let bound = AccountKey(environment: .sandbox, appAccountToken: Self.web)
        #expect(ledger.accounts == [bound])
        #expect(ledger.entitlements(of: bound, at: Timestamp(milliseconds: 200_000))?.tier?.name == "plus")
        #expect(ledger.accounts(matching: "sub_1") == [bound])

        // A later event that names no account keeps the binding.
        ledger.add(try S.verified(S.invoice("invoice.paid", created: 300, periodEnd: 20_000)))
        #expect(ledger.accounts == [bound])
    }

    @Test func aBindingBeforeTheSubscriptionsEventsHoldsWhenTheyArrive() throws {
        var ledger = EntitlementLedger(catalog: Self.catalog)
        try ledger.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
        #expect(ledger.accounts == [])
        ledger.add(try S.verified(Self.anonymous))
        #expect(ledger.accounts == [AccountKey(environment: .sandbox, appAccountToken: Self.web)])
    }

    @Test func bindingAStripeSubscriptionAnotherAccountHoldsIsRefused() throws {
        // The subscription's own metadata names S.account.
        var ledger = EntitlementLedger(catalog: Self.catalog)
        ledger.add(try S.verified(S.subscription(status: "active", created: 100, periodEnd: 10_000)))
        let before = ledger.accounts
        do {
            try ledger.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
            Issue.record("a subscription its own metadata names was bound to another account")
        } catch {
            #expect(error.code == .accountConflict)
        }
        #expect(ledger.accounts == before)

        // An earlier claim holds against a second one; the same account may claim again.
        var claimed = EntitlementLedger(catalog: Self.catalog)
        try claimed.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
        try claimed.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
        do {
            try claimed.bindStripeSubscription("sub_1", livemode: false, to: "user-7")
            Issue.record("a second account's claim was taken")
        } catch {
            #expect(error.code == .accountConflict)
            #expect(error.reason.contains("user-42"))
        }
        // A claim in the other mode is another subscription.
        try claimed.bindStripeSubscription("sub_1", livemode: true, to: "user-7")
    }

    @Test func anEventAddedWithAnAccountIsRefusedWholeWhenItNamesAnother() throws {
        var ledger = EntitlementLedger(catalog: Self.catalog)
        let named = try S.verified(S.subscription(status: "active", created: 100, periodEnd: 10_000))
        do {
            try ledger.add(named, account: Self.web)
            Issue.record("an event naming another account was bound")
        } catch {
            #expect(error.code == .accountConflict)
        }
        #expect(ledger.accounts == [])
        #expect(ledger.statistics.stripeEvents == 0)

        try ledger.add(try S.verified(Self.anonymous), account: Self.web)
        #expect(ledger.accounts == [AccountKey(environment: .sandbox, appAccountToken: Self.web)])
    }

    @Test func theInputLayersVerifiedInputGoesInWithTheAccountACallerNames() throws {
        var ledger = EntitlementLedger(catalog: Self.catalog)
        let input = VerifiedInput.stripeEvent(try S.verified(Self.anonymous))
        try ledger.add(input, account: Self.web)
        #expect(ledger.accounts == [AccountKey(environment: .sandbox, appAccountToken: Self.web)])

        // App Store data names accounts by appAccountToken: a UUID.
        var history = MintHistory()
        let purchase = history.purchase(
            "com.example.pro.lifetime", type: .nonConsumable, at: LedgerFixtures.time(1), price: 29_990, notify: false)
        let payload = try LedgerFixtures.verified(history)[0]
        let chain = purchase.originalTransactionId
        do {
            try ledger.add(.payload(payload), account: Self.web)
            Issue.record("App Store data was bound to an account that is not a UUID")
        } catch {
            #expect(error.code == .invalidAccount)
        }
        #expect(ledger.accounts(matching: chain) == [])
        try ledger.add(.payload(payload), account: LedgerFixtures.account.uppercased())
        #expect(
            ledger.accounts(matching: chain) == [
                AccountKey(environment: .production, appAccountToken: LedgerFixtures.account)
            ])
    }

    @Test func theStoreKeepsAStripeBindingAndRefusesAConflictingOneStoringNothing() throws {
        let (store, path) = try Self.temporaryStore()
        defer { Self.remove(path) }
        let bound = AccountKey(environment: .sandbox, appAccountToken: Self.web)
        // The binding first, the events later, in separate transactions.
        var claim = EntitlementLedger()
        try claim.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
        #expect(try store.add(contentsOf: claim).claims == 1)
        try store.add(.stripeEvent(try S.verified(Self.anonymous)))
        #expect(try store.accounts() == [bound])
        #expect(try store.entitlements(of: bound, at: Timestamp(milliseconds: 200_000))?.tier?.name == "plus")

        let invoice = VerifiedInput.stripeEvent(
            try S.verified(S.invoice("invoice.paid", created: 300, periodEnd: 20_000)))
        do {
            try store.add(invoice, account: "user-7")
            Issue.record("the store bound a subscription another account holds")
        } catch {
            #expect(error.code == .accountConflict)
        }
        #expect(try store.statistics().fed.stripeEvents == 1)

        // What the store holds answers as one ledger fed the same, and its export keeps the claim.
        var memory = EntitlementLedger(catalog: Self.catalog)
        try memory.bindStripeSubscription("sub_1", livemode: false, to: Self.web)
        memory.add(try S.verified(Self.anonymous))
        let instant = Timestamp(milliseconds: 200_000)
        #expect(try store.ledger().entitlements(at: instant) == memory.entitlements(at: instant))
        var lines: [String] = []
        try store.export { lines.append(String(decoding: $0, as: UTF8.self)) }
        #expect(
            lines.contains(
                #"{"kind":"accountClaim","channel":"stripe","environment":"Sandbox","subscriptionId":"sub_1","appAccountToken":"user-42"}"#
            ))
    }
}

/// A server's own account ids are kept as they are: only UUIDs (Apple's `appAccountToken`s) are
/// folded to lower case, so an id in mixed case finds its account everywhere.
@Suite struct ServerAccountIdTests {
    typealias S = StripeLedgerTests

    @Test func aMixedCaseServerIdFindsItsStripeSubscriptionAndGrantsAsOneAccount() throws {
        var ledger = EntitlementLedger(
            catalog: ProductCatalog(tiers: [
                .init(name: "plus", rank: 1, products: ["price_plus"]), .init(name: "pro", rank: 2, products: ["pro"]),
            ]))
        ledger.add(
            try S.verified(
                S.subscription(status: "active", created: 100, periodEnd: 10_000, metadata: ["account_id": "User-42"])))
        let account = AccountKey(environment: .sandbox, appAccountToken: "User-42")
        ledger.add(
            EntitlementGrant(
                source: EntitlementSource(rawValue: "manual"), id: "g1", account: account, productId: "pro",
                startDate: Timestamp(milliseconds: 0), expiresDate: nil, signedDate: Timestamp(milliseconds: 1)))
        #expect(ledger.accounts == [account])
        #expect(account.appAccountToken == "User-42")
        #expect(ledger.accounts(matching: "User-42") == [account])
        #expect(ledger.accounts(matching: "user-42") == [])
        let answer = try #require(ledger.entitlements(of: account, at: Timestamp(milliseconds: 200_000)))
        #expect(answer.entitlements.map(\.source.rawValue) == ["manual", "stripe"])  // by source, then product
        #expect(ledger.entitlements(ofUser: "User-42", at: Timestamp(milliseconds: 200_000)).tier?.name == "pro")
        // A UUID is one account in any case.
        let uuid = AccountKey(environment: .sandbox, appAccountToken: LedgerFixtures.account.uppercased())
        #expect(uuid.appAccountToken == LedgerFixtures.account)
    }
}
