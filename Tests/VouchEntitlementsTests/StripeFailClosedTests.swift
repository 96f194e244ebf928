import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchStripe

/// Stripe's status decides a trial, and access granted by a Stripe subscription always ends:
/// a period end that is missing or out of Stripe's range grants nothing.
@Suite struct StripeFailClosedTests {
    typealias S = StripeLedgerTests

    static let account = AccountKey(environment: .sandbox, appAccountToken: S.account)

    /// A subscription event whose single item has `periodEnd` as its `current_period_end`
    /// (absent when `nil`).
    static func subscription(status: String, created: Int64, periodEnd: JSONValue?) -> StripeDelivery {
        var item: JSONObject = [
            "id": "si_1", "object": "subscription_item",
            "price": ["id": "price_plus", "object": "price", "product": "prod_plus"], "current_period_start": 50,
        ]
        if let periodEnd { item["current_period_end"] = periodEnd }
        return S.event(
            "customer.subscription.updated", created: created,
            object: [
                "id": "sub_1", "object": "subscription", "customer": "cus_1", "status": .string(status),
                "start_date": 50, "metadata": ["account_id": .string(S.account.uuidString)],
                "items": ["object": "list", "data": [.object(item)]],
            ])
    }

    /// `invoice.paid` of `amountPaid` for the period ending at `periodEnd`.
    static func paidInvoice(created: Int64, periodEnd: Int64, amountPaid: Int64) -> StripeDelivery {
        S.event(
            "invoice.paid", created: created,
            object: [
                "id": .string("in_\(created)"), "object": "invoice", "customer": "cus_1",
                "amount_paid": .number(String(amountPaid)),
                "parent": ["subscription_details": ["subscription": "sub_1", "metadata": [:]]],
                "lines": ["data": [["period": ["start": 0, "end": .number(String(periodEnd))]]]],
            ])
    }

    /// Stripe's $0 invoice of a trial is newer than the `trialing` subscription: the answer
    /// stays `trial`, in either order; a later invoice of a real amount makes it `active`.
    @Test func aTrialsZeroInvoiceKeepsTheTrial() throws {
        let trialing = Self.subscription(status: "trialing", created: 100, periodEnd: 1_000)
        let zero = Self.paidInvoice(created: 101, periodEnd: 1_000, amountPaid: 0)
        let at = Timestamp(milliseconds: 500_000)
        for order in [[trialing, zero], [zero, trialing]] {
            let answer = try S.ledger(order).entitlements(of: Self.account, at: at)
            #expect(answer?.entitlements.map(\.state) == [.trial])
            #expect(answer?.tier?.entitlement.expiresDate == Timestamp(milliseconds: 1_000_000))
        }
        let charged = Self.paidInvoice(created: 1_000, periodEnd: 2_000, amountPaid: 999)
        let renewed = try S.ledger([trialing, zero, charged]).entitlements(
            of: Self.account, at: Timestamp(milliseconds: 1_500_000))
        #expect(renewed?.entitlements.map(\.state) == [.active])
        #expect(renewed?.entitlements.first?.expiresDate == Timestamp(milliseconds: 2_000_000))
    }

    /// A signed `active` subscription whose period end is missing, `2^63 − 1` seconds (which
    /// overflows milliseconds), `1e26` or past 9999 grants nothing at any instant, and is counted
    /// as lacking a member the rules need.
    @Test(arguments: [nil, "9223372036854775807", "1e26", "253402300800", "-1"] as [String?])
    func anActiveSubscriptionWithoutAUsablePeriodEndGrantsNothing(periodEnd: String?) throws {
        let delivery = Self.subscription(status: "active", created: 100, periodEnd: periodEnd.map { .number($0) })
        let ledger = try S.ledger([delivery])
        #expect(ledger.accounts == [Self.account])
        for seconds: Int64 in [100, 200, 1_000_000, 200_000_000_000] {
            let answer = ledger.entitlements(of: Self.account, at: Timestamp(milliseconds: seconds * 1000))
            #expect(answer?.entitlements == [], "at \(seconds)")
        }
        #expect(ledger.statistics.incomplete == 1)
    }

    /// The last second of 9999 is a usable period end: Stripe's range is inclusive.
    @Test func aPeriodEndAtTheEndOf9999GrantsUntilThen() throws {
        let delivery = Self.subscription(status: "active", created: 100, periodEnd: .number("253402300799"))
        let ledger = try S.ledger([delivery])
        let answer = ledger.entitlements(of: Self.account, at: Timestamp(milliseconds: 200_000))
        #expect(answer?.entitlements.first?.expiresDate == Timestamp(milliseconds: 253_402_300_799_000))
        #expect(ledger.statistics.incomplete == 0)
    }

    /// An event created outside Stripe's range is not an event.
    @Test func anEventCreatedPast9999IsRefused() throws {
        let delivery = Self.subscription(status: "active", created: 253_402_300_800, periodEnd: 1_000)
        #expect {
            try S.verified(delivery)
        } throws: { ($0 as? VerificationError)?.code == .stripeNotAnEvent }
    }

    /// The store keeps an invoice's `amount_paid`, so a trial read back from the file is a trial.
    @Test func theStoreKeepsATrialsZeroInvoice() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-trial-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let catalog = ProductCatalog(tiers: [.init(name: "plus", rank: 1, products: ["price_plus"])])
        do {
            let store = try LedgerStore(path: path, catalog: catalog)
            try store.add(try S.verified(Self.subscription(status: "trialing", created: 100, periodEnd: 1_000)))
            try store.add(try S.verified(Self.paidInvoice(created: 101, periodEnd: 1_000, amountPaid: 0)))
        }
        let store = try LedgerStore(path: path, access: .readOnly, catalog: catalog)
        let answer = try store.entitlements(of: Self.account, at: Timestamp(milliseconds: 500_000))
        #expect(answer?.entitlements.map(\.state) == [.trial])
    }
}
