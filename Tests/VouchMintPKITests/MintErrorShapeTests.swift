import Testing
import Vouch
import VouchMintPKI
import VouchTestSupport

/// Minting errors in the one error shape: a code, a category, a reason; equality on the code.
struct MintErrorShapeTests {
    @Test func aMintErrorIsEqualOnItsCodeNotItsReason() {
        CodedErrorExpectations.expectShape(
            MintError(.invalidOverride, "price=abc: not a number"),
            sameCode: MintError(.invalidOverride, "quantity: no value"),
            otherCode: MintError(.invalidInput, "price=abc: not a number"))
        #expect(MintError(.invalidOverride, "a").hashValue == MintError(.invalidOverride, "b").hashValue)
    }

    @Test func eachMintCodeHasTheCategoryOfWhatFailed() {
        #expect(MintError(.unreadableInput, "").category == .storage)
        #expect(MintError(.writeFailed, "").category == .storage)
        #expect(MintError(.invalidOverride, "").category == .input)
        #expect(MintError(.openSSLFailure, "").category == .internal)
    }
}
