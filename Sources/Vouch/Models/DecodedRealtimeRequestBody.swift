/// A decoded request for a real-time retention message (Retention Messaging API): the payload
/// of the `signedPayload` JWS the App Store posts to your Get Retention Message endpoint.
///
/// Apple requires every member, but a missing one decodes as `nil` here like everywhere else;
/// check ``appAppleId`` against your app before answering.
public struct DecodedRealtimeRequestBody: SignedPayload {
    public let json: JSONObject

    /// The original transaction identifier of the customer's subscription.
    public let originalTransactionId: String?
    /// The unique identifier of the app in the App Store.
    public let appAppleId: Int64?
    /// The auto-renewable subscription the customer is viewing.
    public let productId: String?
    /// The device's locale.
    public let userLocale: String?
    /// The UUID identifying this request, as sent.
    public let requestIdentifier: String?
    /// The server environment of the request.
    public let environment: AppStoreEnvironment?
    public let signedDate: Timestamp?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        originalTransactionId = try fields.string("originalTransactionId")
        appAppleId = try fields.int64("appAppleId")
        productId = try fields.string("productId")
        userLocale = try fields.string("userLocale")
        requestIdentifier = try fields.string("requestIdentifier")
        environment = try fields.enumeration("environment")
        signedDate = try fields.timestamp("signedDate")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        originalTransactionId: String? = nil,
        appAppleId: Int64? = nil,
        productId: String? = nil,
        userLocale: String? = nil,
        requestIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedDate: Timestamp? = nil
    ) {
        var json = JSONObject()
        json.add("originalTransactionId", originalTransactionId)
        json.add("appAppleId", appAppleId)
        json.add("productId", productId)
        json.add("userLocale", userLocale)
        json.add("requestIdentifier", requestIdentifier)
        json.add("environment", environment)
        json.add("signedDate", signedDate)
        self.json = json
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }
}
