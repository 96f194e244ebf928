public import Vouch

/// Finds a receipt in what a caller received: the DER file itself, its base64 text (the
/// `receipt-data` apps send; line breaks allowed), or a JSON object holding that text, as in
/// the old `verifyReceipt` request (`receipt-data`) or response (`latest_receipt`).
public enum ReceiptInput {
    /// The members searched, in order, when no field is named.
    public static let knownFields = ["receipt-data", "latest_receipt"]

    /// The receipt's bytes. Input that is none of the three forms comes back unchanged, so that
    /// verification names what it is (an iOS 6 transaction receipt, for instance).
    public static func receipt(in input: [UInt8], field: String? = nil) throws(VerificationError) -> [UInt8] {
        let trimmed = input.drop(while: \.isASCIIWhitespace)
        guard let first = trimmed.first else { throw VerificationError(.receiptNotAReceipt, "the input is empty") }
        if first == 0x30 { return input }
        if first == UInt8(ascii: "{") {
            guard let object = try? StrictJSON.parseObject(trimmed, limits: .init(maximumDepth: 16)) else {
                return input
            }
            return try decodeBase64(try base64(in: object, field: field))
        }
        let text = input.filter { !$0.isASCIIWhitespace }
        guard let decoded = Base64.decodeStandard(text) else {
            throw VerificationError(
                .receiptNotAReceipt, "the input is neither a DER receipt nor its standard base64 text")
        }
        return decoded
    }

    /// For batch lines: the base64 text of the receipt a line holds, or `nil` when the line is
    /// not a receipt (a JWS, or JSON holding one). A receipt line is base64 beginning `MI`
    /// (a DER SEQUENCE of 128 bytes or more), or a JSON object with a receipt member.
    package static func receiptText(inLine line: ArraySlice<UInt8>, field: String?) throws(VerificationError)
        -> ArraySlice<UInt8>?
    {
        var start = line.startIndex
        var end = line.endIndex
        while start < end, line[start].isASCIIWhitespace { start += 1 }
        while end > start, line[end - 1].isASCIIWhitespace { end -= 1 }
        let trimmed = line[start..<end]
        if trimmed.count >= 2, trimmed[trimmed.startIndex] == UInt8(ascii: "M"),
            trimmed[trimmed.startIndex + 1] == UInt8(ascii: "I")
        {
            return trimmed
        }
        guard trimmed.first == UInt8(ascii: "{"),
            let object = try? StrictJSON.parseObject(trimmed, limits: .init(maximumDepth: 16))
        else { return nil }
        let names = field.map { [$0] } ?? knownFields
        guard let name = names.first(where: { object[$0] != nil }) else { return nil }
        guard let text = object[name]?.stringValue else {
            throw VerificationError(.receiptNotAReceipt, "the JSON member \(name) is not a string")
        }
        guard field == nil || text.utf8.starts(with: [UInt8(ascii: "M"), UInt8(ascii: "I")]) else { return nil }
        return Array(text.utf8)[...]
    }

    static func base64(in object: JSONObject, field: String?) throws(VerificationError) -> [UInt8] {
        let names = field.map { [$0] } ?? knownFields
        for name in names {
            guard let value = object[name] else { continue }
            guard let text = value.stringValue else {
                throw VerificationError(.receiptNotAReceipt, "the JSON member \(name) is not a string")
            }
            return Array(text.utf8)
        }
        throw VerificationError(
            .receiptNotAReceipt, "the JSON input has no \(names.joined(separator: ", ")) member holding a receipt")
    }

    /// Strict standard base64 with padding; anything else is not a receipt.
    static func decodeBase64(_ text: some Collection<UInt8>) throws(VerificationError) -> [UInt8] {
        guard let bytes = Base64.decodeStandard(text) else {
            throw VerificationError(.receiptNotAReceipt, "the receipt text is not canonical, padded standard base64")
        }
        return bytes
    }
}
