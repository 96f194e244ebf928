/// A decoded App Store Server Notification V2: the payload of the `signedPayload` JWS your
/// server receives.
///
/// At most one of ``data``, ``summary``, ``externalPurchaseToken`` and ``appData`` is present.
/// The nested `signedTransactionInfo`, `signedRenewalInfo` and `signedAppTransactionInfo` are
/// JWS strings of their own, to verify before decoding.
public struct ResponseBodyV2DecodedPayload: SignedPayload {
    public let json: JSONObject

    /// The event the notification reports.
    public let notificationType: NotificationType?
    /// Present only for some notification types.
    public let subtype: NotificationSubtype?
    /// The notification's unique identifier, as sent.
    public let notificationUUID: String?
    /// App metadata and the signed transaction and renewal information.
    public let data: NotificationData?
    /// The App Store Server Notifications version, `"2.0"`.
    public let version: String?
    public let signedDate: Timestamp?
    /// The result of a subscription-renewal-date extension for all eligible subscribers.
    public let summary: Summary?
    /// Present when ``notificationType`` is `EXTERNAL_PURCHASE_TOKEN`.
    public let externalPurchaseToken: ExternalPurchaseToken?
    /// App metadata and the signed app transaction (for example, `RESCIND_CONSENT`).
    public let appData: AppData?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        notificationType = try fields.enumeration("notificationType")
        subtype = try fields.enumeration("subtype")
        notificationUUID = try fields.string("notificationUUID")
        data = try fields.object("data")
        version = try fields.string("version")
        signedDate = try fields.timestamp("signedDate")
        summary = try fields.object("summary")
        externalPurchaseToken = try fields.object("externalPurchaseToken")
        appData = try fields.object("appData")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        notificationType: NotificationType? = nil,
        subtype: NotificationSubtype? = nil,
        notificationUUID: String? = nil,
        data: NotificationData? = nil,
        version: String? = nil,
        signedDate: Timestamp? = nil,
        summary: Summary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil,
        appData: AppData? = nil
    ) {
        var json = JSONObject()
        json.add("notificationType", notificationType)
        json.add("subtype", subtype)
        json.add("notificationUUID", notificationUUID)
        json.add("data", data)
        json.add("version", version)
        json.add("signedDate", signedDate)
        json.add("summary", summary)
        json.add("externalPurchaseToken", externalPurchaseToken)
        json.add("appData", appData)
        self.json = json
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.version = version
        self.signedDate = signedDate
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
    }

    /// The bundle identifier the notification applies to, taken as Apple's verifier does: from
    /// the first present object among ``data``, ``summary``, ``externalPurchaseToken`` and
    /// ``appData``. A present object without the member gives `nil`; later objects are not consulted.
    public var effectiveBundleId: String? { effectiveApp?.bundleId }

    /// The App Apple ID the notification applies to, from the same object as ``effectiveBundleId``.
    public var effectiveAppAppleId: Int64? { effectiveApp?.appAppleId }

    /// The environment the notification applies to, from the same object as ``effectiveBundleId``.
    /// An external purchase token carries no environment: it is ``AppStoreEnvironment/sandbox``
    /// when its `externalPurchaseId` starts with `SANDBOX`, else ``AppStoreEnvironment/production``.
    public var effectiveEnvironment: AppStoreEnvironment? { effectiveApp?.environment }

    private var effectiveApp: (bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?)? {
        if let data {
            return (data.bundleId, data.appAppleId, data.environment)
        }
        if let summary {
            return (summary.bundleId, summary.appAppleId, summary.environment)
        }
        if let token = externalPurchaseToken {
            let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
            return (token.bundleId, token.appAppleId, sandbox ? .sandbox : .production)
        }
        if let appData {
            return (appData.bundleId, appData.appAppleId, appData.environment)
        }
        return nil
    }
}
