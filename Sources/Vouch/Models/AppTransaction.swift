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

    /// The signing date: ``receiptCreationDate``.
    public var signedDate: Timestamp? { receiptCreationDate }
}

/// The platform on which the customer first purchased the app (`originalPlatform`).
public struct PurchasePlatform: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let iOS = Self(rawValue: "iOS")
    public static let macOS = Self(rawValue: "macOS")
    public static let tvOS = Self(rawValue: "tvOS")
    public static let visionOS = Self(rawValue: "visionOS")

    public static let knownValues: [Self] = [.iOS, .macOS, .tvOS, .visionOS]
    public static let knownNames: [Self: String] = [
        .iOS: "iOS",
        .macOS: "macOS",
        .tvOS: "tvOS",
        .visionOS: "visionOS",
    ]
}
