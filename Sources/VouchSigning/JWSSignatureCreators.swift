public import Foundation
public import Vouch

/// Signs promotional offers as StoreKit 2 takes them since iOS 18.4 (`promotionalOffer(_:compactJWS:)`):
/// a JWS with `aud` `promotional-offer`, `productId`, `offerIdentifier` and, when given,
/// `transactionId`.
///
/// Every creator signs a JWS whose header is `{"alg":"ES256","kid":KEY_ID,"typ":"JWT"}` and whose
/// claims begin with `iss` (the issuer id), `iat` (seconds), `bid`, `aud` and `nonce` (a UUID in
/// lower case), as Apple's "Generating JWS to sign App Store requests" describes.
public struct PromotionalOfferV2SignatureCreator: Sendable {
    let claims: RequestClaims

    /// A creator signing with `signingKey` (id `keyId` in App Store Connect) for the issuer
    /// `issuerId` and the app `bundleId`.
    public init(signingKey: SigningKey, keyId: String, issuerId: String, bundleId: String) {
        claims = RequestClaims(
            key: signingKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId, audience: "promotional-offer")
    }

    /// Signs one offer.
    ///
    /// - Parameters:
    ///   - productId: the product identifier.
    ///   - offerIdentifier: the promotional offer's identifier in App Store Connect.
    ///   - transactionId: any transaction id of the customer (their `appTransactionId` too);
    ///     optional, recommended by Apple.
    ///   - nonce: a one-time UUID; a new one by default.
    ///   - issuedAt: the `iat` (its whole seconds); now by default.
    public func createSignature(
        productId: String, offerIdentifier: String, transactionId: String? = nil, nonce: UUID = UUID(),
        issuedAt: Timestamp = Timestamp(Date())
    ) throws(SigningError) -> SignedJWS {
        try Parameters.require(productId, "productId")
        try Parameters.require(offerIdentifier, "offerIdentifier")
        var specific: [JSONObject.Member] = [
            .init("productId", .string(productId)), .init("offerIdentifier", .string(offerIdentifier)),
        ]
        if let transactionId {
            try Parameters.require(transactionId, "transactionId")
            specific.append(.init("transactionId", .string(transactionId)))
        }
        return try claims.sign(specific, nonce: nonce, issuedAt: issuedAt)
    }
}

/// Signs introductory offer eligibility for StoreKit 2 (`introductoryOfferEligibility(compactJWS:)`):
/// a JWS with `aud` `introductory-offer-eligibility`, `productId`, `allowIntroductoryOffer` and
/// `transactionId` (see ``PromotionalOfferV2SignatureCreator`` for the header and base claims).
public struct IntroductoryOfferEligibilitySignatureCreator: Sendable {
    let claims: RequestClaims

    /// A creator signing with `signingKey` (id `keyId` in App Store Connect) for the issuer
    /// `issuerId` and the app `bundleId`.
    public init(signingKey: SigningKey, keyId: String, issuerId: String, bundleId: String) {
        claims = RequestClaims(
            key: signingKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId,
            audience: "introductory-offer-eligibility")
    }

    /// Signs whether the customer may have the product's introductory offer.
    ///
    /// - Parameters:
    ///   - productId: the product identifier.
    ///   - allowIntroductoryOffer: whether the customer is eligible.
    ///   - transactionId: any transaction id of the customer (their `appTransactionId` too).
    ///   - nonce: a one-time UUID; a new one by default.
    ///   - issuedAt: the `iat` (its whole seconds); now by default.
    public func createSignature(
        productId: String, allowIntroductoryOffer: Bool, transactionId: String, nonce: UUID = UUID(),
        issuedAt: Timestamp = Timestamp(Date())
    ) throws(SigningError) -> SignedJWS {
        try Parameters.require(productId, "productId")
        try Parameters.require(transactionId, "transactionId")
        return try claims.sign(
            [
                .init("productId", .string(productId)), .init("allowIntroductoryOffer", .bool(allowIntroductoryOffer)),
                .init("transactionId", .string(transactionId)),
            ], nonce: nonce, issuedAt: issuedAt)
    }
}

/// Signs Advanced Commerce API in-app requests for StoreKit: a JWS with `aud`
/// `advanced-commerce-api` whose `request` claim is the standard base64 of the request's JSON
/// (see ``PromotionalOfferV2SignatureCreator`` for the header and base claims).
public struct AdvancedCommerceAPIInAppSignatureCreator: Sendable {
    let claims: RequestClaims

    /// A creator signing with `signingKey` (id `keyId` in App Store Connect) for the issuer
    /// `issuerId` and the app `bundleId`.
    public init(signingKey: SigningKey, keyId: String, issuerId: String, bundleId: String) {
        claims = RequestClaims(
            key: signingKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId, audience: "advanced-commerce-api")
    }

    /// Signs `request` after checking it against Apple's field rules.
    ///
    /// - Parameters:
    ///   - request: a one-time charge, a subscription to create, modify or reactivate.
    ///   - nonce: a one-time UUID; a new one by default.
    ///   - issuedAt: the `iat` (its whole seconds); now by default.
    /// - Throws: ``SigningError/Code/invalidRequest`` naming the member that breaks a rule.
    public func createSignature(
        request: some AdvancedCommerceInAppRequest, nonce: UUID = UUID(), issuedAt: Timestamp = Timestamp(Date())
    ) throws(SigningError) -> SignedJWS {
        let json = JSONWriter.encode(.object(try request.jsonObject()))
        let encoded = String(decoding: Base64.encodeStandard(json), as: UTF8.self)
        return try claims.sign([.init("request", .string(encoded))], nonce: nonce, issuedAt: issuedAt)
    }
}

/// Makes the bearer token of the App Store Server API (Apple's "Generating JSON Web Tokens for
/// API requests"): header `{"alg":"ES256","kid":KEY_ID,"typ":"JWT"}`, claims `iss`, `iat`,
/// `exp` (at most an hour after `iat`), `aud` `appstoreconnect-v1` and `bid`. Send it as
/// `Authorization: Bearer TOKEN`; Apple wants a fresh one per request.
public struct AppStoreServerAPITokenCreator: Sendable {
    /// The longest lifetime Apple accepts: 60 minutes, in seconds.
    public static let maximumLifetime = 3600
    /// The lifetime ``createToken(issuedAt:expiresIn:)`` gives by default: 20 minutes.
    public static let defaultLifetime = 1200
    let signer: JWSSigner
    let issuerId: String
    let bundleId: String

    /// A creator signing with `signingKey` (an App Store Server API key, or In-App Purchase key,
    /// id `keyId`) for the issuer `issuerId` and the app `bundleId`.
    public init(signingKey: SigningKey, keyId: String, issuerId: String, bundleId: String) {
        signer = JWSSigner(key: signingKey, keyId: keyId)
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// Makes one token.
    ///
    /// - Parameters:
    ///   - issuedAt: the `iat` (its whole seconds); now by default.
    ///   - expiresIn: seconds from `iat` to `exp`, 1 to ``maximumLifetime``.
    /// - Throws: ``SigningError/Code/invalidParameter`` for a lifetime out of that range.
    public func createToken(issuedAt: Timestamp = Timestamp(Date()), expiresIn: Int = defaultLifetime)
        throws(SigningError) -> SignedJWS
    {
        try Parameters.require(issuerId, "issuerId")
        try Parameters.require(bundleId, "bundleId")
        guard (1...Self.maximumLifetime).contains(expiresIn) else {
            throw SigningError(
                .invalidParameter, "expiresIn is \(expiresIn) seconds; 1 to \(Self.maximumLifetime) is allowed")
        }
        let seconds = try Parameters.seconds(issuedAt, "issuedAt")
        return try signer.sign(
            JSONObject([
                .init("iss", .string(issuerId)), .init("iat", .number(String(seconds))),
                .init("exp", .number(String(seconds + Int64(expiresIn)))), .init("aud", "appstoreconnect-v1"),
                .init("bid", .string(bundleId)),
            ]))
    }
}
