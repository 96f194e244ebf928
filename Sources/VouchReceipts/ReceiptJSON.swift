internal import Foundation
public import Vouch

extension AppReceipt {
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

    /// `YYYY-MM-DD hh:mm:ss` in `zone`. The calendar fields come from Foundation's calendar and
    /// time zone database (daylight saving time for the PST form; Julian dates before 1582,
    /// unlike `CivilTime`), as this form has always printed them.
    private static func format(_ timestamp: Timestamp, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date(timeIntervalSince1970: Double(timestamp.milliseconds) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let time = CivilTime(
            year: Int64(parts.year ?? 0), month: Int64(parts.month ?? 0), day: Int64(parts.day ?? 0),
            hour: Int64(parts.hour ?? 0), minute: Int64(parts.minute ?? 0), second: Int64(parts.second ?? 0))
        return time.text(separator: " ", fraction: false)
    }
}

extension AppReceipt {
    /// Appends ``jsonObject`` to `writer`: the same bytes as `writer.write(object: jsonObject)`,
    /// written straight from the payload without building the object, as a batch does for
    /// every receipt it verifies.
    package func writeJSON(into writer: inout JSONWriter) {
        let fields = table.fields.count + inApp.reduce(0) { $0 + $1.table.fields.count }
        writer.write(maximumLength: ReceiptJSONWriter.maximumLength(payload: table.bytes.count, fields: fields)) {
            output in
            var json = ReceiptJSONWriter(output: output)
            write(into: &json)
            output = json.output
        }
    }
}

/// A receipt's members written from its payload through a `JSONOutput`: members in order,
/// absent ones left out (a member's name is written only once its value is known to be there),
/// text and bytes read where they lie in the payload.
struct ReceiptJSONWriter {
    /// Where the JSON goes: room of ``maximumLength(payload:fields:)`` bytes.
    var output: JSONOutput
    /// The payload the ranges given refer to, borrowed for the writes.
    var payload = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// Whether the next member or element needs a comma before it.
    private var needsComma = false
    /// A member name waiting for its value: left out with the value when that is absent.
    private var pendingKey: StaticString?

    init(output: JSONOutput) {
        self.output = output
    }

    /// Room for the JSON of a receipt whose payload is `payload` bytes long with `fields`
    /// attributes in all. Each payload byte is written at most once, as at most six bytes (an
    /// escape `\u00XX`; base64 makes four of three); each attribute adds at most 103 bytes
    /// (its member name or `{"type":…,"version":…,"value":""}`, punctuation, and the brackets
    /// of a set it may open).
    static func maximumLength(payload: Int, fields: Int) -> Int { 6 * payload + 128 * fields + 512 }

    mutating func open(_ bracket: StaticString) {
        startValue()
        output.raw(bracket)
        needsComma = false
    }

    mutating func close(_ bracket: StaticString) {
        output.raw(bracket)
        needsComma = true
    }

    /// Names the next member; it is written only if its value is.
    mutating func key(_ name: StaticString) { pendingKey = name }

    /// The comma, and the pending member name, before a value that is present.
    private mutating func startValue() {
        if needsComma { output.put(UInt8(ascii: ",")) }
        if let name = pendingKey {
            output.put(UInt8(ascii: "\""))
            output.raw(name)
            output.raw("\":")
            pendingKey = nil
        }
        needsComma = true
    }

    /// The text at `range` of the payload, UTF-8 already checked, as a JSON string.
    mutating func string(_ range: Range<Int>?) {
        guard let range else {
            pendingKey = nil
            return
        }
        startValue()
        output.string(utf8: UnsafeBufferPointer(rebasing: payload[range]))
    }

    mutating func number(_ value: Int64?) {
        guard let value else {
            pendingKey = nil
            return
        }
        startValue()
        output.integer(value)
    }

    mutating func bool(_ value: Bool?) {
        guard let value else {
            pendingKey = nil
            return
        }
        startValue()
        output.raw(value ? "true" : "false")
    }

    /// The bytes at `range` of the payload as a string of standard base64 with padding.
    mutating func base64(_ range: Range<Int>?) {
        guard let range else {
            pendingKey = nil
            return
        }
        startValue()
        output.base64(UnsafeBufferPointer(rebasing: payload[range]))
    }

    /// `otherAttributes`: the attributes among `fields` whose type is not `typed`, when there are any.
    mutating func otherAttributes(_ fields: [ReceiptAttributeTable.Field], typed: [Int]) {
        key("otherAttributes")
        var opened = false
        for field in fields where !typed.contains(field.type) {
            if !opened {
                open("[")
                opened = true
            }
            open("{")
            key("type")
            number(Int64(field.type))
            key("version")
            number(Int64(field.version))
            key("value")
            base64(field.value)
            close("}")
        }
        if opened { close("]") } else { pendingKey = nil }
    }
}
