import Foundation
import Testing
import Vouch
import VouchTestSupport

/// The one error shape: a code, a category, a reason; equality on the code.
struct CodedErrorTests {
    @Test func aVerificationErrorIsEqualOnItsCodeNotItsReason() {
        CodedErrorExpectations.expectShape(
            VerificationError(.wrongBundleId, "expected com.example.a, got com.example.b"),
            sameCode: VerificationError(.wrongBundleId, "expected com.example.a, got com.example.c"),
            otherCode: VerificationError(.wrongEnvironment, "expected com.example.a, got com.example.b"))
    }

    @Test func aConfigurationErrorIsEqualOnItsCodeNotItsReason() {
        CodedErrorExpectations.expectShape(
            ConfigurationError(.missingAppIdentity, "no bundle id"),
            sameCode: ConfigurationError(.missingAppIdentity, "no environment"),
            otherCode: ConfigurationError(.noTrustAnchors, "no bundle id"))
        #expect(ConfigurationError(.noStripeSecrets, "").category == .configuration)
    }

    @Test func aPayloadFieldErrorIsEqualOnItsCodeNotItsMember() {
        let error = PayloadFieldError(field: "data.bundleId", expected: "a string")
        #expect(error.code.rawValue == "invalid_member")
        #expect(error.category == .input)
        #expect(error.reason == "data.bundleId: expected a string")
        #expect(error == PayloadFieldError(field: "price", expected: "a 64-bit integer"))
        #expect(Set([error, PayloadFieldError(field: "price", expected: "a 64-bit integer")]).count == 1)
        #expect(error.description == error.reason)
        #expect(error.errorDescription == error.reason)
    }

    @Test func aWronglyTypedPayloadMemberThrowsTheInvalidMemberCode() throws {
        let object = try #require(try StrictJSON.parse(Array(#"{"bundleId":7}"#.utf8)).objectValue)
        #expect {
            try JWSTransactionDecodedPayload(json: object)
        } throws: { error in
            (error as? PayloadFieldError)?.code == .invalidMember
                && (error as? PayloadFieldError)?.field == "bundleId"
        }
    }

    @Test func everyVerificationCodeKeepsTheCategoryOfItsStep() {
        let categories = Dictionary(
            uniqueKeysWithValues: VerificationError.Code.all.map { ($0.rawValue, VerificationError($0, "").category) })
        #expect(categories["token_too_large"] == .input)
        #expect(categories["bad_header_json"] == .format)
        #expect(categories["bad_signature"] == .signature)
        #expect(categories["untrusted_chain"] == .chain)
        #expect(categories["wrong_bundle_id"] == .claims)
        #expect(categories["internal_error"] == .internal)
        #expect(categories["token_expired"] == .claims)
        #expect(categories.keys.allSatisfy { !$0.hasPrefix("receipt_") && !$0.hasPrefix("stripe_") })
    }

    @Test func theSharedCategoriesAreNamedByTheirText() {
        #expect(ErrorCategory.allCases.map(\.description) == ["input", "configuration", "storage", "internal"])
    }
}
