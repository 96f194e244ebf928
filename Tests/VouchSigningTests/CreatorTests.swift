import Foundation
import Testing
import Vouch
import VouchSigning
import VouchTestSupport

/// What each creator signs, byte for byte, and that the signature holds under the public key.
@Suite struct CreatorTests {
    static let separator = "\u{2063}"

    // MARK: Version 1 promotional offers

    @Test func aVersion1OfferSignsTheSevenPartsJoinedByTheInvisibleSeparator() throws {
        let creator = PromotionalOfferSignatureCreator(
            signingKey: TestKeys.key, keyId: "2X9R4HXF34", bundleId: TestKeys.bundleId)
        let offer = try creator.createSignature(
            productId: "com.example.monthly", offerId: "WINBACK1",
            appAccountToken: "8E4A1B2C-0000-4000-8000-00000000ABCD", nonce: TestKeys.nonce,
            timestamp: Timestamp(milliseconds: 1_700_000_000_000))
        let expected = [
            "com.example.app", "2X9R4HXF34", "com.example.monthly", "WINBACK1", "8e4a1b2c-0000-4000-8000-00000000abcd",
            "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed", "1700000000000",
        ].joined(separator: Self.separator)
        #expect(offer.signedText == expected)
        let signature = try #require(Base64.decodeStandard(offer.signature.utf8))
        #expect(signature.first == 0x30)  // DER, not r‖s
        #expect(TestKeys.publicKey.isValidSignature(signature, of: Array(expected.utf8)))
        #expect(!TestKeys.other.publicKey.isValidSignature(signature, of: Array(expected.utf8)))
        #expect(!TestKeys.publicKey.isValidSignature(signature, of: Array((expected + "0").utf8)))
        #expect(
            JSONWriter.string(.object(offer.jsonObject))
                == #"{"signature":"\#(offer.signature)","keyId":"2X9R4HXF34","nonce":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed","timestamp":1700000000000,"productId":"com.example.monthly","offerId":"WINBACK1","appAccountToken":"8e4a1b2c-0000-4000-8000-00000000abcd","bundleId":"com.example.app"}"#
        )
    }

    @Test func aVersion1OfferWithoutAnAccountTokenSignsAnEmptyPart() throws {
        let offer = try PromotionalOfferSignatureCreator(signingKey: TestKeys.key, keyId: "K", bundleId: "B")
            .createSignature(productId: "P", offerId: "O", nonce: TestKeys.nonce, timestamp: Timestamp(milliseconds: 5))
        #expect(
            offer.signedText
                == "B\(Self.separator)K\(Self.separator)P\(Self.separator)O\(Self.separator)\(Self.separator)1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed\(Self.separator)5"
        )
    }

    @Test(arguments: [
        ("", "O", "", "productId is empty"), ("P", "", "", "offerId is empty"),
        ("P\u{2063}", "O", "", "productId holds U+2063"), ("P", "O", "a\u{2063}b", "appAccountToken holds U+2063"),
    ])
    func aVersion1OfferRefusesAnAmbiguousPart(productId: String, offerId: String, token: String, reason: String) {
        let creator = PromotionalOfferSignatureCreator(signingKey: TestKeys.key, keyId: "K", bundleId: "B")
        let error = #expect(throws: SigningError.self) {
            try creator.createSignature(productId: productId, offerId: offerId, appAccountToken: token)
        }
        #expect(error?.code == .invalidParameter)
        #expect(error?.reason.hasPrefix(reason) == true, "\(error?.reason ?? "")")
    }

    @Test func aVersion1OfferRefusesATimestampBefore1970() {
        let error = #expect(throws: SigningError.self) {
            try PromotionalOfferSignatureCreator(signingKey: TestKeys.key, keyId: "K", bundleId: "B")
                .createSignature(productId: "P", offerId: "O", timestamp: Timestamp(milliseconds: -1))
        }
        #expect(error?.code == .invalidParameter)
    }

    @Test func aVersion1OfferMadeWithoutNonceOrTimestampGetsFreshOnes() throws {
        let creator = PromotionalOfferSignatureCreator(signingKey: TestKeys.key, keyId: "K", bundleId: "B")
        let before = Timestamp(Date())
        let first = try creator.createSignature(productId: "P", offerId: "O")
        let second = try creator.createSignature(productId: "P", offerId: "O")
        #expect(first.nonce != second.nonce)
        #expect(first.timestamp >= before && first.timestamp <= Timestamp(Date()))
    }

    // MARK: JWS creators

    @Test func aVersion2OfferIsAJWSWithApplesHeaderAndClaims() throws {
        let signed = try PromotionalOfferV2SignatureCreator(
            signingKey: TestKeys.key, keyId: "2X9R4HXF34", issuerId: TestKeys.issuerId, bundleId: TestKeys.bundleId
        ).createSignature(
            productId: "com.example.monthly", offerIdentifier: "WINBACK1", transactionId: "2000000123",
            nonce: TestKeys.nonce, issuedAt: TestKeys.issuedAt)
        let decoded = signed.decoded
        #expect(decoded.headerText == #"{"alg":"ES256","kid":"2X9R4HXF34","typ":"JWT"}"#)
        #expect(
            String(decoding: decoded.payloadBytes, as: UTF8.self)
                == #"{"iss":"57246542-96fe-1a63-e053-0824d011072a","iat":1700000000,"bid":"com.example.app","aud":"promotional-offer","nonce":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed","productId":"com.example.monthly","offerIdentifier":"WINBACK1","transactionId":"2000000123"}"#
        )
        #expect(decoded.signature.count == 64)
        #expect(decoded.header == signed.header && decoded.payload == signed.claims)
        let verified = try TestKeys.publicKey.verify(signed.token, at: .fixed(TestKeys.issuedAt))
        #expect(verified.claims == signed.claims)
    }

    @Test func aVersion2OfferWithoutTransactionIdLeavesTheClaimOut() throws {
        let signed = try PromotionalOfferV2SignatureCreator(
            signingKey: TestKeys.key, keyId: "K", issuerId: "I", bundleId: "B"
        ).createSignature(productId: "P", offerIdentifier: "O", nonce: TestKeys.nonce, issuedAt: TestKeys.issuedAt)
        #expect(
            signed.claims.members.map(\.name) == ["iss", "iat", "bid", "aud", "nonce", "productId", "offerIdentifier"])
    }

    @Test func introductoryOfferEligibilityCarriesTheBooleanAndTransaction() throws {
        let signed = try IntroductoryOfferEligibilitySignatureCreator(
            signingKey: TestKeys.key, keyId: "K", issuerId: "I", bundleId: "B"
        ).createSignature(
            productId: "P", allowIntroductoryOffer: false, transactionId: "42", nonce: TestKeys.nonce,
            issuedAt: TestKeys.issuedAt)
        #expect(
            JSONWriter.string(.object(signed.claims))
                == #"{"iss":"I","iat":1700000000,"bid":"B","aud":"introductory-offer-eligibility","nonce":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed","productId":"P","allowIntroductoryOffer":false,"transactionId":"42"}"#
        )
        _ = try TestKeys.publicKey.verify(signed.token, at: .signedDate)
    }

    @Test func anAdvancedCommerceRequestIsTheBase64OfItsJSON() throws {
        let request = AdvancedCommerceOneTimeChargeCreateRequest(
            requestInfo: AdvancedCommerceRequestInfo(requestReferenceId: TestKeys.nonce), currency: "USD",
            item: AdvancedCommerceOneTimeChargeItem(
                sku: "coins.100", description: "100 coins", displayName: "Coins", price: 990),
            taxCode: "C003-00-1")
        let signed = try AdvancedCommerceAPIInAppSignatureCreator(
            signingKey: TestKeys.key, keyId: "K", issuerId: "I", bundleId: "B"
        ).createSignature(request: request, nonce: TestKeys.nonce, issuedAt: TestKeys.issuedAt)
        #expect(signed.claims["aud"] == "advanced-commerce-api")
        let text = try #require(signed.claims["request"]?.stringValue)
        #expect(
            String(decoding: try #require(Base64.decodeStandard(text.utf8)), as: UTF8.self)
                == #"{"operation":"CREATE_ONE_TIME_CHARGE","version":"1","requestInfo":{"requestReferenceId":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"},"currency":"USD","item":{"SKU":"coins.100","description":"100 coins","displayName":"Coins","price":990},"taxCode":"C003-00-1"}"#
        )
    }

    @Test(arguments: ["keyId", "issuerId", "bundleId", "productId", "transactionId"])
    func aJWSCreatorRefusesAnEmptyIdentifier(parameter: String) {
        let error = #expect(throws: SigningError.self) {
            try IntroductoryOfferEligibilitySignatureCreator(
                signingKey: TestKeys.key, keyId: parameter == "keyId" ? "" : "K",
                issuerId: parameter == "issuerId" ? "" : "I", bundleId: parameter == "bundleId" ? "" : "B"
            ).createSignature(
                productId: parameter == "productId" ? "" : "P", allowIntroductoryOffer: true,
                transactionId: parameter == "transactionId" ? "" : "1")
        }
        #expect(error?.code == .invalidParameter)
        #expect(error?.reason == "\(parameter) is empty")
    }

    // MARK: App Store Server API tokens

    @Test func anAPITokenCarriesApplesClaimsAndExpiresWhenAsked() throws {
        let signed = try AppStoreServerAPITokenCreator(
            signingKey: TestKeys.key, keyId: "2X9R4HXF34", issuerId: TestKeys.issuerId, bundleId: TestKeys.bundleId
        ).createToken(issuedAt: TestKeys.issuedAt, expiresIn: 600)
        #expect(signed.decoded.headerText == #"{"alg":"ES256","kid":"2X9R4HXF34","typ":"JWT"}"#)
        #expect(
            JSONWriter.string(.object(signed.claims))
                == #"{"iss":"57246542-96fe-1a63-e053-0824d011072a","iat":1700000000,"exp":1700000600,"aud":"appstoreconnect-v1","bid":"com.example.app"}"#
        )
        _ = try TestKeys.publicKey.verify(signed.token, at: .fixed(Timestamp(milliseconds: 1_700_000_599_999)))
        let expired = #expect(throws: VerificationError.self) {
            try TestKeys.publicKey.verify(signed.token, at: .fixed(Timestamp(milliseconds: 1_700_000_600_000)))
        }
        #expect(expired?.code == .tokenExpired)
        let early = #expect(throws: VerificationError.self) {
            try TestKeys.publicKey.verify(signed.token, at: .fixed(Timestamp(milliseconds: 1_699_999_999_999)))
        }
        #expect(early?.code == .tokenNotYetValid)
    }

    @Test(arguments: [0, -1, 3601, 7200])
    func anAPITokenLivesAtMostAnHour(seconds: Int) {
        let error = #expect(throws: SigningError.self) {
            try AppStoreServerAPITokenCreator(signingKey: TestKeys.key, keyId: "K", issuerId: "I", bundleId: "B")
                .createToken(expiresIn: seconds)
        }
        #expect(error?.code == .invalidParameter)
    }

    @Test func anAPITokenMayLiveExactlyAnHour() throws {
        let signed = try AppStoreServerAPITokenCreator(
            signingKey: TestKeys.key, keyId: "K", issuerId: "I", bundleId: "B"
        )
        .createToken(issuedAt: TestKeys.issuedAt, expiresIn: 3600)
        #expect(signed.claims["exp"] == .number("1700003600"))
    }
}
