import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Tiers and trials: the situations the catalog exists for.
struct TierTests {
    typealias F = LedgerFixtures

    static let catalogJSON = """
        {
          "tiers": [
            {"name": "plus", "rank": 10, "products": ["com.example.plus.monthly"]},
            {"name": "pro", "rank": 20, "products": ["com.example.pro.monthly", "com.example.pro.lifetime", "com.example.pro.trial"]}
          ],
          "products": {"com.example.pro.trial": {"trialDays": 14}, "com.example.pass.month": {"lengthDays": 30}}
        }
        """

    @Test func theCatalogReadsItsJSON() throws {
        let catalog = try ProductCatalog(json: Array(Self.catalogJSON.utf8))
        #expect(catalog.tiers.map(\.name) == ["plus", "pro"])
        #expect(catalog.tier(of: "com.example.pro.lifetime")?.rank == 20)
        #expect(catalog.tier(of: "com.example.coins.100") == nil)
        #expect(catalog.trialDays == ["com.example.pro.trial": 14])
        #expect(catalog.lengthDays == ["com.example.pass.month": 30])
    }

    @Test(arguments: [
        ("[]", "the catalog must be a JSON object"),
        ("{\"tier\":[]}", "unknown member 'tier' (expected tiers, products, refundEndsAccess)"),
        ("{\"tiers\":[{\"name\":\"pro\",\"rank\":\"high\",\"products\":[]}]}", "tiers[0].rank must be an integer"),
        ("{\"tiers\":[{\"name\":\"pro\",\"products\":[]}]}", "tiers[0] needs name, rank and products"),
        (
            "{\"tiers\":[{\"name\":\"a\",\"rank\":1,\"products\":[]},{\"name\":\"a\",\"rank\":2,\"products\":[]}]}",
            "tier 'a' is defined twice"
        ),
        (
            "{\"products\":{\"p\":{\"trialDays\":0}}}",
            "products.p.trialDays must be a whole number of days from 1 to 36500"
        ),
        (
            "{\"products\":{\"p\":{\"lengthDays\":\"30\"}}}",
            "products.p.lengthDays must be a whole number of days from 1 to 36500"
        ),
        (
            "{\"products\":{\"p\":{\"trialdays\":3}}}",
            "unknown member 'trialdays' in products.p (expected trialDays, lengthDays)"
        ),
    ])
    func aWrongCatalogIsRefusedWithTheMemberAtFault(json: String, message: String) {
        let error = #expect(throws: ProductCatalog.FormatError.self) { try ProductCatalog(json: Array(json.utf8)) }
        #expect(error?.description == message)
    }

    /// The app sets `appAccountToken` to its own account id; the web shop (Stripe) knows the
    /// same id. The backend takes the higher of both sources.
    @Test func stripeAndInAppPurchaseOnOneAccountGiveItsHighestTier() throws {
        let catalog = try ProductCatalog(json: Array(Self.catalogJSON.utf8))
        var history = MintHistory(appAccountToken: F.account.uppercased())
        let plus = history.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: F.time(0), price: 4_990,
            expires: F.time(31)
        )
        let renewed = history.renew(plus, until: F.time(59))
        var other = MintHistory(appAccountToken: F.otherAccount, firstTransactionId: 2_000_000_000_002_000)
        let lifetime = other.purchase("com.example.pro.lifetime", type: .nonConsumable, at: F.time(3), price: 29_990)
        let ledger = try F.ledger(history, other, catalog: catalog)

        // What the App Store says, joined on the app's own account id (in any case).
        let grant = try #require(try F.entitlements(ledger, F.account.uppercased(), at: F.day(40)).tier)
        #expect(grant.name == "plus")
        #expect(grant.rank == 10)
        #expect(grant.entitlement.transactionId == renewed.transactionId)
        #expect(grant.entitlement.expiresDate?.milliseconds == F.day(59))
        #expect(
            try F.entitlements(ledger, F.otherAccount, at: F.day(40)).tier?.entitlement.transactionId
                == lifetime.transactionId)
        #expect(try F.entitlements(ledger, F.otherAccount, at: F.day(40)).tier?.entitlement.expiresDate == nil)

        // The web shop's records for the same ids: a pro tier bought on the web for the first
        // account, until day 45.
        let stripe: [String: (tier: String, rank: Int, until: Int64)] = [F.account: ("pro", 20, F.day(45))]
        func tier(_ id: String, at instant: Int64) throws -> String? {
            let appStore = try F.entitlements(ledger, id, at: instant).tier.map { ($0.name, $0.rank) }
            let web = stripe[id].flatMap { $0.until > instant ? ($0.tier, $0.rank) : nil }
            return [appStore, web].compactMap { $0 }.max { $0.1 < $1.1 }?.0
        }
        #expect(try tier(F.account, at: F.day(40)) == "pro")
        #expect(try tier(F.account, at: F.day(50)) == "plus")
        #expect(try tier(F.account, at: F.day(60)) == nil)
        #expect(try tier(F.otherAccount, at: F.day(60)) == "pro")

        #expect(ledger.accounts(inTier: "plus", at: F.at(F.day(40))).map(\.appAccountToken) == [F.account])
        #expect(ledger.accounts(inTier: "pro", at: F.at(F.day(40))).map(\.appAccountToken) == [F.otherAccount])
        #expect(ledger.accounts(entitledTo: "com.example.pro.lifetime", at: F.at(F.day(2))).isEmpty)
        #expect(
            ledger.accounts(entitledTo: "com.example.pro.lifetime", at: F.at(F.day(3))).map(\.appAccountToken) == [
                F.otherAccount
            ])
        #expect(
            ledger.accounts(entitledTo: "com.example.plus.monthly", at: F.at(F.day(3))).map(\.appAccountToken) == [
                F.account
            ])
    }

    @Test func aFourteenDayTrialProductGivesItsTierForFourteenDays() throws {
        let catalog = try ProductCatalog(json: Array(Self.catalogJSON.utf8))
        var history = MintHistory(appAccountToken: F.account)
        let trial = history.purchase("com.example.pro.trial", type: .nonConsumable, at: F.time(1, hours: 9), price: 0)
        let ledger = try F.ledger(history, catalog: catalog)

        let during = try F.entitlements(ledger, F.account, at: F.day(14))
        #expect(during.entitlements.map(\.state) == [.trial])
        #expect(during.tier?.name == "pro")
        #expect(during.tier?.entitlement.transactionId == trial.transactionId)
        #expect(during.tier?.entitlement.expiresDate?.milliseconds == F.day(15, hours: 9))
        #expect(try F.entitlements(ledger, F.account, at: F.day(15, hours: 9) - 1).tier?.name == "pro")
        let after = try F.entitlements(ledger, F.account, at: F.day(15, hours: 9))
        #expect(after.entitlements.isEmpty)
        #expect(after.tier == nil)
    }

    @Test func aPurchaseDuringATrialOutranksItsEnd() throws {
        let catalog = try ProductCatalog(json: Array(Self.catalogJSON.utf8))
        var history = MintHistory(appAccountToken: F.account)
        history.purchase("com.example.pro.trial", type: .nonConsumable, at: F.time(0), price: 0)
        let lifetime = history.purchase("com.example.pro.lifetime", type: .nonConsumable, at: F.time(10), price: 29_990)
        let ledger = try F.ledger(history, catalog: catalog)
        let account = try F.entitlements(ledger, F.account, at: F.day(12))
        #expect(account.entitlements.map(\.state) == [.active, .trial])
        // Same rank: the grant that does not end wins.
        #expect(account.tier?.entitlement.transactionId == lifetime.transactionId)
        #expect(account.tier?.entitlement.expiresDate == nil)
    }
}
