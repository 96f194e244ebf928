import Foundation
import Testing
import Vouch
import VouchMint
import VouchStripe

/// Stripe webhook verification: the header's grammar, the signature over the raw body with
/// several secrets, the tolerance against a validation instant, the body as an event.
struct StripeWebhookVerifierTests {
    static let secret = "whsec_vouch_test_secret"
    static let date = Date(timeIntervalSince1970: 1_756_684_800)  // 2025-09-01

    static func event(_ story: MintStripe.Story = .renewing, api: MintStripe.APIVersion = .basil, index: Int = 0)
        -> MintStripe.Event
    {
        var generator = MintStripe(seed: 7, date: date)
        generator.story = story
        generator.apiVersion = api
        return generator.subscription(0).events[index]
    }

    static func verifier(
        _ secrets: [String] = [secret], tolerance: TimeInterval? = nil, at: Date? = nil
    ) throws -> StripeWebhookVerifier {
        var configuration = StripeWebhookVerifier.Configuration(secrets: secrets)
        configuration.tolerance = tolerance
        if let at { configuration.validationTime = .fixed(at) }
        return try StripeWebhookVerifier(configuration: configuration)
    }

    static func delivery(signedAt: Int64? = nil, secrets: [String] = [secret]) throws -> StripeDelivery {
        try MintStripeSigner(secrets: secrets).delivery(event(), signedAt: signedAt)
    }

    static func code(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as VerificationError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test func verifiesADeliveryAndReadsItsEvent() throws {
        let event = Self.event()
        let verified = try Self.verifier().verify(try Self.delivery())
        #expect(verified.event.id.hasPrefix("evt_"))
        #expect(verified.event.type == .customerSubscriptionCreated)
        #expect(verified.event.created == Timestamp(milliseconds: event.created * 1000))
        #expect(verified.signedAt == Timestamp(milliseconds: (event.created + 2) * 1000))
        #expect(verified.event.livemode == false)
        #expect(verified.event.apiVersion == "2025-03-31.basil")
        #expect(verified.secretIndex == 0)
        #expect(verified.event.object == event.json["data"]?.objectValue?["object"]?.objectValue)
        let subscription = try #require(verified.event.subscription)
        #expect(subscription.id.hasPrefix("sub_"))
        #expect(subscription.customer?.hasPrefix("cus_") == true)
        #expect(subscription.status == .active)
        #expect(subscription.items.count == 1)
        #expect(subscription.items[0].price?.hasPrefix("price_") == true)
        #expect(subscription.items[0].product?.hasPrefix("prod_") == true)
        #expect(subscription.subscriptionPeriodEnd == nil)
        #expect(subscription.currentPeriodEnd == subscription.items[0].currentPeriodEnd)
        #expect(subscription.currentPeriodEnd! > verified.event.created)
        #expect(UUID(uuidString: subscription.metadata["account_id"] ?? "") != nil)
        #expect(verified.event.invoice == nil && verified.event.checkoutSession == nil)
    }

    @Test func readsThePeriodOnTheSubscriptionInOlderAPIVersions() throws {
        let event = Self.event(api: .acacia)
        let verified = try Self.verifier().verify(try MintStripeSigner(secrets: [Self.secret]).delivery(event))
        let subscription = try #require(verified.event.subscription)
        #expect(verified.event.apiVersion == "2024-06-20")
        #expect(subscription.items[0].currentPeriodEnd == nil)
        #expect(subscription.subscriptionPeriodEnd != nil)
        #expect(subscription.currentPeriodEnd == subscription.subscriptionPeriodEnd)
        #expect(subscription.items[0].price?.hasPrefix("price_") == true)
    }

    @Test func readsInvoicesAndCheckoutSessionsOfBothShapes() throws {
        for api in MintStripe.APIVersion.allCases {
            var generator = MintStripe(seed: 3, date: Self.date)
            generator.story = .renewing
            generator.apiVersion = api
            let subscription = generator.subscription(0)
            let signer = try MintStripeSigner(secrets: [Self.secret])
            let events = try subscription.events.map { try Self.verifier().verify(try signer.delivery($0)).event }
            let invoice = try #require(events.first { $0.type == .invoicePaid }?.invoice)
            #expect(invoice.subscription == subscription.subscription)
            #expect(invoice.customer == subscription.customer)
            #expect(invoice.status == "paid")
            #expect(invoice.billingReason == "subscription_create")
            #expect(invoice.subscriptionMetadata["account_id"] == subscription.account)
            #expect(invoice.periodEnd != nil)
            let session = try #require(events.first { $0.type == .checkoutSessionCompleted }?.checkoutSession)
            #expect(session.clientReferenceId == subscription.account)
            #expect(session.metadata["account_id"] == subscription.account)
            #expect(session.subscription == subscription.subscription)
            #expect(session.mode == "subscription")
        }
    }

    @Test func anyV1OfTheHeaderMayMatchAnySecret() throws {
        let rolled = try Self.delivery(secrets: ["whsec_old", Self.secret])
        #expect(rolled.signature.components(separatedBy: ",v1=").count == 3)
        #expect(try Self.verifier([Self.secret]).verify(rolled).secretIndex == 0)
        #expect(try Self.verifier(["whsec_old"]).verify(rolled).secretIndex == 0)
        #expect(try Self.verifier(["whsec_other", Self.secret]).verify(rolled).secretIndex == 1)
        // A wrong v1 before the right one.
        var delivery = try Self.delivery()
        delivery.signature = delivery.signature.replacingOccurrences(
            of: ",v1=", with: ",v1=\(String(repeating: "0", count: 64)),v1=")
        #expect(try Self.verifier().verify(delivery).secretIndex == 0)
    }

    @Test func otherSchemesAreIgnored() throws {
        let delivery = try Self.delivery()
        #expect(delivery.signature.contains(",v0="))
        #expect(throws: Never.self) { try Self.verifier().verify(delivery) }
        let parts = delivery.signature.split(separator: ",")
        var onlyOthers = delivery
        onlyOthers.signature = "\(parts[0]),v0=\(parts[1].dropFirst(3)),v2=abc, v1=\(parts[1].dropFirst(3))"
        #expect(Self.code { try Self.verifier().verify(onlyOthers) } == "stripe_no_signature")
    }

    @Test func aChangedBodyByteOrAnotherSecretIsABadSignature() throws {
        let delivery = try Self.delivery()
        for index in [0, delivery.body.count / 2, delivery.body.count - 1] {
            var changed = delivery
            changed.body[index] ^= 0x01
            #expect(Self.code { try Self.verifier().verify(changed) } == "stripe_bad_signature")
        }
        var appended = delivery
        appended.body.append(0x0A)
        #expect(Self.code { try Self.verifier().verify(appended) } == "stripe_bad_signature")
        #expect(Self.code { try Self.verifier(["whsec_other"]).verify(delivery) } == "stripe_bad_signature")
        var upper = delivery
        upper.signature = upper.signature.uppercased().replacingOccurrences(of: "T=", with: "t=")
            .replacingOccurrences(of: "V1=", with: "v1=")
        #expect(Self.code { try Self.verifier().verify(upper) } == "stripe_bad_signature")
        var moved = delivery
        moved.signature = moved.signature.replacingOccurrences(of: "t=", with: "t=1")
        #expect(Self.code { try Self.verifier().verify(moved) } == "stripe_bad_signature")
    }

    @Test(arguments: [
        "", "t=", "t=abc,v1=00", "t=0123,v1=00", "t=+123,v1=00", "t= 123,v1=00", "t=1,t=2,v1=00", "v1=00",
        "t=1,v1=00,junk", "t=1234567890123,v1=00",
    ])
    func aHeaderOutsideTheGrammarIsMalformed(header: String) throws {
        let delivery = StripeDelivery(signature: header, body: try Self.delivery().body)
        #expect(Self.code { try Self.verifier().verify(delivery) } == "stripe_malformed_header")
    }

    /// Each call may name its own instant, which wins over the configuration's; the delivery's
    /// own signing time lets any age pass.
    @Test func aCallNamesTheInstantTheToleranceIsCheckedAt() throws {
        let signedAt = Self.event().created + 2
        let delivery = try Self.delivery()
        func at(_ seconds: Int64) -> ValidationTime { .fixed(Timestamp(milliseconds: seconds * 1000)) }
        let verifier = try Self.verifier(tolerance: 300, at: Date(timeIntervalSince1970: TimeInterval(signedAt)))
        #expect(throws: Never.self) { try verifier.verify(delivery) }
        #expect(throws: Never.self) { try verifier.verify(delivery, at: at(signedAt + 300)) }
        #expect(
            Self.code { try verifier.verify(delivery, at: at(signedAt + 301)) } == "stripe_timestamp_out_of_tolerance")
        #expect(
            Self.code {
                try verifier.verify(body: delivery.body, signature: delivery.signature, at: at(signedAt + 301))
            }
                == "stripe_timestamp_out_of_tolerance")
        let late = try Self.verifier(tolerance: 300, at: Date(timeIntervalSince1970: TimeInterval(signedAt + 86_400)))
        #expect(Self.code { try late.verify(delivery) } == "stripe_timestamp_out_of_tolerance")
        #expect(throws: Never.self) { try late.verify(delivery, at: .signedDate) }
        // The clock: a delivery signed long ago is out of tolerance now.
        #expect(Self.code { try late.verify(delivery, at: .now) } == "stripe_timestamp_out_of_tolerance")
    }

    @Test func theToleranceIsCheckedAgainstTheValidationInstantAfterTheSignature() throws {
        let signedAt = Self.event().created + 2
        let delivery = try Self.delivery()
        func at(_ seconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }
        #expect(throws: Never.self) { try Self.verifier(tolerance: 300, at: at(signedAt + 300)).verify(delivery) }
        #expect(
            Self.code { try Self.verifier(tolerance: 300, at: at(signedAt + 301)).verify(delivery) }
                == "stripe_timestamp_out_of_tolerance")
        // A delivery signed after the instant is accepted, as Stripe's libraries accept it.
        #expect(throws: Never.self) { try Self.verifier(tolerance: 300, at: at(signedAt - 3600)).verify(delivery) }
        // No tolerance: any age.
        #expect(throws: Never.self) {
            try Self.verifier(tolerance: nil, at: at(signedAt + 86_400 * 365)).verify(delivery)
        }
        // The signature first: a tampered old delivery is a bad signature.
        var changed = delivery
        changed.body[10] ^= 0x01
        #expect(
            Self.code { try Self.verifier(tolerance: 300, at: at(signedAt + 3600)).verify(changed) }
                == "stripe_bad_signature")
    }

    @Test func aLiveWebhookIsCheckedAgainstNowWithFiveMinutesByDefault() throws {
        let verifier = try StripeWebhookVerifier(secrets: [Self.secret])
        #expect(verifier.configuration.tolerance == 300)
        #expect(verifier.configuration.validationTime == .now)
        let body = try Self.delivery().body
        let now = Int64(Date().timeIntervalSince1970)
        let signer = try MintStripeSigner(secrets: [Self.secret])
        let fresh = try signer.delivery(body: body, signedAt: now - 5)
        #expect(throws: Never.self) { try verifier.verify(body: fresh.body, signature: fresh.signature) }
        let old = try signer.delivery(body: body, signedAt: now - 400)
        #expect(
            Self.code { try verifier.verify(body: old.body, signature: old.signature) }
                == "stripe_timestamp_out_of_tolerance")
    }

    @Test func theSignedBodyMustBeAStrictEvent() throws {
        let signer = try MintStripeSigner(secrets: [Self.secret])
        func code(_ body: String) throws -> String? {
            let delivery = try signer.delivery(body: Array(body.utf8), signedAt: 1_700_000_000)
            return Self.code { try Self.verifier().verify(delivery) }
        }
        #expect(try code("not json") == "stripe_bad_body_json")
        #expect(try code(#"{"id":"evt_1","id":"evt_2"}"#) == "stripe_bad_body_json")
        #expect(try code("[1]") == "stripe_bad_body_json")
        #expect(try code(#"{"object":"charge","id":"ch_1"}"#) == "stripe_not_an_event")
        #expect(try code(#"{"object":"v2.core.event","id":"evt_1","type":"x"}"#) == "stripe_not_an_event")
        let event =
            #"{"id":"evt_1","object":"event","api_version":null,"created":1700000000,"livemode":true,"type":"x.y","data":{"object":{"object":"x"}}}"#
        #expect(try code(event) == nil)
        #expect(try code(event.replacingOccurrences(of: "1700000000", with: "1.5")) == "stripe_not_an_event")
        #expect(
            try code(event.replacingOccurrences(of: #""data":{"object":{"object":"x"}}"#, with: #""data":{}"#))
                == "stripe_not_an_event")
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(try code(#"{"object":"event","x":\#(deep)}"#) == "json_too_deep")
        var small = StripeWebhookVerifier.Configuration(secrets: [Self.secret])
        small.maximumBodySize = 10
        small.tolerance = nil
        let delivery = try signer.delivery(body: Array(event.utf8), signedAt: 1)
        #expect(
            Self.code { try StripeWebhookVerifier(configuration: small).verify(delivery) } == "stripe_body_too_large")
    }

    @Test func aConfigurationWithoutUsableSecretsOrWithANegativeToleranceIsRefused() {
        func code(_ configuration: StripeWebhookVerifier.Configuration) -> String? {
            do {
                _ = try StripeWebhookVerifier(configuration: configuration)
                return nil
            } catch {
                return error.code.rawValue
            }
        }
        #expect(code(.init(secrets: [])) == "no_stripe_secrets")
        #expect(code(.init(secrets: ["whsec_a", ""])) == "empty_stripe_secret")
        var negative = StripeWebhookVerifier.Configuration(secrets: ["whsec_a"])
        negative.tolerance = -1
        #expect(code(negative) == "invalid_tolerance")
        negative.tolerance = .nan
        #expect(code(negative) == "invalid_tolerance")
        negative.tolerance = 0
        #expect(code(negative) == nil)
    }
}
