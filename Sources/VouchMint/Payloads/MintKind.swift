/// The kinds of App Store signed data `vouch mint` can make.
public enum MintKind: String, CaseIterable, Sendable {
    /// `JWSTransactionDecodedPayload`: one in-app purchase, renewal or refund.
    case transaction
    /// `JWSRenewalInfoDecodedPayload`: the renewal state of an auto-renewable subscription.
    case renewalInfo = "renewal-info"
    /// `ResponseBodyV2DecodedPayload`: an App Store Server Notification V2, nesting a signed
    /// transaction and (for subscriptions) signed renewal info.
    case notification
    /// `AppTransaction`: the app's purchase (download) record.
    case appTransaction = "app-transaction"
    /// `DecodedRealtimeRequestBody`: a Retention Messaging real-time request.
    case realtimeRequest = "realtime-request"

    /// Whether Xcode's StoreKit testing produces this kind (it sends no server notifications
    /// and no retention messaging requests).
    public var existsInXcode: Bool {
        switch self {
        case .transaction, .renewalInfo, .appTransaction: return true
        case .notification, .realtimeRequest: return false
        }
    }
}
