import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchStripe

/// Minted stories of different accounts and seeds share no id, so one ledger fed all of them
/// answers for each account as a ledger fed only that account's story.
@Suite struct MintedStoriesLedgerTests {
    typealias F = LedgerFixtures
    static let secret = "whsec_minted_stories"
    static let date = MintDate.parse("2026-06-01T00:00:00Z")!

    static func ledger(_ stories: [MintStory], catalog: ProductCatalog) throws -> EntitlementLedger {
        var configuration = StripeWebhookVerifier.Configuration(secrets: [secret])
        configuration.tolerance = nil
        let stripeVerifier = try StripeWebhookVerifier(configuration: configuration)
        let stripeSigner = try MintStripeSigner(secrets: [secret])
        var ledger = EntitlementLedger(catalog: catalog)
        for story in stories {
            for delivery in try story.deliveries(signer: F.signer, stripeSigner: stripeSigner) {
                switch delivery.content {
                case .appStore(let token): ledger.add(try F.verifier.verify(token))
                case .stripe(let stripe): ledger.add(try stripeVerifier.verify(stripe))
                }
            }
        }
        return ledger
    }

    @Test func storiesOfTwoSeedsInOneLedgerAnswerAsEachAlone() throws {
        let generators = [MintStoryGenerator(seed: 7, date: Self.date), MintStoryGenerator(seed: 11, date: Self.date)]
        // One catalog: each seed's Stripe prices beside the App Store products.
        var tiers: [ProductCatalog.Tier] = []
        for (rank, name) in [(10, "plus"), (20, "pro")] {
            let index = rank / 10 - 1
            let app = [MintStoryGenerator.appProducts.plus, MintStoryGenerator.appProducts.pro][index]
            tiers.append(.init(name: name, rank: rank, products: [app] + generators.map { $0.stripe.prices[index].id }))
        }
        let catalog = ProductCatalog(tiers: tiers)
        let stories = generators.flatMap { generator in (0..<10).map { generator.story($0) } }
        let both = try Self.ledger(stories, catalog: catalog)
        #expect(both.notificationDeliveries.retries == 0 && both.notificationDeliveries.duplicates == 0)
        var accounts: [AccountKey] = []
        for story in stories {
            let alone = try Self.ledger([story], catalog: catalog)
            #expect(alone.accounts.count == 1)
            for account in alone.accounts {
                #expect(both.entitlements(of: account, at: Self.date) == alone.entitlements(of: account, at: Self.date))
                #expect(alone.entitlements(of: account, at: Self.date)?.tier != nil, "\(account)")
                accounts.append(account)
            }
        }
        #expect(Set(both.accounts) == Set(accounts) && accounts.count == 20)
    }

    @Test func twoAccountsOfTheTwoChannelStoryInOneLedgerAnswerAsEachAlone() throws {
        let stripeSigner = try MintStripeSigner(secrets: [Self.secret])
        let one = try MintStory.twoChannel(signer: F.signer, stripeSigner: stripeSigner)
        let other = try MintStory.twoChannel(
            signer: F.signer, stripeSigner: stripeSigner, account: "0e9d5c1a-2b3f-4c6d-8e7f-9a0b1c2d3e4f")
        let catalog = ProductCatalog(tiers: [
            .init(name: "plus", rank: 1, products: [one.webPlus.id]),
            .init(name: "pro", rank: 2, products: [one.appPro]),
        ])
        let both = try Self.ledger([one.story, other.story], catalog: catalog)
        #expect(both.accounts.count == 2)
        for scenario in [one, other] {
            let alone = try Self.ledger([scenario.story], catalog: catalog)
            let account = try #require(alone.accounts.first)
            for moment in scenario.moments.all {
                let instant = Timestamp(milliseconds: moment.milliseconds + 5_000)
                #expect(both.entitlements(of: account, at: instant) == alone.entitlements(of: account, at: instant))
            }
        }
    }
}
