public import Foundation

/// What a minted app receipt says: the fields of Apple's receipt payload, encoded as Apple's
/// App Store does (a DER SET OF attributes, values as UTF8String, IA5String dates and INTEGERs)
/// or as Xcode does (attributes sorted by type, dates with a `+0000` offset).
public struct MintReceiptContent: Sendable {
    /// The receipt type (attribute 0), such as `ProductionSandbox`.
    public var receiptType = "ProductionSandbox"
    /// The app's identifier in the App Store (attribute 1); 0 outside production.
    public var appItemId: Int64 = 0
    /// The app's bundle identifier (attribute 2).
    public var bundleId = "com.example.vouch"
    /// The app's version (attribute 3).
    public var applicationVersion = "1"
    /// The version of the app the customer originally bought (attribute 19).
    public var originalApplicationVersion = "1.0"
    /// The opaque value (attribute 4) the hash is computed over.
    public var opaqueValue: [UInt8] = Array(0x10..<0x20)
    /// The device identifier the hash (attribute 5) is computed over.
    public var deviceIdentifier: [UInt8] = Array(0xA0..<0xB0)
    /// When the App Store created the receipt (attribute 12).
    public var receiptCreationDate: Date
    /// When the customer originally bought the app (attribute 18).
    public var originalPurchaseDate: Date?
    /// When the receipt expires (attribute 21), for Volume Purchase Program receipts.
    public var receiptExpirationDate: Date?
    /// The in-app purchase receipts (attribute 17), in order.
    public var inApp: [MintInAppPurchase] = []
    /// Attributes appended as given (type, whole DER value), for data a verifier must refuse
    /// (a repeated type) or types it does not know.
    public var extraAttributes: [(type: Int, value: [UInt8])] = []
    /// Xcode's encoding: attributes sorted by type, dates with an offset.
    public var xcodeStyle = false

    /// A receipt created at `receiptCreationDate`, originally bought 30 days before, without
    /// in-app purchases.
    public init(receiptCreationDate: Date) {
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = receiptCreationDate.addingTimeInterval(-86_400 * 30)
    }

    /// A receipt with `count` in-app purchases, ids derived from `seed`.
    public static func sample(receiptCreationDate: Date, inAppCount count: Int, seed: Int = 1) -> MintReceiptContent {
        var content = MintReceiptContent(receiptCreationDate: receiptCreationDate)
        content.inApp = (0..<count).map { index in
            let purchased = receiptCreationDate.addingTimeInterval(-Double(count - index) * 3600)
            var purchase = MintInAppPurchase(
                productId: "com.example.vouch.product\(index % 3)",
                transactionId: String(2_000_000_000_000_000 + seed * 10_000 + index),
                purchaseDate: purchased)
            if index % 3 == 2 {
                purchase.subscriptionExpirationDate = purchased.addingTimeInterval(86_400 * 30)
                purchase.webOrderLineItemId = Int64(1_000_000_000 + index)
            }
            return purchase
        }
        return content
    }

    /// The payload bytes: the SET OF attributes.
    public func encoded() -> [UInt8] {
        var attributes: [(Int, [UInt8])] = [
            (0, ReceiptDER.utf8String(receiptType)), (1, ReceiptDER.integer(appItemId)),
            (2, ReceiptDER.utf8String(bundleId)),
            (3, ReceiptDER.utf8String(applicationVersion)), (4, opaqueValue),
            (12, ReceiptDER.ia5String(format(receiptCreationDate))),
            (19, ReceiptDER.utf8String(originalApplicationVersion)),
        ]
        attributes.append((5, hash))
        if let originalPurchaseDate { attributes.append((18, ReceiptDER.ia5String(format(originalPurchaseDate)))) }
        if let receiptExpirationDate { attributes.append((21, ReceiptDER.ia5String(format(receiptExpirationDate)))) }
        for purchase in inApp { attributes.append((17, purchase.encoded(format: format))) }
        attributes += extraAttributes.map { ($0.type, $0.value) }
        return Self.attributeSet(attributes, byType: xcodeStyle)
    }

    /// SHA-1 over device identifier, opaque value and the whole encoded bundle-id value.
    public var hash: [UInt8] {
        MintReceiptSigner.digest(.sha1, deviceIdentifier + opaqueValue + ReceiptDER.utf8String(bundleId))
    }

    func format(_ date: Date) -> String {
        let text = MintDate.format(date)
        return xcodeStyle ? String(text.dropLast()) + "+0000" : text
    }

    static func attributeSet(_ attributes: [(Int, [UInt8])], byType: Bool) -> [UInt8] {
        let encoded = attributes.map { type, value in
            (
                type,
                ReceiptDER.sequence([
                    ReceiptDER.integer(Int64(type)), ReceiptDER.integer(1), ReceiptDER.octetString(value),
                ])
            )
        }
        let ordered = byType ? encoded.sorted { $0.0 < $1.0 }.map(\.1) : ReceiptDER.derSorted(encoded.map(\.1))
        return ReceiptDER.set(ordered)
    }
}

/// One minted in-app purchase receipt (attribute 17).
public struct MintInAppPurchase: Sendable {
    /// The number of items bought (1701).
    public var quantity: Int64 = 1
    /// The product identifier (1702).
    public var productId: String
    /// The transaction identifier (1703).
    public var transactionId: String
    /// The transaction identifier of the original purchase (1705).
    public var originalTransactionId: String?
    /// When the App Store charged the customer (1704).
    public var purchaseDate: Date
    /// The purchase date of the original transaction (1706).
    public var originalPurchaseDate: Date?
    /// When the subscription expires (1708).
    public var subscriptionExpirationDate: Date?
    /// When the App Store refunded or revoked the purchase (1712).
    public var cancellationDate: Date?
    /// The identifier of subscription-purchase events across devices (1711).
    public var webOrderLineItemId: Int64 = 0
    /// Whether the purchase is in a free trial period (1713).
    public var isInTrialPeriod = false
    /// Whether the purchase is in an introductory price period (1719).
    public var isInIntroOfferPeriod = false
    /// The promotional offer identifier (1721).
    public var promotionalOfferId: String?

    /// A purchase of one `productId` item, `transactionId`, bought at `purchaseDate`.
    public init(productId: String, transactionId: String, purchaseDate: Date) {
        self.productId = productId
        self.transactionId = transactionId
        self.purchaseDate = purchaseDate
    }

    func encoded(format: (Date) -> String) -> [UInt8] {
        var attributes: [(Int, [UInt8])] = [
            (1701, ReceiptDER.integer(quantity)), (1702, ReceiptDER.utf8String(productId)),
            (1703, ReceiptDER.utf8String(transactionId)), (1704, ReceiptDER.ia5String(format(purchaseDate))),
            (1705, ReceiptDER.utf8String(originalTransactionId ?? transactionId)),
            (1706, ReceiptDER.ia5String(format(originalPurchaseDate ?? purchaseDate))),
            (1708, ReceiptDER.ia5String(subscriptionExpirationDate.map(format) ?? "")),
            (1711, ReceiptDER.integer(webOrderLineItemId)),
            (1712, ReceiptDER.ia5String(cancellationDate.map(format) ?? "")),
            (1713, ReceiptDER.integer(isInTrialPeriod ? 1 : 0)),
            (1719, ReceiptDER.integer(isInIntroOfferPeriod ? 1 : 0)),
        ]
        if let promotionalOfferId { attributes.append((1721, ReceiptDER.utf8String(promotionalOfferId))) }
        return MintReceiptContent.attributeSet(attributes, byType: false)
    }
}
