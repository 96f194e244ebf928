import Vouch
import VouchEntitlements

/// Readable text for payloads: indented `name: value` lines.
enum PayloadText {
    /// Writes a JSON value as indented `name: value` lines; numbers of `…Date` members get
    /// their ISO-8601 form beside the raw milliseconds, a `price` in milliunits of the object's
    /// `currency` its amount in units of it (`49000000 (49,000 VND)`), a receipt's
    /// `productType` its name. Members named in `omitting` are left out, at every depth.
    static func describe(
        _ object: JSONObject, indent: Int, omitting: Set<String> = [], into lines: inout [String]
    ) {
        let pad = String(repeating: "  ", count: indent)
        for member in object.members where !omitting.contains(member.name) {
            switch member.value {
            case .object(let inner):
                lines.append("\(pad)\(member.name):")
                describe(inner, indent: indent + 1, omitting: omitting, into: &lines)
            case .array(let elements) where elements.contains(where: { $0.objectValue != nil }):
                lines.append("\(pad)\(member.name):")
                for (index, element) in elements.enumerated() {
                    if let inner = element.objectValue {
                        lines.append("\(pad)  [\(index)]")
                        describe(inner, indent: indent + 2, omitting: omitting, into: &lines)
                    } else {
                        lines.append("\(pad)  [\(index)] \(JSONWriter.string(element))")
                    }
                }
            default:
                lines.append("\(pad)\(member.name): \(scalar(member.value, name: member.name, in: object))")
            }
        }
    }

    static func scalar(_ value: JSONValue, name: String, in object: JSONObject = JSONObject([])) -> String {
        let text = JSONWriter.string(value)
        if name.hasSuffix("Date"), case .number(let number) = value, let timestamp = Timestamp(rawValue: number) {
            return "\(text) (\(timestamp.iso8601))"
        }
        if name == "price", case .number(let number) = value, let milliunits = Int64(number),
            let currency = object["currency"]?.stringValue
        {
            return
                "\(text) (\(CurrencyAmount(MilliunitAmount(milliunits: milliunits), currency: currency).roundedDescription))"
        }
        if name == "productType", case .number(let number) = value, let type = Self.receiptProductTypes[number] {
            return "\(text) (\(type))"
        }
        return text
    }

    /// A legacy receipt's in-app `productType` (attribute 1707, which Apple does not document)
    /// by the values seen with each kind of product, named as signed transactions name types.
    static let receiptProductTypes = [
        "0": "Non-Consumable", "1": "Consumable", "2": "Non-Renewing Subscription", "3": "Auto-Renewable Subscription",
    ]
}
