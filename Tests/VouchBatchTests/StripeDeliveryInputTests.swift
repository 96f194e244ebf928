import Foundation
import Testing
import Vouch
import VouchBatch
import VouchMint
import VouchStripe
import VouchTestSupport

/// Stored Stripe deliveries through the one input layer: each a unit of its own, in either
/// stored form, one per line or pretty-printed, verified by a batch's Stripe verifier.
struct StripeDeliveryInputTests {
    static let secret = "whsec_vouch_input_test"
    let verifier = try! Verifier(configuration: .acceptingAnyApp())

    static func deliveries(count: Int = 2) throws -> [StripeDelivery] {
        var generator = MintStripe(seed: 5, date: Date(timeIntervalSince1970: 1_756_684_800))
        generator.story = .renewing
        let signer = try MintStripeSigner(secrets: [secret])
        return try generator.subscription(0).events.prefix(count).map { try signer.delivery($0) }
    }

    func results(_ input: String, stripe: Bool = true, options: BatchVerifier.RunOptions = .init()) throws
        -> [InputResult]
    {
        var batch = BatchVerifier(verifier: verifier, jobs: 2)
        if stripe { batch.stripeVerifier = try StripeWebhookVerifier(configuration: Self.configuration) }
        var results: [InputResult] = []
        _ = try batch.verify(from: try InputReader(bytes: Array(input.utf8)), options: options) { results.append($0) }
        return results
    }

    static var configuration: StripeWebhookVerifier.Configuration {
        var configuration = StripeWebhookVerifier.Configuration(secrets: [secret])
        configuration.tolerance = nil
        return configuration
    }

    static func text(_ delivery: StripeDelivery) -> String { String(decoding: delivery.storedJSON, as: UTF8.self) }

    /// The body and header as JSON string literals.
    static func quoted(_ text: String) -> String { JSONWriter.string(.string(text)) }

    @Test func eachStoredDeliveryIsAUnitOfItsOwn() throws {
        let deliveries = try Self.deliveries()
        let input = deliveries.map(Self.text).joined(separator: "\n") + "\n"
        let results = try results(input)
        #expect(results.map(\.line) == [1, 2])
        #expect(results.allSatisfy { $0.form == .stripeDelivery && $0.isStripeEvent && $0.path == nil })
        #expect(results.map { $0.stripeEvent?.event.type } == [.customerSubscriptionCreated, .invoicePaid])
        #expect(results.allSatisfy { $0.result.map(\.kind) == .success("stripe_event") })
        let unit = try #require(try InputReader(bytes: Array(input.utf8)).next())
        #expect(try unit.delivery?.get() == deliveries[0])
    }

    @Test func theHeadersFormWithAnyLetterCaseAndAPrettyPrintedDocumentAreRead() throws {
        let delivery = try Self.deliveries(count: 1)[0]
        let body = Self.quoted(String(decoding: delivery.body, as: UTF8.self))
        let input = """
            {"headers":{"Content-Type":"application/json","stripe-SIGNATURE":\(Self.quoted(delivery.signature))},"body":\(body)}
            {
              "body": \(body),
              "headers": {
                "Stripe-Signature": \(Self.quoted(delivery.signature))
              }
            }

            """
        let results = try results(input)
        #expect(results.map(\.line) == [1, 2])
        #expect(results.allSatisfy { $0.stripeEvent?.event.type == .customerSubscriptionCreated })
    }

    @Test(arguments: [
        (#"{"stripe-signature":"t=1,v1=00","body":{"id":"evt_1"}}"#, "stripe_malformed_delivery"),
        (#"{"stripe-signature":"t=1,v1=00"}"#, "stripe_malformed_delivery"),
        (#"{"stripe-signature":1,"body":"{}"}"#, "stripe_malformed_delivery"),
        (
            #"{"stripe-signature":"t=1,v1=00","headers":{"Stripe-Signature":"t=1,v1=00"},"body":"{}"}"#,
            "stripe_malformed_delivery"
        ),
        (#"{"stripe-signature":"t=1,v1=00","body":"{}","body":"{}"}"#, "stripe_malformed_delivery"),
        (#"{"stripe-signature":"t=1,v1=00","body":"{}"}"#, "stripe_bad_signature"),
        (#"{"stripe-signature":"v1=00","body":"{}"}"#, "stripe_malformed_header"),
    ])
    func aDeliveryThatCannotBeReadHasItsCode(input: String, code: String) throws {
        let results = try results(input + "\n")
        #expect(results.count == 1)
        #expect(
            results.first.map { if case .failure(let error) = $0.result { error.code.rawValue } else { "" } } == code)
        #expect(results.first?.isStripeEvent == true)
    }

    @Test func aBodyOverTheLineLimitIsTooLarge() throws {
        var options = InputOptions()
        options.maximumLineLength = 100
        let input = #"{"stripe-signature":"t=1,v1=00","body":"\#(String(repeating: "x", count: 101))"}"#
        let unit = try #require(try InputReader(bytes: Array(input.utf8), options: options).next())
        #expect(throws: VerificationError(.stripeBodyTooLarge, "")) { try unit.delivery?.get() }
    }

    /// The limit counts the body's own bytes: a body of exactly the limit is read and verifies,
    /// however long its escaped form; one byte more is too large, named with its size.
    @Test func theBodyLimitCountsTheBodysBytesNotItsEscapedText() throws {
        let signer = try MintStripeSigner(secrets: [Self.secret])
        let event = String(decoding: try Self.deliveries(count: 1)[0].body, as: UTF8.self)
        for limit in [4_096, 1 << 20] {
            // The event, then a member of quotes filling the body to exactly `limit` bytes.
            let prefix = String(event.dropLast()) + #","padding":""#
            let remaining = limit - prefix.utf8.count - 2
            let quotes = String(repeating: #"\""#, count: remaining / 2)
            let body: String = prefix + quotes + String(repeating: " ", count: remaining % 2) + #""}"#
            try #require(body.utf8.count == limit)
            let delivery = try signer.delivery(body: Array(body.utf8), signedAt: 1_756_684_800)
            try #require(delivery.storedJSON.count > limit + limit / 2)
            var options = InputOptions()
            options.maximumLineLength = limit
            let unit = try #require(try InputReader(bytes: delivery.storedJSON, options: options).next())
            #expect(try unit.delivery?.get() == delivery, "\(limit)")
            var configuration = Self.configuration
            configuration.maximumBodySize = limit
            #expect(throws: Never.self) {
                try StripeWebhookVerifier(configuration: configuration).verify(try unit.delivery!.get())
            }
            var over = delivery
            over.body.insert(UInt8(ascii: " "), at: 0)
            let refused = try #require(
                try InputReader(bytes: over.storedJSON, options: options).next())
            let error = #expect(throws: VerificationError.self) { try refused.delivery?.get() }
            #expect(error?.code == .stripeBodyTooLarge)
            #expect(error?.reason == "the delivery's body is \(limit + 1) bytes; the limit is \(limit)")
        }
    }

    @Test func withoutAStripeVerifierADeliveryIsAMalformedTokenAsBefore() throws {
        let results = try results(Self.text(try Self.deliveries(count: 1)[0]) + "\n", stripe: false)
        let error = try #require(
            results.first.flatMap { if case .failure(let error) = $0.result { error } else { nil } })
        #expect(error.code == .malformedToken)
        #expect(error.reason.contains("Stripe webhook delivery"))
        #expect(results.first?.isStripeEvent == false)
        #expect(
            String(decoding: RecordFormat(payload: .none).record(results[0]), as: UTF8.self)
                == #"{"line":1,"status":"rejected","kind":null,"error":{"code":"malformed_token","reason":"the input holds a Stripe webhook delivery, and no Stripe verifier was given"}}"#
                + "\n")
    }

    @Test func aDocumentWithABodyButNoStripeSignatureIsNoDelivery() throws {
        let token = try TestVectors.text("apple-real/real/transaction-sandbox-13.jws")
        let results = try results(#"{"body":"{}","signedTransactionInfo":"\#(token)"}"# + "\n")
        #expect(results.count == 1)
        #expect(results[0].form == .jws)
        #expect(results[0].payload?.kind == .transaction)
    }

    @Test func readingOnlyDeliveriesRejectsEverythingElseButBlankLines() throws {
        let token = try TestVectors.text("apple-real/real/transaction-sandbox-13.jws")
        let input =
            [Self.text(try Self.deliveries(count: 1)[0]), token, "", #"{"signedPayload":"x"}"#, "{broken"]
            .joined(separator: "\n") + "\n"
        let results = try results(input, options: .init(stripeDeliveriesOnly: true))
        let codes = results.map { if case .failure(let error) = $0.result { error.code.rawValue } else { "verified" } }
        #expect(
            codes == [
                "verified", "stripe_not_a_delivery", "empty_line", "stripe_not_a_delivery", "stripe_not_a_delivery",
            ])
        #expect(results.map(\.line) == [1, 2, 3, 4, 5])
    }
}
