internal import VouchOpenSSL

/// The decoded payload of a legacy app receipt: Apple's documented receipt fields (attribute
/// types in parentheses), typed, beside every attribute as signed.
///
/// Attribute types Vouch does not type (6–11, 13–16, 20, 25, …) stay in ``attributes``; so do
/// the typed ones, byte for byte. Dates are ``Timestamp``s in whole milliseconds.
public struct AppReceipt: Sendable, Hashable {
    /// The environment that issued the receipt (0): `Production`, `ProductionSandbox`, `Xcode`, …
    public let receiptType: ReceiptType?
    /// The app's App Store item id (1); 0 in the sandbox.
    public let appItemId: Int64?
    /// The bundle identifier (2).
    public let bundleId: String
    /// The app version the receipt was issued for (3): `CFBundleVersion` on iOS,
    /// `CFBundleShortVersionString` on macOS.
    public let applicationVersion: String?
    /// The opaque value used in the device hash (4).
    public let opaqueValue: [UInt8]?
    /// SHA-1 over device identifier, opaque value and bundle id (5).
    public let sha1Hash: [UInt8]?
    /// When the receipt was created (12): the instant the chain is validated at by default.
    public let receiptCreationDate: Timestamp?
    /// When the app was first purchased (18).
    public let originalPurchaseDate: Timestamp?
    /// The version originally purchased (19).
    public let originalApplicationVersion: String?
    /// When the receipt expires (21): volume-purchase and Xcode receipts.
    public let receiptExpirationDate: Timestamp?
    /// When a preorder was placed (32), for apps bought before release.
    public let preorderDate: Timestamp?
    /// The in-app purchase receipts (17), in the order signed.
    public let inApp: [InAppPurchaseReceipt]
    /// Every attribute in the order signed, raw.
    public let attributes: [ReceiptAttribute]

    /// Decodes a receipt payload (the signed content). Throws
    /// ``VerificationError/Code/receiptMalformedPayload`` or
    /// ``VerificationError/Code/receiptDuplicateAttribute``.
    public init(payload: [UInt8]) throws(VerificationError) {
        let attributes = try ReceiptAttributeSet.parse(payload, repeatable: [17], what: "receipt")
        let reader = ReceiptValueReader(attributes: attributes, what: "receipt")
        guard let bundleId = try reader.string(2) else {
            throw VerificationError(.receiptMalformedPayload, "receipt payload: no bundle id (attribute 2)")
        }
        self.bundleId = bundleId
        receiptType = try reader.string(0).map(ReceiptType.init(rawValue:))
        appItemId = try reader.integer(1)
        applicationVersion = try reader.string(3)
        opaqueValue = reader.bytes(4)
        sha1Hash = reader.bytes(5)
        receiptCreationDate = try reader.date(12)
        originalPurchaseDate = try reader.date(18)
        originalApplicationVersion = try reader.string(19)
        receiptExpirationDate = try reader.date(21)
        preorderDate = try reader.date(32)
        var inApp: [InAppPurchaseReceipt] = []
        for attribute in attributes where attribute.type == 17 {
            inApp.append(try InAppPurchaseReceipt(payload: attribute.value))
        }
        self.inApp = inApp
        self.attributes = attributes
    }

    /// The raw value of attribute `type` (the first, for type 17).
    public func attribute(_ type: Int) -> ReceiptAttribute? { attributes.first { $0.type == type } }

    /// Whether ``sha1Hash`` equals SHA-1 over the 16 bytes of `deviceIdentifier` (the
    /// `identifierForVendor` UUID on iOS, the MAC address on macOS), the opaque value and the
    /// whole encoded bundle-id value (its UTF8String tag and length included).
    public func matchesDevice(_ deviceIdentifier: [UInt8]) -> Bool {
        guard let hash = sha1Hash, let opaque = opaqueValue, let bundle = attribute(2)?.value else { return false }
        let input = deviceIdentifier + opaque + bundle
        return ReceiptCrypto.hash(.sha1, of: input, segments: [0..<input.count]) == hash
    }
}

/// One in-app purchase receipt (attribute 17 of an app receipt): Apple's fields 1701–1721.
public struct InAppPurchaseReceipt: Sendable, Hashable {
    /// Items purchased (1701).
    public let quantity: Int64?
    /// Product identifier (1702).
    public let productId: String?
    /// Transaction identifier (1703): what the App Store Server API takes.
    public let transactionId: String?
    /// Purchase date (1704).
    public let purchaseDate: Timestamp?
    /// Original transaction identifier (1705).
    public let originalTransactionId: String?
    /// Original purchase date (1706).
    public let originalPurchaseDate: Timestamp?
    /// Product type (1707), undocumented: 1 is seen for consumables.
    public let productType: Int64?
    /// Subscription expiration date (1708).
    public let subscriptionExpirationDate: Timestamp?
    /// Web order line item id (1711).
    public let webOrderLineItemId: Int64?
    /// Cancellation date (1712): refunded or revoked.
    public let cancellationDate: Timestamp?
    /// In a free trial period (1713).
    public let isInTrialPeriod: Bool?
    /// In an introductory price period (1719).
    public let isInIntroOfferPeriod: Bool?
    /// Promotional offer identifier (1721).
    public let promotionalOfferId: String?
    /// Every attribute in the order signed, raw.
    public let attributes: [ReceiptAttribute]

    /// Decodes one in-app purchase receipt (the value of attribute 17); a malformed one is ``VerificationError``.
    public init(payload: [UInt8]) throws(VerificationError) {
        let attributes = try ReceiptAttributeSet.parse(payload, repeatable: [], what: "in-app purchase")
        let reader = ReceiptValueReader(attributes: attributes, what: "in-app purchase")
        quantity = try reader.integer(1701)
        productId = try reader.string(1702)
        transactionId = try reader.string(1703)
        purchaseDate = try reader.date(1704)
        originalTransactionId = try reader.string(1705)
        originalPurchaseDate = try reader.date(1706)
        productType = try reader.integer(1707)
        subscriptionExpirationDate = try reader.date(1708)
        webOrderLineItemId = try reader.integer(1711)
        cancellationDate = try reader.date(1712)
        isInTrialPeriod = try reader.integer(1713).map { $0 != 0 }
        isInIntroOfferPeriod = try reader.integer(1719).map { $0 != 0 }
        promotionalOfferId = try reader.string(1721)
        self.attributes = attributes
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
