/// The app metadata and signed transaction and renewal information of a notification (Apple
/// calls this object `data`).
public struct NotificationData: PayloadModel {
    public let json: JSONObject

    /// The server environment the notification applies to.
    public let environment: AppStoreEnvironment?
    /// The unique identifier of the app in the App Store.
    public let appAppleId: Int64?
    /// The app's bundle identifier.
    public let bundleId: String?
    /// The build version of the app.
    public let bundleVersion: String?
    /// A JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public let signedTransactionInfo: String?
    /// A JWS whose payload is a ``JWSRenewalInfoDecodedPayload``.
    public let signedRenewalInfo: String?
    /// The status of the auto-renewable subscription when the notification was signed.
    public let status: SubscriptionStatus?
    /// The customer's reason for the refund request (`CONSUMPTION_REQUEST`).
    public let consumptionRequestReason: ConsumptionRequestReason?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        environment = try fields.enumeration("environment")
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        bundleVersion = try fields.string("bundleVersion")
        signedTransactionInfo = try fields.string("signedTransactionInfo")
        signedRenewalInfo = try fields.string("signedRenewalInfo")
        status = try fields.enumeration("status")
        consumptionRequestReason = try fields.enumeration("consumptionRequestReason")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        bundleVersion: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        status: SubscriptionStatus? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        var json = JSONObject()
        json.add("environment", environment)
        json.add("appAppleId", appAppleId)
        json.add("bundleId", bundleId)
        json.add("bundleVersion", bundleVersion)
        json.add("signedTransactionInfo", signedTransactionInfo)
        json.add("signedRenewalInfo", signedRenewalInfo)
        json.add("status", status)
        json.add("consumptionRequestReason", consumptionRequestReason)
        self.json = json
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}
