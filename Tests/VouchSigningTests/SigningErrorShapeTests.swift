import Testing
import Vouch
import VouchSigning
import VouchTestSupport

/// Signing errors in the one error shape: a code, a category, a reason; equality on the code.
struct SigningErrorShapeTests {
    @Test func aSigningErrorIsEqualOnItsCodeNotItsReason() {
        CodedErrorExpectations.expectShape(
            SigningError(.keyWrongCurve, "the key is on secp384r1"),
            sameCode: SigningError(.keyWrongCurve, "the key is on secp521r1"),
            otherCode: SigningError(.keyWrongType, "the key is on secp384r1"))
    }

    @Test func eachSigningCodeHasTheCategoryOfWhatFailed() {
        #expect(SigningError(.keyUnreadable, "").category == .storage)
        #expect(SigningError(.keyEncrypted, "").category == .configuration)
        #expect(SigningError(.invalidRequest, "").category == .input)
        #expect(SigningError(.openSSLFailure, "").category == .internal)
    }
}
