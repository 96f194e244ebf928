/// Finds the token in what a caller received: a bare compact JWS, or a JSON object holding
/// one (a notification POST body `{"signedPayload":"…"}`, an App Store Server API response
/// with `signedTransactionInfo`, …).
public enum SignedInput {
    /// The members searched, in order, when no field is named.
    public static let knownFields = [
        "signedPayload", "signedTransactionInfo", "signedRenewalInfo", "signedTransaction", "signedAppTransactionInfo",
    ]

    /// The token's bytes. Surrounding ASCII whitespace (a trailing newline) is ignored;
    /// whitespace inside a token is not, and fails verification.
    ///
    /// - Parameters:
    ///   - input: the bytes received.
    ///   - field: the member holding the token in JSON input; `nil` tries ``knownFields``.
    public static func token(in input: [UInt8], field: String? = nil) throws(VerificationError) -> [UInt8] {
        Array(try token(in: input[...], field: field))
    }

    /// The token within `input`: a slice of it for a bare token (no copy), new bytes for JSON.
    public static func token(in input: ArraySlice<UInt8>, field: String? = nil) throws(VerificationError) -> ArraySlice<
        UInt8
    > {
        let trimmed = trimmingWhitespace(input)
        guard trimmed.first == UInt8(ascii: "{") else { return trimmed }
        return Array(try token(inObject: trimmed, fields: field.map { [$0] } ?? knownFields).utf8)[...]
    }

    /// `input` without the ASCII whitespace around it.
    package static func trimmingWhitespace(_ input: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var start = input.startIndex
        var end = input.endIndex
        while start < end, input[start].isASCIIWhitespace { start += 1 }
        while end > start, input[end - 1].isASCIIWhitespace { end -= 1 }
        return input[start..<end]
    }

    /// The token in the first of `candidates` that `json` has: `json` must be one strict JSON
    /// object (nesting at most 16), and the member a string.
    package static func token(inObject json: ArraySlice<UInt8>, fields candidates: [String]) throws(VerificationError)
        -> String
    {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(json, limits: .init(maximumDepth: 16))
        } catch {
            throw VerificationError(
                error.isNestingTooDeep ? .jsonTooDeep : .malformedToken,
                "the input looks like JSON but is not a strict JSON object: \(error)")
        }
        for name in candidates {
            guard let value = object[name] else { continue }
            guard let token = value.stringValue else {
                throw VerificationError(.malformedToken, "the JSON member \(name) is not a string")
            }
            return token
        }
        throw VerificationError(
            .malformedToken, "the JSON input has no \(candidates.joined(separator: ", ")) member holding a token")
    }
}
