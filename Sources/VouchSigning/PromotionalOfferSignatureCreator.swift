public import Foundation
public import Vouch

/// Signs promotional offers the original way (version 1, `SKPaymentDiscount` and StoreKit 2's
/// `promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`): ECDSA P-256 with SHA-256
/// over `bundleId ⁣ keyId ⁣ productId ⁣ offerId ⁣ appAccountToken ⁣ nonce ⁣ timestamp`, the
/// parts joined by U+2063 INVISIBLE SEPARATOR, the token and nonce in lower case, the DER
/// signature in standard base64.
///
/// Apple's "Generating a signature for promotional offers" is the reference; the signed text
/// is byte for byte the one Apple's own libraries sign (checked against Apple's Python library
/// in the tests).
public struct PromotionalOfferSignatureCreator: Sendable {
    /// The key's identifier in App Store Connect.
    public let keyId: String
    /// The app's bundle identifier.
    public let bundleId: String
    let key: SigningKey

    /// A creator signing with `signingKey`, whose id in App Store Connect is `keyId`, for the
    /// app `bundleId`.
    public init(signingKey: SigningKey, keyId: String, bundleId: String) {
        self.key = signingKey
        self.keyId = keyId
        self.bundleId = bundleId
    }

    /// Signs one offer.
    ///
    /// - Parameters:
    ///   - productId: the subscription's product identifier.
    ///   - offerId: the promotional offer's identifier in App Store Connect.
    ///   - appAccountToken: the token (or application username) the purchase will carry;
    ///     empty when there is none. Signed in lower case, as StoreKit sends it.
    ///   - nonce: a one-time UUID; a new one by default.
    ///   - timestamp: when the signature is made (StoreKit accepts it for 24 hours); now by
    ///     default.
    /// - Throws: ``SigningError/Code/invalidParameter`` for an empty identifier, a part
    ///   holding the separator U+2063, or a timestamp before 1970.
    public func createSignature(
        productId: String, offerId: String, appAccountToken: String = "", nonce: UUID = UUID(),
        timestamp: Timestamp = Timestamp(Date())
    ) throws(SigningError) -> PromotionalOfferSignature {
        let offer = PromotionalOfferSignature(
            signature: "", keyId: keyId, bundleId: bundleId, productId: productId, offerId: offerId,
            appAccountToken: appAccountToken.lowercased(), nonce: nonce, timestamp: timestamp)
        let parts = [
            (keyId, "keyId"), (bundleId, "bundleId"), (productId, "productId"), (offerId, "offerId"),
            (appAccountToken, "appAccountToken"),
        ]
        for (value, name) in parts {
            // The token may be empty; the other parts may not.
            if name != "appAccountToken" { try Parameters.require(value, name) }
            if value.unicodeScalars.contains(PromotionalOfferSignature.separator) {
                throw SigningError(.invalidParameter, "\(name) holds U+2063, the separator of the signed parts")
            }
        }
        _ = try Parameters.seconds(timestamp, "timestamp")
        let signature = try key.derSignature(of: Array(offer.signedText.utf8))
        return offer.with(signature: String(decoding: Base64.encodeStandard(signature), as: UTF8.self))
    }
}

/// A version 1 promotional offer signature with every input that went into it: what the
/// client passes to StoreKit (`keyId`, `nonce`, `signature`, `timestamp`).
public struct PromotionalOfferSignature: Sendable, Hashable {
    /// The DER ECDSA signature, in standard base64.
    public let signature: String
    /// The key's identifier.
    public let keyId: String
    /// The app's bundle identifier.
    public let bundleId: String
    /// The subscription's product identifier.
    public let productId: String
    /// The promotional offer's identifier.
    public let offerId: String
    /// The app account token as signed (lower case; empty when there is none).
    public let appAccountToken: String
    /// The one-time nonce.
    public let nonce: UUID
    /// When the signature was made, in milliseconds.
    public let timestamp: Timestamp

    /// U+2063 INVISIBLE SEPARATOR, between the signed parts.
    static let separator: Unicode.Scalar = "\u{2063}"

    /// The exact text signed (UTF-8): the parts joined by U+2063.
    public var signedText: String {
        [
            bundleId, keyId, productId, offerId, appAccountToken, nonce.uuidString.lowercased(),
            String(timestamp.milliseconds),
        ].joined(separator: String(Self.separator))
    }

    /// The signature and its inputs as one JSON object, for a client:
    /// `{"signature":…,"keyId":…,"nonce":…,"timestamp":…,"productId":…,"offerId":…,"appAccountToken":…,"bundleId":…}`.
    public var jsonObject: JSONObject {
        JSONObject([
            .init("signature", .string(signature)), .init("keyId", .string(keyId)),
            .init("nonce", .string(nonce.uuidString.lowercased())),
            .init("timestamp", .number(String(timestamp.milliseconds))), .init("productId", .string(productId)),
            .init("offerId", .string(offerId)), .init("appAccountToken", .string(appAccountToken)),
            .init("bundleId", .string(bundleId)),
        ])
    }

    func with(signature: String) -> PromotionalOfferSignature {
        PromotionalOfferSignature(
            signature: signature, keyId: keyId, bundleId: bundleId, productId: productId, offerId: offerId,
            appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
    }
}
