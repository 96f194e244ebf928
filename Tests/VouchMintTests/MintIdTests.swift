import Foundation
import Testing
import Vouch
import VouchMint
import VouchStripe
import VouchTestSupport

/// Mints of two seeds, or stories of two accounts, share no id: App Store transaction, original
/// transaction and web order line item ids, `notificationUUID`s, account tokens, and every
/// Stripe object id.
@Suite struct MintIdTests {
    static let date = MintDate.parse("2026-06-01T00:00:00Z")!

    /// Every id an App Store history states, each named by its member.
    static func ids(_ history: MintHistory) -> Set<String> {
        var ids = Set<String>()
        for item in history.items {
            var payloads: [JSONObject]
            switch item {
            case .transaction(let payload), .renewalInfo(let payload):
                payloads = [payload]
            case .notification(let outer, let transaction, let renewal):
                if let uuid = outer["notificationUUID"]?.stringValue { ids.insert("notificationUUID " + uuid) }
                payloads = [transaction, renewal].compactMap { $0 }
            }
            for payload in payloads {
                for name in ["transactionId", "originalTransactionId", "webOrderLineItemId", "appAccountToken"] {
                    if let value = payload[name]?.stringValue { ids.insert(name + " " + value) }
                }
            }
        }
        return ids
    }

    /// Every Stripe object id (`evt_`, `sub_`, `cus_`, `in_`, `il_`, `ch_`, `re_`, `pi_`, `cs_`,
    /// `si_`, `req_`) and account id the events state.
    static func ids(_ events: [MintStripe.Event], accountKey: String = "account_id") -> Set<String> {
        let prefixes = ["evt_", "sub_", "cus_", "in_", "il_", "ch_", "re_", "pi_", "cs_", "si_", "req_"]
        var ids = Set<String>()
        func walk(_ value: JSONValue, key: String) {
            switch value {
            case .object(let object): for member in object.members { walk(member.value, key: member.name) }
            case .array(let values): for value in values { walk(value, key: key) }
            case .string(let text):
                if key == accountKey || key == "client_reference_id" || prefixes.contains(where: text.hasPrefix) {
                    ids.insert(text)
                }
            default: break
            }
        }
        for event in events { walk(.object(event.json), key: "") }
        return ids
    }

    @Test func historiesOfTwoSeedsShareNoId() {
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let seven = MintHistoryGenerator(seed: 7, date: Self.date, environment: environment)
            let eleven = MintHistoryGenerator(seed: 11, date: Self.date, environment: environment)
            var first = Set<String>()
            var second = Set<String>()
            for index in 0..<300 {
                let one = Self.ids(seven.history(index))
                let other = Self.ids(eleven.history(index))
                // Accounts of one seed share none either (an account's token is its own).
                #expect(first.isDisjoint(with: one), "account \(index)")
                first.formUnion(one)
                second.formUnion(other)
            }
            #expect(first.count > 2_000 && second.count > 2_000)
            #expect(first.intersection(second).isEmpty, "\(first.intersection(second).prefix(5))")
            #expect(first.contains { $0.hasPrefix("notificationUUID ") })
            #expect(first.contains { $0.hasPrefix("webOrderLineItemId ") })
        }
    }

    @Test func everySeedHasItsOwnRangeOfTransactionIds() {
        let first = MintHistory.firstTransactionId(environment: .production, namespace: 7, account: 3)
        #expect(first == 1_000_000_007_000_000_300)
        let last = MintHistory.firstTransactionId(environment: .production, namespace: 7, account: 9_999_999)
        #expect(last + MintHistory.idsPerAccount == 1_000_000_008_000_000_000)
        #expect(
            MintHistory.firstTransactionId(environment: .sandbox, namespace: 7, account: 3) == 2_000_000_007_000_000_300
        )
        // A text seed's hash lands in the same range of namespaces.
        let text = MintHistory.firstTransactionId(
            environment: .production, namespace: MintGenerator.seed("nightly"), account: 0)
        #expect((1_000_000_000_000_000_000..<2_000_000_000_000_000_000).contains(text))
        #expect(text % 1_000_000_000 == 0)
    }

    @Test func stripeSubscriptionsOfTwoSeedsShareNoId() {
        let seven = MintStripe(seed: 7, date: Self.date)
        let eleven = MintStripe(seed: 11, date: Self.date)
        var first = Set<String>()
        var second = Set<String>()
        for index in 0..<200 {
            first.formUnion(Self.ids(seven.subscription(index).events))
            second.formUnion(Self.ids(eleven.subscription(index).events))
        }
        #expect(first.count > 3_000)
        #expect(first.intersection(second).isEmpty, "\(first.intersection(second).prefix(5))")
    }

    @Test func storiesOfTwoAccountsOrTwoSeedsShareNoId() throws {
        var seen = Set<String>()
        for seed: UInt64 in [7, 11] {
            let generator = MintStoryGenerator(seed: seed, date: Self.date)
            for index in 0..<10 {
                let story = generator.story(index)
                let ids = Self.ids(story.appStore).union(Self.ids(story.web.events))
                #expect(seen.isDisjoint(with: ids), "seed \(seed) account \(index)")
                seen.formUnion(ids)
            }
        }
        // Stories made by hand for two accounts have ids of their own too.
        let signer = try MintStripeSigner(secrets: ["whsec_ids"])
        let one = try MintStory.twoChannel(signer: MintTestSupport.signer, stripeSigner: signer)
        let other = try MintStory.twoChannel(
            signer: MintTestSupport.signer, stripeSigner: signer, account: "0e9d5c1a-2b3f-4c6d-8e7f-9a0b1c2d3e4f")
        let oneIds = Self.ids(one.story.appStore).union(Self.ids(one.story.web.events))
        let otherIds = Self.ids(other.story.appStore).union(Self.ids(other.story.web.events))
        #expect(oneIds.count > 20)
        #expect(oneIds.isDisjoint(with: otherIds), "\(oneIds.intersection(otherIds))")
    }
}

/// `MintStripe`'s stories are current at their date; the Stripe steps include a trial, any
/// price can be made, and a story's App Store side may name no account.
@Suite struct MintCurrentStoryTests {
    static let date = MintDate.parse("2026-06-01T00:00:00Z")!
    static var seconds: Int64 { Int64(date.timeIntervalSince1970) }

    /// The subscription as its last event states it: status, period end and `cancel_at`.
    static func last(_ events: [MintStripe.Event]) -> (status: String, periodEnd: Int64, cancelAt: Int64?)? {
        for event in events.reversed() {
            guard let object = event.json["data"]?.objectValue?["object"]?.objectValue,
                object["object"]?.stringValue == "subscription"
            else { continue }
            let item = object["items"]?.objectValue?["data"]?.arrayValue?.first?.objectValue
            let end = item?["current_period_end"]?.int64Value ?? object["current_period_end"]?.int64Value ?? 0
            return (object["status"]?.stringValue ?? "", end, object["cancel_at"]?.int64Value)
        }
        return nil
    }

    @Test(arguments: MintStripe.APIVersion.allCases)
    func theDefaultStoriesAreCurrentAtTheDateAndSomeAreRefunded(api: MintStripe.APIVersion) throws {
        var generator = MintStripe(seed: 5, date: Self.date)
        generator.apiVersion = api
        var current = 0
        var refunded = 0
        for index in 0..<50 {
            let subscription = generator.subscription(index)
            #expect(subscription.events.allSatisfy { $0.created < Self.seconds })
            let state = try #require(Self.last(subscription.events))
            if subscription.story == .canceledAtPeriodEnd {
                #expect(state.status == "canceled" && state.periodEnd < Self.seconds)
            } else {
                #expect(["active", "past_due"].contains(state.status), "\(subscription.story)")
                #expect(state.periodEnd > Self.seconds, "\(subscription.story)")
                #expect((state.cancelAt ?? .max) > Self.seconds, "\(subscription.story)")
                current += 1
            }
            if subscription.events.contains(where: { $0.json["type"]?.stringValue == "charge.refunded" }) {
                #expect(subscription.story == .refunded)
                refunded += 1
            }
        }
        #expect(current >= 30 && refunded >= 5, "\(current) current, \(refunded) refunded")
    }

    @Test func aTrialIsTrialingWithAFreeInvoiceUntilItConverts() throws {
        let price = MintStripe.Price(id: "price_basic", product: "prod_basic", amount: 500, name: "Basic")
        var history = MintStripeHistory(account: "7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b")
        let start = Timestamp(milliseconds: 1_767_225_600_000)
        let trial = history.startTrial(price, at: start, days: 7)
        #expect(trial.status == .trialing)
        #expect(trial.currentPeriodEnd.milliseconds == start.milliseconds + 7 * 86_400_000)
        let converted = history.renew(trial, at: trial.currentPeriodEnd)
        #expect(converted.status == .active)
        let types = history.events.map { $0.json["type"]?.stringValue ?? "" }
        #expect(
            types == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed", "invoice.paid",
                "customer.subscription.updated",
            ])
        func object(_ index: Int) -> JSONObject {
            history.events[index].json["data"]!.objectValue!["object"]!.objectValue!
        }
        #expect(object(0)["status"]?.stringValue == "trialing")
        #expect(object(0)["trial_end"]?.int64Value == trial.currentPeriodEnd.milliseconds / 1000)
        #expect(object(1)["amount_paid"]?.int64Value == 0 && object(1)["status"]?.stringValue == "paid")
        #expect(object(2)["payment_status"]?.stringValue == "no_payment_required")
        #expect(object(3)["amount_paid"]?.int64Value == 500)
        #expect(object(4)["status"]?.stringValue == "active")
        let previous = history.events[4].json["data"]?.objectValue?["previous_attributes"]?.objectValue
        #expect(previous?["status"]?.stringValue == "trialing")
        // The price made here is the subscription's and its invoices' (a Checkout session names none).
        for (event, type) in zip(history.events, types) where type != "checkout.session.completed" {
            #expect(JSONWriter.string(.object(event.json)).contains("\"price_basic\""), "\(type)")
        }
        // A trial of no days is a step out of order.
        var refused = MintStripeHistory(account: "7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b")
        refused.startTrial(price, at: start, days: 0)
        #expect(throws: MintError(.unsupported, "")) {
            try refused.deliveries(signer: try MintStripeSigner(secrets: ["whsec_trial"]))
        }
    }

    @Test func aStoryOfAnAppThatSendsNoAccountTokenSigns() throws {
        let account = "7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b"
        var story = MintStory(account: account, appAccountToken: false)
        #expect(story.appStore.appAccountToken == nil)
        let start = Timestamp(milliseconds: 1_767_225_600_000)
        story.appStore.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: start, price: 4_990,
            expires: Timestamp(milliseconds: start.milliseconds + 30 * 86_400_000))
        story.web.subscribe(story.web.prices[1], at: start)
        let deliveries = try story.deliveries(
            signer: MintTestSupport.signer, stripeSigner: try MintStripeSigner(secrets: ["whsec_token"]))
        #expect(deliveries.count == 1 + 3)
        for delivery in deliveries {
            if case .appStore = delivery.content {
                #expect(!delivery.line.contains(account) && delivery.received.hasPrefix("{\"signedPayload\":"))
            } else {
                #expect(delivery.line.contains(account))
            }
        }
    }

    @Test func everyMintedStoryIsCurrentAtTheDateAndTellsItsSteps() throws {
        let generator = MintStoryGenerator(seed: 3, date: Self.date)
        #expect(generator.story(7).appStore.items == generator.story(7).appStore.items)
        #expect(generator.story(7).web.events.map(\.json) == generator.story(7).web.events.map(\.json))
        let signer = try MintStripeSigner(secrets: ["whsec_story"])
        for index in 0..<MintStoryGenerator.stories.count {
            let name = generator.story(of: index)
            let story = generator.story(index)
            let deliveries = try story.deliveries(signer: MintTestSupport.signer, stripeSigner: signer)
            let instants = deliveries.map(\.instant.milliseconds)
            #expect(instants.allSatisfy { generator.signedDates.lowerBound.timeIntervalSince1970 * 1000 <= Double($0) })
            #expect(instants.allSatisfy { $0 < Self.seconds * 1000 }, "\(name)")
            let types = Set(story.web.events.compactMap { $0.json["type"]?.stringValue })
            let notifications = Set(
                story.appStore.items.compactMap { item -> String? in
                    guard case .notification(let outer, _, _) = item else { return nil }
                    return outer["notificationType"]?.stringValue
                })
            switch name {
            case "trial":
                let created = try #require(story.web.events.first)
                #expect(types.contains("invoice.paid"))
                #expect(JSONWriter.string(.object(created.json)).contains("\"status\":\"trialing\""))
            case "payment-retried":
                #expect(types.contains("invoice.payment_failed"))
            case "upgrade":
                #expect(notifications == ["SUBSCRIBED"] && types.contains("customer.subscription.updated"))
            case "refunds":
                #expect(notifications.contains("REFUND") && types.contains("charge.refunded"))
            default:
                #expect(name == "no-token" && story.appStore.appAccountToken == nil && story.web.events.isEmpty)
            }
            if let state = MintCurrentStoryTests.last(story.web.events) {
                #expect(state.periodEnd > Self.seconds, "\(name)")
            }
        }
    }
}
