/// An external purchase token (`EXTERNAL_PURCHASE_TOKEN` notifications).
///
/// It carries no environment member: sandbox tokens have an `externalPurchaseId` starting with
/// `SANDBOX` (see ``ResponseBodyV2DecodedPayload/effectiveEnvironment``).
public struct ExternalPurchaseToken: PayloadModel {
    public let json: JSONObject

    /// The token's unique identifier.
    public let externalPurchaseId: String?
    /// When the system created the token.
    public let tokenCreationDate: Timestamp?
    /// The unique identifier of the app in the App Store.
    public let appAppleId: Int64?
    /// The app's bundle identifier.
    public let bundleId: String?
    /// Present only for custom link tokens.
    public let tokenType: ExternalPurchaseTokenType?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        externalPurchaseId = try fields.string("externalPurchaseId")
        tokenCreationDate = try fields.timestamp("tokenCreationDate")
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        tokenType = try fields.enumeration("tokenType")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        externalPurchaseId: String? = nil,
        tokenCreationDate: Timestamp? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        tokenType: ExternalPurchaseTokenType? = nil
    ) {
        var json = JSONObject()
        json.add("externalPurchaseId", externalPurchaseId)
        json.add("tokenCreationDate", tokenCreationDate)
        json.add("appAppleId", appAppleId)
        json.add("bundleId", bundleId)
        json.add("tokenType", tokenType)
        self.json = json
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.tokenType = tokenType
    }
}
