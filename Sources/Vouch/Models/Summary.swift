/// The outcome of a request to extend the renewal date of all eligible subscribers
/// (`RENEWAL_EXTENSION` with subtype `SUMMARY`).
public struct Summary: PayloadModel {
    public let json: JSONObject

    /// The server environment the extension applies to.
    public let environment: AppStoreEnvironment?
    /// The unique identifier of the app in the App Store.
    public let appAppleId: Int64?
    /// The app's bundle identifier.
    public let bundleId: String?
    /// The product identifier of the extended subscriptions.
    public let productId: String?
    /// The identifier you gave the extension request.
    public let requestIdentifier: String?
    /// The storefronts the extension was limited to.
    public let storefrontCountryCodes: [String]?
    /// How many subscriptions were extended.
    public let succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public let failedCount: Int64?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        environment = try fields.enumeration("environment")
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        productId = try fields.string("productId")
        requestIdentifier = try fields.string("requestIdentifier")
        storefrontCountryCodes = try fields.strings("storefrontCountryCodes")
        succeededCount = try fields.int64("succeededCount")
        failedCount = try fields.int64("failedCount")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil,
        succeededCount: Int64? = nil,
        failedCount: Int64? = nil
    ) {
        var json = JSONObject()
        json.add("environment", environment)
        json.add("appAppleId", appAppleId)
        json.add("bundleId", bundleId)
        json.add("productId", productId)
        json.add("requestIdentifier", requestIdentifier)
        json.add("storefrontCountryCodes", storefrontCountryCodes)
        json.add("succeededCount", succeededCount)
        json.add("failedCount", failedCount)
        self.json = json
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
