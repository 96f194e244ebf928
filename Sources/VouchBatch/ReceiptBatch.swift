internal import Vouch
internal import VouchReceipts

extension BatchVerifier {
    /// The result for a line holding a receipt (base64 `receipt-data`, or a JSON object with a
    /// receipt member), or `nil` for any other line.
    func verifyReceipt(_ line: LineChunk.Line, in bytes: [UInt8]) -> Result<VerifiedReceipt, VerificationError>? {
        guard let receiptVerifier, case .text(let range) = line else { return nil }
        let text: ArraySlice<UInt8>
        do throws(VerificationError) {
            guard let found = try ReceiptInput.receiptText(inLine: bytes[range], field: field) else { return nil }
            text = found
        } catch {
            return .failure(error)
        }
        return Result { () throws(VerificationError) in try receiptVerifier.verify(base64: text) }
    }
}

extension BatchSummary {
    mutating func count(receipt result: Result<VerifiedReceipt, LineRejection>) {
        lines += 1
        switch result {
        case .success:
            verified += 1
            kinds["receipt", default: 0] += 1
        case .failure(let error):
            rejected += 1
            errors[error.code, default: 0] += 1
        }
    }
}
