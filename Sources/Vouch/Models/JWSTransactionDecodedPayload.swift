/// A decoded transaction: the payload of a `signedTransactionInfo` JWS (App Store Server API,
/// App Store Server Notifications, or StoreKit on the device).
///
/// Every member is optional, as in Apple's documentation; members this version does not model
/// stay in ``json``.
public struct JWSTransactionDecodedPayload: SignedPayload {
    public let json: JSONObject

    /// The transaction identifier of the original purchase.
    public let originalTransactionId: String?
    /// The original transaction identifier of a subscription before migration.
    public let previousOriginalTransactionId: String?
    /// The unique identifier of this transaction.
    public let transactionId: String?
    /// The identifier of subscription-purchase events across devices, renewals included.
    public let webOrderLineItemId: String?
    public let bundleId: String?
    public let productId: String?
    public let subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer's account.
    public let purchaseDate: Timestamp?
    /// The purchase date of the original transaction.
    public let originalPurchaseDate: Timestamp?
    /// When an auto-renewable subscription expires or renews.
    public let expiresDate: Timestamp?
    /// The number of consumable products purchased.
    public let quantity: Int32?
    public let type: ProductType?
    /// The UUID the app associated with the purchase, as sent.
    public let appAccountToken: String?
    public let inAppOwnershipType: InAppOwnershipType?
    public let signedDate: Timestamp?
    public let revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction.
    public let revocationDate: Timestamp?
    /// Whether the customer upgraded to another subscription.
    public let isUpgraded: Bool?
    public let offerType: OfferType?
    /// The offer code or promotional offer identifier.
    public let offerIdentifier: String?
    public let environment: AppStoreEnvironment?
    /// The three-letter country or region code of the storefront.
    public let storefront: String?
    public let storefrontId: String?
    public let transactionReason: TransactionReason?
    /// The ISO 4217 currency code of ``price``.
    public let currency: String?
    /// The price in milliunits of ``currency``.
    public let price: Int64?
    public let offerDiscountType: OfferDiscountType?
    /// The unique identifier of the app download transaction.
    public let appTransactionId: String?
    /// The duration of the offer, as an ISO 8601 duration.
    public let offerPeriod: String?
    public let revocationType: RevocationType?
    /// The refunded or revoked share of the transaction, in milliunits (100000 is 100%).
    public let revocationPercentage: Int32?
    /// Present only for Advanced Commerce API SKUs.
    public let advancedCommerceInfo: AdvancedCommerceTransactionInfo?
    /// Present only for monthly subscriptions with a 12-month commitment.
    public let billingPlanType: BillingPlanType?
    /// Present only for monthly subscriptions with a 12-month commitment.
    public let commitmentInfo: TransactionCommitmentInfo?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        originalTransactionId = try fields.string("originalTransactionId")
        previousOriginalTransactionId = try fields.string("previousOriginalTransactionId")
        transactionId = try fields.string("transactionId")
        webOrderLineItemId = try fields.string("webOrderLineItemId")
        bundleId = try fields.string("bundleId")
        productId = try fields.string("productId")
        subscriptionGroupIdentifier = try fields.string("subscriptionGroupIdentifier")
        purchaseDate = try fields.timestamp("purchaseDate")
        originalPurchaseDate = try fields.timestamp("originalPurchaseDate")
        expiresDate = try fields.timestamp("expiresDate")
        quantity = try fields.int32("quantity")
        type = try fields.enumeration("type")
        appAccountToken = try fields.string("appAccountToken")
        inAppOwnershipType = try fields.enumeration("inAppOwnershipType")
        signedDate = try fields.timestamp("signedDate")
        revocationReason = try fields.enumeration("revocationReason")
        revocationDate = try fields.timestamp("revocationDate")
        isUpgraded = try fields.bool("isUpgraded")
        offerType = try fields.enumeration("offerType")
        offerIdentifier = try fields.string("offerIdentifier")
        environment = try fields.enumeration("environment")
        storefront = try fields.string("storefront")
        storefrontId = try fields.string("storefrontId")
        transactionReason = try fields.enumeration("transactionReason")
        currency = try fields.string("currency")
        price = try fields.int64("price")
        offerDiscountType = try fields.enumeration("offerDiscountType")
        appTransactionId = try fields.string("appTransactionId")
        offerPeriod = try fields.string("offerPeriod")
        revocationType = try fields.enumeration("revocationType")
        revocationPercentage = try fields.int32("revocationPercentage")
        advancedCommerceInfo = try fields.object("advancedCommerceInfo")
        billingPlanType = try fields.enumeration("billingPlanType")
        commitmentInfo = try fields.object("commitmentInfo")
    }
}
