import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Each rule of the ledger on minted, verified histories.
struct EntitlementRuleTests {
    typealias F = LedgerFixtures

    static let monthly = "com.example.plus.monthly"
    static let proMonthly = "com.example.pro.monthly"
    static let lifetime = "com.example.pro.lifetime"
    static let coins = "com.example.coins.100"
    static let pass = "com.example.pass.month"

    @Test func aNonConsumableIsAnEntitlementFromItsPurchaseOn() throws {
        var history = MintHistory(appAccountToken: F.account)
        let purchase = history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(10), price: 29_990)
        let ledger = try F.ledger(history)

        #expect(try F.entitlements(ledger, F.account, at: F.day(9)).entitlements.isEmpty)
        let entitlements = try F.entitlements(ledger, F.account, at: F.day(400)).entitlements
        #expect(entitlements.count == 1)
        #expect(entitlements.first?.productId == Self.lifetime)
        #expect(entitlements.first?.state == .active)
        #expect(entitlements.first?.expiresDate == nil)
        #expect(entitlements.first?.transactionId == purchase.transactionId)
        #expect(entitlements.first?.ownership == .purchased)
    }

    @Test func aRefundedNonConsumableIsNoLongerAnEntitlement() throws {
        var history = MintHistory(appAccountToken: F.account)
        let purchase = history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(10), price: 29_990)
        history.refund(purchase, at: F.time(20), reason: .refundedDueToIssue)
        let ledger = try F.ledger(history)

        #expect(try F.entitlements(ledger, F.account, at: F.day(19)).entitlements.count == 1)
        #expect(try F.entitlements(ledger, F.account, at: F.day(20)).entitlements.isEmpty)
        let revocations = ledger.revocations()
        #expect(revocations.count == 1)
        #expect(revocations.first?.kind == .refund)
        #expect(revocations.first?.state == .revoked)
        #expect(revocations.first?.revocationReason == .refundedDueToIssue)
        #expect(revocations.first?.revocationType == .refundFull)
        #expect(revocations.first?.refundedAmount?.description == "29990")
        #expect(revocations.first?.appAccountToken == F.account)
    }

    @Test func anOlderStatementFedAfterARefundDoesNotRestoreAccess() throws {
        var history = MintHistory(appAccountToken: F.account)
        let purchase = history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(10), price: 29_990)
        history.refund(purchase, at: F.time(20))
        history.restate(purchase, at: F.time(15))  // an export signed before the refund, read last
        let ledger = try F.ledger(history)
        #expect(try F.entitlements(ledger, F.account, at: F.day(30)).entitlements.isEmpty)
        #expect(ledger.revocations().map(\.state) == [.revoked])
    }

    @Test func aReversedRefundRestoresAccess() throws {
        var history = MintHistory(appAccountToken: F.account)
        let purchase = history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(10), price: 29_990)
        history.refund(purchase, at: F.time(20))
        history.reverseRefund(purchase, at: F.time(35))
        let ledger = try F.ledger(history)

        #expect(try F.entitlements(ledger, F.account, at: F.day(40)).entitlements.map(\.productId) == [Self.lifetime])
        let revocations = ledger.revocations()
        #expect(revocations.count == 1)
        #expect(revocations.first?.state == .reversed)
        #expect(revocations.first?.revocationDate.milliseconds == F.day(20))
        #expect(revocations.first?.reversedDate?.milliseconds == F.day(35))
        let summary = RevocationSummary(revocations)
        #expect(summary.reversed == 1)
        #expect(summary.refunds == 0)
        #expect(summary.total.refunded.isEmpty)
    }

    @Test func aSubscriptionIsAnEntitlementUntilItExpires() throws {
        var history = MintHistory(appAccountToken: F.account)
        let first = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        let second = history.renew(first, until: F.time(59))
        history.expire(second)
        let ledger = try F.ledger(history)

        let during = try F.entitlements(ledger, F.account, at: F.day(40)).entitlements
        #expect(during.count == 1)
        #expect(during.first?.transactionId == second.transactionId)
        #expect(during.first?.state == .active)
        #expect(during.first?.expiresDate?.milliseconds == F.day(59))
        #expect(during.first?.subscriptionGroupIdentifier == "21000001")
        #expect(try F.entitlements(ledger, F.account, at: F.day(59)).entitlements.isEmpty)
    }

    @Test func aFreeTrialPeriodOfASubscriptionIsInTrial() throws {
        var history = MintHistory(appAccountToken: F.account)
        history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(7),
            freeTrial: true)
        let ledger = try F.ledger(history)
        let entitlement = try F.entitlements(ledger, F.account, at: F.day(3)).entitlements.first
        #expect(entitlement?.state == .trial)
        #expect(entitlement?.expiresDate?.milliseconds == F.day(7))
    }

    @Test func anUpgradeWithinAGroupLeavesOneSubscription() throws {
        var history = MintHistory(appAccountToken: F.account)
        let basic = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        let pro = history.upgrade(basic, to: Self.proMonthly, at: F.time(10), until: F.time(41), price: 9_990)
        let ledger = try F.ledger(history)

        let before = try F.entitlements(ledger, F.account, at: F.day(5)).entitlements
        #expect(before.map(\.productId) == [Self.monthly])
        let after = try F.entitlements(ledger, F.account, at: F.day(20)).entitlements
        #expect(after.map(\.productId) == [Self.proMonthly])
        #expect(after.first?.transactionId == pro.transactionId)
        #expect(after.first?.originalTransactionId == basic.originalTransactionId)
        #expect(after.first?.expiresDate?.milliseconds == F.day(41))
    }

    @Test func aGracePeriodKeepsAccessUntilItEnds() throws {
        var history = MintHistory(appAccountToken: F.account)
        let first = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        history.failRenewal(first, graceUntil: F.time(47))
        let ledger = try F.ledger(history)

        let inGrace = try F.entitlements(ledger, F.account, at: F.day(40)).entitlements
        #expect(inGrace.count == 1)
        #expect(inGrace.first?.state == .gracePeriod)
        #expect(inGrace.first?.expiresDate?.milliseconds == F.day(47))
        #expect(inGrace.first?.transactionId == first.transactionId)
        #expect(try F.entitlements(ledger, F.account, at: F.day(47)).entitlements.isEmpty)
    }

    @Test func aGracePeriodCutShortByANewerRenewalInfoEndsAccess() throws {
        var history = MintHistory(appAccountToken: F.account)
        let first = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        history.failRenewal(first, graceUntil: F.time(47))
        history.endGracePeriod(first, at: F.time(38))
        let ledger = try F.ledger(history)
        #expect(try F.entitlements(ledger, F.account, at: F.day(40)).entitlements.isEmpty)
    }

    @Test func billingRetryWithoutAGracePeriodGivesNoAccess() throws {
        var history = MintHistory(appAccountToken: F.account)
        let first = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        history.failRenewal(first, graceUntil: nil)
        let ledger = try F.ledger(history)
        #expect(try F.entitlements(ledger, F.account, at: F.day(32)).entitlements.isEmpty)
    }

    @Test func aRefundedSubscriptionEndsAtItsRevocation() throws {
        var history = MintHistory(appAccountToken: F.account)
        let first = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        history.refund(first, at: F.time(12), type: .refundProrated, percentage: 61_290)
        let ledger = try F.ledger(history)
        #expect(try F.entitlements(ledger, F.account, at: F.day(11)).entitlements.count == 1)
        #expect(try F.entitlements(ledger, F.account, at: F.day(12)).entitlements.isEmpty)
        // 4990 × 61290 / 100000 = 3058.371 milliunits
        #expect(ledger.revocations().first?.refundedAmount?.description == "3058.371")
    }

    @Test func aProratedRefundRefundsItsShareExactly() throws {
        var history = MintHistory(appAccountToken: F.account)
        let first = history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(0), price: 9_990)
        let second = history.purchase(Self.coins, type: .consumable, at: F.time(1), price: 999, currency: "EUR")
        let third = history.purchase(Self.coins, type: .consumable, at: F.time(2), price: 999, currency: "EUR")
        history.refund(first, at: F.time(40), reason: .refundedDueToIssue, type: .refundProrated, percentage: 33_333)
        history.refund(second, at: F.time(41), reason: .refundedForOtherReason, type: .refundProrated, percentage: 15)
        history.refund(third, at: F.time(45), reason: .refundedForOtherReason)
        let ledger = try F.ledger(history)

        let amounts = ledger.revocations().map { $0.refundedAmount?.description }
        // 9990 × 33333 / 100000 = 3329.9667; 999 × 15 / 100000 = 0.14985; the full 999
        #expect(amounts == ["3329.9667", "0.14985", "999"])
        let summary = RevocationSummary(ledger.revocations())
        #expect(summary.refunds == 3)
        #expect(summary.total.refunded["USD"]?.description == "3329.9667")
        #expect(summary.total.refunded["EUR"]?.description == "999.14985")
        #expect(summary.byProduct[Self.coins]?.count == 2)
        #expect(summary.byReason["1"]?.count == 1)
        #expect(summary.byReason["0"]?.count == 2)
        #expect(summary.byType["REFUND_PRORATED"]?.count == 2)
        #expect(summary.byType["REFUND_FULL"]?.count == 1)
        #expect(summary.byMonth["2026-02"]?.count == 3)
        #expect(
            JSONWriter.string(summary.json) == """
                {"revocations":3,"refunds":3,"familyRevocations":0,"reversed":0,"refunded":{"EUR":999.14985,"USD":3329.9667},\
                "byProduct":{"com.example.coins.100":{"count":2,"refunded":{"EUR":999.14985},"refundedAmounts":{"EUR":{"amount":"1.00","exact":"0.99914985","unit":"EUR"}}},\
                "com.example.pro.lifetime":{"count":1,"refunded":{"USD":3329.9667},"refundedAmounts":{"USD":{"amount":"3.33","exact":"3.3299667","unit":"USD"}}}},\
                "byReason":{"0":{"count":2,"refunded":{"EUR":999.14985},"refundedAmounts":{"EUR":{"amount":"1.00","exact":"0.99914985","unit":"EUR"}}},\
                "1":{"count":1,"refunded":{"USD":3329.9667},"refundedAmounts":{"USD":{"amount":"3.33","exact":"3.3299667","unit":"USD"}}}},\
                "byType":{"REFUND_FULL":{"count":1,"refunded":{"EUR":999},"refundedAmounts":{"EUR":{"amount":"1.00","exact":"0.999","unit":"EUR"}}},\
                "REFUND_PRORATED":{"count":2,"refunded":{"EUR":0.14985,"USD":3329.9667},"refundedAmounts":{"EUR":{"amount":"0.00","exact":"0.00014985","unit":"EUR"},"USD":{"amount":"3.33","exact":"3.3299667","unit":"USD"}}}},\
                "byMonth":{"2026-02":{"count":3,"refunded":{"EUR":999.14985,"USD":3329.9667},"refundedAmounts":{"EUR":{"amount":"1.00","exact":"0.99914985","unit":"EUR"},"USD":{"amount":"3.33","exact":"3.3299667","unit":"USD"}}}},\
                "refundedAmounts":{"EUR":{"amount":"1.00","exact":"0.99914985","unit":"EUR"},"USD":{"amount":"3.33","exact":"3.3299667","unit":"USD"}}}
                """)
    }

    @Test func aRefundAmountNeverOverflows() {
        let amount = MilliunitAmount.share(of: Int64.max, percentage: 100_000)
        #expect(amount.description == String(Int64.max))
        #expect((amount + amount).description == "18446744073709551614")
        #expect(MilliunitAmount(hundredThousandths: -50_000).description == "-0.5")
    }

    @Test func consumablesAreNeverEntitlementsButTheirRefundsCount() throws {
        var history = MintHistory(appAccountToken: F.account)
        let coins = history.purchase(Self.coins, type: .consumable, at: F.time(1), price: 999)
        history.refund(coins, at: F.time(3))
        var other = MintHistory(appAccountToken: F.otherAccount, firstTransactionId: 2_000_000_000_001_000)
        other.purchase(Self.coins, type: .consumable, at: F.time(1), price: 999)
        let ledger = try F.ledger(history, other)
        #expect(try F.entitlements(ledger, F.account, at: F.day(2)).entitlements.isEmpty)
        #expect(try F.entitlements(ledger, F.otherAccount, at: F.day(2)).entitlements.isEmpty)
        #expect(ledger.revocations().map(\.productId) == [Self.coins])
    }

    @Test func aFamilyRevocationIsNotARefund() throws {
        var purchaser = MintHistory(appAccountToken: F.account)
        let bought = purchaser.purchase(Self.lifetime, type: .nonConsumable, at: F.time(0), price: 29_990)
        var member = MintHistory(firstTransactionId: 2_000_000_000_005_000)
        let shared = member.shareWithFamily(bought, at: F.time(1))
        member.revokeFamilySharing(shared, at: F.time(9))
        let ledger = try F.ledger(purchaser, member)

        // The family member's entitlement is its own, apart from the purchaser's.
        let memberAccount = try F.entitlements(ledger, shared.originalTransactionId, at: F.day(5))
        #expect(memberAccount.account.appAccountToken == nil)
        #expect(memberAccount.entitlements.map(\.ownership) == [.familyShared])
        #expect(try F.entitlements(ledger, F.account, at: F.day(5)).entitlements.map(\.ownership) == [.purchased])

        #expect(try F.entitlements(ledger, shared.originalTransactionId, at: F.day(9)).entitlements.isEmpty)
        #expect(try F.entitlements(ledger, F.account, at: F.day(9)).entitlements.count == 1)
        let revocation = try #require(ledger.revocations().first)
        #expect(revocation.kind == .familyRevocation)
        #expect(revocation.refundedAmount == nil)
        let summary = RevocationSummary(ledger.revocations())
        #expect(summary.refunds == 0)
        #expect(summary.familyRevocations == 1)
        #expect(summary.total.refunded.isEmpty)
    }

    @Test func sandboxDataStaysApartFromProduction() throws {
        var production = MintHistory(environment: .production, appAccountToken: F.account)
        production.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(0), price: 4_990, expires: F.time(31))
        var sandbox = MintHistory(
            environment: .sandbox, appAccountToken: F.account, firstTransactionId: 2_000_000_000_009_000)
        sandbox.purchase(Self.lifetime, type: .nonConsumable, at: F.time(0), price: 29_990)
        let ledger = try F.ledger(sandbox, production)

        let accounts = ledger.accounts(matching: F.account)
        #expect(accounts.map(\.environment) == [.production, .sandbox])
        let all = ledger.entitlements(at: F.at(F.day(5)))
        #expect(all.map(\.account.environment) == [.production, .sandbox])
        #expect(all.map { $0.entitlements.map(\.productId) } == [[Self.monthly], [Self.lifetime]])
    }

    @Test func aNonRenewingSubscriptionLastsTheCatalogLengthOrForever() throws {
        var history = MintHistory(appAccountToken: F.account)
        history.purchase(Self.pass, type: .nonRenewingSubscription, at: F.time(0), price: 2_990)
        let later = history.purchase(Self.pass, type: .nonRenewingSubscription, at: F.time(40), price: 2_990)
        let unbounded = try F.ledger(history)
        #expect(try F.entitlements(unbounded, F.account, at: F.day(35)).entitlements.map(\.expiresDate) == [nil])
        let latest = try F.entitlements(unbounded, F.account, at: F.day(900)).entitlements
        #expect(latest.map(\.transactionId) == [later.transactionId])
        #expect(latest.map(\.state) == [.nonRenewing])

        let catalog = ProductCatalog(lengthDays: [Self.pass: 30])
        let bounded = try F.ledger(history, catalog: catalog)
        #expect(try F.entitlements(bounded, F.account, at: F.day(35)).entitlements.isEmpty)
        let second = try F.entitlements(bounded, F.account, at: F.day(45)).entitlements
        #expect(second.first?.expiresDate?.milliseconds == F.day(70))
        #expect(try F.entitlements(bounded, F.account, at: F.day(70)).entitlements.isEmpty)
    }

    @Test func anAccountWithoutTokenIsItsChain() throws {
        var history = MintHistory()
        let purchase = history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(0), price: 29_990)
        let ledger = try F.ledger(history)
        let account = try #require(ledger.accounts.first)
        #expect(account.appAccountToken == nil)
        #expect(account.originalTransactionId == purchase.originalTransactionId)
        #expect(
            F.output(ledger, at: F.day(1)) == """
                {"environment":"Production","appAccountToken":null,"originalTransactionIds":["\(purchase.originalTransactionId)"],\
                "at":\(F.day(1)),"entitlements":[{"productId":"com.example.pro.lifetime","type":"Non-Consumable",\
                "subscriptionGroupIdentifier":null,"state":"active","expiresDate":null,"expires":null,"ownership":"PURCHASED",\
                "transactionId":"\(purchase.transactionId)","originalTransactionId":"\(purchase.originalTransactionId)",\
                "purchaseDate":\(F.day(0)),"source":"app_store"}]}

                """)
    }

    @Test func payloadsWithoutEntitlementsAreCountedAndIgnored() throws {
        var history = MintHistory(appAccountToken: F.account)
        history.purchase(Self.lifetime, type: .nonConsumable, at: F.time(0), price: 29_990)
        var ledger = try F.ledger(history)
        let app = try F.verifier.verify(
            try F.signer.sign(
                payload: JSONObject([
                    .init("receiptType", "Production"), .init("bundleId", "com.example.app"),
                    .init("appAppleId", 1_234_567_890),
                    .init("receiptCreationDate", .number(String(F.day(0)))),
                ])))
        ledger.add(app)
        #expect(ledger.statistics.ignored == 1)
        #expect(ledger.statistics.notifications == 1)
        #expect(ledger.statistics.transactions == 1)
        #expect(ledger.chainCount == 1)
    }
}
