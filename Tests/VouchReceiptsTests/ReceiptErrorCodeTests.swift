import Testing
import Vouch
import VouchReceipts

/// The receipt codes are declared beside the receipt verifier, each with its step.
struct ReceiptErrorCodeTests {
    @Test func eachReceiptCodeHasTheCategoryOfItsStep() {
        let categories = Dictionary(
            uniqueKeysWithValues: VerificationError.Code.receiptCodes.map {
                ($0.rawValue, VerificationError($0, "").category.rawValue)
            })
        #expect(
            categories == [
                "receipt_not_a_receipt": "input", "receipt_too_large": "input",
                "receipt_malformed_container": "format", "receipt_unsupported_algorithm": "format",
                "receipt_signer_not_found": "chain", "receipt_malformed_payload": "format",
                "receipt_duplicate_attribute": "format", "receipt_wrong_app_version": "claims",
                "receipt_device_hash_mismatch": "claims",
            ])
    }

    @Test func noReceiptCodeIsACoreCode() {
        let core = Set(VerificationError.Code.all)
        #expect(VerificationError.Code.receiptCodes.allSatisfy { !core.contains($0) })
    }
}
