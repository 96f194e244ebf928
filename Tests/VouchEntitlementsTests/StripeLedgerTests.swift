import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchStripe

/// Stripe subscriptions beside App Store data in one ledger and one store: the two-channel
/// story's tier at each of its moments (written out here by hand), any order and split, the
/// statuses, the account rule, refunds in their currency's units, and a third source.
@Suite struct StripeLedgerTests {
    typealias F = LedgerFixtures
    static let secret = "whsec_ledger_test"
    static let stripeVerifier: StripeWebhookVerifier = {
        var configuration = StripeWebhookVerifier.Configuration(secrets: [secret])
        configuration.tolerance = nil
        return try! StripeWebhookVerifier(configuration: configuration)
    }()

    static func scenario(_ api: MintStripe.APIVersion) throws -> MintStory.TwoChannel {
        var stripe = MintStripe(seed: 11, date: Date(timeIntervalSince1970: 0))
        stripe.apiVersion = api
        return try MintStory.twoChannel(
            signer: F.signer, stripeSigner: try MintStripeSigner(secrets: [secret]), stripe: stripe)
    }

    static func catalog(_ scenario: MintStory.TwoChannel) -> ProductCatalog {
        ProductCatalog(tiers: [
            .init(name: "plus", rank: 1, products: [scenario.webPlus.id]),
            .init(name: "pro", rank: 2, products: [scenario.appPro]),
        ])
    }

    /// A delivery verified on its channel.
    enum Verified {
        case appStore(VerifiedPayload)
        case stripe(VerifiedStripeEvent)
    }

    static func verify(_ delivery: MintStory.Delivery) throws -> Verified {
        switch delivery.content {
        case .appStore(let token): .appStore(try F.verifier.verify(token))
        case .stripe(let stripe): .stripe(try stripeVerifier.verify(stripe))
        }
    }

    static func add(_ verified: Verified, to ledger: inout EntitlementLedger) {
        switch verified {
        case .appStore(let payload): ledger.add(payload)
        case .stripe(let event): ledger.add(event)
        }
    }

    /// What a server knows at `instant`: every delivery made by then.
    static func ledger(_ scenario: MintStory.TwoChannel, through instant: Timestamp, reversed: Bool = false) throws
        -> EntitlementLedger
    {
        var ledger = EntitlementLedger(catalog: catalog(scenario))
        let known = scenario.deliveries.filter { $0.instant <= instant }
        for delivery in reversed ? known.reversed() : known { add(try verify(delivery), to: &ledger) }
        return ledger
    }

    /// The account's tier a moment after each step (its events are created within 4 seconds
    /// of it), as the story's table says: name, source, state, and whether it ends at the
    /// Stripe period's end.
    @Test(arguments: MintStripe.APIVersion.allCases)
    func theTwoChannelStoryGivesTheExpectedTierAtEachMoment(api: MintStripe.APIVersion) throws {
        let scenario = try Self.scenario(api)
        let moments = scenario.moments
        let expected: [(Timestamp, String?, EntitlementSource?, Entitlement.State?)] = [
            (moments.webPlus, "plus", .stripe, .active),
            (moments.appPro, "pro", .appStore, .active),
            (moments.cardFailed, "pro", .appStore, .active),
            (moments.appRefund, "plus", .stripe, .pastDue),
            (moments.cardRetried, "plus", .stripe, .active),
            (moments.cancelRequested, "plus", .stripe, .active),
            (moments.webPeriodEnd, nil, nil, nil),
        ]
        let account = AccountKey(environment: .sandbox, appAccountToken: UUID(uuidString: scenario.story.account)!)
        for (moment, name, source, state) in expected {
            let instant = Timestamp(milliseconds: moment.milliseconds + 5_000)
            for reversed in [false, true] {
                let ledger = try Self.ledger(scenario, through: instant, reversed: reversed)
                #expect(ledger.accounts == [account], "\(moment.iso8601)")
                let answer = try #require(ledger.entitlements(of: account, at: instant))
                #expect(answer.tier?.name == name, "\(moment.iso8601)")
                #expect(answer.tier?.entitlement.source == source, "\(moment.iso8601)")
                #expect(answer.tier?.entitlement.state == state, "\(moment.iso8601)")
                if source == .stripe {
                    #expect(answer.tier?.entitlement.transactionId == scenario.webSubscription)
                    #expect(answer.tier?.entitlement.productId == scenario.webPlus.id)
                }
            }
        }
        // Once canceled at the period's end, Plus ends exactly then.
        let canceled = try Self.ledger(
            scenario, through: Timestamp(milliseconds: moments.cancelRequested.milliseconds + 5_000))
        let tier = canceled.entitlements(of: account, at: moments.cancelRequested)?.tier
        #expect(tier?.entitlement.expiresDate == moments.webPeriodEnd)
        // While the card fails, Stripe's Plus stays valid, past due, under the App Store's Pro.
        let failing = try Self.ledger(
            scenario, through: Timestamp(milliseconds: moments.cardFailed.milliseconds + 5_000))
        let entitlements = failing.entitlements(of: account, at: moments.cardFailed)?.entitlements ?? []
        #expect(entitlements.map(\.state).sorted { $0.rawValue < $1.rawValue } == [.active, .pastDue])
    }

    /// The same deliveries in any order, split across ledgers that are merged, or added one by
    /// one to a store, give the same answer for every account and instant, byte for byte.
    @Test func anyOrderOrSplitAndTheStoreAnswerAlike() throws {
        let scenario = try Self.scenario(.basil)
        let verified = try scenario.deliveries.map(Self.verify)
        let catalog = Self.catalog(scenario)
        var inOrder = EntitlementLedger(catalog: catalog)
        for item in verified { Self.add(item, to: &inOrder) }
        let instants = scenario.moments.all.map { Timestamp(milliseconds: $0.milliseconds + 5_000) }
        func answers(_ ledger: EntitlementLedger) -> [String] {
            instants.map { instant in
                ledger.entitlements(at: instant).map { JSONWriter.string($0.json(at: instant, includeTier: true)) }
                    .joined(separator: "\n")
            } + ledger.revocations().map { JSONWriter.string($0.json) }
        }
        let expected = answers(inOrder)
        #expect(expected.joined().contains(#""source":"stripe""#))

        var random = SystemRandomNumberGenerator()
        for _ in 0..<5 {
            let shuffled = (verified + verified.prefix(4)).shuffled(using: &random)
            let cut = Int.random(in: 0...shuffled.count, using: &random)
            var first = EntitlementLedger(catalog: catalog)
            var second = EntitlementLedger(catalog: catalog)
            for item in shuffled[..<cut] { Self.add(item, to: &first) }
            for item in shuffled[cut...] { Self.add(item, to: &second) }
            first.merge(second)
            #expect(answers(first) == expected)
        }

        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-stripe-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let store = try LedgerStore(path: path, catalog: catalog)
            for item in verified.reversed() {
                switch item {
                case .appStore(let payload): try store.add(payload)
                case .stripe(let event): try store.add(event)
                }
            }
            let again = try store.add(contentsOf: inOrder)
            #expect(again.otherRecords == 0 && again.newTransactions == 0 && again.changedTransactions == 0)
        }
        let store = try LedgerStore(path: path, access: .readOnly, catalog: catalog)
        #expect(answers(try store.ledger()) == expected)
        let account = try #require(try store.accounts(matching: UUID(uuidString: scenario.story.account)!).first)
        for instant in instants {
            #expect(try store.entitlements(of: account, at: instant) == inOrder.entitlements(of: account, at: instant))
        }
        #expect(try store.accounts(matching: scenario.webSubscription) == [account])
        #expect(try store.revocations() == inOrder.revocations())
        #expect(try store.statistics().stripeSubscriptions == 1)
    }

    /// Each status: active, trialing and past_due grant until the period's end; the others do not.
    @Test(
        arguments: [
            ("active", Entitlement.State.active), ("trialing", .trial), ("past_due", .pastDue), ("canceled", nil),
            ("unpaid", nil), ("incomplete", nil), ("incomplete_expired", nil), ("paused", nil),
        ] as [(String, Entitlement.State?)])
    func aStatusGrantsOrNot(status: String, state: Entitlement.State?) throws {
        let ledger = try Self.ledger([Self.subscription(status: status, created: 100, periodEnd: 1_000)])
        let account = AccountKey(environment: .sandbox, appAccountToken: Self.account)
        let answer = try #require(ledger.entitlements(of: account, at: Timestamp(milliseconds: 200_000)))
        #expect(answer.entitlements.first?.state == state)
        #expect(answer.entitlements.first?.expiresDate == (state == nil ? nil : Timestamp(milliseconds: 1_000_000)))
        // After the period's end, nothing.
        #expect(ledger.entitlements(of: account, at: Timestamp(milliseconds: 1_000_000))?.entitlements == [])
    }

    /// The newest event wins by `created`, then by event id; a payment newer than the
    /// subscription's statement decides its status.
    @Test func theNewestEventWinsAndATieIsBrokenByTheEventId() throws {
        let account = AccountKey(environment: .sandbox, appAccountToken: Self.account)
        let at = Timestamp(milliseconds: 300_000)
        let active = Self.subscription(status: "active", created: 200, periodEnd: 1_000, eventId: "evt_a")
        let canceled = Self.subscription(status: "canceled", created: 200, periodEnd: 1_000, eventId: "evt_b")
        for order in [[active, canceled], [canceled, active]] {
            #expect(try Self.ledger(order).entitlements(of: account, at: at)?.entitlements == [])
        }
        let older = Self.subscription(status: "canceled", created: 100, periodEnd: 1_000)
        #expect(try Self.ledger([active, older]).entitlements(of: account, at: at)?.entitlements.count == 1)
        let failed = Self.invoice("invoice.payment_failed", created: 250, periodEnd: 1_000)
        #expect(
            try Self.ledger([failed, active]).entitlements(of: account, at: at)?.entitlements.first?.state == .pastDue)
        let paid = Self.invoice("invoice.paid", created: 260, periodEnd: 2_000)
        let renewed = try Self.ledger([paid, failed, active]).entitlements(
            of: account, at: Timestamp(milliseconds: 1_500_000))
        #expect(renewed?.entitlements.first?.state == .active)
        #expect(renewed?.entitlements.first?.expiresDate == Timestamp(milliseconds: 2_000_000))
    }

    /// A subscription without the account in its metadata takes the Checkout session's
    /// `client_reference_id`; another metadata key may name it.
    @Test func theAccountComesFromTheMetadataOrTheCheckoutSession() throws {
        let bare = Self.subscription(status: "active", created: 100, periodEnd: 1_000, metadata: [:])
        let alone = try Self.ledger([bare])
        #expect(alone.accounts == [AccountKey(environment: .sandbox, originalTransactionId: "sub_1")])
        let session = Self.event(
            "checkout.session.completed", created: 90,
            object: [
                "id": "cs_1", "object": "checkout.session", "subscription": "sub_1",
                "client_reference_id": .string(Self.account.uuidString), "metadata": [:],
            ])
        for order in [[bare, session], [session, bare]] {
            #expect(
                try Self.ledger(order).accounts == [AccountKey(environment: .sandbox, appAccountToken: Self.account)])
        }
        let custom = Self.subscription(status: "active", created: 100, periodEnd: 1_000, metadata: ["user": "u-42"])
        var ledger = EntitlementLedger()
        ledger.add(try Self.verified(custom), accountKey: "user")
        #expect(ledger.accounts == [AccountKey(environment: .sandbox, appAccountToken: "u-42")])
        #expect(ledger.accounts(matching: "sub_1") == ledger.accounts)
    }

    /// `charge.refunded`: what was refunded in units of its currency (cents of USD, yen of JPY),
    /// full or partial, with the subscription of the customer.
    @Test(arguments: [
        ("usd", 999, 999, "9.99 USD", RevocationType.refundFull), ("jpy", 1_200, 500, "500 JPY", .refundProrated),
    ])
    func aRefundedChargeIsARefundInItsCurrency(
        currency: String, amount: Int64, refunded: Int64, text: String, type: RevocationType
    ) throws {
        let charge = Self.event(
            "charge.refunded", created: 300,
            object: [
                "id": "ch_1", "object": "charge", "amount": .number(String(amount)),
                "amount_refunded": .number(String(refunded)), "currency": .string(currency), "customer": "cus_1",
                "metadata": [:],
            ])
        let ledger = try Self.ledger([Self.subscription(status: "active", created: 100, periodEnd: 1_000), charge])
        let revocation = try #require(ledger.revocations().first)
        #expect(revocation.source == .stripe)
        #expect(revocation.refunded?.description == text)
        #expect(revocation.revocationType == type)
        #expect(revocation.originalTransactionId == "sub_1")
        #expect(revocation.appAccountToken == Self.account.uuidString.lowercased())
        #expect(
            ledger.entitlements(of: ledger.accounts[0], at: Timestamp(milliseconds: 400_000))?.entitlements.count == 1)
    }

    /// A third source through the public grant type: merged with the others by rank, the
    /// newest statement of a grant winning.
    @Test func aGrantOfAnotherSourceTakesPartInTheSameMerge() throws {
        let catalog = ProductCatalog(tiers: [
            .init(name: "plus", rank: 1, products: ["price_plus"]), .init(name: "pro", rank: 2, products: ["pro"]),
        ])
        var ledger = EntitlementLedger(catalog: catalog)
        ledger.add(try Self.verified(Self.subscription(status: "active", created: 100, periodEnd: 1_000)))
        let account = AccountKey(environment: .sandbox, appAccountToken: Self.account)
        var grant = EntitlementGrant(
            source: EntitlementSource(rawValue: "google_play"), id: "GPA.1", account: account, productId: "pro",
            startDate: Timestamp(milliseconds: 150_000), expiresDate: Timestamp(milliseconds: 500_000),
            signedDate: Timestamp(milliseconds: 150_000))
        ledger.add(grant)
        #expect(ledger.entitlements(of: account, at: Timestamp(milliseconds: 200_000))?.tier?.name == "pro")
        #expect(ledger.entitlements(of: account, at: Timestamp(milliseconds: 100_000))?.tier?.name == "plus")
        // Ended early by a newer statement; an older one changes nothing.
        grant.expiresDate = Timestamp(milliseconds: 180_000)
        grant.signedDate = Timestamp(milliseconds: 180_000)
        ledger.add(grant)
        var stale = grant
        stale.expiresDate = nil
        stale.signedDate = Timestamp(milliseconds: 170_000)
        ledger.add(stale)
        let after = ledger.entitlements(of: account, at: Timestamp(milliseconds: 200_000))
        #expect(after?.tier?.name == "plus")
        #expect(after?.tier?.entitlement.source == .stripe)
        #expect(ledger.accounts(withTransactionId: "GPA.1") == [account])
    }

    // MARK: Events made here

    static let account = UUID(uuidString: "7F0A4C2E-3B5D-4E6F-8A9B-0C1D2E3F4A5B")!

    static func event(_ type: String, created: Int64, object: JSONObject, eventId: String? = nil) -> StripeDelivery {
        let body = JSONWriter.string(
            .object([
                "id": .string(eventId ?? "evt_\(type)_\(created)"), "object": "event",
                "api_version": "2025-03-31.basil", "created": .number(String(created)), "livemode": false,
                "type": .string(type), "data": .object(["object": .object(object)]),
            ]))
        return try! MintStripeSigner(secrets: [secret]).delivery(body: Array(body.utf8), signedAt: created)
    }

    static func subscription(
        status: String, created: Int64, periodEnd: Int64, eventId: String? = nil,
        metadata: JSONObject? = nil
    ) -> StripeDelivery {
        event(
            "customer.subscription.updated", created: created,
            object: [
                "id": "sub_1", "object": "subscription", "customer": "cus_1", "status": .string(status),
                "start_date": 50,
                "metadata": .object(metadata ?? ["account_id": .string(account.uuidString)]),
                "items": [
                    "object": "list",
                    "data": [
                        [
                            "id": "si_1", "object": "subscription_item",
                            "price": ["id": "price_plus", "object": "price", "product": "prod_plus"],
                            "current_period_start": 50, "current_period_end": .number(String(periodEnd)),
                        ]
                    ],
                ],
            ], eventId: eventId)
    }

    static func invoice(_ type: String, created: Int64, periodEnd: Int64) -> StripeDelivery {
        event(
            type, created: created,
            object: [
                "id": .string("in_\(created)"), "object": "invoice", "customer": "cus_1",
                "parent": ["subscription_details": ["subscription": "sub_1", "metadata": [:]]],
                "lines": ["data": [["period": ["start": 0, "end": .number(String(periodEnd))]]]],
            ])
    }

    static func verified(_ delivery: StripeDelivery) throws -> VerifiedStripeEvent {
        try stripeVerifier.verify(delivery)
    }

    static func ledger(_ deliveries: [StripeDelivery]) throws -> EntitlementLedger {
        var ledger = EntitlementLedger(
            catalog: ProductCatalog(tiers: [.init(name: "plus", rank: 1, products: ["price_plus"])]))
        for delivery in deliveries { ledger.add(try verified(delivery)) }
        return ledger
    }
}
