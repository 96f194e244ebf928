import Testing
import Vouch
import VouchStripe

/// Stripe's verification codes are declared beside the Stripe verifier, each with its step.
struct StripeErrorCodeTests {
    @Test func eachStripeCodeHasTheCategoryOfItsStep() {
        let categories = Dictionary(
            uniqueKeysWithValues: VerificationError.Code.stripeCodes.map {
                ($0.rawValue, VerificationError($0, "").category.rawValue)
            })
        #expect(
            categories == [
                "stripe_not_a_delivery": "input", "stripe_malformed_delivery": "input",
                "stripe_body_too_large": "input", "stripe_malformed_header": "format",
                "stripe_no_signature": "signature", "stripe_bad_signature": "signature",
                "stripe_timestamp_out_of_tolerance": "claims", "stripe_bad_body_json": "format",
                "stripe_not_an_event": "format",
            ])
    }

    @Test func noStripeCodeIsACoreCode() {
        let core = Set(VerificationError.Code.all)
        #expect(VerificationError.Code.stripeCodes.allSatisfy { !core.contains($0) })
    }
}
