import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch

/// The server-facing API: a verifier that needs the app's identity, typed results, configuration
/// errors of their own, errors with categories, `Codable` values and readable enum names.
struct VerifierAPITests {
    static let realTransaction = "apple-real/real/transaction-production-1.jws"
    static let realNotification = "apple-real/real/notification-sandbox-21.jws"

    static func configurationError(_ configuration: Verifier.Configuration) -> ConfigurationError? {
        do {
            _ = try Verifier(configuration: configuration)
            return nil
        } catch {
            return error
        }
    }

    static func pem(_ der: [UInt8]) -> String {
        let text = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(text)\n-----END CERTIFICATE-----\n"
    }

    // MARK: Safe by default

    @Test func aVerifierWithoutTheAppsIdentityIsRefused() {
        #expect(Self.configurationError(.init())?.code == .missingAppIdentity)
        var onlyBundle = Verifier.Configuration()
        onlyBundle.bundleId = "com.example.app"
        #expect(Self.configurationError(onlyBundle)?.code == .missingAppIdentity)
        var onlyEnvironment = Verifier.Configuration()
        onlyEnvironment.environment = .sandbox
        #expect(Self.configurationError(onlyEnvironment)?.code == .missingAppIdentity)
        #expect(Self.configurationError(.init(bundleId: "com.example.app", environment: .sandbox)) == nil)
    }

    @Test func productionWithoutTheAppAppleIdIsRefused() {
        #expect(
            Self.configurationError(.init(bundleId: "com.example.app", environment: .production))?.code
                == .missingAppAppleId)
        #expect(
            Self.configurationError(.init(bundleId: "com.example.app", environment: .production, appAppleId: 1)) == nil)
    }

    @Test func aVerifierWithAnIdentityRejectsAnotherAppsRealTransaction() throws {
        let token = try TestVectors.text(Self.realTransaction)
        let verifier = try Verifier(
            configuration: .init(bundleId: "com.example.app", environment: .production, appAppleId: 1))
        let error = try #require(verifier.rejection(token))
        #expect(error.code == .wrongBundleId)
        #expect(error.category == .claims)
        #expect(try Verifier(configuration: .acceptingAnyApp()).rejection(token) == nil)
    }

    @Test func acceptingAnyAppIsAnExplicitChoice() {
        #expect(Verifier.Configuration().acceptsAnyApp == false)
        #expect(Verifier.Configuration.acceptingAnyApp().acceptsAnyApp == true)
        #expect(Self.configurationError(.acceptingAnyApp()) == nil)
    }

    // MARK: Configuration errors

    @Test func anEmptyOrUnreadableTrustListIsAConfigurationError() {
        var empty = Verifier.Configuration.acceptingAnyApp()
        empty.trustAnchors = []
        #expect(Self.configurationError(empty)?.code == .noTrustAnchors)
        var unreadable = Verifier.Configuration.acceptingAnyApp()
        unreadable.trustAnchors = [Array("not a certificate".utf8)]
        #expect(Self.configurationError(unreadable)?.code == .unreadableTrustAnchor)
        var xcode = Verifier.Configuration.acceptingAnyApp()
        xcode.xcodeCertificates = [[0x30, 0x00]]
        #expect(Self.configurationError(xcode)?.code == .unreadableXcodeCertificate)
        #expect(Self.configurationError(unreadable)?.localizedDescription.contains("trust anchor 1") == true)
    }

    @Test func aPEMBundleOfTwoRootsTrustsBoth() throws {
        let minted = try TestVectors.bytes("minted/ca/root.der")
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [Array((Self.pem(minted) + Self.pem(AppleRootCertificates.rootCAG3)).utf8)]
        let verifier = try Verifier(configuration: configuration)
        #expect(verifier.rejection(try TestVectors.text(Self.realTransaction)) == nil)
        let mintedToken = try TestVectors.text("minted/transaction.txt").split(separator: "\n")[0]
        #expect(verifier.rejection(String(mintedToken)) == nil)

        // Only the minted root: Apple's token no longer chains.
        configuration.trustAnchors = [Array(Self.pem(minted).utf8)]
        #expect(
            try Verifier(configuration: configuration).rejection(try TestVectors.text(Self.realTransaction))?.code
                == .untrustedChain)
    }

    // MARK: Typed verification

    @Test func typedVerificationReturnsTheModelAndWhatVouchesForIt() throws {
        let token = try TestVectors.text(Self.realTransaction)
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        let verified = try verifier.verify(token, as: JWSTransactionDecodedPayload.self)
        #expect(verified.value.transactionId == verified.payload["transactionId"]?.stringValue)
        #expect(verified.value.transactionId != nil)
        #expect(verified.value == (try JWSTransactionDecodedPayload(json: verified.payload)))
        let signedDate = try #require(verified.value.signedDate)
        #expect(verified.validationTime == signedDate)
        let certificate = verified.signingCertificate
        #expect(certificate.sha256 == verified.untyped.signingCertificateSHA256)
        #expect(certificate.subject.contains("Prod ECC Mac App Store and iTunes Store Receipt Signing"))
        #expect(certificate.notBefore == Timestamp(milliseconds: 1_758_311_091_000))  // 2025-09-19T19:44:51Z
        #expect(try #require(certificate.notBefore) < verified.validationTime)
        #expect(verified.validationTime < (try #require(certificate.notAfter)))
        #expect(certificate.keyIdentifier == nil)
    }

    @Test func typedVerificationOfAnotherKindIsWrongKind() throws {
        let token = try TestVectors.text(Self.realTransaction)
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        #expect(throws: VerificationError(.wrongKind, "")) {
            try verifier.verify(token, as: ResponseBodyV2DecodedPayload.self)
        }
        #expect(throws: VerificationError(.wrongKind, "")) {
            try verifier.verify(token, as: AppTransaction.self)
        }
    }

    @Test func aNotificationGivesItsVerifiedNestedTokensTyped() throws {
        let token = try TestVectors.text(Self.realNotification)
        let verifier = try Verifier(
            configuration: .init(bundleId: "com.loki-project.loki-messenger", environment: .sandbox))
        let notification = try verifier.verify(token, as: ResponseBodyV2DecodedPayload.self)
        #expect(notification.value.notificationType == .didRenew)
        let transaction = try #require(notification.transaction)
        #expect(transaction.value.transactionId == "2000001024998954")
        #expect(transaction.value.productId == "com.getsession.org.pro_sub")
        #expect(transaction.validationTime == transaction.value.signedDate)
        let renewal = try #require(notification.renewalInfo)
        #expect(renewal.value.json == notification.untyped.nested(.signedRenewalInfo)?.payload)
        #expect(notification.appTransaction == nil)
        #expect(notification.untyped.nested.map(\.field) == [.signedTransactionInfo, .signedRenewalInfo])
        #expect(notification.untyped.decoded(as: ResponseBodyV2DecodedPayload.self)?.value == notification.value)
        #expect(notification.untyped.decoded(as: JWSTransactionDecodedPayload.self) == nil)
    }

    @Test func nestedTokenFieldsNameTheirPaths() {
        #expect(
            NestedTokenField.allCases.map(\.path) == [
                "data.signedTransactionInfo", "data.signedRenewalInfo", "appData.signedAppTransactionInfo",
            ])
        #expect(NestedTokenField.signedAppTransactionInfo.parent == "appData")
        #expect(NestedTokenField.signedAppTransactionInfo.member == "signedAppTransactionInfo")
        #expect(NestedTokenField.signedRenewalInfo.kind == .renewalInfo)
        #expect("\(NestedTokenField.signedTransactionInfo)" == "data.signedTransactionInfo")
    }

    // MARK: Errors

    @Test func everyErrorHasACategoryAndALocalizedReason() {
        let error = VerificationError(.badSignature, "the signature does not verify")
        #expect(error.category == .signature)
        #expect(error.localizedDescription == "the signature does not verify")
        #expect(VerificationError(.unsupportedCertificateVersion, "").category == .chain)
        #expect(VerificationError(.internalError, "").category == .internal)
        #expect(VerificationError(.tokenTooLarge, "").category == .input)
        #expect(VerificationError(.badPayloadJSON, "").category == .format)
        let nested = VerificationError(
            nestedIn: .signedTransactionInfo, VerificationError(.certificateExpired, "expired"))
        #expect(nested.code == .nestedTokenInvalid)
        #expect(nested.category == .chain)
        let configuration = ConfigurationError(.noTrustAnchors, "the trust anchor list is empty")
        #expect(configuration.localizedDescription == "the trust anchor list is empty")
        #expect(configuration.code.rawValue == "no_trust_anchors")
        // Equal on the code, as every error of the package: the reason is detail.
        #expect(configuration == ConfigurationError(.noTrustAnchors, "another reason"))
        #expect(configuration != ConfigurationError(.missingAppIdentity, "the trust anchor list is empty"))
        #expect(Set([configuration, ConfigurationError(.noTrustAnchors, "again")]).count == 1)
    }

    /// X25519 keys cannot verify signatures, so OpenSSL gives no verification context for one:
    /// the state an allocation failure leaves, and the verifier's signature step says
    /// `internal_error`, not `bad_signature`.
    @Test func noVerificationContextIsAnInternalErrorNotABadSignature() throws {
        let x25519 = [UInt8](
            hex: "302a300506032b656e032100e61ee4d59e175933b54f1abb51446a35a0ef520bbbe6cb5f8dff472ff318001b")
        let key = try #require(PublicKey(subjectPublicKeyInfo: x25519))
        let signature = [UInt8](repeating: 1, count: 64)
        #expect(
            ES256.check(signature: signature, message: UnsafeRawBufferPointer(start: nil, count: 0), key: key) == nil)
        #expect(throws: VerificationError(.internalError, "")) {
            try Engine.checkSignature(signature, over: UnsafeRawBufferPointer(start: nil, count: 0), key: key)
        }
    }

    @Test func anXMinusOneCertificateIsAnUnsupportedVersion() throws {
        let v1 = try TestVectors.bytes("minted/x509-v1-leaf.der")
        let certificate = try #require(Certificate(der: v1))
        #expect(certificate.version == 1)
        #expect(throws: VerificationError(.unsupportedCertificateVersion, "")) {
            try AppleChainPolicy.leafKey(of: certificate)
        }
    }

    // MARK: Timestamp

    @Test func timestampsOrderByInstantAndConvertFromAndToDate() throws {
        let fraction = try #require(Timestamp(rawValue: "1697679936049.7297"))
        let later = try #require(Timestamp(rawValue: "1697679936049.8"))
        #expect(fraction < later)
        #expect(Timestamp(milliseconds: 1_697_679_936_049) < fraction)
        #expect(fraction < Timestamp(milliseconds: 1_697_679_936_050))
        #expect(try #require(Timestamp(rawValue: "-62135769600000")) < Timestamp(milliseconds: 0))
        // One instant, two texts: ordered by text, never equal, so the order is total.
        let plain = Timestamp(milliseconds: 1000)
        let exponent = try #require(Timestamp(rawValue: "1e3"))
        #expect(plain != exponent)
        #expect((plain < exponent) != (exponent < plain))

        let date = Date(timeIntervalSince1970: 1_759_302_732.5)
        #expect(Timestamp(date) == Timestamp(milliseconds: 1_759_302_732_500))
        #expect(Timestamp(date).date == date)
        #expect(Timestamp(Date(timeIntervalSince1970: 1e300)) == Timestamp(milliseconds: .max))
        #expect([later, fraction, plain].sorted() == [plain, fraction, later])
    }

    /// A `Date` cannot spell every millisecond exactly: the floor of its arithmetic reads about
    /// one millisecond in twenty-five as the one before. The conversion gives each back.
    @Test func everyWholeMillisecondComesBackFromItsDate() {
        var random = SeededRandom(seed: 29)
        var instants: [Int64] = [0, -1, 1, 1_740_832_200_250, -62_135_769_600_000, 4_102_444_800_000]
        for _ in 0..<20_000 {
            instants.append(Int64(random.int(in: -3_000_000_000_000...4_200_000_000_000)))
        }
        for milliseconds in instants {
            let timestamp = Timestamp(milliseconds: milliseconds)
            #expect(Timestamp(timestamp.date) == timestamp, "\(milliseconds)")
        }
        // A Date between two milliseconds is the earlier one, on both sides of 1970.
        #expect(Timestamp(Date(timeIntervalSince1970: 1.0005)) == Timestamp(milliseconds: 1000))
        #expect(Timestamp(Date(timeIntervalSince1970: -1.0005)) == Timestamp(milliseconds: -1001))
        let fraction = Timestamp(rawValue: "1697679936049.7297")
        #expect(fraction.map { Timestamp($0.date) } == Timestamp(milliseconds: 1_697_679_936_049))
    }

    @Test func aFixedValidationTimeTakesADateAsItsMillisecond() {
        let instant = Timestamp(milliseconds: 1_740_832_200_250)
        #expect(ValidationTime.fixed(instant.date) == .fixed(instant))
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.validationTime = .fixed(Date(timeIntervalSince1970: 1_759_302_732))
        #expect(configuration.validationTime == .fixed(Timestamp(milliseconds: 1_759_302_732_000)))
    }

    @Test func timestampsEncodeAsTheirNumber() throws {
        let fraction = try #require(Timestamp(rawValue: "1697679936049.7297"))
        let encoded = try JSONEncoder().encode([fraction, Timestamp(milliseconds: -62_135_769_600_000)])
        #expect(String(decoding: encoded, as: UTF8.self) == "[1697679936049.7297,-62135769600000]")
        #expect(
            try JSONDecoder().decode([Timestamp].self, from: encoded) == [
                fraction, Timestamp(milliseconds: -62_135_769_600_000),
            ])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Timestamp.self, from: Data(#""1""#.utf8)) }
    }

    // MARK: Codable values

    @Test func jsonValuesRoundTripThroughFoundationsCoders() throws {
        let object: JSONObject = [
            "id": "2000001024998954", "price": 1990, "date": .number("1697679936049.7297"),
            "big": .number("18446744073709551615"), "negative": .number("-5.25"), "flag": true, "none": .null,
            "list": [1, "two", [false]], "inner": ["a": "b", "c": .null],
        ]
        let encoded = try JSONEncoder().encode(object)
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.contains(#""date":1697679936049.7297"#))
        #expect(text.contains(#""big":18446744073709551615"#))
        #expect(text.contains(#""negative":-5.25"#))
        #expect(text.contains(#""none":null"#))
        // The strict parser reads back the same members and number texts (JSONEncoder keeps no
        // member order).
        #expect(Self.sorted(.object(try StrictJSON.parseObject(Array(encoded)))) == Self.sorted(.object(object)))
        let decoded = try JSONDecoder().decode(JSONObject.self, from: encoded)
        #expect(Self.sorted(.object(decoded)) == Self.sorted(.object(object)))
    }

    /// The same value with every object's members sorted by name (`JSONDecoder` keeps no order).
    static func sorted(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            .object(JSONObject(object.members.sorted { $0.name < $1.name }.map { .init($0.name, sorted($0.value)) }))
        case .array(let elements): .array(elements.map(sorted))
        default: value
        }
    }

    @Test func verifiedModelsRoundTripThroughCodable() throws {
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        for (name, token) in try TestVectors.realTokens() {
            let verified = try verifier.verify(token)
            let encoded: Data
            let decodedJSON: JSONObject
            switch verified.decoded {
            case .transaction(let model):
                encoded = try JSONEncoder().encode(model)
                decodedJSON = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: encoded).json
            case .renewalInfo(let model):
                encoded = try JSONEncoder().encode(model)
                decodedJSON = try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: encoded).json
            case .notification(let model):
                encoded = try JSONEncoder().encode(model)
                decodedJSON = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: encoded).json
            case .appTransaction(let model):
                encoded = try JSONEncoder().encode(model)
                decodedJSON = try JSONDecoder().decode(AppTransaction.self, from: encoded).json
            case .realtimeRequest(let model):
                encoded = try JSONEncoder().encode(model)
                decodedJSON = try JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: encoded).json
            }
            // Encoding writes the payload's own members and values: the strict parser reads
            // back what was signed (number texts included; JSONEncoder keeps no member order),
            // and Foundation's decoder the same members.
            #expect(
                Self.sorted(.object(try StrictJSON.parseObject(Array(encoded))))
                    == Self.sorted(.object(verified.payload)), "\(name)")
            #expect(Self.sorted(.object(decodedJSON)) == Self.sorted(.object(verified.payload)), "\(name)")
        }
    }

    @Test func aModelDecodedFromStoredJSONChecksItsFields() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(#"{"price":"1990"}"#.utf8))
        }
    }

    // MARK: Building models

    @Test func modelsHaveMemberwiseInitialisers() throws {
        let purchase = Timestamp(milliseconds: 1_759_302_552_000)
        let transaction = JWSTransactionDecodedPayload(
            transactionId: "1001", bundleId: "com.example.app", purchaseDate: purchase, type: .consumable,
            appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138", revocationReason: .refundedDueToIssue, price: 990)
        #expect(
            transaction.json == [
                "transactionId": "1001", "bundleId": "com.example.app", "purchaseDate": 1_759_302_552_000,
                "type": "Consumable", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138", "revocationReason": 1,
                "price": 990,
            ])
        #expect(try JWSTransactionDecodedPayload(json: transaction.json) == transaction)
        #expect(transaction.purchaseDate == purchase)

        let notification = ResponseBodyV2DecodedPayload(
            notificationType: .refund,
            data: NotificationData(environment: .sandbox, bundleId: "com.example.app", signedTransactionInfo: "a.b.c"))
        #expect(
            notification.json == [
                "notificationType": "REFUND",
                "data": ["environment": "Sandbox", "bundleId": "com.example.app", "signedTransactionInfo": "a.b.c"],
            ])
        #expect(notification.effectiveBundleId == "com.example.app")
    }

    @Test func appAccountTokenComparesAsAUUIDWhateverItsCase() throws {
        let uuid = try #require(UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
        let lower = JWSTransactionDecodedPayload(appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(lower.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(lower.appAccountTokenUUID == uuid)
        #expect(
            JWSRenewalInfoDecodedPayload(appAccountToken: "7E3FB20B-4CDB-47CC-936D-99D65F608138").appAccountTokenUUID
                == uuid)
        #expect(JWSTransactionDecodedPayload(appAccountToken: "not a uuid").appAccountTokenUUID == nil)
        #expect(JWSTransactionDecodedPayload().appAccountTokenUUID == nil)
    }

    // MARK: Enum names

    @Test func enumValuesHaveReadableNames() {
        #expect(RevocationReason(rawValue: 1).name == "refundedDueToIssue")
        #expect(RevocationReason(rawValue: 0).name == "refundedForOtherReason")
        #expect(RevocationReason(rawValue: 7).name == "unknown(7)")
        #expect(NotificationType.didRenew.name == "didRenew")
        #expect(NotificationType(rawValue: "SOMETHING_NEW").name == "unknown(SOMETHING_NEW)")
        #expect(AppStoreEnvironment.localTesting.name == "localTesting")
        #expect(ProductType.autoRenewableSubscription.name == "autoRenewableSubscription")
    }

    @Test func everyKnownValueHasOneNameOfItsOwn() {
        func check<Value: PayloadEnum>(_ type: Value.Type) {
            let names = Value.knownValues.map(\.name)
            #expect(Set(names).count == names.count, "\(type)")
            #expect(!names.contains { $0.hasPrefix("unknown(") }, "\(type)")
        }
        check(AppStoreEnvironment.self)
        check(ProductType.self)
        check(InAppOwnershipType.self)
        check(RevocationReason.self)
        check(RevocationType.self)
        check(OfferType.self)
        check(OfferDiscountType.self)
        check(TransactionReason.self)
        check(BillingPlanType.self)
        check(NotificationType.self)
        check(NotificationSubtype.self)
        check(ExpirationIntent.self)
        check(AutoRenewStatus.self)
    }

    @Test func enumValuesEncodeAsTheirRawValue() throws {
        let encoded = try JSONEncoder().encode(
            JWSTransactionDecodedPayload(type: .consumable, revocationReason: .init(rawValue: 7)))
        let decoded = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: encoded)
        #expect(decoded.revocationReason == RevocationReason(rawValue: 7))
        #expect(decoded.type == .consumable)
        #expect(try JSONDecoder().decode(RevocationReason.self, from: Data("1".utf8)) == .refundedDueToIssue)
    }
}

extension [UInt8] {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self = bytes
    }
}
