public import Vouch
internal import VouchOpenSSL

/// The decoded payload of a legacy app receipt: Apple's documented receipt fields (attribute
/// types in parentheses), typed, beside every attribute as signed.
///
/// Attribute types Vouch does not type (6–11, 13–16, 20, 25, …) stay in ``attributes``; so do
/// the typed ones, byte for byte. Dates are `Timestamp`s in whole milliseconds.
///
/// Every field is checked when the payload is decoded; text and bytes are then read from the
/// payload when asked for, so a receipt that is only written out as JSON is never copied.
public struct AppReceipt: Sendable, Hashable {
    /// The payload and where this receipt's own attributes lie in it.
    let table: ReceiptAttributeTable
    // Where the typed text and byte values lie in the payload, as decoding checked them.
    let receiptTypeText: Range<Int>?
    let bundleIdText: Range<Int>
    let applicationVersionText: Range<Int>?
    let opaqueValueBytes: Range<Int>?
    let sha1HashBytes: Range<Int>?
    let originalApplicationVersionText: Range<Int>?
    // The dates in milliseconds since 1970: a Timestamp spells its number out when made.
    let receiptCreationMilliseconds: Int64?
    let originalPurchaseMilliseconds: Int64?
    let receiptExpirationMilliseconds: Int64?
    let preorderMilliseconds: Int64?

    /// The environment that issued the receipt (0): `Production`, `ProductionSandbox`, `Xcode`, …
    public var receiptType: ReceiptType? { receiptTypeText.map { ReceiptType(rawValue: table.string($0)) } }
    /// The app's App Store item id (1); 0 in the sandbox.
    public let appItemId: Int64?
    /// The bundle identifier (2).
    public var bundleId: String { table.string(bundleIdText) }
    /// The app version the receipt was issued for (3): `CFBundleVersion` on iOS,
    /// `CFBundleShortVersionString` on macOS.
    public var applicationVersion: String? { applicationVersionText.map(table.string) }
    /// The opaque value used in the device hash (4).
    public var opaqueValue: [UInt8]? { opaqueValueBytes.map(table.bytes) }
    /// SHA-1 over device identifier, opaque value and bundle id (5).
    public var sha1Hash: [UInt8]? { sha1HashBytes.map(table.bytes) }
    /// When the receipt was created (12): the instant the chain is validated at by default.
    public var receiptCreationDate: Timestamp? { receiptCreationMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// When the app was first purchased (18).
    public var originalPurchaseDate: Timestamp? { originalPurchaseMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// The version originally purchased (19).
    public var originalApplicationVersion: String? { originalApplicationVersionText.map(table.string) }
    /// When the receipt expires (21): volume-purchase and Xcode receipts.
    public var receiptExpirationDate: Timestamp? { receiptExpirationMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// When a preorder was placed (32), for apps bought before release.
    public var preorderDate: Timestamp? { preorderMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// The in-app purchase receipts (17), in the order signed.
    public let inApp: [InAppPurchaseReceipt]
    /// Every attribute in the order signed, raw.
    public var attributes: [ReceiptAttribute] { table.attributes }

    /// Decodes a receipt payload (the signed content). Throws
    /// `VerificationError.Code.receiptMalformedPayload` or
    /// `VerificationError.Code.receiptDuplicateAttribute`.
    public init(payload: [UInt8]) throws(VerificationError) {
        var scratch = ReceiptAttributeSet.Scratch()
        let table = try ReceiptAttributeSet.parse(
            payload, range: 0..<payload.count, repeatable: 17, what: "receipt", scratch: &scratch)
        let reader = ReceiptValueReader(table: table, what: "receipt")
        guard let bundleId = try reader.string(2) else {
            throw VerificationError(.receiptMalformedPayload, "receipt payload: no bundle id (attribute 2)")
        }
        bundleIdText = bundleId
        receiptTypeText = try reader.string(0)
        appItemId = try reader.integer(1)
        applicationVersionText = try reader.string(3)
        opaqueValueBytes = reader.bytes(4)
        sha1HashBytes = reader.bytes(5)
        receiptCreationMilliseconds = try reader.date(12)
        originalPurchaseMilliseconds = try reader.date(18)
        originalApplicationVersionText = try reader.string(19)
        receiptExpirationMilliseconds = try reader.date(21)
        preorderMilliseconds = try reader.date(32)
        var inApp: [InAppPurchaseReceipt] = []
        inApp.reserveCapacity(table.fields.reduce(0) { $0 + ($1.type == 17 ? 1 : 0) })
        for field in table.fields where field.type == 17 {
            inApp.append(try InAppPurchaseReceipt(payload: payload, range: field.value, scratch: &scratch))
        }
        self.inApp = inApp
        self.table = table
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

/// One in-app purchase receipt (attribute 17 of an app receipt): Apple's fields 1701–1721.
public struct InAppPurchaseReceipt: Sendable, Hashable {
    /// The payload and where this purchase's attributes lie in it.
    let table: ReceiptAttributeTable
    // Where the typed text values lie in the payload, as decoding checked them.
    let productIdText: Range<Int>?
    let transactionIdText: Range<Int>?
    let originalTransactionIdText: Range<Int>?
    let promotionalOfferIdText: Range<Int>?
    // The dates in milliseconds since 1970, as for the receipt.
    let purchaseMilliseconds: Int64?
    let originalPurchaseMilliseconds: Int64?
    let subscriptionExpirationMilliseconds: Int64?
    let cancellationMilliseconds: Int64?

    /// Items purchased (1701).
    public let quantity: Int64?
    /// Product identifier (1702).
    public var productId: String? { productIdText.map(table.string) }
    /// Transaction identifier (1703): what the App Store Server API takes.
    public var transactionId: String? { transactionIdText.map(table.string) }
    /// Purchase date (1704).
    public var purchaseDate: Timestamp? { purchaseMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// Original transaction identifier (1705).
    public var originalTransactionId: String? { originalTransactionIdText.map(table.string) }
    /// Original purchase date (1706).
    public var originalPurchaseDate: Timestamp? { originalPurchaseMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// Product type (1707), undocumented: 1 is seen for consumables.
    public let productType: Int64?
    /// Subscription expiration date (1708).
    public var subscriptionExpirationDate: Timestamp? {
        subscriptionExpirationMilliseconds.map(Timestamp.init(milliseconds:))
    }
    /// Web order line item id (1711).
    public let webOrderLineItemId: Int64?
    /// Cancellation date (1712): refunded or revoked.
    public var cancellationDate: Timestamp? { cancellationMilliseconds.map(Timestamp.init(milliseconds:)) }
    /// In a free trial period (1713).
    public let isInTrialPeriod: Bool?
    /// In an introductory price period (1719).
    public let isInIntroOfferPeriod: Bool?
    /// Promotional offer identifier (1721).
    public var promotionalOfferId: String? { promotionalOfferIdText.map(table.string) }
    /// Every attribute in the order signed, raw.
    public var attributes: [ReceiptAttribute] { table.attributes }

    /// Decodes one in-app purchase receipt (the value of attribute 17); a malformed one is `VerificationError`.
    public init(payload: [UInt8]) throws(VerificationError) {
        var scratch = ReceiptAttributeSet.Scratch()
        try self.init(payload: payload, range: 0..<payload.count, scratch: &scratch)
    }

    /// Decodes the in-app purchase receipt at `range` of a receipt's payload, keeping the
    /// payload rather than a copy of the range.
    init(payload: [UInt8], range: Range<Int>, scratch: inout ReceiptAttributeSet.Scratch) throws(VerificationError) {
        let table = try ReceiptAttributeSet.parse(
            payload, range: range, repeatable: nil, what: "in-app purchase", scratch: &scratch)
        let reader = ReceiptValueReader(table: table, what: "in-app purchase")
        quantity = try reader.integer(1701)
        productIdText = try reader.string(1702)
        transactionIdText = try reader.string(1703)
        purchaseMilliseconds = try reader.date(1704)
        originalTransactionIdText = try reader.string(1705)
        originalPurchaseMilliseconds = try reader.date(1706)
        productType = try reader.integer(1707)
        subscriptionExpirationMilliseconds = try reader.date(1708)
        webOrderLineItemId = try reader.integer(1711)
        cancellationMilliseconds = try reader.date(1712)
        isInTrialPeriod = try reader.integer(1713).map { $0 != 0 }
        isInIntroOfferPeriod = try reader.integer(1719).map { $0 != 0 }
        promotionalOfferIdText = try reader.string(1721)
        self.table = table
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
