/// The app metadata and signed app transaction of a notification (`appData`).
public struct AppData: PayloadModel {
    public let json: JSONObject

    public let appAppleId: Int64?
    public let bundleId: String?
    public let environment: AppStoreEnvironment?
    /// A JWS whose payload is an ``AppTransaction``.
    public let signedAppTransactionInfo: String?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        environment = try fields.enumeration("environment")
        signedAppTransactionInfo = try fields.string("signedAppTransactionInfo")
    }
}
