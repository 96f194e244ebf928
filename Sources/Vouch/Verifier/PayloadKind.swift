/// The kinds of App Store signed data.
public enum PayloadKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `JWSTransactionDecodedPayload`: a signed transaction.
    case transaction
    /// `JWSRenewalInfoDecodedPayload`: signed subscription renewal info.
    case renewalInfo = "renewal-info"
    /// `ResponseBodyV2DecodedPayload`: an App Store Server Notification V2 `signedPayload`.
    case notification
    /// `AppTransaction`: a signed app transaction.
    case appTransaction = "app-transaction"
    /// `DecodedRealtimeRequestBody`: a retention-messaging (realtime) request.
    case realtimeRequest = "realtime-request"

    public var description: String { rawValue }

    /// Tells the kind from the member names of a payload, or `nil` when nothing identifies it.
    ///
    /// Each kind has a member no other kind has at the top level: `notificationType`,
    /// `receiptType`, `transactionId`, `autoRenewStatus`/`autoRenewProductId`,
    /// `requestIdentifier`.
    public static func detect(in payload: JSONObject) -> PayloadKind? {
        var found: PayloadKind? = nil
        for member in payload.members {
            // By length first: one comparison of text at most per member.
            let name = member.name
            switch name.utf8.count {
            case 16 where name == "notificationType": return .notification
            case 11 where name == "receiptType": return .appTransaction
            case 13 where name == "transactionId": found = found ?? .transaction
            case 15 where name == "autoRenewStatus", 18 where name == "autoRenewProductId":
                found = found ?? .renewalInfo
            case 17 where name == "requestIdentifier": found = found ?? .realtimeRequest
            default: continue
            }
        }
        return found
    }

    /// The payload member that dates the signature: what validation at the signed date uses.
    var signedDateField: StaticString {
        self == .appTransaction ? "receiptCreationDate" : "signedDate"
    }
}
