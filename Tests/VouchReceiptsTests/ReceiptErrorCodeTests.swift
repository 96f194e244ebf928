import Testing
import Vouch
import VouchReceipts
import VouchTestSupport

/// The receipt codes are declared beside the receipt verifier, each with its step.
struct ReceiptErrorCodeTests {
    @Test func theReceiptCodesAreDeclaredHereEachWithTheCategoryOfItsStep() {
        CodedErrorExpectations.expectModuleCodes(
            VerificationError.Code.receiptCodes,
            categories: [
                "receipt_not_a_receipt": "input", "receipt_too_large": "input",
                "receipt_malformed_container": "format", "receipt_unsupported_algorithm": "format",
                "receipt_signer_not_found": "chain", "receipt_malformed_payload": "format",
                "receipt_duplicate_attribute": "format", "receipt_wrong_app_version": "claims",
                "receipt_device_hash_mismatch": "claims",
            ])
    }
}
