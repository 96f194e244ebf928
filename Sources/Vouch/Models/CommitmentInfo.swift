/// The 12-month commitment of a monthly subscription, as of this transaction (`commitmentInfo`
/// in a transaction).
public struct TransactionCommitmentInfo: PayloadModel {
    public let json: JSONObject

    /// The billing period number within the commitment (1 to 12).
    public let billingPeriodNumber: Int32?
    /// When the commitment ends.
    public let commitmentExpiresDate: Timestamp?
    /// The commitment price, in milliunits.
    public let commitmentPrice: Int64?
    /// How many billing periods the commitment has.
    public let totalBillingPeriods: Int32?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        billingPeriodNumber = try fields.int32("billingPeriodNumber")
        commitmentExpiresDate = try fields.timestamp("commitmentExpiresDate")
        commitmentPrice = try fields.int64("commitmentPrice")
        totalBillingPeriods = try fields.int32("totalBillingPeriods")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        billingPeriodNumber: Int32? = nil,
        commitmentExpiresDate: Timestamp? = nil,
        commitmentPrice: Int64? = nil,
        totalBillingPeriods: Int32? = nil
    ) {
        var json = JSONObject()
        json.add("billingPeriodNumber", billingPeriodNumber)
        json.add("commitmentExpiresDate", commitmentExpiresDate)
        json.add("commitmentPrice", commitmentPrice)
        json.add("totalBillingPeriods", totalBillingPeriods)
        self.json = json
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
    }
}

/// What happens when a 12-month commitment ends (`commitmentInfo` in renewal info).
public struct RenewalCommitmentInfo: PayloadModel {
    public let json: JSONObject

    /// The product the customer renews into after the commitment.
    public let commitmentAutoRenewProductId: String?
    /// Whether the subscription renews automatically when the commitment ends.
    public let commitmentAutoRenewStatus: AutoRenewStatus?
    /// How the renewal after the commitment is billed.
    public let commitmentRenewalBillingPlanType: RenewalBillingPlanType?
    /// When the commitment renews.
    public let commitmentRenewalDate: Timestamp?
    /// The renewal price, in milliunits.
    public let commitmentRenewalPrice: Int64?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        commitmentAutoRenewProductId = try fields.string("commitmentAutoRenewProductId")
        commitmentAutoRenewStatus = try fields.enumeration("commitmentAutoRenewStatus")
        commitmentRenewalBillingPlanType = try fields.enumeration("commitmentRenewalBillingPlanType")
        commitmentRenewalDate = try fields.timestamp("commitmentRenewalDate")
        commitmentRenewalPrice = try fields.int64("commitmentRenewalPrice")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        commitmentAutoRenewProductId: String? = nil,
        commitmentAutoRenewStatus: AutoRenewStatus? = nil,
        commitmentRenewalBillingPlanType: RenewalBillingPlanType? = nil,
        commitmentRenewalDate: Timestamp? = nil,
        commitmentRenewalPrice: Int64? = nil
    ) {
        var json = JSONObject()
        json.add("commitmentAutoRenewProductId", commitmentAutoRenewProductId)
        json.add("commitmentAutoRenewStatus", commitmentAutoRenewStatus)
        json.add("commitmentRenewalBillingPlanType", commitmentRenewalBillingPlanType)
        json.add("commitmentRenewalDate", commitmentRenewalDate)
        json.add("commitmentRenewalPrice", commitmentRenewalPrice)
        self.json = json
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }
}
