// Advanced Commerce API members of transactions and renewal info (`advancedCommerceInfo`).

/// Advanced Commerce details of a transaction (`advancedCommerceInfo` in a transaction).
public struct AdvancedCommerceTransactionInfo: PayloadModel {
    public let json: JSONObject

    public let descriptors: AdvancedCommerceDescriptors?
    /// The estimated tax, in milliunits.
    public let estimatedTax: Int64?
    public let items: [AdvancedCommerceTransactionItem]?
    public let period: AdvancedCommercePeriod?
    public let requestReferenceId: String?
    public let taxCode: String?
    /// The price before tax, in milliunits.
    public let taxExclusivePrice: Int64?
    /// The tax rate, as a decimal string.
    public let taxRate: String?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        descriptors = try fields.object("descriptors")
        estimatedTax = try fields.int64("estimatedTax")
        items = try fields.objects("items")
        period = try fields.enumeration("period")
        requestReferenceId = try fields.string("requestReferenceId")
        taxCode = try fields.string("taxCode")
        taxExclusivePrice = try fields.int64("taxExclusivePrice")
        taxRate = try fields.string("taxRate")
    }
}

/// Advanced Commerce details of the next renewal (`advancedCommerceInfo` in renewal info).
public struct AdvancedCommerceRenewalInfo: PayloadModel {
    public let json: JSONObject

    public let consistencyToken: String?
    public let descriptors: AdvancedCommerceDescriptors?
    public let items: [AdvancedCommerceRenewalItem]?
    public let period: AdvancedCommercePeriod?
    public let requestReferenceId: String?
    public let taxCode: String?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        consistencyToken = try fields.string("consistencyToken")
        descriptors = try fields.object("descriptors")
        items = try fields.objects("items")
        period = try fields.enumeration("period")
        requestReferenceId = try fields.string("requestReferenceId")
        taxCode = try fields.string("taxCode")
    }
}

/// The display name and description of an Advanced Commerce product.
public struct AdvancedCommerceDescriptors: PayloadModel {
    public let json: JSONObject

    public let description: String?
    public let displayName: String?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        description = try fields.string("description")
        displayName = try fields.string("displayName")
    }
}

/// One item of an Advanced Commerce transaction.
public struct AdvancedCommerceTransactionItem: PayloadModel {
    public let json: JSONObject

    /// The JSON member `SKU`.
    public let sku: String?
    public let description: String?
    public let displayName: String?
    public let offer: AdvancedCommerceOffer?
    /// The item price, in milliunits.
    public let price: Int64?
    public let refunds: [AdvancedCommerceRefund]?
    public let revocationDate: Timestamp?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        sku = try fields.string("SKU")
        description = try fields.string("description")
        displayName = try fields.string("displayName")
        offer = try fields.object("offer")
        price = try fields.int64("price")
        refunds = try fields.objects("refunds")
        revocationDate = try fields.timestamp("revocationDate")
    }
}

/// One item of the next Advanced Commerce renewal.
public struct AdvancedCommerceRenewalItem: PayloadModel {
    public let json: JSONObject

    /// The JSON member `SKU`.
    public let sku: String?
    public let description: String?
    public let displayName: String?
    public let offer: AdvancedCommerceOffer?
    /// The item price, in milliunits.
    public let price: Int64?
    public let priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        sku = try fields.string("SKU")
        description = try fields.string("description")
        displayName = try fields.string("displayName")
        offer = try fields.object("offer")
        price = try fields.int64("price")
        priceIncreaseInfo = try fields.object("priceIncreaseInfo")
    }
}

/// A discount offer on an Advanced Commerce item.
public struct AdvancedCommerceOffer: PayloadModel {
    public let json: JSONObject

    public let period: AdvancedCommerceOfferPeriod?
    /// How many periods the offer lasts.
    public let periodCount: Int32?
    /// The offer price, in milliunits.
    public let price: Int64?
    public let reason: AdvancedCommerceOfferReason?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        period = try fields.enumeration("period")
        periodCount = try fields.int32("periodCount")
        price = try fields.int64("price")
        reason = try fields.enumeration("reason")
    }
}

/// A refund of an Advanced Commerce item.
public struct AdvancedCommerceRefund: PayloadModel {
    public let json: JSONObject

    /// The refunded amount, in milliunits.
    public let refundAmount: Int64?
    public let refundDate: Timestamp?
    public let refundReason: AdvancedCommerceRefundReason?
    public let refundType: AdvancedCommerceRefundType?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        refundAmount = try fields.int64("refundAmount")
        refundDate = try fields.timestamp("refundDate")
        refundReason = try fields.enumeration("refundReason")
        refundType = try fields.enumeration("refundType")
    }
}

/// A price increase scheduled for an Advanced Commerce renewal item.
public struct AdvancedCommercePriceIncreaseInfo: PayloadModel {
    public let json: JSONObject

    public let dependentSKUs: [String]?
    /// The new price, in milliunits.
    public let price: Int64?
    public let status: AdvancedCommercePriceIncreaseInfoStatus?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        dependentSKUs = try fields.strings("dependentSKUs")
        price = try fields.int64("price")
        status = try fields.enumeration("status")
    }
}
