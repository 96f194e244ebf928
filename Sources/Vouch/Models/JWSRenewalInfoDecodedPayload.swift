public import Foundation

/// Decoded renewal information of an auto-renewable subscription: the payload of a
/// `signedRenewalInfo` JWS.
///
/// Every member is optional, as in Apple's documentation; members this version does not model
/// stay in ``json``.
public struct JWSRenewalInfoDecodedPayload: SignedPayload {
    public let json: JSONObject

    /// Why the subscription expired.
    public let expirationIntent: ExpirationIntent?
    /// The transaction identifier of the original purchase.
    public let originalTransactionId: String?
    /// The product that renews at the next billing period.
    public let autoRenewProductId: String?
    /// The product identifier of the subscription's current period.
    public let productId: String?
    /// Whether the subscription renews automatically.
    public let autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is still trying to renew an expired subscription.
    public let isInBillingRetryPeriod: Bool?
    /// Whether the customer has responded to a price increase that requires consent.
    public let priceIncreaseStatus: PriceIncreaseStatus?
    /// When the Billing Grace Period for renewals expires.
    public let gracePeriodExpiresDate: Timestamp?
    /// The type of offer that applies to the next renewal.
    public let offerType: OfferType?
    /// The offer code or promotional offer identifier of the next renewal's offer.
    public let offerIdentifier: String?
    public let signedDate: Timestamp?
    /// The server environment: sandbox or production.
    public let environment: AppStoreEnvironment?
    /// The earliest start of the subscription, ignoring lapses of paid service shorter than 60 days.
    public let recentSubscriptionStartDate: Timestamp?
    /// When the most recent auto-renewable subscription purchase expires.
    public let renewalDate: Timestamp?
    /// The ISO 4217 currency code of ``renewalPrice``.
    public let currency: String?
    /// The price of the next renewal, in milliunits of ``currency``.
    public let renewalPrice: Int64?
    /// The payment mode of the next renewal's discount offer.
    public let offerDiscountType: OfferDiscountType?
    /// Win-back offers the customer may redeem, better offers first.
    public let eligibleWinBackOfferIds: [String]?
    /// The UUID the app associated with the upcoming renewal, as sent.
    public let appAccountToken: String?
    /// The unique identifier of the app download transaction.
    public let appTransactionId: String?
    /// The duration of the offer, as an ISO 8601 duration.
    public let offerPeriod: String?
    /// Present only for Advanced Commerce API SKUs.
    public let advancedCommerceInfo: AdvancedCommerceRenewalInfo?
    /// Present only for monthly subscriptions with a 12-month commitment.
    public let renewalBillingPlanType: RenewalBillingPlanType?
    /// Present only for monthly subscriptions with a 12-month commitment.
    public let commitmentInfo: RenewalCommitmentInfo?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        expirationIntent = try fields.enumeration("expirationIntent")
        originalTransactionId = try fields.string("originalTransactionId")
        autoRenewProductId = try fields.string("autoRenewProductId")
        productId = try fields.string("productId")
        autoRenewStatus = try fields.enumeration("autoRenewStatus")
        isInBillingRetryPeriod = try fields.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try fields.enumeration("priceIncreaseStatus")
        gracePeriodExpiresDate = try fields.timestamp("gracePeriodExpiresDate")
        offerType = try fields.enumeration("offerType")
        offerIdentifier = try fields.string("offerIdentifier")
        signedDate = try fields.timestamp("signedDate")
        environment = try fields.enumeration("environment")
        recentSubscriptionStartDate = try fields.timestamp("recentSubscriptionStartDate")
        renewalDate = try fields.timestamp("renewalDate")
        currency = try fields.string("currency")
        renewalPrice = try fields.int64("renewalPrice")
        offerDiscountType = try fields.enumeration("offerDiscountType")
        eligibleWinBackOfferIds = try fields.strings("eligibleWinBackOfferIds")
        appAccountToken = try fields.string("appAccountToken")
        appTransactionId = try fields.string("appTransactionId")
        offerPeriod = try fields.string("offerPeriod")
        advancedCommerceInfo = try fields.object("advancedCommerceInfo")
        renewalBillingPlanType = try fields.enumeration("renewalBillingPlanType")
        commitmentInfo = try fields.object("commitmentInfo")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        expirationIntent: ExpirationIntent? = nil,
        originalTransactionId: String? = nil,
        autoRenewProductId: String? = nil,
        productId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        priceIncreaseStatus: PriceIncreaseStatus? = nil,
        gracePeriodExpiresDate: Timestamp? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        signedDate: Timestamp? = nil,
        environment: AppStoreEnvironment? = nil,
        recentSubscriptionStartDate: Timestamp? = nil,
        renewalDate: Timestamp? = nil,
        currency: String? = nil,
        renewalPrice: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        eligibleWinBackOfferIds: [String]? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        advancedCommerceInfo: AdvancedCommerceRenewalInfo? = nil,
        renewalBillingPlanType: RenewalBillingPlanType? = nil,
        commitmentInfo: RenewalCommitmentInfo? = nil
    ) {
        var json = JSONObject()
        json.add("expirationIntent", expirationIntent)
        json.add("originalTransactionId", originalTransactionId)
        json.add("autoRenewProductId", autoRenewProductId)
        json.add("productId", productId)
        json.add("autoRenewStatus", autoRenewStatus)
        json.add("isInBillingRetryPeriod", isInBillingRetryPeriod)
        json.add("priceIncreaseStatus", priceIncreaseStatus)
        json.add("gracePeriodExpiresDate", gracePeriodExpiresDate)
        json.add("offerType", offerType)
        json.add("offerIdentifier", offerIdentifier)
        json.add("signedDate", signedDate)
        json.add("environment", environment)
        json.add("recentSubscriptionStartDate", recentSubscriptionStartDate)
        json.add("renewalDate", renewalDate)
        json.add("currency", currency)
        json.add("renewalPrice", renewalPrice)
        json.add("offerDiscountType", offerDiscountType)
        json.add("eligibleWinBackOfferIds", eligibleWinBackOfferIds)
        json.add("appAccountToken", appAccountToken)
        json.add("appTransactionId", appTransactionId)
        json.add("offerPeriod", offerPeriod)
        json.add("advancedCommerceInfo", advancedCommerceInfo)
        json.add("renewalBillingPlanType", renewalBillingPlanType)
        json.add("commitmentInfo", commitmentInfo)
        self.json = json
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.advancedCommerceInfo = advancedCommerceInfo
        self.renewalBillingPlanType = renewalBillingPlanType
        self.commitmentInfo = commitmentInfo
    }

    /// ``appAccountToken`` as a UUID, or `nil` when absent or not a UUID. Compare UUIDs, not
    /// their text: the payload's text may be lower-case, `UUID.uuidString` is upper-case.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap { UUID(uuidString: $0) } }
}
