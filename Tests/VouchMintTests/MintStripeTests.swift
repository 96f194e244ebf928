import Foundation
import Testing
import Vouch
import VouchMint
import VouchStripe

/// Minted Stripe stories: the same seed gives the same events, each story its sequence, every
/// delivery verifies and every defect gives its code.
struct MintStripeTests {
    static let date = Date(timeIntervalSince1970: 1_756_684_800)
    static let secret = "whsec_mint_test"

    static func types(_ story: MintStripe.Story) -> [String] {
        var generator = MintStripe(seed: 2, date: date)
        generator.story = story
        return generator.subscription(0).events.map { $0.json["type"]?.stringValue ?? "" }
    }

    @Test func eachStoryHasItsEventsInOrderOfCreation() {
        #expect(
            Self.types(.renewing) == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed", "invoice.paid",
                "customer.subscription.updated", "invoice.paid", "customer.subscription.updated",
            ])
        #expect(
            Self.types(.paymentRecovered) == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed",
                "invoice.payment_failed", "customer.subscription.updated", "invoice.paid",
                "customer.subscription.updated",
            ])
        #expect(
            Self.types(.canceledAtPeriodEnd) == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed",
                "customer.subscription.updated", "customer.subscription.deleted",
            ])
        #expect(
            Self.types(.trialPaused) == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed",
                "customer.subscription.paused", "customer.subscription.resumed", "invoice.paid",
            ])
        #expect(
            Self.types(.refunded) == [
                "customer.subscription.created", "invoice.paid", "checkout.session.completed", "invoice.paid",
                "customer.subscription.updated", "charge.refunded", "customer.subscription.updated",
            ])
    }

    @Test func theSameSeedMintsTheSameEventsAndEveryEventIsBeforeTheDate() {
        let generator = MintStripe(seed: 9, date: Self.date)
        for index in 0..<12 {
            let one = generator.subscription(index)
            let again = generator.subscription(index)
            #expect(one.events.map(\.json) == again.events.map(\.json))
            #expect(one.events.allSatisfy { $0.created < Int64(Self.date.timeIntervalSince1970) })
            #expect(one.events.map(\.created) == one.events.map(\.created).sorted())
        }
        #expect(Set((0..<40).map { generator.subscription($0).story }) == Set(MintStripe.Story.allCases))
        #expect(
            generator.subscription(0).events[0].json
                != MintStripe(seed: 10, date: Self.date).subscription(0).events[0].json)
    }

    @Test func aPastDueSubscriptionComesBackActiveAndACanceledOneEndsAtItsPeriodEnd() throws {
        var generator = MintStripe(seed: 4, date: Self.date)
        generator.story = .paymentRecovered
        let statuses = try generator.subscription(0).events.compactMap {
            try StripeSubscription(($0.json["data"]?.objectValue?["object"]?.objectValue)!)?.status
        }
        #expect(statuses == [.active, .pastDue, .active])
        generator.story = .canceledAtPeriodEnd
        let canceled = try generator.subscription(0).events.compactMap {
            try StripeSubscription(($0.json["data"]?.objectValue?["object"]?.objectValue)!)
        }
        #expect(canceled.map(\.cancelAtPeriodEnd) == [false, true, false])
        #expect(canceled.last?.status == .canceled)
        #expect(canceled.last?.endedAt == canceled.last?.currentPeriodEnd)
    }

    @Test func everyDeliveryVerifiesAndEveryDefectHasItsCode() throws {
        let signer = try MintStripeSigner(secrets: [Self.secret])
        var configuration = StripeWebhookVerifier.Configuration(secrets: [Self.secret])
        configuration.tolerance = nil
        let verifier = try StripeWebhookVerifier(configuration: configuration)
        for api in MintStripe.APIVersion.allCases {
            var generator = MintStripe(seed: 11, date: Self.date)
            generator.apiVersion = api
            for index in 0..<4 {
                let subscription = generator.subscription(index)
                for event in subscription.events {
                    let delivery = try signer.delivery(event)
                    #expect(delivery.body.contains(0x0A), "bodies are indented as Stripe sends them")
                    #expect(try verifier.verify(delivery).event.json == event.json)
                }
                for defect in MintStripeDefect.allCases {
                    let delivery = try signer.tampered(defect, subscription.events[0])
                    do {
                        _ = try verifier.verify(delivery)
                        Issue.record("\(defect) verified")
                    } catch {
                        #expect(error.code.rawValue == defect.expectedErrorCode, "\(defect): \(error)")
                    }
                }
            }
        }
    }

    @Test func aSignerWantsASecret() {
        #expect(throws: MintError(.invalidInput, "")) { try MintStripeSigner(secrets: []) }
        #expect(throws: MintError(.invalidInput, "")) { try MintStripeSigner(secrets: [""]) }
    }
}
