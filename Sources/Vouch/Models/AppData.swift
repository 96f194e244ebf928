/// The app metadata and signed app transaction of a notification (`appData`).
public struct AppData: PayloadModel {
    public let json: JSONObject

    /// The unique identifier of the app in the App Store.
    public let appAppleId: Int64?
    /// The app's bundle identifier.
    public let bundleId: String?
    /// The server environment the notification applies to.
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

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        var json = JSONObject()
        json.add("appAppleId", appAppleId)
        json.add("bundleId", bundleId)
        json.add("environment", environment)
        json.add("signedAppTransactionInfo", signedAppTransactionInfo)
        self.json = json
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
