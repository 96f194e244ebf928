import Testing
import Vouch
import VouchMint
import VouchStripe

/// The members of a signed event's object have Stripe's types: one of the wrong type refuses
/// the event with `stripe_bad_object` and its path, never reads as `nil`; absent and `null`
/// members are absent; an expandable member is its id or the expanded object's `id`.
struct StripeObjectTypesTests {
    static let secret = "whsec_vouch_object_types"

    /// Verifies a signed event whose `data.object` is `object` (JSON text), with `extra` members
    /// (text starting with a comma) after `data` in the event.
    static func verify(_ object: String, extra: String = "") throws -> VerifiedStripeEvent {
        let body =
            #"{"id":"evt_1","object":"event","api_version":"2025-03-31.basil","created":1700000000,"livemode":false,"type":"x.y","data":{"object":\#(object)}\#(extra)}"#
        let delivery = try MintStripeSigner(secrets: [secret]).delivery(body: Array(body.utf8), signedAt: 1_700_000_002)
        var configuration = StripeWebhookVerifier.Configuration(secrets: [secret])
        configuration.tolerance = nil
        return try StripeWebhookVerifier(configuration: configuration).verify(delivery)
    }

    /// The error verifying `object` throws, or `nil` when it verifies.
    static func error(_ object: String, extra: String = "") throws -> VerificationError? {
        do {
            _ = try verify(object, extra: extra)
            return nil
        } catch let error as VerificationError {
            return error
        }
    }

    /// One member of the wrong type in each kind of object, and the path the reason names.
    static let wronglyTyped: [(object: String, path: String)] = [
        (#"{"object":"subscription","id":"sub_1","customer":7}"#, "data.object.customer"),
        (#"{"object":"subscription","id":"sub_1","status":["active"]}"#, "data.object.status"),
        (#"{"object":"subscription","id":"sub_1","cancel_at_period_end":"true"}"#, "data.object.cancel_at_period_end"),
        (
            #"{"object":"subscription","id":"sub_1","current_period_end":"1800000000"}"#,
            "data.object.current_period_end"
        ),
        (#"{"object":"subscription","id":"sub_1","metadata":{"account_id":7}}"#, "data.object.metadata.account_id"),
        (#"{"object":"subscription","id":"sub_1","metadata":"account_id"}"#, "data.object.metadata"),
        (#"{"object":"subscription","id":"sub_1","items":[]}"#, "data.object.items"),
        (#"{"object":"subscription","id":"sub_1","items":{"data":[7]}}"#, "data.object.items.data[0]"),
        (
            #"{"object":"subscription","id":"sub_1","items":{"data":[{"current_period_end":1800000000},{"current_period_end":"1800000000"}]}}"#,
            "data.object.items.data[1].current_period_end"
        ),
        (
            #"{"object":"subscription","id":"sub_1","items":{"data":[{"price":"price_1"}]}}"#,
            "data.object.items.data[0].price"
        ),
        (
            #"{"object":"subscription","id":"sub_1","items":{"data":[{"price":{"id":"price_1","product":true}}]}}"#,
            "data.object.items.data[0].price.product"
        ),
        (
            #"{"object":"subscription","id":"sub_1","items":{"data":[{"quantity":1.5}]}}"#,
            "data.object.items.data[0].quantity"
        ),
        (#"{"object":"subscription","id":7}"#, "data.object.id"),
        (#"{"object":"checkout.session","id":"cs_1","subscription":7}"#, "data.object.subscription"),
        (
            #"{"object":"checkout.session","id":"cs_1","client_reference_id":{"id":"a"}}"#,
            "data.object.client_reference_id"
        ),
        (#"{"object":"checkout.session","id":"cs_1","payment_status":false}"#, "data.object.payment_status"),
        (
            #"{"object":"invoice","id":"in_1","parent":{"subscription_details":{"subscription":["sub_1"]}}}"#,
            "data.object.parent.subscription_details.subscription"
        ),
        (
            #"{"object":"invoice","id":"in_1","parent":{"subscription_details":{"metadata":{"account_id":null,"x":1}}}}"#,
            "data.object.parent.subscription_details.metadata.x"
        ),
        (#"{"object":"invoice","id":"in_1","amount_paid":"0"}"#, "data.object.amount_paid"),
        (
            #"{"object":"invoice","id":"in_1","lines":{"data":[{"period":{"end":"1800000000"}}]}}"#,
            "data.object.lines.data[0].period.end"
        ),
        (#"{"object":"invoice","id":"in_1","lines":{"data":[{"period":[0,1]}]}}"#, "data.object.lines.data[0].period"),
        (#"{"object":"charge","id":"ch_1","amount_refunded":"100"}"#, "data.object.amount_refunded"),
        (#"{"object":"charge","id":"ch_1","currency":1}"#, "data.object.currency"),
        (#"{"object":"charge","id":"ch_1","invoice":{"object":"invoice"}}"#, "data.object.invoice.id"),
        (#"{"object":"charge","id":"ch_1","customer":{"id":7}}"#, "data.object.customer.id"),
        (#"{"object":7,"id":"x_1"}"#, "data.object.object"),
    ]

    @Test(arguments: wronglyTyped)
    func aMemberOfTheWrongTypeIsRefusedWithItsPath(object: String, path: String) throws {
        let error = try #require(try Self.error(object), "\(object) verified")
        #expect(error.code == .stripeBadObject)
        #expect(error.category == .format)
        #expect(
            error.reason.hasPrefix("the event's object has a member of the wrong type: \(path): expected "),
            "\(error.reason)")
    }

    @Test func theEventsOwnMembersOfTheWrongTypeAreNotAnEvent() throws {
        let object = #"{"object":"charge","id":"ch_1"}"#
        let account = try #require(try Self.error(object, extra: #","account":7"#))
        #expect(account.code == .stripeNotAnEvent)
        #expect(account.reason.hasSuffix("its account is not a string"))
        let previous = try #require(try Self.error(object + #","previous_attributes":"status""#))
        #expect(previous.code == .stripeNotAnEvent)
        #expect(previous.reason.hasSuffix("its data.previous_attributes is not an object"))
        // Members this version does not read keep whatever type they have.
        #expect(try Self.error(#"{"object":"charge","id":"ch_1","outcome":7,"refunds":"x"}"#) == nil)
    }

    @Test func anExpandableMemberIsItsIdOrTheExpandedObjectsId() throws {
        let subscription = try #require(
            try Self.verify(
                #"{"object":"subscription","id":"sub_1","customer":{"id":"cus_1","object":"customer","email":null},"items":{"data":[{"price":{"id":"price_1","product":{"id":"prod_1","object":"product"}}},{"price":{"id":"price_2","product":"prod_2"}}]}}"#
            ).event.subscription)
        #expect(subscription.customer == "cus_1")
        #expect(subscription.items.map(\.product) == ["prod_1", "prod_2"])
        #expect(subscription.items.map(\.price) == ["price_1", "price_2"])
        let session = try #require(
            try Self.verify(
                #"{"object":"checkout.session","id":"cs_1","subscription":{"id":"sub_1","object":"subscription"},"customer":"cus_1"}"#
            ).event.checkoutSession)
        #expect(session.subscription == "sub_1")
        #expect(session.customer == "cus_1")
        let invoice = try #require(
            try Self.verify(
                #"{"object":"invoice","id":"in_1","customer":{"id":"cus_1"},"parent":{"subscription_details":{"subscription":{"id":"sub_1","object":"subscription"}}}}"#
            ).event.invoice)
        #expect(invoice.subscription == "sub_1")
        #expect(invoice.customer == "cus_1")
        let charge = try #require(
            try Self.verify(
                #"{"object":"charge","id":"ch_1","invoice":{"id":"in_1","object":"invoice"},"customer":"cus_1"}"#
            )
            .event.charge)
        #expect(charge.invoice == "in_1")
        #expect(charge.customer == "cus_1")
    }

    @Test func anAbsentOrNullMemberIsAbsent() throws {
        let subscription = try #require(
            try Self.verify(
                #"{"object":"subscription","id":"sub_1","customer":null,"status":null,"metadata":null,"cancel_at":null,"items":{"data":[{"price":null,"plan":{"id":"plan_1","product":null},"quantity":null}]}}"#
            ).event.subscription)
        #expect(subscription.customer == nil)
        #expect(subscription.status.rawValue == "")
        #expect(subscription.metadata == [:])
        #expect(subscription.cancelAt == nil)
        #expect(subscription.cancelAtPeriodEnd == false)
        #expect(subscription.items.map(\.price) == ["plan_1"])
        #expect(subscription.items.map(\.product) == [nil])
        let invoice = try #require(
            try Self.verify(
                #"{"object":"invoice","id":"in_1","subscription":"sub_1","parent":null,"subscription_details":{"metadata":{"account_id":"a","note":null}},"lines":{"data":[{"period":null},{"period":{"end":1800000000}}]}}"#
            ).event.invoice)
        #expect(invoice.subscription == "sub_1")
        #expect(invoice.subscriptionMetadata == ["account_id": "a"])
        #expect(invoice.periodEnd == Timestamp(milliseconds: 1_800_000_000_000))
        // An object this version does not model, or a modelled one without an id, reads as none.
        #expect(try Self.verify(#"{"object":"customer","id":7}"#).event.subscription == nil)
        #expect(try Self.verify(#"{"object":"subscription"}"#).event.subscription == nil)
    }

    /// Stripe's instants are whole seconds from 1970 to the end of 9999: any other number is an
    /// unusable instant, read as absent (so that a period end without one grants nothing); a
    /// value that is not a number is refused.
    @Test(
        arguments: [
            ("0", 0), ("253402300799", 253_402_300_799_000), ("-1", nil), ("253402300800", nil),
            ("9223372036854775807", nil), ("1e26", nil), ("1.5", nil), ("1800000000.0", nil),
        ] as [(String, Int64?)])
    func anInstantOutsideStripesRangeIsAbsent(seconds: String, milliseconds: Int64?) throws {
        let expected = milliseconds.map { Timestamp(milliseconds: $0) }
        let subscription = try #require(
            try Self.verify(
                #"{"object":"subscription","id":"sub_1","current_period_end":\#(seconds),"trial_end":\#(seconds),"items":{"data":[{"current_period_end":\#(seconds)}]}}"#
            ).event.subscription)
        #expect(subscription.subscriptionPeriodEnd == expected)
        #expect(subscription.trialEnd == expected)
        #expect(subscription.items.first?.currentPeriodEnd == expected)
        let invoice = try #require(
            try Self.verify(#"{"object":"invoice","id":"in_1","lines":{"data":[{"period":{"end":\#(seconds)}}]}}"#)
                .event.invoice)
        #expect(invoice.periodEnd == expected)
        let quoted = try #require(
            try Self.error(#"{"object":"subscription","id":"sub_1","trial_end":"\#(seconds)"}"#))
        #expect(quoted.code == .stripeBadObject)
        #expect(quoted.reason.contains("data.object.trial_end: expected a number of seconds since 1970"))
    }
}
