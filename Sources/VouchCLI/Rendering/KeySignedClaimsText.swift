import Foundation
import Vouch

/// Readable claims of a JWS signed with a key (offer signatures, request JWS, API tokens): as
/// ``PayloadText``, and the NumericDate claims (`iat`, `exp`, `nbf`, in seconds) with their
/// ISO-8601 form, an Advanced Commerce `request` (base64 of JSON) decoded below itself.
enum KeySignedClaimsText {
    static let numericDates: Set<String> = ["iat", "exp", "nbf"]

    static func describe(_ claims: JSONObject, indent: Int, into lines: inout [String]) {
        let pad = String(repeating: "  ", count: indent)
        for member in claims.members {
            if numericDates.contains(member.name), case .number(let text) = member.value, let seconds = Int64(text),
                let (milliseconds, overflow) = Optional(seconds.multipliedReportingOverflow(by: 1000)), !overflow
            {
                lines.append("\(pad)\(member.name): \(text) (\(Timestamp(milliseconds: milliseconds).iso8601))")
            } else if member.name == "request", let text = member.value.stringValue,
                let bytes = Base64.decodeStandard(text.utf8), let request = try? StrictJSON.parseObject(bytes)
            {
                lines.append("\(pad)request: (\(text.utf8.count) characters of base64; the JSON they hold:)")
                PayloadText.describe(request, indent: indent + 1, into: &lines)
            } else {
                PayloadText.describe(JSONObject([member]), indent: indent, into: &lines)
            }
        }
    }
}
