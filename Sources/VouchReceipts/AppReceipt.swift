public import Vouch
internal import VouchOpenSSL

// The stored fields, the typed properties, decoding and JSON of both receipt types are generated
// from Schemas/receipt-fields.tsv (Generated/); what follows is what a table cannot say.

extension AppReceipt {
    /// Decodes a receipt payload (the signed content). Throws
    /// `VerificationError.Code.receiptMalformedPayload` or
    /// `VerificationError.Code.receiptDuplicateAttribute`.
    public init(payload: [UInt8]) throws(VerificationError) {
        var scratch = ReceiptAttributeSet.Scratch()
        try self.init(payload: payload, range: 0..<payload.count, scratch: &scratch)
    }

    /// The raw value of attribute `type` (the first, for type 17).
    public func attribute(_ type: Int) -> ReceiptAttribute? {
        table.field(type).map { ReceiptAttribute(type: $0.type, version: $0.version, value: table.bytes($0.value)) }
    }

    /// Whether the receipt type (attribute 0) is `type`, read where it lies.
    func hasReceiptType(_ type: ReceiptType) -> Bool {
        receiptTypeText.map { table.text($0, equals: type.rawValue) } ?? false
    }

    /// Whether ``sha1Hash`` equals SHA-1 over the 16 bytes of `deviceIdentifier` (the
    /// `identifierForVendor` UUID on iOS, the MAC address on macOS), the opaque value and the
    /// whole encoded bundle-id value (its UTF8String tag and length included).
    public func matchesDevice(_ deviceIdentifier: [UInt8]) -> Bool {
        guard let hash = sha1Hash, let opaque = opaqueValue, let bundle = attribute(2)?.value else { return false }
        let input = deviceIdentifier + opaque + bundle
        return ReceiptCrypto.hash(.sha1, of: input, segments: [0..<input.count]) == hash
    }

    /// Two receipts are equal when they hold the same attributes in the same order: every
    /// typed field is read from them.
    public static func == (left: AppReceipt, right: AppReceipt) -> Bool {
        left.table.sameAttributes(as: right.table)
    }

    public func hash(into hasher: inout Hasher) {
        table.hashAttributes(into: &hasher)
    }
}

extension InAppPurchaseReceipt {
    /// Decodes one in-app purchase receipt (the value of attribute 17); a malformed one is `VerificationError`.
    public init(payload: [UInt8]) throws(VerificationError) {
        var scratch = ReceiptAttributeSet.Scratch()
        try self.init(payload: payload, range: 0..<payload.count, scratch: &scratch)
    }

    /// Two purchases are equal when they hold the same attributes in the same order.
    public static func == (left: InAppPurchaseReceipt, right: InAppPurchaseReceipt) -> Bool {
        left.table.sameAttributes(as: right.table)
    }

    public func hash(into hasher: inout Hasher) {
        table.hashAttributes(into: &hasher)
    }
}

/// A receipt's type (attribute 0): the raw text, with a typed view of the values known today.
public struct ReceiptType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A receipt of the production App Store.
    public static let production = ReceiptType(rawValue: "Production")
    /// A receipt of the sandbox.
    public static let productionSandbox = ReceiptType(rawValue: "ProductionSandbox")
    /// A receipt of an app bought through the Volume Purchase Program, in production.
    public static let productionVPP = ReceiptType(rawValue: "ProductionVPP")
    /// A receipt of an app bought through the Volume Purchase Program, in the sandbox.
    public static let productionVPPSandbox = ReceiptType(rawValue: "ProductionVPPSandbox")
    /// A receipt signed by StoreKit testing in Xcode.
    public static let xcode = ReceiptType(rawValue: "Xcode")

    /// Whether the value is one of the constants above.
    public var isKnown: Bool {
        [.production, .productionSandbox, .productionVPP, .productionVPPSandbox, .xcode].contains(self)
    }

    /// `Production`, `Sandbox` or `Xcode`, as the old `verifyReceipt` endpoint named environments.
    public var environment: String {
        switch self {
        case .production, .productionVPP: "Production"
        case .xcode: "Xcode"
        default: rawValue.hasSuffix("Sandbox") ? "Sandbox" : rawValue
        }
    }
}
