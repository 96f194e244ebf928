public import Foundation

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
    /// The app's bundle identifier.
    public let bundleId: String?
    /// The product identifier of the In-App Purchase.
    public let productId: String?
    /// The identifier of the subscription group the subscription belongs to.
    public let subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer's account.
    public let purchaseDate: Timestamp?
    /// The purchase date of the original transaction.
    public let originalPurchaseDate: Timestamp?
    /// When an auto-renewable subscription expires or renews.
    public let expiresDate: Timestamp?
    /// The number of consumable products purchased.
    public let quantity: Int32?
    /// The type of the In-App Purchase.
    public let type: ProductType?
    /// The UUID the app associated with the purchase, as sent.
    public let appAccountToken: String?
    /// Whether the customer bought the product or has it through Family Sharing.
    public let inAppOwnershipType: InAppOwnershipType?
    public let signedDate: Timestamp?
    /// Why the App Store refunded or revoked the transaction.
    public let revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction.
    public let revocationDate: Timestamp?
    /// Whether the customer upgraded to another subscription.
    public let isUpgraded: Bool?
    /// The type of subscription offer.
    public let offerType: OfferType?
    /// The offer code or promotional offer identifier.
    public let offerIdentifier: String?
    /// The server environment: sandbox or production.
    public let environment: AppStoreEnvironment?
    /// The three-letter country or region code of the storefront.
    public let storefront: String?
    /// The Apple-defined identifier of the storefront.
    public let storefrontId: String?
    /// Whether the customer bought the product or the App Store renewed a subscription.
    public let transactionReason: TransactionReason?
    /// The ISO 4217 currency code of ``price``.
    public let currency: String?
    /// The price in milliunits of ``currency``.
    public let price: Int64?
    /// The payment mode of the discount offer.
    public let offerDiscountType: OfferDiscountType?
    /// The unique identifier of the app download transaction.
    public let appTransactionId: String?
    /// The duration of the offer, as an ISO 8601 duration.
    public let offerPeriod: String?
    /// The kind of refund or revocation.
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

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        originalTransactionId: String? = nil,
        previousOriginalTransactionId: String? = nil,
        transactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Timestamp? = nil,
        originalPurchaseDate: Timestamp? = nil,
        expiresDate: Timestamp? = nil,
        quantity: Int32? = nil,
        type: ProductType? = nil,
        appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil,
        signedDate: Timestamp? = nil,
        revocationReason: RevocationReason? = nil,
        revocationDate: Timestamp? = nil,
        isUpgraded: Bool? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        transactionReason: TransactionReason? = nil,
        currency: String? = nil,
        price: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        revocationType: RevocationType? = nil,
        revocationPercentage: Int32? = nil,
        advancedCommerceInfo: AdvancedCommerceTransactionInfo? = nil,
        billingPlanType: BillingPlanType? = nil,
        commitmentInfo: TransactionCommitmentInfo? = nil
    ) {
        var json = JSONObject()
        json.add("originalTransactionId", originalTransactionId)
        json.add("previousOriginalTransactionId", previousOriginalTransactionId)
        json.add("transactionId", transactionId)
        json.add("webOrderLineItemId", webOrderLineItemId)
        json.add("bundleId", bundleId)
        json.add("productId", productId)
        json.add("subscriptionGroupIdentifier", subscriptionGroupIdentifier)
        json.add("purchaseDate", purchaseDate)
        json.add("originalPurchaseDate", originalPurchaseDate)
        json.add("expiresDate", expiresDate)
        json.add("quantity", quantity)
        json.add("type", type)
        json.add("appAccountToken", appAccountToken)
        json.add("inAppOwnershipType", inAppOwnershipType)
        json.add("signedDate", signedDate)
        json.add("revocationReason", revocationReason)
        json.add("revocationDate", revocationDate)
        json.add("isUpgraded", isUpgraded)
        json.add("offerType", offerType)
        json.add("offerIdentifier", offerIdentifier)
        json.add("environment", environment)
        json.add("storefront", storefront)
        json.add("storefrontId", storefrontId)
        json.add("transactionReason", transactionReason)
        json.add("currency", currency)
        json.add("price", price)
        json.add("offerDiscountType", offerDiscountType)
        json.add("appTransactionId", appTransactionId)
        json.add("offerPeriod", offerPeriod)
        json.add("revocationType", revocationType)
        json.add("revocationPercentage", revocationPercentage)
        json.add("advancedCommerceInfo", advancedCommerceInfo)
        json.add("billingPlanType", billingPlanType)
        json.add("commitmentInfo", commitmentInfo)
        self.json = json
        self.originalTransactionId = originalTransactionId
        self.previousOriginalTransactionId = previousOriginalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.advancedCommerceInfo = advancedCommerceInfo
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
    }

    /// ``appAccountToken`` as a UUID, or `nil` when absent or not a UUID. Compare UUIDs, not
    /// their text: the payload's text may be lower-case, `UUID.uuidString` is upper-case.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap { UUID(uuidString: $0) } }
}
