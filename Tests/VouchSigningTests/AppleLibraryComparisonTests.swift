import Foundation
import Testing
import Vouch
import VouchMint
import VouchReceipts
import VouchSigning
import VouchTestSupport

/// Vouch against Apple's own code: Apple's App Store Server Library for Python and PyJWT, pinned
/// and installed by `scripts/python-tools` (which fails, and so these tests, when they cannot be
/// installed), are given the same key and inputs (`apple_reference.py` reads them).
///
/// - Version 1 offers: the bytes signed are identical; Vouch's signature verifies over Apple's
///   bytes (with `cryptography`) and Apple's over Vouch's (with Vouch).
/// - JWS creators and the API token: Apple's clock and nonce are fixed to Vouch's, so header and
///   claims must be equal, member for member (the Advanced Commerce `request` compared as the
///   JSON it encodes: Apple's Python writes it with spaces); each token verifies with PyJWT
///   under the public key, and Apple's with Vouch.
/// - Receipts: Apple's `ReceiptUtility` and Vouch agree on made transaction receipts, malformed
///   ones included (Apple's returns nothing or raises; Vouch throws saying why), and Apple's id
///   of a minted app receipt is Vouch's first in-app transaction id.
@Suite(.serialized) struct AppleLibraryComparisonTests {
    /// The interpreter of the pinned tools; installing them is part of the test.
    static let python = Result { () throws -> String in
        let result = try Subprocess.run([packageRoot.appendingPathComponent("scripts/python-tools").path])
        guard result.status == 0, let path = result.stdout.split(separator: "\n").last else {
            throw TestFailure("scripts/python-tools could not install the Python tools:\n\(result.stderr)")
        }
        return String(path)
    }

    /// What `apple_reference.py COMMAND` answers to `request`.
    static func apple(_ command: String, _ request: [String: Any]) throws -> [String: Any] {
        let script = packageRoot.appendingPathComponent("Tests/VouchSigningTests/apple_reference.py").path
        let input = try JSONSerialization.data(withJSONObject: request)
        let result = try Subprocess.run([try python.get(), script, command], input: Array(input))
        guard result.status == 0 else { throw TestFailure("apple_reference.py \(command) failed:\n\(result.stderr)") }
        guard let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("apple_reference.py \(command) printed no object: \(result.stdout)")
        }
        return answer
    }

    /// A JWS's header and claims as Apple's Python decodes them (for comparison as JSON values).
    static func parts(_ token: String) throws -> (header: JSONObject, claims: JSONObject) {
        let decoded = try DecodedJWS(token)
        return (decoded.header, decoded.payload)
    }

    /// `object` as Foundation JSON, so two writers' texts compare as values.
    static func value(_ object: JSONObject) throws -> NSDictionary {
        try JSONSerialization.jsonObject(with: Data(JSONWriter.encode(.object(object)))) as! NSDictionary
    }

    // MARK: Version 1

    @Test(arguments: [
        ("com.example.monthly", "WINBACK1", "", "1B9D6BCD-BBFD-4B2D-9B5D-AB8DFBBD4BED", Int64(1_700_000_000_000)),
        (
            "com.example.yearly", "RETAIN-50", "8E4A1B2C-0000-4000-8000-00000000ABCD",
            "00000000-0000-4000-8000-000000000001", 0
        ),
        ("jp.例え.月額", "オファー", "User-İstanbul-ÄÖÜ", "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF", 9_999_999_999_999),
    ])
    func aVersion1OfferSignsApplesBytesAndEachSignatureVerifiesOverTheOthers(
        productId: String, offerId: String, token: String, nonce: String, milliseconds: Int64
    ) throws {
        let offer = try PromotionalOfferSignatureCreator(
            signingKey: TestKeys.key, keyId: TestKeys.minted.keyId, bundleId: TestKeys.bundleId
        ).createSignature(
            productId: productId, offerId: offerId, appAccountToken: token, nonce: UUID(uuidString: nonce)!,
            timestamp: Timestamp(milliseconds: milliseconds))
        let answer = try Self.apple(
            "promotional-offer",
            [
                "key": TestKeys.pem, "keyId": TestKeys.minted.keyId, "bundleId": TestKeys.bundleId,
                "productId": productId, "offerId": offerId, "appAccountToken": token, "nonce": nonce,
                "timestamp": milliseconds, "vouchSignature": offer.signature,
            ])
        let appleBytes = try #require(Base64.decodeStandard(((answer["signedText"] as? String) ?? "").utf8))
        #expect(
            appleBytes == Array(offer.signedText.utf8), "Apple signed \(String(decoding: appleBytes, as: UTF8.self))")
        #expect(answer["vouchSignatureVerifies"] as? Bool == true)
        let appleSignature = try #require(Base64.decodeStandard(((answer["signature"] as? String) ?? "").utf8))
        #expect(TestKeys.publicKey.isValidSignature(appleSignature, of: Array(offer.signedText.utf8)))
        #expect(!TestKeys.other.publicKey.isValidSignature(appleSignature, of: Array(offer.signedText.utf8)))
    }

    // MARK: JWS creators

    static let request: JSONObject = try! StrictJSON.parseObject(
        Array(
            #"{"operation":"CREATE_SUBSCRIPTION","version":"1","requestInfo":{"requestReferenceId":"5B8C3B8E-1D2F-4C3A-9E4B-0A1B2C3D4E5F","appAccountToken":"8E4A1B2C-0000-4000-8000-00000000ABCD"},"currency":"USD","descriptors":{"description":"All the features","displayName":"Pro"},"items":[{"SKU":"pro.monthly","description":"Pro, monthly","displayName":"Pro","price":9990,"offer":{"periodCount":3,"price":4990,"period":"P1M","reason":"ACQUISITION"}},{"SKU":"pro.storage","description":"Storage","displayName":"Storage","price":990}],"period":"P1M","taxCode":"C003-00-2"}"#
                .utf8))
    static let oneTimeCharge: JSONObject = try! StrictJSON.parseObject(
        Array(
            #"{"operation":"CREATE_ONE_TIME_CHARGE","version":"1","requestInfo":{"requestReferenceId":"5B8C3B8E-1D2F-4C3A-9E4B-0A1B2C3D4E5F"},"currency":"EUR","item":{"SKU":"coins.100","description":"100 coins","displayName":"Coins","price":990},"taxCode":"C003-00-1","storefront":"FRA"}"#
                .utf8))

    enum JWSCase: String, CaseIterable, Sendable {
        case promotionalOffer, promotionalOfferWithoutTransaction, eligible, notEligible, subscription, oneTimeCharge
    }

    @Test(arguments: JWSCase.allCases)
    func aJWSHasApplesHeaderAndClaimsAndVerifiesBothWays(_ jwsCase: JWSCase) throws {
        let (key, keyId, issuer, bundle) = (TestKeys.key, TestKeys.minted.keyId, TestKeys.issuerId, TestKeys.bundleId)
        var request: [String: Any] = [
            "key": TestKeys.pem, "keyId": keyId, "issuerId": issuer, "bundleId": bundle,
            "nonce": TestKeys.nonce.uuidString, "issuedAt": TestKeys.issuedAt.milliseconds / 1000,
        ]
        let signed: SignedJWS
        switch jwsCase {
        case .promotionalOffer, .promotionalOfferWithoutTransaction:
            let transaction = jwsCase == .promotionalOffer ? "2000000123" : nil
            signed = try PromotionalOfferV2SignatureCreator(
                signingKey: key, keyId: keyId, issuerId: issuer, bundleId: bundle
            )
            .createSignature(
                productId: "com.example.monthly", offerIdentifier: "WINBACK1", transactionId: transaction,
                nonce: TestKeys.nonce, issuedAt: TestKeys.issuedAt)
            request["kind"] = "promotional-offer"
            request["productId"] = "com.example.monthly"
            request["offerIdentifier"] = "WINBACK1"
            request["transactionId"] = transaction
        case .eligible, .notEligible:
            signed = try IntroductoryOfferEligibilitySignatureCreator(
                signingKey: key, keyId: keyId, issuerId: issuer, bundleId: bundle
            ).createSignature(
                productId: "com.example.monthly", allowIntroductoryOffer: jwsCase == .eligible,
                transactionId: "2000000123", nonce: TestKeys.nonce, issuedAt: TestKeys.issuedAt)
            request["kind"] = "introductory-offer-eligibility"
            request["productId"] = "com.example.monthly"
            request["allowIntroductoryOffer"] = jwsCase == .eligible
            request["transactionId"] = "2000000123"
        case .subscription, .oneTimeCharge:
            let json = jwsCase == .subscription ? Self.request : Self.oneTimeCharge
            signed = try AdvancedCommerceAPIInAppSignatureCreator(
                signingKey: key, keyId: keyId, issuerId: issuer, bundleId: bundle
            ).createSignature(
                request: try AdvancedCommerceRequests.request(json: json), nonce: TestKeys.nonce,
                issuedAt: TestKeys.issuedAt)
            request["kind"] = "advanced-commerce-api"
            request["request"] = try Self.value(json)
        }
        request["vouchToken"] = signed.token
        let answer = try Self.apple("jws", request)
        let appleToken = try #require(answer["token"] as? String)
        let apple = try Self.parts(appleToken)
        #expect(try Self.value(apple.header) == Self.value(signed.header))
        var appleClaims = apple.claims
        var vouchClaims = signed.claims
        if let appleRequest = appleClaims["request"]?.stringValue,
            let vouchRequest = vouchClaims["request"]?.stringValue
        {
            // Apple's Python writes the request's JSON with spaces; the JSON must be the same.
            let decode = { (text: String) throws -> NSDictionary in
                try JSONSerialization.jsonObject(with: Data(Base64.decodeStandard(text.utf8)!)) as! NSDictionary
            }
            #expect(try decode(appleRequest) == decode(vouchRequest))
            appleClaims["request"] = nil
            vouchClaims["request"] = nil
        }
        #expect(try Self.value(appleClaims) == Self.value(vouchClaims))
        #expect(Set(apple.claims.members.map(\.name)) == Set(signed.claims.members.map(\.name)))
        #expect(answer["appleVerifies"] as? Bool == true)
        #expect(answer["vouchVerifies"] as? Bool == true)
        _ = try TestKeys.publicKey.verify(appleToken, at: .signedDate, bundleId: bundle)
    }

    @Test func anAPITokenHasApplesHeaderAndClaimsAndVerifiesBothWays() throws {
        // Apple's client makes tokens valid for 5 minutes from its clock, without iat.
        let signed = try AppStoreServerAPITokenCreator(
            signingKey: TestKeys.key, keyId: TestKeys.minted.keyId, issuerId: TestKeys.issuerId,
            bundleId: TestKeys.bundleId
        ).createToken(issuedAt: TestKeys.issuedAt, expiresIn: 300)
        let answer = try Self.apple(
            "api-token",
            [
                "key": TestKeys.pem, "keyId": TestKeys.minted.keyId, "issuerId": TestKeys.issuerId,
                "bundleId": TestKeys.bundleId, "now": TestKeys.issuedAt.milliseconds / 1000, "vouchToken": signed.token,
            ])
        let appleToken = try #require(answer["token"] as? String)
        let apple = try Self.parts(appleToken)
        #expect(try Self.value(apple.header) == Self.value(signed.header))
        var vouchClaims = signed.claims
        #expect(apple.claims["iat"] == nil)
        vouchClaims["iat"] = nil  // Apple's documentation has it; Apple's Python client leaves it out
        #expect(try Self.value(apple.claims) == Self.value(vouchClaims))
        #expect(answer["appleVerifies"] as? Bool == true)
        #expect(answer["vouchVerifies"] as? Bool == true)
        _ = try TestKeys.publicKey.verify(appleToken, at: .fixed(TestKeys.issuedAt), bundleId: TestKeys.bundleId)
    }

    // MARK: Receipts

    /// A transaction receipt's old-style property list: `purchase-info` holds `inner`.
    static func transactionReceipt(
        _ inner: String,
        outer: (String) -> String = { purchaseInfo in
            "{\n\t\"signature\" = \"AkV4YW1wbGU=\";\n\t\"purchase-info\" = \"\(purchaseInfo)\";\n\t\"environment\" = \"Sandbox\";\n\t\"pod\" = \"100\";\n\t\"signing-status\" = \"0\";\n}"
        }
    ) -> String {
        let plist = outer(String(decoding: Base64.encodeStandard(Array(inner.utf8)), as: UTF8.self))
        return String(decoding: Base64.encodeStandard(Array(plist.utf8)), as: UTF8.self)
    }

    static let purchase =
        "{\n\t\"original-purchase-date-pst\" = \"2012-04-30 08:05:55 America/Los_Angeles\";\n\t\"original-transaction-id\" = \"1000000046178817\";\n\t\"bvrs\" = \"20120427\";\n\t\"transaction-id\" = \"1000000046178818\";\n\t\"quantity\" = \"1\";\n\t\"product-id\" = \"com.example.coins\";\n\t\"bid\" = \"com.example.app\";\n}"

    /// Made transaction receipts, each with the outcome both must give: an id, or none.
    static let transactionReceipts: [(name: String, base64: String, id: String?)] = [
        ("a sandbox purchase", transactionReceipt(purchase), "1000000046178818"),
        ("no spaces but one before '='", transactionReceipt("{\"transaction-id\" = \"42\";}"), "42"),
        ("letters in the id", transactionReceipt("{\n\t\"transaction-id\" = \"ABC123\";\n}"), "ABC123"),
        ("no transaction-id", transactionReceipt("{\n\t\"original-transaction-id\" = \"1\";\n}"), nil),
        ("an empty transaction-id", transactionReceipt("{\n\t\"transaction-id\" = \"\";\n}"), nil),
        ("a transaction-id with a space", transactionReceipt("{\n\t\"transaction-id\" = \"12 34\";\n}"), nil),
        ("no purchase-info", transactionReceipt(purchase) { _ in "{\n\t\"signature\" = \"AkV4\";\n}" }, nil),
        (
            "purchase-info that is not base64",
            transactionReceipt(purchase) { _ in "{\n\t\"purchase-info\" = \"not*base64\";\n}" }, nil
        ),
        ("not base64 at all", "this is not a receipt", nil),
        ("base64 of text", String(decoding: Base64.encodeStandard(Array("hello".utf8)), as: UTF8.self), nil),
        ("an app receipt's base64", "MIIBAgEAMA0GCSqGSIb3DQEBCwUAMA==", nil),
        ("empty", "", nil),
    ]

    @Test func theTransactionReceiptExtractorAgreesWithApplesReceiptUtility() throws {
        let answer = try Self.apple("transaction-receipts", ["receipts": Self.transactionReceipts.map(\.base64)])
        let results = try #require(answer["results"] as? [[String: Any]])
        try #require(results.count == Self.transactionReceipts.count)
        for (made, apple) in zip(Self.transactionReceipts, results) {
            #expect(apple["id"] as? String == made.id, "Apple, \(made.name): \(apple)")
            do {
                let receipt = try LegacyTransactionReceipt(base64: Array(made.base64.utf8))
                #expect(receipt.transactionId == made.id, "Vouch, \(made.name)")
            } catch {
                #expect(made.id == nil, "Vouch, \(made.name): \(error)")
                #expect(!error.reason.isEmpty)
            }
        }
    }

    /// Where Vouch reads the property list and the base64 strictly and Apple's regular
    /// expressions read otherwise: each side's outcome, asserted, so a change on either shows.
    @Test func theDeliberateDifferencesFromApplesReceiptUtilityStay() throws {
        let differences: [(name: String, base64: String, apple: String?, vouch: VerificationError.Code?)] = [
            // Apple's expression wants whitespace around '='; the property-list grammar does not.
            ("no space around '='", Self.transactionReceipt("{\"transaction-id\"=\"7\";}"), nil, nil),
            // Apple's expression finds the id anywhere; Vouch reads one dictionary, whole.
            (
                "text after the closing brace", Self.transactionReceipt("{\n\t\"transaction-id\" = \"7\";\n} trailing"),
                "7",
                .receiptMalformedPayload
            ),
            (
                "a member twice", Self.transactionReceipt("{\"transaction-id\" = \"7\";\n\"transaction-id\" = \"8\";}"),
                "7",
                .receiptMalformedPayload
            ),
        ]
        let answer = try Self.apple("transaction-receipts", ["receipts": differences.map(\.base64)])
        let results = try #require(answer["results"] as? [[String: Any]])
        for (difference, apple) in zip(differences, results) {
            #expect(apple["id"] as? String == difference.apple, "Apple, \(difference.name): \(apple)")
            let vouch = Result { () throws(VerificationError) in
                try LegacyTransactionReceipt(base64: Array(difference.base64.utf8)).transactionId
            }
            switch (vouch, difference.vouch) {
            case (.success(let id), nil): #expect(id == "7", "\(difference.name)")
            case (.failure(let error), let code?): #expect(error.code == code, "\(difference.name)")
            default: Issue.record("Vouch, \(difference.name): \(vouch)")
            }
        }
    }

    @Test func applesIdOfAMintedAppReceiptIsTheFirstInAppTransaction() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let authority = try MintReceiptAuthority.generate(
            .init(
                validity: MintValidity(
                    notBefore: date.addingTimeInterval(-86_400 * 365), notAfter: date.addingTimeInterval(86_400 * 365)))
        )
        var receipts: [String] = []
        var expected: [String?] = []
        for count in [0, 1, 3] {
            let content = MintReceiptContent.sample(receiptCreationDate: date, inAppCount: count, seed: count)
            let bytes = try MintReceiptSigner(authority: authority).sign(content)
            receipts.append(String(decoding: Base64.encodeStandard(bytes), as: UTF8.self))
            let inspected = try ReceiptInspection(receipt: bytes).receipt.get()
            expected.append(inspected.inApp.first?.transactionId)
        }
        let answer = try Self.apple("app-receipts", ["receipts": receipts])
        let results = try #require(answer["results"] as? [[String: Any]])
        #expect(results.map { $0["id"] as? String } == expected)
        #expect(expected.compactMap { $0 }.count == 2)
    }
}
