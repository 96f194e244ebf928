// Advanced Commerce API members of transactions and renewal info (`advancedCommerceInfo`).

/// Advanced Commerce details of a transaction (`advancedCommerceInfo` in a transaction).
public struct AdvancedCommerceTransactionInfo: PayloadModel {
    public let json: JSONObject

    /// The display name and description of the purchase.
    public let descriptors: AdvancedCommerceDescriptors?
    /// The estimated tax, in milliunits.
    public let estimatedTax: Int64?
    /// The items of the purchase.
    public let items: [AdvancedCommerceTransactionItem]?
    /// The duration of one subscription cycle.
    public let period: AdvancedCommercePeriod?
    /// The UUID that identified the Advanced Commerce API request.
    public let requestReferenceId: String?
    /// The tax code of the product.
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

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        descriptors: AdvancedCommerceDescriptors? = nil,
        estimatedTax: Int64? = nil,
        items: [AdvancedCommerceTransactionItem]? = nil,
        period: AdvancedCommercePeriod? = nil,
        requestReferenceId: String? = nil,
        taxCode: String? = nil,
        taxExclusivePrice: Int64? = nil,
        taxRate: String? = nil
    ) {
        var json = JSONObject()
        json.add("descriptors", descriptors)
        json.add("estimatedTax", estimatedTax)
        json.add("items", items)
        json.add("period", period)
        json.add("requestReferenceId", requestReferenceId)
        json.add("taxCode", taxCode)
        json.add("taxExclusivePrice", taxExclusivePrice)
        json.add("taxRate", taxRate)
        self.json = json
        self.descriptors = descriptors
        self.estimatedTax = estimatedTax
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
        self.taxExclusivePrice = taxExclusivePrice
        self.taxRate = taxRate
    }
}

/// Advanced Commerce details of the next renewal (`advancedCommerceInfo` in renewal info).
public struct AdvancedCommerceRenewalInfo: PayloadModel {
    public let json: JSONObject

    /// The token to send back, unchanged, in Advanced Commerce API requests about this subscription.
    public let consistencyToken: String?
    /// The display name and description of the subscription.
    public let descriptors: AdvancedCommerceDescriptors?
    /// The items of the next renewal.
    public let items: [AdvancedCommerceRenewalItem]?
    /// The duration of one subscription cycle.
    public let period: AdvancedCommercePeriod?
    /// The UUID that identified the Advanced Commerce API request.
    public let requestReferenceId: String?
    /// The tax code of the product.
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

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        consistencyToken: String? = nil,
        descriptors: AdvancedCommerceDescriptors? = nil,
        items: [AdvancedCommerceRenewalItem]? = nil,
        period: AdvancedCommercePeriod? = nil,
        requestReferenceId: String? = nil,
        taxCode: String? = nil
    ) {
        var json = JSONObject()
        json.add("consistencyToken", consistencyToken)
        json.add("descriptors", descriptors)
        json.add("items", items)
        json.add("period", period)
        json.add("requestReferenceId", requestReferenceId)
        json.add("taxCode", taxCode)
        self.json = json
        self.consistencyToken = consistencyToken
        self.descriptors = descriptors
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
    }
}

/// The display name and description of an Advanced Commerce product.
public struct AdvancedCommerceDescriptors: PayloadModel {
    public let json: JSONObject

    /// The description of the product.
    public let description: String?
    /// The product's display name.
    public let displayName: String?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        description = try fields.string("description")
        displayName = try fields.string("displayName")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        description: String? = nil,
        displayName: String? = nil
    ) {
        var json = JSONObject()
        json.add("description", description)
        json.add("displayName", displayName)
        self.json = json
        self.description = description
        self.displayName = displayName
    }
}

/// One item of an Advanced Commerce transaction.
public struct AdvancedCommerceTransactionItem: PayloadModel {
    public let json: JSONObject

    /// The JSON member `SKU`.
    public let sku: String?
    /// The description of the item.
    public let description: String?
    /// The item's display name.
    public let displayName: String?
    /// The discount offer applied to the item.
    public let offer: AdvancedCommerceOffer?
    /// The item price, in milliunits.
    public let price: Int64?
    /// The refunds of the item.
    public let refunds: [AdvancedCommerceRefund]?
    /// When the App Store revoked the item.
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

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        sku: String? = nil,
        description: String? = nil,
        displayName: String? = nil,
        offer: AdvancedCommerceOffer? = nil,
        price: Int64? = nil,
        refunds: [AdvancedCommerceRefund]? = nil,
        revocationDate: Timestamp? = nil
    ) {
        var json = JSONObject()
        json.add("SKU", sku)
        json.add("description", description)
        json.add("displayName", displayName)
        json.add("offer", offer)
        json.add("price", price)
        json.add("refunds", refunds)
        json.add("revocationDate", revocationDate)
        self.json = json
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.refunds = refunds
        self.revocationDate = revocationDate
    }
}

/// One item of the next Advanced Commerce renewal.
public struct AdvancedCommerceRenewalItem: PayloadModel {
    public let json: JSONObject

    /// The JSON member `SKU`.
    public let sku: String?
    /// The description of the item.
    public let description: String?
    /// The item's display name.
    public let displayName: String?
    /// The discount offer applied to the item.
    public let offer: AdvancedCommerceOffer?
    /// The item price, in milliunits.
    public let price: Int64?
    /// A price increase for the item at the next renewal.
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

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        sku: String? = nil,
        description: String? = nil,
        displayName: String? = nil,
        offer: AdvancedCommerceOffer? = nil,
        price: Int64? = nil,
        priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo? = nil
    ) {
        var json = JSONObject()
        json.add("SKU", sku)
        json.add("description", description)
        json.add("displayName", displayName)
        json.add("offer", offer)
        json.add("price", price)
        json.add("priceIncreaseInfo", priceIncreaseInfo)
        self.json = json
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.priceIncreaseInfo = priceIncreaseInfo
    }
}

/// A discount offer on an Advanced Commerce item.
public struct AdvancedCommerceOffer: PayloadModel {
    public let json: JSONObject

    /// The period of the offer.
    public let period: AdvancedCommerceOfferPeriod?
    /// How many periods the offer lasts.
    public let periodCount: Int32?
    /// The offer price, in milliunits.
    public let price: Int64?
    /// Why the offer applies.
    public let reason: AdvancedCommerceOfferReason?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        period = try fields.enumeration("period")
        periodCount = try fields.int32("periodCount")
        price = try fields.int64("price")
        reason = try fields.enumeration("reason")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        period: AdvancedCommerceOfferPeriod? = nil,
        periodCount: Int32? = nil,
        price: Int64? = nil,
        reason: AdvancedCommerceOfferReason? = nil
    ) {
        var json = JSONObject()
        json.add("period", period)
        json.add("periodCount", periodCount)
        json.add("price", price)
        json.add("reason", reason)
        self.json = json
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.reason = reason
    }
}

/// A refund of an Advanced Commerce item.
public struct AdvancedCommerceRefund: PayloadModel {
    public let json: JSONObject

    /// The refunded amount, in milliunits.
    public let refundAmount: Int64?
    /// When the refund was made.
    public let refundDate: Timestamp?
    /// Why the item was refunded.
    public let refundReason: AdvancedCommerceRefundReason?
    /// How much of the item was refunded.
    public let refundType: AdvancedCommerceRefundType?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        refundAmount = try fields.int64("refundAmount")
        refundDate = try fields.timestamp("refundDate")
        refundReason = try fields.enumeration("refundReason")
        refundType = try fields.enumeration("refundType")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        refundAmount: Int64? = nil,
        refundDate: Timestamp? = nil,
        refundReason: AdvancedCommerceRefundReason? = nil,
        refundType: AdvancedCommerceRefundType? = nil
    ) {
        var json = JSONObject()
        json.add("refundAmount", refundAmount)
        json.add("refundDate", refundDate)
        json.add("refundReason", refundReason)
        json.add("refundType", refundType)
        self.json = json
        self.refundAmount = refundAmount
        self.refundDate = refundDate
        self.refundReason = refundReason
        self.refundType = refundType
    }
}

/// A price increase scheduled for an Advanced Commerce renewal item.
public struct AdvancedCommercePriceIncreaseInfo: PayloadModel {
    public let json: JSONObject

    /// The SKUs that depend on this price increase.
    public let dependentSKUs: [String]?
    /// The new price, in milliunits.
    public let price: Int64?
    /// Where the price increase stands.
    public let status: AdvancedCommercePriceIncreaseInfoStatus?

    public init(json: JSONObject) throws(PayloadFieldError) {
        let fields = PayloadFields(json)
        self.json = json
        dependentSKUs = try fields.strings("dependentSKUs")
        price = try fields.int64("price")
        status = try fields.enumeration("status")
    }

    /// Builds the model from its members (for tests and hand-made data); ``json`` holds the
    /// present ones under Apple's names, in this order.
    public init(
        dependentSKUs: [String]? = nil,
        price: Int64? = nil,
        status: AdvancedCommercePriceIncreaseInfoStatus? = nil
    ) {
        var json = JSONObject()
        json.add("dependentSKUs", dependentSKUs)
        json.add("price", price)
        json.add("status", status)
        self.json = json
        self.dependentSKUs = dependentSKUs
        self.price = price
        self.status = status
    }
}
