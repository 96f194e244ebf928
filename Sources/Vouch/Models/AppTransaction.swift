/// A decoded app transaction: the customer's purchase or download of the app itself, from
/// StoreKit's `AppTransaction` or the App Store Server API (`JWSAppTransactionDecodedPayload`).
///
/// Its signing date is ``receiptCreationDate`` (also available as ``signedDate``), and its
/// environment is ``receiptType``.
public struct AppTransaction: SignedPayload {
    public let json: JSONObject

    /// The environment that signed the app transaction.
    public let receiptType: AppStoreEnvironment?
    /// The unique identifier of the app in the App Store.
    public let appAppleId: Int64?
    /// The app's bundle identifier.
    public let bundleId: String?
    /// The app version the app transaction applies to.
    public let applicationVersion: String?
    /// The identifier of the app version in the App Store.
    public let versionExternalIdentifier: Int64?
    /// When the App Store signed the app transaction.
    public let receiptCreationDate: Timestamp?
    /// When the customer first purchased or downloaded the app.
    public let originalPurchaseDate: Timestamp?
    /// The app version the customer first purchased or downloaded.
    public let originalApplicationVersion: String?
    /// Base64 value for checking that the app transaction belongs to a device.
    public let deviceVerification: String?
    /// The UUID used to compute ``deviceVerification``, as sent.
    public let deviceVerificationNonce: String?
    /// When the customer pre-ordered the app.
    public let preorderDate: Timestamp?
    /// The unique identifier of the app download transaction.
    public let appTransactionId: String?
    /// The platform on which the customer first purchased the app.
    public let originalPlatform: PurchasePlatform?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        receiptType = try fields.enumeration("receiptType")
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        applicationVersion = try fields.string("applicationVersion")
        versionExternalIdentifier = try fields.int64("versionExternalIdentifier")
        receiptCreationDate = try fields.timestamp("receiptCreationDate")
        originalPurchaseDate = try fields.timestamp("originalPurchaseDate")
        originalApplicationVersion = try fields.string("originalApplicationVersion")
        deviceVerification = try fields.string("deviceVerification")
        deviceVerificationNonce = try fields.string("deviceVerificationNonce")
        preorderDate = try fields.timestamp("preorderDate")
        appTransactionId = try fields.string("appTransactionId")
        originalPlatform = try fields.enumeration("originalPlatform")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        receiptType: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        versionExternalIdentifier: Int64? = nil,
        receiptCreationDate: Timestamp? = nil,
        originalPurchaseDate: Timestamp? = nil,
        originalApplicationVersion: String? = nil,
        deviceVerification: String? = nil,
        deviceVerificationNonce: String? = nil,
        preorderDate: Timestamp? = nil,
        appTransactionId: String? = nil,
        originalPlatform: PurchasePlatform? = nil
    ) {
        var json = JSONObject()
        json.add("receiptType", receiptType)
        json.add("appAppleId", appAppleId)
        json.add("bundleId", bundleId)
        json.add("applicationVersion", applicationVersion)
        json.add("versionExternalIdentifier", versionExternalIdentifier)
        json.add("receiptCreationDate", receiptCreationDate)
        json.add("originalPurchaseDate", originalPurchaseDate)
        json.add("originalApplicationVersion", originalApplicationVersion)
        json.add("deviceVerification", deviceVerification)
        json.add("deviceVerificationNonce", deviceVerificationNonce)
        json.add("preorderDate", preorderDate)
        json.add("appTransactionId", appTransactionId)
        json.add("originalPlatform", originalPlatform)
        self.json = json
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
    }

    /// The signing date: ``receiptCreationDate``.
    public var signedDate: Timestamp? { receiptCreationDate }
}

/// The platform on which the customer first purchased the app (`originalPlatform`).
public struct PurchasePlatform: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// iOS (iPhone and iPad).
    public static let iOS = Self(rawValue: "iOS")
    /// macOS.
    public static let macOS = Self(rawValue: "macOS")
    /// tvOS.
    public static let tvOS = Self(rawValue: "tvOS")
    /// visionOS.
    public static let visionOS = Self(rawValue: "visionOS")

    public static let knownValues: [Self] = [.iOS, .macOS, .tvOS, .visionOS]
    public static let knownNames: [Self: String] = [
        .iOS: "iOS",
        .macOS: "macOS",
        .tvOS: "tvOS",
        .visionOS: "visionOS",
    ]
}
