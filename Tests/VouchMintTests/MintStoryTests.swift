import Foundation
import Testing
import Vouch
import VouchMint
import VouchStripe
import VouchTestSupport

/// One account on two channels: the App Store data verifies with the minted authority, the
/// Stripe deliveries with the endpoint secret, in order, one account id on both, each Stripe
/// step with its events.
@Suite struct MintStoryTests {
    typealias Support = MintTestSupport
    static let secret = "whsec_story_test"
    static let account = "3f2b8c1e-7a4d-4e9b-9c05-1d6e2a8f4b70"

    static func instant(_ text: String) -> Timestamp { Timestamp(MintDate.parse(text)!) }

    static func scenario(_ api: MintStripe.APIVersion = .basil) throws -> MintStory.TwoChannel {
        var stripe = MintStripe(seed: 3, date: Date(timeIntervalSince1970: 0))
        stripe.apiVersion = api
        return try MintStory.twoChannel(
            signer: Support.signer, stripeSigner: try MintStripeSigner(secrets: [secret]), stripe: stripe)
    }

    static let appStoreVerifier: Verifier = {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try! Support.authority.anchorCertificate()]
        return try! Verifier(configuration: configuration)
    }()

    static let stripeVerifier: StripeWebhookVerifier = {
        var configuration = StripeWebhookVerifier.Configuration(secrets: [secret])
        configuration.tolerance = nil
        return try! StripeWebhookVerifier(configuration: configuration)
    }()

    /// Each delivery verified: the App Store payload, or the Stripe event.
    enum Verified {
        case appStore(VerifiedPayload)
        case stripe(StripeEvent)
    }

    static func verify(_ deliveries: [MintStory.Delivery]) throws -> [Verified] {
        try deliveries.map { delivery in
            switch delivery.content {
            case .appStore(let token): .appStore(try appStoreVerifier.verify(token))
            case .stripe(let stripe): .stripe(try stripeVerifier.verify(stripe).event)
            }
        }
    }

    @Test(arguments: MintStripe.APIVersion.allCases)
    func everyDeliveryVerifiesOnItsChannelInTheOrderOfItsInstant(api: MintStripe.APIVersion) throws {
        let scenario = try Self.scenario(api)
        let verified = try Self.verify(scenario.deliveries)
        #expect(scenario.deliveries.count == 2 + 9)
        for (delivery, payload) in zip(scenario.deliveries, verified) {
            switch payload {
            case .appStore(let payload):
                #expect(payload.payload["signedDate"]?.int64Value == delivery.instant.milliseconds)
            case .stripe(let event):
                #expect(event.created == delivery.instant)
                #expect(event.apiVersion == api.rawValue)
            }
        }
        let instants = scenario.deliveries.map(\.instant)
        #expect(instants == instants.sorted())
        #expect(instants.first == scenario.moments.webPlus && instants.last == scenario.moments.webPeriodEnd)
        let moments = scenario.moments.all
        #expect(zip(moments, moments.dropFirst()).allSatisfy { $0 < $1 }, "\(moments)")
        // The App Store side dated as Apple dates it: Pro refunded before it expires.
        for item in scenario.story.appStore.items {
            guard case .notification(let outer, let transaction, let renewal) = item else {
                Issue.record("an App Store item that is not a notification")
                continue
            }
            #expect(MintDateOrder.notification(outer, transaction: transaction, renewal: renewal) == [])
            let expires = try #require(transaction?["expiresDate"]?.int64Value)
            #expect(scenario.moments.appRefund.milliseconds < expires)
        }
        // Each line is what `vouch` reads: a token, or a stored delivery.
        for delivery in scenario.deliveries {
            if case .stripe(let stripe) = delivery.content {
                #expect(Array(delivery.line.utf8) == stripe.storedJSON)
                #expect(!delivery.line.contains("\n"))
            } else {
                #expect(delivery.line.split(separator: ".").count == 3)
            }
        }
    }

    @Test func theAccountIdIsTheSameOnBothChannels() throws {
        let scenario = try Self.scenario()
        #expect(scenario.story.account == Self.account)
        var appStore = 0
        var stripe = 0
        for payload in try Self.verify(scenario.deliveries) {
            switch payload {
            case .appStore(let notification):
                for nested in notification.nested {
                    #expect(nested.payload.payload["appAccountToken"]?.stringValue == Self.account)
                    appStore += 1
                }
            case .stripe(let event):
                if let subscription = event.subscription {
                    #expect(subscription.metadata["account_id"] == Self.account)
                } else if let session = event.checkoutSession {
                    #expect(session.clientReferenceId == Self.account && session.metadata["account_id"] == Self.account)
                } else if let invoice = event.invoice {
                    #expect(invoice.subscriptionMetadata["account_id"] == Self.account)
                } else {
                    Issue.record("an event of no account: \(event.type)")
                }
                stripe += 1
            }
        }
        #expect(appStore == 4 && stripe == 9)
    }

    @Test func eachStepHasItsEventsAndStatusesAtItsInstant() throws {
        let scenario = try Self.scenario()
        let moments = scenario.moments
        func at(_ moment: Timestamp, _ seconds: Int64) -> Timestamp {
            Timestamp(milliseconds: moment.milliseconds + seconds * 1000)
        }
        var steps: [String] = []
        for payload in try Self.verify(scenario.deliveries) {
            switch payload {
            case .appStore(let notification):
                let transaction = try #require(notification.nested(.signedTransactionInfo))
                #expect(transaction.payload["productId"]?.stringValue == scenario.appPro)
                #expect(transaction.payload["transactionId"]?.stringValue == scenario.appTransaction)
                steps.append(
                    "\(notification.payload["notificationType"]?.stringValue ?? "") \(notification.payload["signedDate"]?.int64Value ?? 0)"
                )
            case .stripe(let event):
                let state =
                    event.subscription.map { "\($0.status)\($0.cancelAtPeriodEnd ? " cancel" : "")" }
                    ?? event.invoice?.status ?? event.checkoutSession?.status ?? ""
                if let subscription = event.subscription, subscription.id != scenario.webSubscription {
                    Issue.record("another subscription: \(subscription.id)")
                }
                steps.append("\(event.type) \(state) \(event.created.milliseconds)")
            }
        }
        #expect(
            steps == [
                "customer.subscription.created active \(moments.webPlus.milliseconds)",
                "invoice.paid paid \(at(moments.webPlus, 2).milliseconds)",
                "checkout.session.completed complete \(at(moments.webPlus, 4).milliseconds)",
                "SUBSCRIBED \(moments.appPro.milliseconds)",
                "invoice.payment_failed open \(moments.cardFailed.milliseconds)",
                "customer.subscription.updated past_due \(at(moments.cardFailed, 1).milliseconds)",
                "REFUND \(moments.appRefund.milliseconds)",
                "invoice.paid paid \(moments.cardRetried.milliseconds)",
                "customer.subscription.updated active \(at(moments.cardRetried, 1).milliseconds)",
                "customer.subscription.updated active cancel \(moments.cancelRequested.milliseconds)",
                "customer.subscription.deleted canceled \(moments.webPeriodEnd.milliseconds)",
            ])
        #expect(moments.webPlus == Self.instant("2025-01-06T09:00:00Z"))
        #expect(moments.appRefund == Self.instant("2025-02-07T12:00:00Z"))
        #expect(moments.webPeriodEnd == Self.instant("2025-03-06T09:00:00Z"))
    }

    @Test(arguments: MintStripe.APIVersion.allCases)
    func theWebPeriodEndsFollowItsRenewals(api: MintStripe.APIVersion) throws {
        let scenario = try Self.scenario(api)
        let firstEnd = Self.instant("2025-02-06T09:00:00Z")
        let secondEnd = Self.instant("2025-03-06T09:00:00Z")
        var periodEnds: [Timestamp?] = []
        var invoiced: [Timestamp?] = []
        for case .stripe(let event) in try Self.verify(scenario.deliveries) {
            if let subscription = event.subscription {
                periodEnds.append(subscription.currentPeriodEnd)
                // Where the period is: on the items since 2025-03-31.basil, on the subscription before.
                #expect((subscription.subscriptionPeriodEnd == nil) == (api == .basil))
                if subscription.status == .canceled {
                    #expect(subscription.endedAt == secondEnd && subscription.cancelAt == secondEnd)
                }
            }
            if let invoice = event.invoice { invoiced.append(invoice.periodEnd) }
        }
        #expect(periodEnds == [firstEnd, secondEnd, secondEnd, secondEnd, secondEnd])
        #expect(invoiced == [firstEnd, secondEnd, secondEnd])
        #expect(scenario.moments.cardFailed == Timestamp(milliseconds: firstEnd.milliseconds + 3_600_000))
        #expect(scenario.moments.webPeriodEnd == secondEnd)
    }

    @Test func aRenewalStartsThePeriodAtThePreviousEndAndARefundIsOfTheLastPayment() throws {
        var stripe = MintStripe(date: Date(timeIntervalSince1970: 0))
        stripe.apiVersion = .acacia
        var web = MintStripeHistory(account: Self.account, generator: stripe)
        let pro = web.prices[1]
        let bought = web.subscribe(pro, at: Self.instant("2025-01-31T10:00:00Z"))
        #expect(bought.currentPeriodEnd == Self.instant("2025-02-28T10:00:00Z"))
        let renewed = web.renew(bought, at: Self.instant("2025-02-28T10:30:00Z"))
        #expect(renewed.currentPeriodStart == bought.currentPeriodEnd)
        #expect(renewed.currentPeriodEnd == Self.instant("2025-03-28T10:00:00Z") && renewed.status == .active)
        web.refund(renewed, at: Self.instant("2025-03-02T08:00:00Z"), amount: 500)
        let deliveries = try web.deliveries(signer: try MintStripeSigner(secrets: [Self.secret]))
        let events = try deliveries.map { try Self.stripeVerifier.verify($0).event }
        #expect(
            events.map(\.type.rawValue) == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed", "invoice.paid",
                "customer.subscription.updated", "charge.refunded",
            ])
        let charge = try #require(events.last?.object)
        #expect(charge["object"] == "charge" && charge["customer"]?.stringValue == web.customer)
        #expect(charge["amount"] == .number(String(pro.amount)) && charge["amount_refunded"] == 500)
        #expect(charge["refunded"] == false)
        #expect(charge["invoice"]?.stringValue == events[3].invoice?.id)
        #expect(events.last?.created == Self.instant("2025-03-02T08:00:00Z"))
        #expect(Set(events.compactMap { $0.subscription?.customer ?? $0.invoice?.customer }) == [web.customer])
    }

    @Test func stepsOutOfOrderAreRefusedWhenSigned() throws {
        let signer = try MintStripeSigner(secrets: [Self.secret])
        let start = Self.instant("2025-01-06T09:00:00Z")
        func later(_ days: Int64) -> Timestamp { Timestamp(milliseconds: start.milliseconds + days * 86_400_000) }
        func refusal(_ steps: (inout MintStripeHistory, MintStripeHistory.Subscription) -> Void) -> MintError? {
            var web = MintStripeHistory(account: Self.account)
            let plus = web.subscribe(web.prices[0], at: start)
            steps(&web, plus)
            do {
                _ = try web.deliveries(signer: signer)
                return nil
            } catch {
                return error
            }
        }
        let cases: [(String, (inout MintStripeHistory, MintStripeHistory.Subscription) -> Void)] = [
            ("renewal of sub_", { web, plus in web.renew(plus, at: later(20)) }),
            ("failed renewal of sub_", { web, plus in web.failRenewal(plus, at: later(70)) }),
            ("payment recovery of sub_", { web, plus in web.recoverPayment(plus, at: later(2)) }),
            ("end of sub_", { web, plus in web.end(plus) }),
            (
                "cancellation of sub_",
                { web, plus in
                    web.cancelAtPeriodEnd(plus, at: later(3))
                    web.cancelAtPeriodEnd(plus, at: later(4))
                }
            ),
            (
                "renewal of sub_",
                { web, plus in
                    web.cancelAtPeriodEnd(plus, at: later(3))
                    web.renew(plus, at: later(31))
                }
            ),
            (
                "before the step taken before it",
                { web, plus in
                    web.cancelAtPeriodEnd(plus, at: later(5))
                    web.refund(plus, at: later(4))
                }
            ),
            (
                "not a whole second",
                { web, plus in web.refund(plus, at: Timestamp(milliseconds: later(2).milliseconds + 1)) }
            ),
            ("refund of sub_", { web, plus in web.refund(plus, at: later(2), amount: plus.price.amount + 1) }),
            (
                "not a subscription of this history",
                { web, plus in
                    var other = MintStripeHistory(account: Self.account, generator: MintStripe(seed: 8, date: Date()))
                    web.renew(other.subscribe(other.prices[0], at: start), at: later(31))
                }
            ),
        ]
        for (step, steps) in cases {
            let error = refusal(steps)
            #expect(error?.code == .unsupported, "\(step)")
            #expect(error?.reason.contains(step) == true, "\(step): \(error?.reason ?? "accepted")")
        }
        #expect(
            refusal { web, plus in
                let pastDue = web.failRenewal(plus, at: later(31))
                web.recoverPayment(pastDue, at: later(33))
                web.refund(pastDue, at: later(34))
                web.end(web.cancelAtPeriodEnd(pastDue, at: later(40)))
            } == nil)
    }

    @Test func aStoryOfTwoAccountsIsRefused() throws {
        var story = MintStory(account: Self.account)
        story.web = MintStripeHistory(account: "0e9d5c1a-2b3f-4c6d-8e7f-9a0b1c2d3e4f")
        do {
            _ = try story.deliveries(signer: Support.signer, stripeSigner: try MintStripeSigner(secrets: [Self.secret]))
            Issue.record("two accounts signed as one")
        } catch {
            #expect(error.code == .unsupported && error.reason.contains("0e9d5c1a-2b3f-4c6d-8e7f-9a0b1c2d3e4f"))
        }
    }
}
