import Testing
import Vouch
import VouchStripe
import VouchTestSupport

/// Stripe's verification codes are declared beside the Stripe verifier, each with its step.
struct StripeErrorCodeTests {
    @Test func theStripeCodesAreDeclaredHereEachWithTheCategoryOfItsStep() {
        CodedErrorExpectations.expectModuleCodes(
            VerificationError.Code.stripeCodes,
            categories: [
                "stripe_not_a_delivery": "input", "stripe_malformed_delivery": "input",
                "stripe_body_too_large": "input", "stripe_malformed_header": "format",
                "stripe_no_signature": "signature", "stripe_bad_signature": "signature",
                "stripe_timestamp_out_of_tolerance": "claims", "stripe_bad_body_json": "format",
                "stripe_not_an_event": "format", "stripe_bad_object": "format",
            ])
    }
}
