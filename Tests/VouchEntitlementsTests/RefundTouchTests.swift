import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchStripe

/// An entitlement says when a refund touched it; whether a refund ends access is the catalog's
/// to say per channel (Stripe: not by default; App Store: a revocation always does).
@Suite struct RefundTouchTests {
    typealias S = StripeLedgerTests
    typealias F = LedgerFixtures

    static let refund = S.event(
        "charge.refunded", created: 300,
        object: [
            "id": "ch_1", "object": "charge", "amount": 999, "amount_refunded": 999, "currency": "usd",
            "customer": "cus_1", "metadata": [:],
        ])

    static func ledger(refundEndsAccess: Set<EntitlementSource>) throws -> EntitlementLedger {
        var catalog = ProductCatalog(tiers: [.init(name: "plus", rank: 1, products: ["price_plus"])])
        catalog.refundEndsAccess = refundEndsAccess
        var ledger = EntitlementLedger(catalog: catalog)
        for delivery in [S.subscription(status: "active", created: 100, periodEnd: 10_000), refund] {
            ledger.add(try S.verified(delivery))
        }
        return ledger
    }

    @Test func aStripeRefundIsToldOnTheEntitlementAndLeavesAccessByDefault() throws {
        let ledger = try Self.ledger(refundEndsAccess: [])
        let account = try #require(ledger.accounts.first)
        let before = try #require(ledger.entitlements(of: account, at: Timestamp(milliseconds: 200_000)))
        #expect(before.entitlements.count == 1)
        #expect(before.entitlements[0].refundedDate == nil)
        let after = try #require(ledger.entitlements(of: account, at: Timestamp(milliseconds: 400_000)))
        #expect(after.tier?.name == "plus")
        #expect(after.entitlements[0].refundedDate == Timestamp(milliseconds: 300_000))
        let json = JSONWriter.string(after.entitlements[0].json)
        #expect(
            json.hasSuffix(
                #","source":"stripe","refundedDate":300000,"refunded":"1970-01-01T00:05:00.000Z","subscriptionId":"sub_1","livemode":false}"#
            ))
        #expect(
            JSONWriter.string(before.entitlements[0].json).hasSuffix(
                #","source":"stripe","subscriptionId":"sub_1","livemode":false}"#))
        #expect(before.entitlements[0].stripeSubscription?.id == "sub_1")
        #expect(ledger.changeInstants(of: account).contains(Timestamp(milliseconds: 300_000)))
    }

    @Test func aCatalogThatSaysSoEndsStripeAccessFromTheRefundOn() throws {
        let ledger = try Self.ledger(refundEndsAccess: [.stripe])
        let account = try #require(ledger.accounts.first)
        #expect(ledger.entitlements(of: account, at: Timestamp(milliseconds: 299_999))?.tier?.name == "plus")
        #expect(ledger.entitlements(of: account, at: Timestamp(milliseconds: 300_000))?.entitlements == [])
    }

    @Test func theCatalogReadsRefundEndsAccessAndRefusesAnUnknownChannel() throws {
        let catalog = try ProductCatalog(json: Array(#"{"refundEndsAccess":["stripe"]}"#.utf8))
        #expect(catalog.refundEndsAccess == [.stripe])
        do {
            _ = try ProductCatalog(json: Array(#"{"refundEndsAccess":["paypal"]}"#.utf8))
            Issue.record("an unknown channel was accepted")
        } catch {
            #expect(error.description.contains("unknown channel 'paypal'"))
        }
    }

    @Test func anAppStoreRefundSinceReversedIsToldOnTheEntitlementItRestored() throws {
        var history = MintHistory(appAccountToken: F.account)
        let purchase = history.purchase(
            "com.example.pro.lifetime", type: .nonConsumable, at: F.time(1), price: 29_990)
        history.refund(purchase, at: F.time(3))
        history.reverseRefund(purchase, at: F.time(5))
        let ledger = try F.ledger(history)
        let account = try #require(ledger.accounts.first)
        #expect(ledger.entitlements(of: account, at: F.time(2))?.entitlements.first?.refundedDate == nil)
        // The newest statement (the reversal) is in force at every instant: access stands, touched.
        #expect(ledger.entitlements(of: account, at: F.time(4))?.entitlements.first?.refundedDate == F.time(3))
        let restored = try #require(ledger.entitlements(of: account, at: F.time(6))?.entitlements.first)
        #expect(restored.refundedDate == F.time(3))
    }
}
