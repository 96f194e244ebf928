internal import Foundation

extension AppReceipt {
    /// The receipt as a JSON object with Apple's field names in camel case (as the App Store
    /// Server API names them), dates as milliseconds since 1970, bytes as standard base64, and
    /// the attributes Vouch does not type under `otherAttributes` (`type`, `version`, `value`
    /// in base64), so nothing signed is hidden. Absent fields are left out.
    public var jsonObject: JSONObject {
        var object = JSONObject([])
        object.add("receiptType", receiptType.map { .string($0.rawValue) })
        object.add("appItemId", appItemId.map { .number(String($0)) })
        object.add("bundleId", .string(bundleId))
        object.add("applicationVersion", applicationVersion.map(JSONValue.string))
        object.add("originalApplicationVersion", originalApplicationVersion.map(JSONValue.string))
        object.add("opaqueValue", opaqueValue.map(JSONValue.base64))
        object.add("sha1Hash", sha1Hash.map(JSONValue.base64))
        object.add("receiptCreationDate", receiptCreationDate.map(JSONValue.milliseconds))
        object.add("originalPurchaseDate", originalPurchaseDate.map(JSONValue.milliseconds))
        object.add("receiptExpirationDate", receiptExpirationDate.map(JSONValue.milliseconds))
        object.add("preorderDate", preorderDate.map(JSONValue.milliseconds))
        object.add("inApp", .array(inApp.map { .object($0.jsonObject) }))
        object.add("otherAttributes", JSONValue.otherAttributes(attributes, typed: Self.typedTypes))
        return object
    }

    static let typedTypes: [Int] = [0, 1, 2, 3, 4, 5, 12, 17, 18, 19, 21, 32]

    /// The receipt in the shape of the deprecated `verifyReceipt` endpoint's response
    /// (`status` 0, `environment`, `receipt` with `in_app`), dates in its three forms
    /// (`…_date` as `yyyy-MM-dd HH:mm:ss Etc/GMT`, `…_date_ms`, `…_date_pst`), in-app values as
    /// strings as that endpoint wrote them, so its consumers can read offline results unchanged.
    public var verifyReceiptResponse: JSONObject {
        var receipt = JSONObject([])
        receipt.add("receipt_type", receiptType.map { .string($0.rawValue) })
        receipt.add("adam_id", appItemId.map { .number(String($0)) })
        receipt.add("app_item_id", appItemId.map { .number(String($0)) })
        receipt.add("bundle_id", .string(bundleId))
        receipt.add("application_version", applicationVersion.map(JSONValue.string))
        VerifyReceiptDates.add("receipt_creation_date", receiptCreationDate, to: &receipt)
        VerifyReceiptDates.add("original_purchase_date", originalPurchaseDate, to: &receipt)
        receipt.add("original_application_version", originalApplicationVersion.map(JSONValue.string))
        VerifyReceiptDates.add("expiration_date", receiptExpirationDate, to: &receipt)
        VerifyReceiptDates.add("preorder_date", preorderDate, to: &receipt)
        receipt.add("in_app", .array(inApp.map { .object($0.verifyReceiptObject) }))
        var response = JSONObject([.init("status", .number("0"))])
        response.add("environment", receiptType.map { .string($0.environment) })
        response.add("receipt", .object(receipt))
        return response
    }
}

extension InAppPurchaseReceipt {
    /// The purchase as a JSON object, members named as in the verifier's records.
    public var jsonObject: JSONObject {
        var object = JSONObject([])
        object.add("quantity", quantity.map { .number(String($0)) })
        object.add("productId", productId.map(JSONValue.string))
        object.add("transactionId", transactionId.map(JSONValue.string))
        object.add("originalTransactionId", originalTransactionId.map(JSONValue.string))
        object.add("purchaseDate", purchaseDate.map(JSONValue.milliseconds))
        object.add("originalPurchaseDate", originalPurchaseDate.map(JSONValue.milliseconds))
        object.add("subscriptionExpirationDate", subscriptionExpirationDate.map(JSONValue.milliseconds))
        object.add("cancellationDate", cancellationDate.map(JSONValue.milliseconds))
        object.add("webOrderLineItemId", webOrderLineItemId.map { .number(String($0)) })
        object.add("isInTrialPeriod", isInTrialPeriod.map(JSONValue.bool))
        object.add("isInIntroOfferPeriod", isInIntroOfferPeriod.map(JSONValue.bool))
        object.add("promotionalOfferId", promotionalOfferId.map(JSONValue.string))
        object.add("productType", productType.map { .number(String($0)) })
        object.add("otherAttributes", JSONValue.otherAttributes(attributes, typed: Self.typedTypes))
        return object
    }

    static let typedTypes: [Int] = [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721]

    var verifyReceiptObject: JSONObject {
        var object = JSONObject([])
        object.add("quantity", quantity.map { .string(String($0)) })
        object.add("product_id", productId.map(JSONValue.string))
        object.add("transaction_id", transactionId.map(JSONValue.string))
        object.add("original_transaction_id", originalTransactionId.map(JSONValue.string))
        VerifyReceiptDates.add("purchase_date", purchaseDate, to: &object)
        VerifyReceiptDates.add("original_purchase_date", originalPurchaseDate, to: &object)
        VerifyReceiptDates.add("expires_date", subscriptionExpirationDate, to: &object)
        object.add("web_order_line_item_id", webOrderLineItemId.map { .string(String($0)) })
        object.add("is_trial_period", isInTrialPeriod.map { .string($0 ? "true" : "false") })
        object.add("is_in_intro_offer_period", isInIntroOfferPeriod.map { .string($0 ? "true" : "false") })
        VerifyReceiptDates.add("cancellation_date", cancellationDate, to: &object)
        object.add("promotional_offer_id", promotionalOfferId.flatMap { $0.isEmpty ? nil : JSONValue.string($0) })
        return object
    }
}

extension JSONObject {
    /// Appends a member when it has a value.
    mutating func add(_ name: String, _ value: JSONValue?) {
        if let value { members.append(Member(name, value)) }
    }
}

extension JSONValue {
    static func base64(_ bytes: [UInt8]) -> JSONValue {
        .string(String(decoding: Base64.encodeStandard(bytes), as: UTF8.self))
    }
    static func milliseconds(_ timestamp: Timestamp) -> JSONValue { .number(String(timestamp.milliseconds)) }

    static func otherAttributes(_ attributes: [ReceiptAttribute], typed: [Int]) -> JSONValue? {
        let others = attributes.filter { !typed.contains($0.type) }
        guard !others.isEmpty else { return nil }
        return .array(
            others.map { attribute in
                .object(
                    JSONObject([
                        .init("type", .number(String(attribute.type))),
                        .init("version", .number(String(attribute.version))),
                        .init("value", .base64(attribute.value)),
                    ]))
            })
    }
}

/// The three date forms of the `verifyReceipt` response.
enum VerifyReceiptDates {
    static func add(_ name: String, _ timestamp: Timestamp?, to object: inout JSONObject) {
        guard let timestamp else { return }
        object.add(name, .string(format(timestamp, in: utc) + " Etc/GMT"))
        object.add(name + "_ms", .string(String(timestamp.milliseconds)))
        object.add(name + "_pst", .string(format(timestamp, in: pacific) + " America/Los_Angeles"))
    }

    private static let utc = TimeZone(identifier: "UTC")!
    private static let pacific = TimeZone(identifier: "America/Los_Angeles")!

    private static func format(_ timestamp: Timestamp, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date(timeIntervalSince1970: Double(timestamp.milliseconds) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return
            "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2)) \(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))"
    }
}
