import Foundation
import Testing
import VouchTestSupport

@testable import Vouch

/// Apple's library fixtures, signed by its test chain (in the shared test vectors).
private let mockSignedData = "apple-app-store-server-library/mock_signed_data/"

/// A vector file: in the project's `TestVectors/` or in the shared test vectors.
struct VectorFile: Sendable, CustomTestStringConvertible {
    let shared: Bool
    let path: String

    var testDescription: String { path }

    /// The payload of the compact JWS stored here, unverified.
    func payload() throws -> JSONObject {
        try TokenParts.unverifiedPayload(shared ? SharedVectors.text(path) : TestVectors.text(path))
    }
}

/// Decodes the project's vector at `path` (relative to `TestVectors/`) without verifying it.
private func decode<Model: PayloadModel>(_ path: String) throws -> Model {
    try Model(json: VectorFile(shared: false, path: path).payload())
}

/// Decodes the shared vector at `path` without verifying it.
private func decodeShared<Model: PayloadModel>(_ path: String) throws -> Model {
    try Model(json: VectorFile(shared: true, path: path).payload())
}

/// Decodes the payload of a compact JWS without verifying it.
private func decode<Model: PayloadModel>(token: String) throws -> Model {
    try Model(json: TokenParts.unverifiedPayload(token))
}

private func object(_ json: String) throws -> JSONObject {
    try StrictJSON.parseObject(Array(json.utf8))
}

/// Which model a vector file holds, from its name.
private enum PayloadKind: String {
    case transaction, renewalInfo, notification, appTransaction

    init?(fileName: String) {
        let name = fileName.lowercased()
        if name.contains("apptransaction") || name.contains("app-transaction") {
            self = .appTransaction
        } else if name.contains("renewal") {
            self = .renewalInfo
        } else if name.contains("notification") {
            self = .notification
        } else if name.contains("transaction") {
            self = .transaction
        } else {
            return nil
        }
    }

    func decode(_ json: JSONObject) throws -> any SignedPayload {
        switch self {
        case .transaction: try JWSTransactionDecodedPayload(json: json)
        case .renewalInfo: try JWSRenewalInfoDecodedPayload(json: json)
        case .notification: try ResponseBodyV2DecodedPayload(json: json)
        case .appTransaction: try AppTransaction(json: json)
        }
    }
}

struct ModelTests {
    // MARK: Every vector

    static let realFiles: [VectorFile] = ((try? TestVectors.files(in: "apple-real/real", withExtension: "jws")) ?? [])
        .map { VectorFile(shared: false, path: $0) }

    /// The Xcode tokens and Apple's mock data; empty when the shared test vectors are absent
    /// (the tests that read them are skipped then).
    static let sharedFiles: [VectorFile] = {
        guard SharedVectors.missing(["apple-xcode", "apple-app-store-server-library"]) == nil else { return [] }
        let xcode = (try? SharedVectors.files(in: "apple-xcode", withExtension: "jws")) ?? []
        let mock = ["transactionInfo", "renewalInfo", "testNotification"].map { mockSignedData + $0 }
        return (xcode + mock).map { VectorFile(shared: true, path: $0) }
    }()

    @Test func findsTheRealVectorFiles() throws {
        let manifestRows = try TestVectors.text("apple-real/manifest.tsv").split(separator: "\n").dropFirst()
        #expect(Self.realFiles.count == manifestRows.count)
    }

    @Test(.sharedVectors("apple-xcode", "apple-app-store-server-library"))
    func findsTheSharedVectorFiles() throws {
        #expect(Self.sharedFiles.filter { $0.path.hasPrefix("apple-xcode/") }.count == 3)
        #expect(Self.sharedFiles.count == 6)
    }

    @Test(arguments: ModelTests.realFiles)
    func decodesEveryRealVectorIntoTheTypeItsNameGives(file: VectorFile) throws {
        try Self.decodesIntoTheTypeItsNameGives(file)
    }

    @Test(.sharedVectors("apple-xcode", "apple-app-store-server-library"), arguments: ModelTests.sharedFiles)
    func decodesEverySharedVectorIntoTheTypeItsNameGives(file: VectorFile) throws {
        try Self.decodesIntoTheTypeItsNameGives(file)
    }

    static func decodesIntoTheTypeItsNameGives(_ file: VectorFile) throws {
        let path = file.path
        let kind = try #require(PayloadKind(fileName: String(path.split(separator: "/").last!)))
        let json = try file.payload()
        let model = try kind.decode(json)
        #expect(model.json == json)
        #expect(model.signedDate != nil)

        guard let notification = model as? ResponseBodyV2DecodedPayload else { return }
        #expect(notification.notificationType?.isKnown == true)
        #expect(notification.effectiveBundleId != nil)
        if let signed = notification.data?.signedTransactionInfo {
            let transaction: JWSTransactionDecodedPayload = try decode(token: signed)
            #expect(transaction.bundleId == notification.data?.bundleId)
            #expect(transaction.environment == notification.data?.environment)
        }
        if let signed = notification.data?.signedRenewalInfo {
            let renewal: JWSRenewalInfoDecodedPayload = try decode(token: signed)
            #expect(renewal.environment == notification.data?.environment)
            #expect(renewal.signedDate != nil)
        }
    }

    /// manifest.tsv records each real file's kind, environment, signedDate (in microseconds) and
    /// notification type/subtype.
    @Test func realVectorsAgreeWithTheirManifest() throws {
        // Not trimmed: a row may end in an empty column.
        let manifest = String(decoding: try TestVectors.bytes("apple-real/manifest.tsv"), as: UTF8.self)
        let rows = manifest.split(separator: "\n").dropFirst()
        #expect(!rows.isEmpty)
        for row in rows {
            let columns = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            try #require(columns.count == 6)
            let (file, kindName, environment, signedDate, notificationType) =
                (columns[0], columns[1], columns[2], columns[3], columns[5])
            let kind = try #require(PayloadKind(rawValue: kindName))
            let model = try kind.decode(VectorFile(shared: false, path: "apple-real/" + file).payload())

            // "2026-02-13T14:36:57.432000Z": Apple signs whole milliseconds.
            #expect(signedDate.hasSuffix("000Z"))
            #expect(model.signedDate?.iso8601 == String(signedDate.dropLast(4)) + "Z", "\(file)")

            switch model {
            case let transaction as JWSTransactionDecodedPayload:
                #expect(transaction.environment?.rawValue == environment, "\(file)")
            case let renewal as JWSRenewalInfoDecodedPayload:
                #expect(renewal.environment?.rawValue == environment, "\(file)")
            case let appTransaction as AppTransaction:
                #expect(appTransaction.receiptType?.rawValue == environment, "\(file)")
            case let notification as ResponseBodyV2DecodedPayload:
                #expect(notification.effectiveEnvironment?.rawValue == environment, "\(file)")
                let parts = notificationType.split(separator: "/").map(String.init)
                #expect(notification.notificationType?.rawValue == parts.first, "\(file)")
                #expect(notification.subtype?.rawValue == parts.dropFirst().first, "\(file)")
            default:
                Issue.record("unexpected model for \(file)")
            }
        }
    }

    // MARK: Values read from the data

    @Test func decodesAProductionTransaction() throws {
        let transaction: JWSTransactionDecodedPayload = try decode("apple-real/real/transaction-production-1.jws")
        #expect(transaction.bundleId == "com.locket.Locket")
        #expect(transaction.productId == "locket_199_1m")
        #expect(transaction.transactionId == "440002924643256")
        #expect(transaction.originalTransactionId == "440001970804507")
        #expect(transaction.webOrderLineItemId == "440000886198697")
        #expect(transaction.subscriptionGroupIdentifier == "21419447")
        #expect(transaction.price == 49_000_000)
        #expect(transaction.currency == "VND")
        #expect(transaction.quantity == 1)
        #expect(transaction.storefront == "VNM")
        #expect(transaction.storefrontId == "143471")
        #expect(transaction.appTransactionId == "704272687835350153")
        #expect(transaction.signedDate?.milliseconds == 1_770_982_951_313)
        #expect(transaction.signedDate?.rawValue == "1770982951313")
        #expect(transaction.purchaseDate?.milliseconds == 1_770_982_943_000)
        #expect(transaction.expiresDate?.iso8601 == "2026-03-13T10:42:23.000Z")
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.environment == .production)
        // Present in the payload but not a documented transaction member.
        #expect(transaction.json["deviceVerificationNonce"] == "76e5eb3c-c2fd-4d90-b2db-a22c7831958b")
    }

    @Test func missingMembersDecodeAsNil() throws {
        let nonRenewing: JWSTransactionDecodedPayload = try decode("apple-real/real/transaction-sandbox-6.jws")
        #expect(nonRenewing.type == .nonRenewingSubscription)
        #expect(nonRenewing.price == 14_900_000)
        #expect(nonRenewing.currency == "NGN")
        #expect(nonRenewing.expiresDate == nil)
        #expect(nonRenewing.webOrderLineItemId == nil)
        #expect(nonRenewing.subscriptionGroupIdentifier == nil)
        #expect(nonRenewing.appTransactionId == nil)
        #expect(nonRenewing.revocationDate == nil)
    }

    @Test(.sharedVectors("apple-app-store-server-library"))
    func decodesAppleMockTransactionWithoutMostMembers() throws {
        let mock: JWSTransactionDecodedPayload = try decodeShared(mockSignedData + "transactionInfo")
        #expect(mock.bundleId == "com.example")
        #expect(mock.environment == .sandbox)
        #expect(mock.signedDate?.milliseconds == 1_672_956_154_000)
        #expect(mock.transactionId == nil)
        #expect(mock.productId == nil)
        #expect(mock.price == nil)
    }

    @Test func decodesRenewalInfoOfAVoluntarilyExpiredSubscription() throws {
        let renewal: JWSRenewalInfoDecodedPayload = try decode("apple-real/real/renewalInfo-sandbox-10.jws")
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.autoRenewStatus == .off)
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(renewal.originalTransactionId == "2000001024993299")
        #expect(renewal.autoRenewProductId == "com.getsession.org.pro_sub")
        #expect(renewal.renewalDate?.milliseconds == 1_759_303_992_000)
        #expect(renewal.recentSubscriptionStartDate?.milliseconds == 1_759_301_832_000)
        #expect(renewal.signedDate?.milliseconds == 1_759_304_012_269)
        #expect(renewal.renewalPrice == nil)

        let renewing: JWSRenewalInfoDecodedPayload = try decode("apple-real/real/renewalInfo-sandbox-9.jws")
        #expect(renewing.autoRenewStatus == .on)
        #expect(renewing.renewalPrice == 1990)
        #expect(renewing.currency == "AUD")
        #expect(renewing.expirationIntent == nil)
    }

    @Test func decodesANotificationWithItsSignedTransactionAndRenewal() throws {
        let notification: ResponseBodyV2DecodedPayload = try decode("apple-real/real/notification-sandbox-22.jws")
        #expect(notification.notificationType == .expired)
        #expect(notification.subtype == .voluntary)
        #expect(notification.notificationUUID == "c08b4aa8-a3dd-4d1f-a5e1-c36ac3b688c4")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate?.milliseconds == 1_759_304_012_269)
        let data = try #require(notification.data)
        #expect(data.appAppleId == 1_470_168_868)
        #expect(data.bundleId == "com.loki-project.loki-messenger")
        #expect(data.bundleVersion == "637")
        #expect(data.environment == .sandbox)
        #expect(data.status == .expired)
        #expect(notification.summary == nil && notification.externalPurchaseToken == nil && notification.appData == nil)

        let transaction: JWSTransactionDecodedPayload = try decode(token: try #require(data.signedTransactionInfo))
        #expect(transaction.transactionId == "2000001025012675")
        #expect(transaction.transactionReason == .renewal)
        #expect(transaction.price == 1990)
        let renewal: JWSRenewalInfoDecodedPayload = try decode(token: try #require(data.signedRenewalInfo))
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.signedDate == notification.signedDate)
    }

    @Test func decodesAnAppAccountTokenAndAOneTimeCharge() throws {
        let renewed: ResponseBodyV2DecodedPayload = try decode("apple-real/real/notification-sandbox-6.jws")
        let signedTransaction = try #require(renewed.data?.signedTransactionInfo)
        let transaction: JWSTransactionDecodedPayload = try decode(token: signedTransaction)
        #expect(transaction.appAccountToken == "00000000-0000-0000-0000-000000000051")
        #expect(transaction.price == 99990)
        #expect(transaction.currency == "CAD")

        let charge: ResponseBodyV2DecodedPayload = try decode("apple-real/real/notification-sandbox-4.jws")
        #expect(charge.notificationType == .oneTimeCharge)
        #expect(charge.subtype == nil)
        #expect(charge.data?.signedRenewalInfo == nil)
        #expect(charge.data?.status == nil)
        let signedCharge = try #require(charge.data?.signedTransactionInfo)
        let consumable: JWSTransactionDecodedPayload = try decode(token: signedCharge)
        #expect(consumable.type == .consumable)
        #expect(consumable.price == 990)
    }

    @Test func decodesAProductionAppTransactionAndKeepsUnknownMembers() throws {
        let app: AppTransaction = try decode("apple-real/real/appTransaction-production-1.jws")
        #expect(app.receiptType == .production)
        #expect(app.appAppleId == 1_600_525_061)
        #expect(app.bundleId == "com.locket.Locket")
        #expect(app.applicationVersion == "3")
        #expect(app.versionExternalIdentifier == 882_320_916)
        #expect(app.receiptCreationDate?.milliseconds == 1_770_993_417_432)
        #expect(app.signedDate == app.receiptCreationDate)
        #expect(app.originalPurchaseDate?.milliseconds == 1_671_455_159_013)
        #expect(app.originalApplicationVersion == "7")
        #expect(app.deviceVerificationNonce == "ae16d840-a823-4e36-aecd-00eefe4d6ae7")
        #expect(app.appTransactionId == "705281231156226397")
        #expect(app.originalPlatform == .iOS)
        #expect(app.preorderDate == nil)
        // requestDate is not a documented member: it survives in json, in document order.
        #expect(app.json["requestDate"] == .number("1770993417432"))
        #expect(app.json.members.map { $0.name }.firstIndex(of: "requestDate") == 6)
    }

    @Test(.sharedVectors("apple-xcode"))
    func keepsXcodeFractionalDatesExactly() throws {
        let transaction: JWSTransactionDecodedPayload = try decodeShared("apple-xcode/neg-xcode-signed-transaction.jws")
        let purchase = try #require(transaction.purchaseDate)
        #expect(purchase.rawValue == "1697679936049.7297")
        #expect(purchase.milliseconds == 1_697_679_936_049)
        #expect(purchase.iso8601 == "2023-10-19T01:45:36.049Z")
        #expect(transaction.signedDate?.rawValue == "1697679936056.485")
        #expect(transaction.signedDate?.milliseconds == 1_697_679_936_056)
        #expect(transaction.environment == .xcode)
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.isUpgraded == false)
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.transactionId == "0")

        let renewal: JWSRenewalInfoDecodedPayload = try decodeShared("apple-xcode/neg-xcode-signed-renewal-info.jws")
        #expect(renewal.renewalDate?.rawValue == "1700358336049.7297")
        #expect(renewal.renewalDate?.milliseconds == 1_700_358_336_049)
        #expect(renewal.signedDate?.milliseconds == 1_697_679_936_711)
        #expect(renewal.environment == .xcode)
        #expect(renewal.json["deviceVerificationNonce"] == "3439919e-87c9-47b6-aeee-2823f7a9d3c3")
    }

    @Test(.sharedVectors("apple-xcode"))
    func formatsXcodesYearOneDateBeforeTheEpoch() throws {
        let app: AppTransaction = try decodeShared("apple-xcode/neg-xcode-signed-app-transaction.jws")
        #expect(app.receiptType == .xcode)
        #expect(app.appAppleId == nil)
        #expect(app.receiptCreationDate?.rawValue == "1697680122257.447")
        #expect(app.receiptCreationDate?.milliseconds == 1_697_680_122_257)
        let original = try #require(app.originalPurchaseDate)
        #expect(original.milliseconds == -62_135_769_600_000)
        // Foundation's 0001-01-01 (Julian) is 0000-12-30 in the proleptic Gregorian calendar.
        #expect(original.iso8601 == "0000-12-30T00:00:00.000Z")
        #expect(original.date.timeIntervalSince1970 == -62_135_769_600)
    }

    @Test(.sharedVectors("apple-app-store-server-library"))
    func decodesTheMockTestNotification() throws {
        let notification: ResponseBodyV2DecodedPayload = try decodeShared(mockSignedData + "testNotification")
        #expect(notification.notificationType == .test)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.signedDate?.milliseconds == 1_681_314_324_000)
        #expect(notification.version == nil)
        #expect(notification.effectiveBundleId == "com.example")
        #expect(notification.effectiveAppAppleId == 1234)
        #expect(notification.effectiveEnvironment == .sandbox)
    }

    // MARK: Enum-like values

    @Test func unknownEnumValuesKeepTheirRawValue() throws {
        var json = try VectorFile(shared: false, path: "apple-real/real/transaction-production-1.jws").payload()
        json["environment"] = "Staging"
        json["type"] = "Bundle"
        json["offerType"] = 9
        json["revocationType"] = "REFUND_PARTIAL"
        let transaction = try JWSTransactionDecodedPayload(json: json)
        #expect(transaction.environment?.rawValue == "Staging")
        #expect(transaction.environment?.isKnown == false)
        #expect(transaction.type?.rawValue == "Bundle")
        #expect(transaction.type?.isKnown == false)
        #expect(transaction.offerType?.rawValue == 9)
        #expect(transaction.offerType?.isKnown == false)
        #expect(transaction.revocationType == RevocationType(rawValue: "REFUND_PARTIAL"))
        #expect(transaction.json["environment"] == "Staging")

        let notification = try ResponseBodyV2DecodedPayload(
            json: object(#"{"notificationType":"SOMETHING_NEW","subtype":"LATER","data":{"status":42}}"#))
        #expect(notification.notificationType?.rawValue == "SOMETHING_NEW")
        #expect(notification.notificationType?.isKnown == false)
        #expect(notification.subtype?.description == "LATER")
        #expect(notification.data?.status?.rawValue == 42)
        #expect(notification.data?.status?.isKnown == false)
    }

    @Test func documentedEnumValuesAreKnown() throws {
        #expect(AppStoreEnvironment.production.rawValue == "Production")
        #expect(AppStoreEnvironment.sandbox.rawValue == "Sandbox")
        #expect(AppStoreEnvironment.xcode.rawValue == "Xcode")
        #expect(AppStoreEnvironment.localTesting.rawValue == "LocalTesting")
        #expect(AppStoreEnvironment.knownValues.allSatisfy { $0.isKnown })
        #expect(AppStoreEnvironment(rawValue: "production").isKnown == false)
        #expect(NotificationType(rawValue: "RESCIND_CONSENT").isKnown)
        #expect(NotificationSubtype(rawValue: "ACTIVE_TOKEN_REMINDER").isKnown)
        #expect(SubscriptionStatus(rawValue: 5) == .revoked)
        #expect(RevocationReason(rawValue: 0) == .refundedForOtherReason)
        #expect(PriceIncreaseStatus(rawValue: 1) == .customerConsentedOrWasNotifiedWithoutNeedingConsent)
        #expect(OfferType.winBackOffer.rawValue == 4)
        #expect(ProductType.nonConsumable.rawValue == "Non-Consumable")
        #expect(BillingPlanType.knownValues.map { $0.rawValue } == ["BILLED_UPFRONT", "MONTHLY"])
    }

    // MARK: Wrong types

    @Test func wrongTypeMembersThrowWithTheirName() throws {
        let source = try VectorFile(shared: false, path: "apple-real/real/transaction-production-1.jws").payload()
        let cases: [(member: String, value: JSONValue)] = [
            ("price", "49000000"),
            ("bundleId", 5),
            ("isUpgraded", "false"),
            ("quantity", .number("1.0")),
            ("quantity", .number("4294967296")),
            ("offerType", .number("1.5")),
            ("environment", .bool(true)),
            ("signedDate", "1770982951313"),
            ("signedDate", .number("1e30")),
            ("advancedCommerceInfo", "info"),
        ]
        for (member, value) in cases {
            var json = source
            json[member] = value
            let error = #expect(throws: PayloadFieldError.self) { try JWSTransactionDecodedPayload(json: json) }
            #expect(error?.field == member, "\(member) = \(value)")
        }

        var renewal = try VectorFile(shared: false, path: "apple-real/real/renewalInfo-sandbox-9.jws").payload()
        renewal["eligibleWinBackOfferIds"] = .array(["offer-1", 3])
        let arrayError = #expect(throws: PayloadFieldError.self) { try JWSRenewalInfoDecodedPayload(json: renewal) }
        #expect(arrayError?.field == "eligibleWinBackOfferIds[1]")
        #expect(arrayError?.expected == "a string")
    }

    @Test func nestedWrongTypeMembersNameTheirPath() throws {
        var json = try VectorFile(shared: false, path: "apple-real/real/notification-sandbox-21.jws").payload()
        var data = try #require(json["data"]?.objectValue)
        data["bundleId"] = 5
        json["data"] = .object(data)
        let error = #expect(throws: PayloadFieldError.self) { try ResponseBodyV2DecodedPayload(json: json) }
        #expect(error?.field == "data.bundleId")
        #expect(error?.expected == "a string")

        json["data"] = "not an object"
        let objectError = #expect(throws: PayloadFieldError.self) { try ResponseBodyV2DecodedPayload(json: json) }
        #expect(objectError?.field == "data")
        #expect(objectError?.expected == "an object")

        let deep = try object(
            #"{"advancedCommerceInfo":{"items":[{"SKU":"a"},{"SKU":"b","refunds":[{"refundDate":"yesterday"}]}]}}"#)
        let deepError = #expect(throws: PayloadFieldError.self) { try JWSTransactionDecodedPayload(json: deep) }
        #expect(deepError?.field == "advancedCommerceInfo.items[1].refunds[0].refundDate")
    }

    @Test func nullMembersCountAsAbsent() throws {
        var json = try VectorFile(shared: false, path: "apple-real/real/transaction-production-1.jws").payload()
        json["bundleId"] = .null
        json["price"] = .null
        json["advancedCommerceInfo"] = .null
        let transaction = try JWSTransactionDecodedPayload(json: json)
        #expect(transaction.bundleId == nil)
        #expect(transaction.price == nil)
        #expect(transaction.advancedCommerceInfo == nil)
        #expect(transaction.currency == "VND")
        #expect(transaction.json["bundleId"] == .null)
    }

    @Test func errorDescriptionNamesTheFieldAndTheExpectation() {
        let error = PayloadFieldError(field: "data.appAppleId", expected: "a 64-bit integer")
        #expect(error.description == "data.appAppleId: expected a 64-bit integer")
    }

    // MARK: Members the vectors do not carry

    @Test func decodesAdvancedCommerceAndCommitmentMembersOfATransaction() throws {
        let transaction = try JWSTransactionDecodedPayload(
            json: object(
                """
                {"transactionId":"71134","previousOriginalTransactionId":"55555","revocationType":"REFUND_PRORATED",
                 "revocationPercentage":50000,"revocationReason":1,"revocationDate":1698148950000,
                 "offerDiscountType":"PAY_AS_YOU_GO","offerPeriod":"P1Y","billingPlanType":"MONTHLY",
                 "commitmentInfo":{"billingPeriodNumber":3,"commitmentExpiresDate":1729684800000,
                                   "commitmentPrice":119880,"totalBillingPeriods":12},
                 "advancedCommerceInfo":{"descriptors":{"description":"Gold tier","displayName":"Gold"},
                    "estimatedTax":1200,"period":"P1M","requestReferenceId":"ref-1","taxCode":"C003-00-2",
                    "taxExclusivePrice":9990,"taxRate":"0.12",
                    "items":[{"SKU":"gold.monthly","description":"Gold","displayName":"Gold","price":9990,
                              "offer":{"period":"P1W","periodCount":2,"price":0,"reason":"ACQUISITION"},
                              "refunds":[{"refundAmount":4995,"refundDate":1698148950000,
                                          "refundReason":"LEGAL","refundType":"PRORATED"}],
                              "revocationDate":1698148950000}]}}
                """))
        #expect(transaction.previousOriginalTransactionId == "55555")
        #expect(transaction.revocationType == .refundProrated)
        #expect(transaction.revocationPercentage == 50000)
        #expect(transaction.revocationReason == .refundedDueToIssue)
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo?.billingPeriodNumber == 3)
        #expect(transaction.commitmentInfo?.commitmentExpiresDate?.milliseconds == 1_729_684_800_000)
        #expect(transaction.commitmentInfo?.commitmentPrice == 119_880)
        #expect(transaction.commitmentInfo?.totalBillingPeriods == 12)

        let info = try #require(transaction.advancedCommerceInfo)
        #expect(info.descriptors?.displayName == "Gold")
        #expect(info.estimatedTax == 1200)
        #expect(info.period == .p1M)
        #expect(info.taxExclusivePrice == 9990)
        #expect(info.taxRate == "0.12")
        let item = try #require(info.items?.first)
        #expect(item.sku == "gold.monthly")
        #expect(item.offer?.period == .p1W)
        #expect(item.offer?.periodCount == 2)
        #expect(item.offer?.reason == .acquisition)
        #expect(item.refunds?.first?.refundAmount == 4995)
        #expect(item.refunds?.first?.refundReason == .legal)
        #expect(item.refunds?.first?.refundType == .prorated)
        #expect(item.revocationDate?.milliseconds == 1_698_148_950_000)
    }

    @Test func decodesAdvancedCommerceAndCommitmentMembersOfRenewalInfo() throws {
        let renewal = try JWSRenewalInfoDecodedPayload(
            json: object(
                """
                {"priceIncreaseStatus":0,"gracePeriodExpiresDate":1698148900000,"offerType":4,
                 "offerIdentifier":"win-back-1","eligibleWinBackOfferIds":["eligible1","eligible2"],
                 "appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","renewalBillingPlanType":"BILLED_UPFRONT",
                 "commitmentInfo":{"commitmentAutoRenewProductId":"gold.yearly","commitmentAutoRenewStatus":1,
                                   "commitmentRenewalBillingPlanType":"MONTHLY","commitmentRenewalDate":1729684800000,
                                   "commitmentRenewalPrice":119880},
                 "advancedCommerceInfo":{"consistencyToken":"token-1","period":"P1Y","taxCode":"C003-00-2",
                    "items":[{"SKU":"gold.yearly","price":99990,
                              "priceIncreaseInfo":{"dependentSKUs":["a","b"],"price":109990,"status":"SCHEDULED"}}]}}
                """))
        #expect(renewal.priceIncreaseStatus == .customerHasNotResponded)
        #expect(renewal.gracePeriodExpiresDate?.milliseconds == 1_698_148_900_000)
        #expect(renewal.offerType == .winBackOffer)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(renewal.renewalBillingPlanType == .billedUpfront)
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus == .on)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 119_880)
        #expect(renewal.advancedCommerceInfo?.consistencyToken == "token-1")
        #expect(renewal.advancedCommerceInfo?.period == .p1Y)
        let increase = try #require(renewal.advancedCommerceInfo?.items?.first?.priceIncreaseInfo)
        #expect(increase.dependentSKUs == ["a", "b"])
        #expect(increase.price == 109_990)
        #expect(increase.status == .scheduled)
    }

    @Test func decodesTheSeatsOfAMultiseatTransaction() throws {
        let transaction = try JWSTransactionDecodedPayload(
            json: object(
                """
                {"transactionId":"2000000000000102","originalTransactionId":"2000000000000100","quantity":8,
                 "price":8740,"currency":"USD","inAppOwnershipType":"ASSIGNED",
                 "additionalTransactionReason":"SEAT_ADDITION",
                 "multiSeatInfo":{"invitationManagement":"APPLE","revokedSeatQuantity":2,
                                  "priceTiers":[{"price":9990,"quantity":5},{"price":7990,"quantity":3}]}}
                """))
        #expect(transaction.quantity == 8)
        #expect(transaction.inAppOwnershipType == .assigned)
        #expect(transaction.inAppOwnershipType?.isKnown == true)
        #expect(transaction.additionalTransactionReason == .seatAddition)
        #expect(transaction.additionalTransactionReason?.name == "seatAddition")
        let seats = try #require(transaction.multiSeatInfo)
        #expect(seats.invitationManagement == .apple)
        #expect(seats.revokedSeatQuantity == 2)
        #expect(seats.priceTiers?.map(\.price) == [9990, 7990])
        #expect(seats.priceTiers?.map(\.quantity) == [5, 3])
        #expect(transaction.revocationDate == nil)

        let developer = try JWSTransactionDecodedPayload(
            json: object(#"{"multiSeatInfo":{"invitationManagement":"DEVELOPER"}}"#))
        #expect(developer.multiSeatInfo?.invitationManagement == .developer)
        #expect(developer.multiSeatInfo?.priceTiers == nil)
        #expect(InvitationManagement.knownValues.map(\.rawValue) == ["APPLE", "DEVELOPER"])
        #expect(AdditionalTransactionReason.knownValues.map(\.rawValue) == ["SEAT_ADDITION"])

        let mistyped = try object(#"{"multiSeatInfo":{"priceTiers":[{"price":9990},{"price":"7.99"}]}}"#)
        let error = #expect(throws: PayloadFieldError.self) { try JWSTransactionDecodedPayload(json: mistyped) }
        #expect(error?.field == "multiSeatInfo.priceTiers[1].price")
    }

    @Test func decodesTheSeatsOfAMultiseatRenewal() throws {
        let renewal = try JWSRenewalInfoDecodedPayload(
            json: object(
                """
                {"autoRenewStatus":1,"renewalPrice":8990,"currency":"USD","renewalQuantity":10,
                 "multiSeatInfo":{"renewalPriceTiers":[{"price":9990,"quantity":5},{"price":7990,"quantity":5}]}}
                """))
        #expect(renewal.renewalQuantity == 10)
        #expect(renewal.multiSeatInfo?.renewalPriceTiers?.map(\.price) == [9990, 7990])
        #expect(renewal.multiSeatInfo?.renewalPriceTiers?.map(\.quantity) == [5, 5])
    }

    @Test func decodesASeatRefundAndAnUnclaimSeatsNotification() throws {
        let refund = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"notificationType":"REFUND","subtype":"SEATS","notificationUUID":"5b1f7e4e-0000-4000-8000-000000000001",
                 "version":"2.0","signedDate":1764979200000,
                 "data":{"environment":"Sandbox","bundleId":"com.example","signedTransactionInfo":"t.t.t"}}
                """))
        #expect(refund.notificationType == .refund)
        #expect(refund.subtype == .seats)
        #expect(refund.subtype?.isKnown == true)
        #expect(NotificationSubtype(rawValue: "INCREASE_QUANTITY") == .increaseQuantity)
        #expect(NotificationSubtype(rawValue: "DECREASE_QUANTITY") == .decreaseQuantity)

        let unclaim = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"notificationType":"UNCLAIM_SEATS","version":"2.0","signedDate":1764979200000,
                 "unclaimInfo":{"unclaimSeatIds":["0f8fad5b-d9cb-469f-a165-70867728950e",
                                                  "7c9e6679-7425-40de-944b-e07fc1f90ae7"]}}
                """))
        #expect(unclaim.notificationType == .unclaimSeats)
        #expect(unclaim.notificationType?.isKnown == true)
        #expect(
            unclaim.unclaimInfo?.unclaimSeatIds == [
                "0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7",
            ])
        let mistyped = try object(#"{"unclaimInfo":{"unclaimSeatIds":"0f8fad5b"}}"#)
        let error = #expect(throws: PayloadFieldError.self) { try ResponseBodyV2DecodedPayload(json: mistyped) }
        #expect(error?.field == "unclaimInfo.unclaimSeatIds")
    }

    @Test func decodesTheSeatsOfAnAdvancedCommerceSubscription() throws {
        let transaction = try JWSTransactionDecodedPayload(
            json: object(
                """
                {"advancedCommerceInfo":{"items":[{"SKU":"team.monthly","price":9990,
                    "seatPriceTiers":[{"price":9990,"maximumSeatQuantity":5},{"price":7990}],
                    "refunds":[{"refundAmount":19980,"refundType":"CUSTOM","revokedSeatQuantity":2}]}]}}
                """))
        let item = try #require(transaction.advancedCommerceInfo?.items?.first)
        #expect(item.seatPriceTiers?.map(\.price) == [9990, 7990])
        #expect(item.seatPriceTiers?.map(\.maximumSeatQuantity) == [5, nil])
        #expect(item.refunds?.first?.revokedSeatQuantity == 2)
        #expect(item.refunds?.first?.refundType == .custom)

        let renewal = try JWSRenewalInfoDecodedPayload(
            json: object(
                """
                {"advancedCommerceInfo":{"items":[{"SKU":"team.monthly",
                    "seatRenewalPriceTiers":[{"price":8990,"maximumSeatQuantity":10},{"price":6990}]}]}}
                """))
        let renewing = try #require(renewal.advancedCommerceInfo?.items?.first?.seatRenewalPriceTiers)
        #expect(renewing.map(\.price) == [8990, 6990])
        #expect(renewing.map(\.maximumSeatQuantity) == [10, nil])
    }

    @Test func theMemberwiseInitialiserWritesTheSeatMembersUnderApplesNames() throws {
        let tiers = [MultiSeatPriceTier(price: 9990, quantity: 5)]
        let transaction = JWSTransactionDecodedPayload(
            quantity: 5, inAppOwnershipType: .assigned, additionalTransactionReason: .seatAddition,
            multiSeatInfo: TransactionMultiSeatInfo(invitationManagement: .apple, priceTiers: tiers))
        #expect(
            JSONWriter.string(.object(transaction.json))
                == #"{"quantity":5,"inAppOwnershipType":"ASSIGNED","additionalTransactionReason":"SEAT_ADDITION","#
                + #""multiSeatInfo":{"invitationManagement":"APPLE","priceTiers":[{"price":9990,"quantity":5}]}}"#)
        #expect(try JWSTransactionDecodedPayload(json: transaction.json) == transaction)
    }

    @Test func decodesARealtimeRetentionRequest() throws {
        let request = try DecodedRealtimeRequestBody(
            json: object(
                """
                {"originalTransactionId":"99371","appAppleId":941736,"productId":"com.example.monthly",
                 "userLocale":"en-US","requestIdentifier":"efb27071-45a4-4aca-9854-2a1e9146f265",
                 "environment":"Sandbox","signedDate":1698148900000}
                """))
        #expect(request.originalTransactionId == "99371")
        #expect(request.appAppleId == 941_736)
        #expect(request.productId == "com.example.monthly")
        #expect(request.userLocale == "en-US")
        #expect(request.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(request.environment == .sandbox)
        #expect(request.signedDate?.iso8601 == "2023-10-24T12:01:40.000Z")
    }

    // MARK: App Store Server Notifications 2.17: custom link tokens expire

    @Test func decodesTheExpirationDateOfACustomLinkToken() throws {
        let notification = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"ACTIVE_TOKEN_REMINDER",
                 "externalPurchaseToken":{"externalPurchaseId":"b2158121-7af9-49d4-9561-1f588205523e",
                    "tokenCreationDate":1698148950000,"appAppleId":55555,"bundleId":"com.example",
                    "tokenType":"ACQUISITION","tokenExpirationDate":1713700950000}}
                """))
        #expect(notification.subtype == .activeTokenReminder)
        let token = try #require(notification.externalPurchaseToken)
        #expect(token.tokenType == .acquisition)
        #expect(token.tokenExpirationDate?.milliseconds == 1_713_700_950_000)
        #expect(token.tokenExpirationDate?.iso8601 == "2024-04-21T12:02:30.000Z")
        #expect(token.tokenCreationDate?.milliseconds == 1_698_148_950_000)

        let wrong = try object(#"{"externalPurchaseToken":{"tokenExpirationDate":"2024-04-21"}}"#)
        let error = #expect(throws: PayloadFieldError.self) { try ResponseBodyV2DecodedPayload(json: wrong) }
        #expect(error?.field == "externalPurchaseToken.tokenExpirationDate")
        #expect(error?.expected == "a number of milliseconds within the 64-bit range")
    }

    @Test func theMemberwiseInitialiserWritesTheExpirationDateLast() throws {
        let token = ExternalPurchaseToken(
            externalPurchaseId: "SANDBOX_1", appAppleId: 55555, tokenType: .services,
            tokenExpirationDate: Timestamp(milliseconds: 1_713_700_950_000))
        #expect(
            JSONWriter.string(.object(token.json))
                == #"{"externalPurchaseId":"SANDBOX_1","appAppleId":55555,"tokenType":"SERVICES","#
                + #""tokenExpirationDate":1713700950000}"#)
        #expect(try ExternalPurchaseToken(json: token.json) == token)

        // A call written before the member existed compiles as it did and leaves it out.
        let older = ExternalPurchaseToken(externalPurchaseId: "SANDBOX_1", tokenType: .services)
        #expect(older.tokenExpirationDate == nil)
        #expect(older.json["tokenExpirationDate"] == nil)
    }

    @Test func anUnknownTokenTypeSurvivesBesideTheExpirationDate() throws {
        let token = try ExternalPurchaseToken(
            json: object(#"{"externalPurchaseId":"1","tokenType":"LINK_OUT","tokenExpirationDate":1713700950000}"#))
        #expect(token.tokenType?.rawValue == "LINK_OUT")
        #expect(token.tokenType?.isKnown == false)
        #expect(token.tokenType?.name == "unknown(LINK_OUT)")
        #expect(token.tokenExpirationDate?.milliseconds == 1_713_700_950_000)

        let decoded = try JSONDecoder().decode(ExternalPurchaseToken.self, from: JSONEncoder().encode(token))
        #expect(decoded.tokenType == ExternalPurchaseTokenType(rawValue: "LINK_OUT"))
        #expect(decoded.tokenExpirationDate?.milliseconds == 1_713_700_950_000)
    }

    // MARK: Effective bundle ID, App Apple ID and environment

    @Test func effectiveValuesComeFromData() throws {
        let notification: ResponseBodyV2DecodedPayload = try decode("apple-real/real/notification-sandbox-21.jws")
        #expect(notification.effectiveBundleId == "com.loki-project.loki-messenger")
        #expect(notification.effectiveAppAppleId == 1_470_168_868)
        #expect(notification.effectiveEnvironment == .sandbox)

        // This older notification's data has no appAppleId.
        let older: ResponseBodyV2DecodedPayload = try decode("apple-real/real/notification-sandbox-1.jws")
        #expect(older.effectiveBundleId == "br.com.goldies.app")
        #expect(older.effectiveAppAppleId == nil)
    }

    @Test func aPresentDataObjectIsUsedEvenWhenItLacksAMember() throws {
        let notification = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"data":{"environment":"Sandbox"},
                 "summary":{"bundleId":"com.example.summary","appAppleId":7,"environment":"Production"}}
                """))
        #expect(notification.effectiveBundleId == nil)
        #expect(notification.effectiveAppAppleId == nil)
        #expect(notification.effectiveEnvironment == .sandbox)

        let nullData = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"data":null,"summary":{"bundleId":"com.example.summary","appAppleId":7,"environment":"Production"}}
                """))
        #expect(nullData.data == nil)
        #expect(nullData.effectiveBundleId == "com.example.summary")
    }

    @Test func effectiveValuesComeFromSummary() throws {
        let notification = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY",
                 "summary":{"requestIdentifier":"efb27071-45a4-4aca-9854-2a1e9146f265","environment":"LocalTesting",
                            "appAppleId":41234,"bundleId":"com.example","productId":"com.example.product",
                            "storefrontCountryCodes":["CAN","USA","MEX"],"succeededCount":5,"failedCount":2}}
                """))
        let summary = try #require(notification.summary)
        #expect(summary.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.succeededCount == 5)
        #expect(summary.failedCount == 2)
        #expect(summary.productId == "com.example.product")
        #expect(notification.effectiveBundleId == "com.example")
        #expect(notification.effectiveAppAppleId == 41234)
        #expect(notification.effectiveEnvironment == .localTesting)
    }

    @Test func externalPurchaseTokenEnvironmentFollowsTheSandboxPrefix() throws {
        func notification(_ token: String) throws -> ResponseBodyV2DecodedPayload {
            let json = #"{"notificationType":"EXTERNAL_PURCHASE_TOKEN","externalPurchaseToken":"# + token + "}"
            return try ResponseBodyV2DecodedPayload(json: object(json))
        }
        let sandbox = try notification(
            #"{"externalPurchaseId":"SANDBOX_b2158121-7af9-49d4-9561-1f588205523e","#
                + #""tokenCreationDate":1698148950000,"appAppleId":55555,"bundleId":"com.example","tokenType":"SERVICES"}"#
        )
        #expect(sandbox.effectiveEnvironment == .sandbox)
        #expect(sandbox.effectiveBundleId == "com.example")
        #expect(sandbox.effectiveAppAppleId == 55555)
        #expect(sandbox.externalPurchaseToken?.tokenCreationDate?.milliseconds == 1_698_148_950_000)
        #expect(sandbox.externalPurchaseToken?.tokenType == .services)

        let production = try notification(
            #"{"externalPurchaseId":"b2158121-7af9-49d4-9561-1f588205523e","bundleId":"com.example"}"#)
        #expect(production.effectiveEnvironment == .production)
        let noIdentifier = try notification(#"{"bundleId":"com.example"}"#)
        #expect(noIdentifier.effectiveEnvironment == .production)
        let lowercase = try notification(#"{"externalPurchaseId":"sandbox_1"}"#)
        #expect(lowercase.effectiveEnvironment == .production)
    }

    @Test func effectiveValuesComeFromAppData() throws {
        let notification = try ResponseBodyV2DecodedPayload(
            json: object(
                """
                {"notificationType":"RESCIND_CONSENT",
                 "appData":{"appAppleId":41234,"bundleId":"com.example","environment":"Sandbox",
                            "signedAppTransactionInfo":"signed_app_transaction_info_value"}}
                """))
        #expect(notification.notificationType == .rescindConsent)
        #expect(notification.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
        #expect(notification.effectiveBundleId == "com.example")
        #expect(notification.effectiveAppAppleId == 41234)
        #expect(notification.effectiveEnvironment == .sandbox)
    }

    @Test func effectiveValuesAreNilWithoutASource() throws {
        let json = try object(#"{"notificationType":"TEST","version":"2.0"}"#)
        let notification = try ResponseBodyV2DecodedPayload(json: json)
        #expect(notification.effectiveBundleId == nil)
        #expect(notification.effectiveAppAppleId == nil)
        #expect(notification.effectiveEnvironment == nil)
    }

    // MARK: Timestamp

    @Test(arguments: [
        ("1697679936049.7297", Int64(1_697_679_936_049)),
        ("0", 0),
        ("-0", 0),
        ("-0.0", 0),
        ("-1", -1),
        ("-0.5", -1),
        ("-1.5", -2),
        ("-62135769600000", -62_135_769_600_000),
        ("1e3", 1000),
        ("1.5E3", 1500),
        ("25e-1", 2),
        ("-25e-1", -3),
        ("-1.0000", -1),
        ("123e-10", 0),
        ("9223372036854775807", Int64.max),
        ("9223372036854775807.9", Int64.max),
        ("-9223372036854775808", Int64.min),
        ("922337203685477580.7e1", Int64.max),
    ])
    func timestampFloorsTheExactNumber(text: String, milliseconds: Int64) throws {
        let timestamp = try #require(Timestamp(rawValue: text))
        #expect(timestamp.milliseconds == milliseconds)
        #expect(timestamp.rawValue == text)
    }

    @Test(arguments: [
        "", "-", "abc", "01", "1.", ".5", "+1", "1e", "1e+", " 1", "1 ", "0x10", "NaN",
        "9223372036854775808", "-9223372036854775808.5", "-9223372036854775809", "1e19", "1e1000000000",
        "12345678901234567890123.5",
    ])
    func timestampRejectsNonNumbersAndOutOfRangeValues(text: String) {
        #expect(Timestamp(rawValue: text) == nil)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (1_681_314_324_000, "2023-04-12T15:45:24.000Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
        (-62_167_219_200_001, "-0001-12-31T23:59:59.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (253_402_300_800_000, "+10000-01-01T00:00:00.000Z"),
    ])
    func timestampFormatsISO8601InUTC(milliseconds: Int64, expected: String) {
        #expect(Timestamp(milliseconds: milliseconds).iso8601 == expected)
        #expect(Timestamp(milliseconds: milliseconds).description == expected)
    }

    @Test func timestampISO8601AgreesWithFoundationAfter1970() throws {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for seconds in stride(from: Int64(0), to: 4_102_444_800, by: 7_776_013) {  // to 2100, about 90 days apart
            let timestamp = Timestamp(milliseconds: seconds * 1000 + 123)
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(timestamp.iso8601 == String(expected.dropLast()) + ".123Z")
        }
    }

    @Test func timestampDateKeepsTheFraction() throws {
        let timestamp = try #require(Timestamp(rawValue: "1697679936049.7297"))
        #expect(abs(timestamp.date.timeIntervalSince1970 - 1_697_679_936.0497297) < 1e-6)
        #expect(Timestamp(milliseconds: -1500).date.timeIntervalSince1970 == -1.5)
    }
}
