public import Vouch
public import VouchReceipts

/// The JSON record of one receipt verification, as `vouch receipt verify --json` prints it and
/// `vouch batch` prints per receipt line (with `"line"` first):
///
/// ```json
/// {"status":"verified","kind":"receipt","payload":{"receiptType":"Production",…,"inApp":[…]}}
/// {"status":"rejected","kind":"receipt","payload":null,"error":{"code":"bad_signature","reason":"…"}}
/// ```
public enum ReceiptRecord {
    /// Writes the record's members (without the braces) for one receipt result.
    /// - Parameters:
    ///   - result: the verified receipt, or why it was rejected.
    ///   - selection: which payload members to write (`full` by default).
    ///   - writer: the writer the members are appended to.
    public static func writeMembers(
        of result: Result<VerifiedReceipt, VerificationError>,
        payload selection: VerificationRecord.PayloadSelection = .full,
        into writer: inout JSONWriter
    ) {
        writeMembers(of: result.mapError(LineRejection.verification), payload: selection, into: &writer)
    }

    /// A batch record's members: as ``writeMembers(of:payload:into:)-(Result<VerifiedReceipt,VerificationError>,_,_)``,
    /// with the batch's own input errors reported the same way.
    package static func writeMembers(
        of result: Result<VerifiedReceipt, LineRejection>,
        payload selection: VerificationRecord.PayloadSelection = .full,
        into writer: inout JSONWriter
    ) {
        switch result {
        case .success(let verified):
            writer.raw("\"status\":\"verified\",\"kind\":\"receipt\"")
            switch selection {
            case .none: break
            case .full:
                writer.raw(",\"payload\":")
                verified.receipt.writeJSON(into: &writer)
            case .fields(let paths):
                writer.raw(",\"payload\":")
                writer.write(object: VerificationRecord.select(paths, from: verified.receipt.jsonObject))
            }
        case .failure(let error):
            writer.raw("\"status\":\"rejected\",\"kind\":\"receipt\"")
            if selection != .none { writer.raw(",\"payload\":null") }
            writer.raw(",\"error\":")
            VerificationRecord.write(error: error, into: &writer)
        }
    }

    /// The whole record, as one JSON object's UTF-8 bytes.
    /// - Parameter result: the verified receipt, or why it was rejected.
    public static func json(for result: Result<VerifiedReceipt, VerificationError>) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writeMembers(of: result, into: &writer)
        writer.raw("}")
        return writer.bytes
    }
}
