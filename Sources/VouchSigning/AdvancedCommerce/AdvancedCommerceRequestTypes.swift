internal import Foundation
public import Vouch

// MARK: One-time charge

/// The product of a one-time charge.
public struct AdvancedCommerceOneTimeChargeItem: Sendable, Hashable {
    /// The product identifier in your own system (`SKU`, at most 128 characters).
    public var sku: String
    /// A description of the SKU (at most 45 characters).
    public var description: String
    /// The name to show the customer (at most 30 characters).
    public var displayName: String
    /// The price, in milliunits of the currency.
    public var price: Int64

    /// An item with these members.
    public init(sku: String, description: String, displayName: String, price: Int64) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.price = price
    }

    func json(_ path: String) throws(SigningError) -> JSONValue {
        .object(try PricedItem(sku: sku, description: description, displayName: displayName, price: price).object(path))
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            let item = try PricedItem(&fields)
            return Self(sku: item.sku, description: item.description, displayName: item.displayName, price: item.price)
        }
    }
}

/// A customer buys a one-time-charge product (`CREATE_ONE_TIME_CHARGE`).
public struct AdvancedCommerceOneTimeChargeCreateRequest: AdvancedCommerceInAppRequest, Hashable {
    /// `CREATE_ONE_TIME_CHARGE`.
    public static let operation = "CREATE_ONE_TIME_CHARGE"
    /// The request's metadata.
    public var requestInfo: AdvancedCommerceRequestInfo
    /// The currency of the price (ISO 4217).
    public var currency: String
    /// The product.
    public var item: AdvancedCommerceOneTimeChargeItem
    /// The product's tax code.
    public var taxCode: String
    /// The storefront of the transaction, if set.
    public var storefront: String?

    /// A request with these members.
    public init(
        requestInfo: AdvancedCommerceRequestInfo, currency: String, item: AdvancedCommerceOneTimeChargeItem,
        taxCode: String, storefront: String? = nil
    ) {
        self.requestInfo = requestInfo
        self.currency = currency
        self.item = item
        self.taxCode = taxCode
        self.storefront = storefront
    }

    /// The request's JSON, after checking Apple's field rules.
    public func jsonObject() throws(SigningError) -> JSONObject {
        var object = AdvancedCommerceRequests.object(
            Self.self,
            [
                .init("requestInfo", requestInfo.json), .init("currency", .string(currency)),
                .init("item", try item.json("item")), .init("taxCode", .string(taxCode)),
            ])
        object.appendIfPresent("storefront", storefront.map(JSONValue.string))
        return object
    }

    init(_ fields: inout RequestFields) throws(SigningError) {
        self.init(
            requestInfo: try fields.required("requestInfo", AdvancedCommerceRequestInfo.read),
            currency: try fields.required("currency", RequestFields.string),
            item: try fields.required("item", AdvancedCommerceOneTimeChargeItem.read),
            taxCode: try fields.required("taxCode", RequestFields.string),
            storefront: try fields.optional("storefront", RequestFields.string))
    }
}

// MARK: Subscription create

/// One item of a subscription to create.
public struct AdvancedCommerceSubscriptionCreateItem: Sendable, Hashable {
    /// The product identifier in your own system (`SKU`, at most 128 characters).
    public var sku: String
    /// A description of the SKU (at most 45 characters).
    public var description: String
    /// The name to show the customer (at most 30 characters).
    public var displayName: String
    /// The price, in milliunits of the currency.
    public var price: Int64
    /// A discount offer on the item; every member of it is required.
    public var offer: AdvancedCommerceOffer?

    /// An item with these members.
    public init(
        sku: String, description: String, displayName: String, price: Int64, offer: AdvancedCommerceOffer? = nil
    ) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.price = price
        self.offer = offer
    }

    func json(_ path: String) throws(SigningError) -> JSONValue {
        var object = try PricedItem(sku: sku, description: description, displayName: displayName, price: price)
            .object(path)
        object.appendIfPresent("offer", try offer?.requestJSON("\(path).offer"))
        return .object(object)
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            let item = try PricedItem(&fields)
            return Self(
                sku: item.sku, description: item.description, displayName: item.displayName, price: item.price,
                offer: try fields.optional("offer", AdvancedCommerceOffer.request))
        }
    }
}

/// A customer subscribes (`CREATE_SUBSCRIPTION`).
public struct AdvancedCommerceSubscriptionCreateRequest: AdvancedCommerceInAppRequest, Hashable {
    /// `CREATE_SUBSCRIPTION`.
    public static let operation = "CREATE_SUBSCRIPTION"
    /// The request's metadata.
    public var requestInfo: AdvancedCommerceRequestInfo
    /// The currency of the prices (ISO 4217).
    public var currency: String
    /// The subscription's display name and description; both are required.
    public var descriptors: AdvancedCommerceDescriptors
    /// The items; at least one.
    public var items: [AdvancedCommerceSubscriptionCreateItem]
    /// The duration of one billing cycle.
    public var period: AdvancedCommercePeriod
    /// The tax code.
    public var taxCode: String
    /// The transaction id of a subscription this one follows, if any.
    public var previousTransactionId: String?
    /// The storefront of the transaction, if set.
    public var storefront: String?

    /// A request with these members.
    public init(
        requestInfo: AdvancedCommerceRequestInfo, currency: String, descriptors: AdvancedCommerceDescriptors,
        items: [AdvancedCommerceSubscriptionCreateItem], period: AdvancedCommercePeriod, taxCode: String,
        previousTransactionId: String? = nil, storefront: String? = nil
    ) {
        self.requestInfo = requestInfo
        self.currency = currency
        self.descriptors = descriptors
        self.items = items
        self.period = period
        self.taxCode = taxCode
        self.previousTransactionId = previousTransactionId
        self.storefront = storefront
    }

    /// The request's JSON, after checking Apple's field rules.
    public func jsonObject() throws(SigningError) -> JSONObject {
        try RequestRules.items(items.count, "items")
        var object = AdvancedCommerceRequests.object(
            Self.self,
            [
                .init("requestInfo", requestInfo.json), .init("currency", .string(currency)),
                .init("descriptors", try descriptors.requestJSON("descriptors")),
                .init(
                    "items",
                    try RequestRules.encode(items, "items") { item, path throws(SigningError) in try item.json(path) }),
                .init("period", .string(period.rawValue)), .init("taxCode", .string(taxCode)),
            ])
        object.appendIfPresent("previousTransactionId", previousTransactionId.map(JSONValue.string))
        object.appendIfPresent("storefront", storefront.map(JSONValue.string))
        return object
    }

    init(_ fields: inout RequestFields) throws(SigningError) {
        self.init(
            requestInfo: try fields.required("requestInfo", AdvancedCommerceRequestInfo.read),
            currency: try fields.required("currency", RequestFields.string),
            descriptors: try fields.required("descriptors", AdvancedCommerceDescriptors.request),
            items: try fields.required("items") { value, path throws(SigningError) in
                try RequestFields.array(value, path, AdvancedCommerceSubscriptionCreateItem.read)
            },
            period: AdvancedCommercePeriod(rawValue: try fields.required("period", RequestFields.string)),
            taxCode: try fields.required("taxCode", RequestFields.string),
            previousTransactionId: try fields.optional("previousTransactionId", RequestFields.string),
            storefront: try fields.optional("storefront", RequestFields.string))
    }
}

// MARK: Subscription modify

/// An item to add to a subscription.
public struct AdvancedCommerceSubscriptionModifyAddItem: Sendable, Hashable {
    /// The product identifier in your own system (`SKU`, at most 128 characters).
    public var sku: String
    /// A description of the SKU (at most 45 characters).
    public var description: String
    /// The name to show the customer (at most 30 characters).
    public var displayName: String
    /// The price, in milliunits of the currency.
    public var price: Int64
    /// A discount offer on the item; every member of it is required.
    public var offer: AdvancedCommerceOffer?
    /// The prorated price for the rest of the current cycle, in milliunits.
    public var proratedPrice: Int64?

    /// An item with these members.
    public init(
        sku: String, description: String, displayName: String, price: Int64, offer: AdvancedCommerceOffer? = nil,
        proratedPrice: Int64? = nil
    ) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.price = price
        self.offer = offer
        self.proratedPrice = proratedPrice
    }

    func json(_ path: String) throws(SigningError) -> JSONValue {
        var object = try PricedItem(sku: sku, description: description, displayName: displayName, price: price)
            .object(path)
        object.appendIfPresent("offer", try offer?.requestJSON("\(path).offer"))
        object.appendIfPresent("proratedPrice", proratedPrice.map { .number(String($0)) })
        return .object(object)
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            let item = try PricedItem(&fields)
            return Self(
                sku: item.sku, description: item.description, displayName: item.displayName, price: item.price,
                offer: try fields.optional("offer", AdvancedCommerceOffer.request),
                proratedPrice: try fields.optional("proratedPrice", RequestFields.integer))
        }
    }
}

/// An item of a subscription to change into another.
public struct AdvancedCommerceSubscriptionModifyChangeItem: Sendable, Hashable {
    /// The new product identifier (`SKU`, at most 128 characters).
    public var sku: String
    /// The product identifier being changed (`currentSKU`, at most 128 characters).
    public var currentSKU: String
    /// A description of the new SKU (at most 45 characters).
    public var description: String
    /// The name to show the customer (at most 30 characters).
    public var displayName: String
    /// The new price, in milliunits of the currency.
    public var price: Int64
    /// Why the item changes.
    public var reason: AdvancedCommerceReason
    /// When the change takes effect.
    public var effective: AdvancedCommerceEffective
    /// A discount offer on the item; every member of it is required.
    public var offer: AdvancedCommerceOffer?
    /// The prorated price for the rest of the current cycle, in milliunits.
    public var proratedPrice: Int64?

    /// An item with these members.
    public init(
        sku: String, currentSKU: String, description: String, displayName: String, price: Int64,
        reason: AdvancedCommerceReason, effective: AdvancedCommerceEffective, offer: AdvancedCommerceOffer? = nil,
        proratedPrice: Int64? = nil
    ) {
        self.sku = sku
        self.currentSKU = currentSKU
        self.description = description
        self.displayName = displayName
        self.price = price
        self.reason = reason
        self.effective = effective
        self.offer = offer
        self.proratedPrice = proratedPrice
    }

    func json(_ path: String) throws(SigningError) -> JSONValue {
        try RequestRules.sku(currentSKU, "\(path).currentSKU")
        var object = try PricedItem(sku: sku, description: description, displayName: displayName, price: price)
            .object(path)
        object.members.insert(.init("currentSKU", .string(currentSKU)), at: 1)
        object.members += [.init("reason", .string(reason.rawValue)), .init("effective", .string(effective.rawValue))]
        object.appendIfPresent("offer", try offer?.requestJSON("\(path).offer"))
        object.appendIfPresent("proratedPrice", proratedPrice.map { .number(String($0)) })
        return .object(object)
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            let item = try PricedItem(&fields)
            return Self(
                sku: item.sku, currentSKU: try fields.required("currentSKU", RequestFields.string),
                description: item.description, displayName: item.displayName, price: item.price,
                reason: AdvancedCommerceReason(rawValue: try fields.required("reason", RequestFields.string)),
                effective: AdvancedCommerceEffective(rawValue: try fields.required("effective", RequestFields.string)),
                offer: try fields.optional("offer", AdvancedCommerceOffer.request),
                proratedPrice: try fields.optional("proratedPrice", RequestFields.integer))
        }
    }
}

/// An item to remove from a subscription, or to reactivate (its `SKU` alone).
public struct AdvancedCommerceSKUItem: Sendable, Hashable {
    /// The product identifier (`SKU`, at most 128 characters).
    public var sku: String

    /// The item `sku`.
    public init(sku: String) {
        self.sku = sku
    }

    func json(_ path: String) throws(SigningError) -> JSONValue {
        try RequestRules.sku(sku, "\(path).SKU")
        return .object(JSONObject([.init("SKU", .string(sku))]))
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            Self(sku: try fields.required("SKU", RequestFields.string))
        }
    }
}

/// New descriptors for a subscription.
public struct AdvancedCommerceSubscriptionModifyDescriptors: Sendable, Hashable {
    /// When the change takes effect.
    public var effective: AdvancedCommerceEffective
    /// The new description (at most 45 characters), if it changes.
    public var description: String?
    /// The new display name (at most 30 characters), if it changes.
    public var displayName: String?

    /// Descriptors with these members.
    public init(effective: AdvancedCommerceEffective, description: String? = nil, displayName: String? = nil) {
        self.effective = effective
        self.description = description
        self.displayName = displayName
    }

    func json(_ path: String) throws(SigningError) -> JSONValue {
        var object = JSONObject([.init("effective", .string(effective.rawValue))])
        if let description { try RequestRules.description(description, "\(path).description") }
        if let displayName { try RequestRules.displayName(displayName, "\(path).displayName") }
        object.appendIfPresent("description", description.map(JSONValue.string))
        object.appendIfPresent("displayName", displayName.map(JSONValue.string))
        return .object(object)
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            Self(
                effective: AdvancedCommerceEffective(rawValue: try fields.required("effective", RequestFields.string)),
                description: try fields.optional("description", RequestFields.string),
                displayName: try fields.optional("displayName", RequestFields.string))
        }
    }
}

/// A new billing period for a subscription.
public struct AdvancedCommerceSubscriptionModifyPeriodChange: Sendable, Hashable {
    /// When the change takes effect.
    public var effective: AdvancedCommerceEffective
    /// The new duration of one billing cycle.
    public var period: AdvancedCommercePeriod

    /// A period change with these members.
    public init(effective: AdvancedCommerceEffective, period: AdvancedCommercePeriod) {
        self.effective = effective
        self.period = period
    }

    var json: JSONValue {
        .object(
            JSONObject([.init("effective", .string(effective.rawValue)), .init("period", .string(period.rawValue))]))
    }

    static func read(_ value: JSONValue, _ path: String) throws(SigningError) -> Self {
        try RequestFields.object(value, path) { fields throws(SigningError) in
            Self(
                effective: AdvancedCommerceEffective(rawValue: try fields.required("effective", RequestFields.string)),
                period: AdvancedCommercePeriod(rawValue: try fields.required("period", RequestFields.string)))
        }
    }
}

/// A customer changes a subscription (`MODIFY_SUBSCRIPTION`).
public struct AdvancedCommerceSubscriptionModifyInAppRequest: AdvancedCommerceInAppRequest, Hashable {
    /// `MODIFY_SUBSCRIPTION`.
    public static let operation = "MODIFY_SUBSCRIPTION"
    /// The request's metadata.
    public var requestInfo: AdvancedCommerceRequestInfo
    /// The subscription's transaction id.
    public var transactionId: String
    /// Whether the billing cycle stays as it is.
    public var retainBillingCycle: Bool
    /// Items to add; not empty when given.
    public var addItems: [AdvancedCommerceSubscriptionModifyAddItem]?
    /// Items to change; not empty when given.
    public var changeItems: [AdvancedCommerceSubscriptionModifyChangeItem]?
    /// Items to remove.
    public var removeItems: [AdvancedCommerceSKUItem]?
    /// The currency of the prices (ISO 4217), if any price changes.
    public var currency: String?
    /// New descriptors, if they change.
    public var descriptors: AdvancedCommerceSubscriptionModifyDescriptors?
    /// A new billing period, if it changes.
    public var periodChange: AdvancedCommerceSubscriptionModifyPeriodChange?
    /// The storefront, if set.
    public var storefront: String?
    /// The tax code, if it changes.
    public var taxCode: String?

    /// A request with these members.
    public init(
        requestInfo: AdvancedCommerceRequestInfo, transactionId: String, retainBillingCycle: Bool,
        addItems: [AdvancedCommerceSubscriptionModifyAddItem]? = nil,
        changeItems: [AdvancedCommerceSubscriptionModifyChangeItem]? = nil,
        removeItems: [AdvancedCommerceSKUItem]? = nil, currency: String? = nil,
        descriptors: AdvancedCommerceSubscriptionModifyDescriptors? = nil,
        periodChange: AdvancedCommerceSubscriptionModifyPeriodChange? = nil, storefront: String? = nil,
        taxCode: String? = nil
    ) {
        self.requestInfo = requestInfo
        self.transactionId = transactionId
        self.retainBillingCycle = retainBillingCycle
        self.addItems = addItems
        self.changeItems = changeItems
        self.removeItems = removeItems
        self.currency = currency
        self.descriptors = descriptors
        self.periodChange = periodChange
        self.storefront = storefront
        self.taxCode = taxCode
    }

    /// The request's JSON, after checking Apple's field rules.
    public func jsonObject() throws(SigningError) -> JSONObject {
        var object = AdvancedCommerceRequests.object(
            Self.self,
            [
                .init("requestInfo", requestInfo.json), .init("transactionId", .string(transactionId)),
                .init("retainBillingCycle", .bool(retainBillingCycle)),
            ])
        if let addItems {
            try RequestRules.items(addItems.count, "addItems")
            object.members.append(
                .init(
                    "addItems",
                    try RequestRules.encode(addItems, "addItems") { item, path throws(SigningError) in
                        try item.json(path)
                    }))
        }
        if let changeItems {
            try RequestRules.items(changeItems.count, "changeItems")
            object.members.append(
                .init(
                    "changeItems",
                    try RequestRules.encode(changeItems, "changeItems") { item, path throws(SigningError) in
                        try item.json(path)
                    }))
        }
        if let removeItems {
            object.members.append(
                .init(
                    "removeItems",
                    try RequestRules.encode(removeItems, "removeItems") { item, path throws(SigningError) in
                        try item.json(path)
                    }))
        }
        object.appendIfPresent("currency", currency.map(JSONValue.string))
        object.appendIfPresent("descriptors", try descriptors?.json("descriptors"))
        object.appendIfPresent("periodChange", periodChange?.json)
        object.appendIfPresent("storefront", storefront.map(JSONValue.string))
        object.appendIfPresent("taxCode", taxCode.map(JSONValue.string))
        return object
    }

    init(_ fields: inout RequestFields) throws(SigningError) {
        self.init(
            requestInfo: try fields.required("requestInfo", AdvancedCommerceRequestInfo.read),
            transactionId: try fields.required("transactionId", RequestFields.string),
            retainBillingCycle: try fields.required("retainBillingCycle", RequestFields.bool),
            addItems: try fields.optional("addItems") { value, path throws(SigningError) in
                try RequestFields.array(value, path, AdvancedCommerceSubscriptionModifyAddItem.read)
            },
            changeItems: try fields.optional("changeItems") { value, path throws(SigningError) in
                try RequestFields.array(value, path, AdvancedCommerceSubscriptionModifyChangeItem.read)
            },
            removeItems: try fields.optional("removeItems") { value, path throws(SigningError) in
                try RequestFields.array(value, path, AdvancedCommerceSKUItem.read)
            },
            currency: try fields.optional("currency", RequestFields.string),
            descriptors: try fields.optional("descriptors", AdvancedCommerceSubscriptionModifyDescriptors.read),
            periodChange: try fields.optional("periodChange", AdvancedCommerceSubscriptionModifyPeriodChange.read),
            storefront: try fields.optional("storefront", RequestFields.string),
            taxCode: try fields.optional("taxCode", RequestFields.string))
    }
}

// MARK: Subscription reactivate

/// A customer turns automatic renewal back on (`REACTIVATE_SUBSCRIPTION`).
public struct AdvancedCommerceSubscriptionReactivateInAppRequest: AdvancedCommerceInAppRequest, Hashable {
    /// `REACTIVATE_SUBSCRIPTION`.
    public static let operation = "REACTIVATE_SUBSCRIPTION"
    /// The request's metadata.
    public var requestInfo: AdvancedCommerceRequestInfo
    /// The subscription's transaction id.
    public var transactionId: String
    /// The items to reactivate; all of them when `nil`.
    public var items: [AdvancedCommerceSKUItem]?
    /// The storefront, if set.
    public var storefront: String?

    /// A request with these members.
    public init(
        requestInfo: AdvancedCommerceRequestInfo, transactionId: String, items: [AdvancedCommerceSKUItem]? = nil,
        storefront: String? = nil
    ) {
        self.requestInfo = requestInfo
        self.transactionId = transactionId
        self.items = items
        self.storefront = storefront
    }

    /// The request's JSON, after checking Apple's field rules.
    public func jsonObject() throws(SigningError) -> JSONObject {
        var object = AdvancedCommerceRequests.object(
            Self.self, [.init("requestInfo", requestInfo.json), .init("transactionId", .string(transactionId))])
        if let items {
            object.members.append(
                .init(
                    "items",
                    try RequestRules.encode(items, "items") { item, path throws(SigningError) in try item.json(path) }))
        }
        object.appendIfPresent("storefront", storefront.map(JSONValue.string))
        return object
    }

    init(_ fields: inout RequestFields) throws(SigningError) {
        self.init(
            requestInfo: try fields.required("requestInfo", AdvancedCommerceRequestInfo.read),
            transactionId: try fields.required("transactionId", RequestFields.string),
            items: try fields.optional("items") { value, path throws(SigningError) in
                try RequestFields.array(value, path, AdvancedCommerceSKUItem.read)
            },
            storefront: try fields.optional("storefront", RequestFields.string))
    }
}
