import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMint
@testable import VouchMintPKI

@Suite struct MintGeneratorTests {
    typealias Support = MintTestSupport

    let generator = MintGenerator(seed: 42, date: Support.signingDate)
    let signer = Support.signer

    private func payloads(_ kind: MintKind, _ range: Range<Int>, generator: MintGenerator? = nil) throws -> [JSONObject]
    {
        let generator = generator ?? self.generator
        return try range.map { try generator.payload(kind, index: $0, signer: signer) }
    }

    /// A notification with its nested tokens decoded in place, so payloads compare without the
    /// (randomised) nested signatures.
    private func expanded(_ notification: JSONObject) throws -> JSONObject {
        var copy = notification
        guard var data = copy["data"]?.objectValue else { return copy }
        for member in ["signedTransactionInfo", "signedRenewalInfo"] {
            if let token = data[member]?.stringValue { data[member] = .object(try Support.Token(token).payload) }
        }
        copy["data"] = .object(data)
        return copy
    }

    // MARK: Determinism

    @Test(arguments: MintKind.allCases)
    func sameSeedAndDateGiveTheSamePayloads(kind: MintKind) throws {
        let again = MintGenerator(seed: 42, date: Support.signingDate)
        let first = try payloads(kind, 0..<20).map(expanded)
        let second = try payloads(kind, 0..<20, generator: again).map(expanded)
        #expect(first == second)
        let other = try payloads(kind, 0..<20, generator: MintGenerator(seed: 43, date: Support.signingDate)).map(
            expanded)
        #expect(zip(first, other).allSatisfy { $0 != $1 })
    }

    @Test func anItemDoesNotDependOnTheItemsBeforeIt() throws {
        let all = try payloads(.transaction, 0..<10)
        #expect(try generator.payload(.transaction, index: 7, signer: signer) == all[7])
    }

    @Test(arguments: MintKind.allCases)
    func itemsOfARunAreDistinct(kind: MintKind) throws {
        let items = try payloads(kind, 0..<300).map(expanded)
        #expect(Set(items).count == 300)
    }

    @Test func transactionIdentifiersAreUniqueAcrossALargeRun() throws {
        let ids = try payloads(.transaction, 0..<5000).map { try #require($0["transactionId"]?.stringValue) }
        #expect(Set(ids).count == 5000)
    }

    @Test func aSeedGivenAsTextIsHashedAndANumberIsTakenAsIs() {
        #expect(MintGenerator.seed("42") == 42)
        #expect(MintGenerator.seed("") == 0xCBF2_9CE4_8422_2325)
        #expect(MintGenerator.seed("a") == 0xAF63_DC4C_8601_EC8C)
    }

    @Test func splitMix64MatchesTheReferenceSequence() {
        // Reference outputs of SplitMix64 seeded with 1234567.
        var generator = SplitMix64(seed: 1_234_567)
        #expect(generator.next() == 6_457_827_717_110_365_317)
        #expect(generator.next() == 3_203_168_211_198_807_973)
        #expect(generator.next() == 9_817_491_932_198_370_423)
    }

    // MARK: Transactions

    @Test func sandboxTransactionsCarryConsistentDocumentedFields() throws {
        let productTypes: Set<String> = [
            "Auto-Renewable Subscription", "Non-Renewing Subscription", "Consumable", "Non-Consumable",
        ]
        let signed = Support.milliseconds(Support.signingDate)
        for payload in try payloads(.transaction, 0..<200) {
            let transactionId = try #require(payload["transactionId"]?.stringValue)
            #expect(transactionId.count == 16 && transactionId.hasPrefix("2000"))
            #expect(payload["environment"] == "Sandbox")
            let bundleId = try #require(payload["bundleId"]?.stringValue)
            let app = try #require(MintCatalog.apps.first { $0.bundleId == bundleId })
            let productId = try #require(payload["productId"]?.stringValue)
            let product = try #require(app.products.first { $0.id == productId })
            let type = try #require(payload["type"]?.stringValue)
            #expect(productTypes.contains(type))
            #expect(type == product.type)

            let signedDate = try #require(payload["signedDate"]?.int64Value)
            #expect(signedDate <= signed && signedDate >= signed - 86_400_000)
            let purchaseDate = try #require(payload["purchaseDate"]?.int64Value)
            #expect(purchaseDate < signedDate && purchaseDate % 1000 == 0)
            #expect(try #require(payload["originalPurchaseDate"]?.int64Value) <= purchaseDate)

            let code = try #require(payload["storefront"]?.stringValue)
            let storefront = try #require(MintCatalog.storefront(code: code))
            #expect(payload["storefrontId"] == .string(storefront.id))
            #expect(payload["currency"] == .string(storefront.currency))
            let price = try #require(payload["price"]?.int64Value)
            if payload["offerType"] == nil {
                #expect(price == storefront.prices[product.tier])
            }
            if type == "Auto-Renewable Subscription" {
                #expect(payload["subscriptionGroupIdentifier"] == .string(app.subscriptionGroupIdentifier))
                #expect(payload["webOrderLineItemId"] != nil)
                let expires = try #require(payload["expiresDate"]?.int64Value)
                #expect(expires > purchaseDate)
            } else {
                #expect(payload["expiresDate"] == nil)
                #expect(payload["subscriptionGroupIdentifier"] == nil)
            }
            if type != "Consumable" { #expect(payload["quantity"] == 1) }
            #expect(payload.members.first?.name == "transactionId")
            #expect(!payload.members.contains { $0.value.isNull })
        }
    }

    @Test func sandboxSubscriptionsLastTheirAcceleratedLength() throws {
        let accelerated: [String: Int64] = [
            "weekly": 180_000, "monthly": 300_000, "quarterly": 900_000, "yearly": 3_600_000,
        ]
        var checked = 0
        for payload in try payloads(.transaction, 0..<300)
        where payload["type"] == "Auto-Renewable Subscription" && payload["offerDiscountType"] != "FREE_TRIAL" {
            let productId = try #require(payload["productId"]?.stringValue)
            let length = try #require(accelerated[String(productId.split(separator: ".").last!)])
            #expect(
                try #require(payload["expiresDate"]?.int64Value) - (try #require(payload["purchaseDate"]?.int64Value))
                    == length)
            checked += 1
        }
        #expect(checked > 50)
    }

    @Test func productionMonthlySubscriptionsRunACalendarMonth() throws {
        let production = MintGenerator(
            seed: 42, date: Support.signingDate,
            overrides: [
                MintOverride(path: ["environment"], value: "Production"),
                MintOverride(path: ["productId"], value: .string("com.example.trailmap.explorer.monthly")),
            ])
        let payload = try production.payload(.transaction, index: 0, signer: signer)
        let transactionId = try #require(payload["transactionId"]?.stringValue)
        #expect(transactionId.count == 15 && transactionId.hasPrefix("44"))
        let purchase = try #require(payload["purchaseDate"]?.int64Value)
        let expires = try #require(payload["expiresDate"]?.int64Value)
        if payload["offerDiscountType"] != "FREE_TRIAL" {
            #expect(expires == CivilTime.adding(months: 1, to: purchase))
        }
        #expect(payload["environment"] == "Production")
    }

    @Test func revocationsAffectTheShareAskedFor() throws {
        var asked = generator
        asked.revokedPercentage = 5
        let revoked = try payloads(.transaction, 0..<1000, generator: asked).filter { $0["revocationDate"] != nil }
        #expect((20...100).contains(revoked.count))
        for payload in revoked {
            let date = try #require(payload["revocationDate"]?.int64Value)
            #expect(date > (try #require(payload["purchaseDate"]?.int64Value)))
            #expect(date <= (try #require(payload["signedDate"]?.int64Value)))
            let type = try #require(payload["revocationType"]?.stringValue)
            #expect(["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"].contains(type))
            if type == "REFUND_FULL" { #expect(payload["revocationPercentage"] == 100000) }
            if type == "FAMILY_REVOKE" { #expect(payload["inAppOwnershipType"] == "FAMILY_SHARED") }
            #expect([0, 1].contains(try #require(payload["revocationReason"]?.int64Value)))
        }
    }

    @Test func offersCarryTypeDiscountAndPeriod() throws {
        let offered = try payloads(.transaction, 0..<500).filter { $0["offerType"] != nil }
        #expect(offered.count > 30)
        for payload in offered {
            let type = try #require(payload["offerType"]?.int64Value)
            #expect((1...4).contains(type))
            #expect((type == 1) == (payload["offerIdentifier"] == nil))
            #expect(
                ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT"].contains(
                    try #require(payload["offerDiscountType"]?.stringValue)))
            #expect(payload["offerPeriod"]?.stringValue?.hasPrefix("P") == true)
            if payload["offerDiscountType"] == "FREE_TRIAL" { #expect(payload["price"] == 0) }
        }
    }

    // MARK: Overrides

    @Test func overridesSetParseAndRemoveMembers() throws {
        let overridden = MintGenerator(
            seed: 42, date: Support.signingDate,
            overrides: [
                try MintOverride(parsing: "price=123"), try MintOverride(parsing: "quantity=\"7\""),
                try MintOverride(parsing: "isUpgraded=true"), try MintOverride(parsing: "note=hello=world"),
                try MintOverride(parsing: "extra.nested=[1,2]"), MintOverride(path: ["currency"], value: nil),
            ])
        let payload = try overridden.payload(.transaction, index: 3, signer: signer)
        #expect(payload["price"] == .number("123"))
        #expect(payload["quantity"] == .string("7"))
        #expect(payload["isUpgraded"] == true)
        #expect(payload["note"] == .string("hello=world"))
        #expect(payload["extra"] == .object(JSONObject([.init("nested", .array([.number("1"), .number("2")]))])))
        #expect(payload["currency"] == nil)
        #expect(
            payload["transactionId"] == (try generator.payload(.transaction, index: 3, signer: signer))["transactionId"]
        )
    }

    @Test func malformedOverridesAreRejected() {
        for text in ["price", "=1", "a..b=1", ".a=1"] {
            #expect(throws: MintError(.invalidOverride, "")) { try MintOverride(parsing: text) }
        }
        var object = JSONObject([.init("price", .number("1"))])
        #expect(throws: MintError(.invalidOverride, "")) {
            try MintOverride(path: ["price", "x"], value: 1).apply(to: &object)
        }
    }

    @Test func overridesTakeTheTypeThePayloadTableGivesTheMember() throws {
        #expect(
            try MintOverride(parsing: "externalPurchaseToken.tokenExpirationDate=1713700950000").value
                == .number("1713700950000"))
        #expect(try MintOverride(parsing: "commitmentInfo.billingPeriodNumber=3").value == .number("3"))
        #expect(try MintOverride(parsing: "appData.signedAppTransactionInfo=123").value == .string("123"))
        for text in [
            "externalPurchaseToken.tokenExpirationDate=soon", "commitmentInfo.commitmentPrice=cheap",
            "advancedCommerceInfo.estimatedTax=1.5", "commitmentInfo.commitmentAutoRenewStatus=on",
        ] {
            let error = #expect(throws: MintError.self) { try MintOverride(parsing: text) }
            #expect(error?.code == .invalidOverride, "\(text)")
            #expect(error?.reason.contains(" in Apple's documentation; ") == true, "\(text)")
        }
        // A member the models do not read takes VALUE as JSON when it parses, else as text.
        #expect(try MintOverride(parsing: "requestDate=soon").value == .string("soon"))
        #expect(try MintOverride(parsing: "requestDate=5").value == .number("5"))
    }

    @Test func storefrontOverridePricesInItsCurrency() throws {
        let japan = MintGenerator(
            seed: 42, date: Support.signingDate, overrides: [try MintOverride(parsing: "storefront=JPN")])
        for payload in try payloads(.transaction, 0..<40, generator: japan) {
            #expect(payload["storefront"] == "JPN")
            #expect(payload["storefrontId"] == "143462")
            #expect(payload["currency"] == "JPY")
        }
        for payload in try payloads(.renewalInfo, 0..<10, generator: japan) {
            #expect(payload["storefront"] == nil)
            if payload["renewalPrice"] != nil { #expect(payload["currency"] == "JPY") }
        }
        let request = try japan.payload(.realtimeRequest, index: 0, signer: signer)
        #expect(request["userLocale"] == "ja-JP")
    }

    @Test func typeOverridePicksAProductOfThatType() throws {
        let consumables = MintGenerator(
            seed: 42, date: Support.signingDate, overrides: [try MintOverride(parsing: "type=Consumable")])
        for payload in try payloads(.transaction, 0..<40, generator: consumables) {
            #expect(payload["type"] == "Consumable")
            #expect(payload["productId"]?.stringValue?.contains(".coins.") == true)
        }
    }

    @Test func aProductOrBundleOfTheCatalogueMintsThatAppsData() throws {
        for seed in UInt64(1)...8 {
            let product = MintGenerator(
                seed: seed, date: Support.signingDate,
                overrides: [try MintOverride(parsing: "productId=com.example.trailmap.explorer.monthly")])
            let payload = try product.payload(.transaction, index: 0, signer: signer)
            #expect(payload["type"] == "Auto-Renewable Subscription", "seed \(seed)")
            #expect(payload["bundleId"] == "com.example.trailmap", "seed \(seed)")
            #expect(payload["subscriptionGroupIdentifier"] == "21577302", "seed \(seed)")
            let bundle = MintGenerator(
                seed: seed, date: Support.signingDate,
                overrides: [try MintOverride(parsing: "bundleId=com.example.recipebox")])
            let productId = try bundle.payload(.transaction, index: 0, signer: signer)["productId"]?.stringValue
            #expect(productId?.hasPrefix("com.example.recipebox.") == true, "seed \(seed)")
        }
    }

    @Test func scenarioFieldsMissingFromAKindAreAdded() throws {
        let overridden = MintGenerator(
            seed: 42, date: Support.signingDate,
            overrides: [
                try MintOverride(parsing: "bundleId=com.example.other"),
                try MintOverride(parsing: "environment=Production"),
            ])
        let renewal = try overridden.payload(.renewalInfo, index: 0, signer: signer)
        #expect(renewal["bundleId"] == "com.example.other")
        #expect(renewal["environment"] == "Production")
        let app = try overridden.payload(.appTransaction, index: 0, signer: signer)
        #expect(app["receiptType"] == "Production")
        #expect(app["environment"] == nil)
        #expect(app["bundleId"] == "com.example.other")
    }

    // MARK: Notifications

    @Test func notificationsNestTokensSignedByTheSameChainWithConsistentIds() throws {
        var withRenewal = 0
        for outer in try payloads(.notification, 0..<120) {
            let data = try #require(outer["data"]?.objectValue)
            guard outer["notificationType"] != "TEST" else {
                #expect(data.members.map(\.name) == ["bundleId", "environment"])
                continue
            }
            let transactionToken = try Support.Token(try #require(data["signedTransactionInfo"]?.stringValue))
            #expect(try transactionToken.signatureVerifies)
            #expect(try transactionToken.chain == (try signer.authority.certificateChain()))
            let transaction = transactionToken.payload
            #expect(transaction["bundleId"] == data["bundleId"])
            #expect(transaction["environment"] == data["environment"])
            let outerSigned = try #require(outer["signedDate"]?.int64Value)
            #expect(try #require(transaction["signedDate"]?.int64Value) <= outerSigned)

            if let renewalText = data["signedRenewalInfo"]?.stringValue {
                withRenewal += 1
                let renewalToken = try Support.Token(renewalText)
                #expect(try renewalToken.signatureVerifies)
                let renewal = renewalToken.payload
                #expect(renewal["originalTransactionId"] == transaction["originalTransactionId"])
                #expect(renewal["productId"] == transaction["productId"])
                #expect(renewal["environment"] == data["environment"])
                #expect(renewal["appTransactionId"] == transaction["appTransactionId"])
                #expect(transaction["type"] == "Auto-Renewable Subscription")
                #expect(data["status"] != nil)
            } else {
                #expect(data["status"] == nil)
            }
            #expect(outer["version"] == "2.0")
            #expect(outer["notificationUUID"]?.stringValue?.count == 36)
        }
        #expect(withRenewal > 50)
    }

    @Test func notificationTypeOverrideBuildsThatScenario() throws {
        func notification(_ settings: [String]) throws -> (JSONObject, JSONObject, JSONObject?) {
            let generator = MintGenerator(
                seed: 42, date: Support.signingDate, overrides: try settings.map { try MintOverride(parsing: $0) })
            let outer = try generator.payload(.notification, index: 0, signer: signer)
            let data = try #require(outer["data"]?.objectValue)
            let transaction = try Support.Token(try #require(data["signedTransactionInfo"]?.stringValue)).payload
            let renewal = try data["signedRenewalInfo"]?.stringValue.map { try Support.Token($0).payload }
            return (outer, transaction, renewal)
        }

        let (refund, refunded, _) = try notification(["notificationType=REFUND"])
        #expect(refund["notificationType"] == "REFUND")
        #expect(refunded["revocationDate"] != nil)
        #expect(refunded["revocationType"] != nil)

        let (expired, lapsed, lapsedRenewal) = try notification(["notificationType=EXPIRED", "subtype=VOLUNTARY"])
        #expect(expired["subtype"] == "VOLUNTARY")
        #expect(try #require(expired["data"]?.objectValue)["status"] == 2)
        #expect(try #require(lapsed["expiresDate"]?.int64Value) < (try #require(lapsed["signedDate"]?.int64Value)))
        #expect(lapsedRenewal?["expirationIntent"] == 1)
        #expect(lapsedRenewal?["autoRenewStatus"] == 0)

        let (downgrade, current, pending) = try notification([
            "notificationType=DID_CHANGE_RENEWAL_PREF", "subtype=DOWNGRADE",
        ])
        #expect(downgrade["subtype"] == "DOWNGRADE")
        #expect(pending?["autoRenewProductId"] != current["productId"])

        let (charge, bought, none) = try notification(["notificationType=ONE_TIME_CHARGE"])
        #expect(charge["subtype"] == nil)
        #expect(bought["type"] != "Auto-Renewable Subscription")
        #expect(none == nil)
    }

    @Test func notificationSettingsReachTheNestedTokens() throws {
        let overridden = MintGenerator(
            seed: 42, date: Support.signingDate,
            overrides: [
                try MintOverride(parsing: "bundleId=com.example.elsewhere"),
                try MintOverride(parsing: "environment=Production"),
                try MintOverride(parsing: "originalTransactionId=\"123456789012345\""),
                try MintOverride(parsing: "notificationType=DID_RENEW"),
                try MintOverride(parsing: "data.signedTransactionInfo.price=1"),
                try MintOverride(parsing: "data.status=3"),
            ])
        let outer = try expanded(try overridden.payload(.notification, index: 0, signer: signer))
        let data = try #require(outer["data"]?.objectValue)
        let transaction = try #require(data["signedTransactionInfo"]?.objectValue)
        let renewal = try #require(data["signedRenewalInfo"]?.objectValue)
        #expect(data["bundleId"] == "com.example.elsewhere")
        #expect(data["environment"] == "Production")
        #expect(data["status"] == 3)
        #expect(transaction["bundleId"] == "com.example.elsewhere")
        #expect(transaction["environment"] == "Production")
        #expect(transaction["originalTransactionId"] == "123456789012345")
        #expect(transaction["price"] == 1)
        #expect(renewal["originalTransactionId"] == "123456789012345")
        #expect(renewal["environment"] == "Production")
        #expect(outer["bundleId"] == nil)
    }

    // MARK: Dates and validity

    @Test func signedDatesStayPastAnExpiredLeaf() throws {
        var options = MintAuthorityOptions(validity: Support.validity)
        options.leaf = MintValidity(
            notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2025-06-01T06:00:00Z")!)
        let expired = try MintSigner(authority: try MintAuthority.generate(options))
        let leafEnd = Support.milliseconds(options.leaf.notAfter)
        for index in 0..<200 {
            let payload = try generator.payload(.transaction, index: index, signer: expired)
            #expect(try #require(payload["signedDate"]?.int64Value) > leafEnd)
        }
    }

    @Test func signedDatesStayInsideAFreshLeaf() throws {
        var options = MintAuthorityOptions(validity: Support.validity)
        options.leaf = MintValidity(
            notBefore: MintDate.parse("2025-06-01T11:00:00Z")!, notAfter: Support.validity.notAfter)
        let fresh = try MintSigner(authority: try MintAuthority.generate(options))
        let leafStart = Support.milliseconds(options.leaf.notBefore)
        for index in 0..<200 {
            let payload = try generator.payload(.renewalInfo, index: index, signer: fresh)
            #expect(try #require(payload["signedDate"]?.int64Value) >= leafStart)
        }
    }

    @Test func noTokenIsSignedInTheLeafsFirstSecond() throws {
        var options = MintAuthorityOptions(validity: Support.validity)
        options.leaf = MintValidity(
            notBefore: MintDate.parse("2025-06-01T12:00:00Z")!, notAfter: Support.validity.notAfter)
        let fresh = try MintSigner(authority: try MintAuthority.generate(options))
        let leafStart = Support.milliseconds(options.leaf.notBefore)
        // DATE a few seconds after the leaf's start, and DATE inside its very first second.
        for date in ["2025-06-01T12:00:03Z", "2025-06-01T12:00:00.400Z"] {
            let generator = MintGenerator(seed: 9, date: MintDate.parse(date)!)
            var seconds = Set<Int64>()
            for index in 0..<200 {
                let payload = try generator.payload(.transaction, index: index, signer: fresh)
                let signed = try #require(payload["signedDate"]?.int64Value)
                #expect(signed >= leafStart + 1000)
                #expect(signed <= max(Support.milliseconds(MintDate.parse(date)!), leafStart + 1000))
                seconds.insert(signed / 1000)
            }
            #expect(!seconds.contains(leafStart / 1000))
        }
    }

    @Test func appTransactionsAreDatedByTheirReceiptAndCarryNoSignedDate() throws {
        for payload in try payloads(.appTransaction, 0..<20) {
            #expect(payload["signedDate"] == nil)
            #expect(payload["receiptType"] == "Sandbox")
            #expect(payload["receiptCreationDate"] == payload["requestDate"])
            #expect(payload["versionExternalIdentifier"] == 0)
            #expect(payload["appTransactionId"]?.stringValue?.count == 18)
            #expect(payload["deviceVerification"]?.stringValue?.count == 64)
        }
    }

    @Test func realtimeRequestsCarryTheDocumentedFields() throws {
        let payload = try generator.payload(.realtimeRequest, index: 0, signer: signer)
        #expect(
            payload.members.map(\.name) == [
                "originalTransactionId", "appAppleId", "productId", "userLocale", "requestIdentifier", "signedDate",
                "environment",
            ])
    }

    // MARK: Xcode

    @Test func xcodeDataHasFractionalDatesAndTheXcodeEnvironment() throws {
        let signer = Support.xcodeSigner
        let transaction = try generator.payload(.transaction, index: 2, signer: signer)
        #expect(transaction["environment"] == "Xcode")
        #expect(transaction["transactionId"] == "2")
        for name in ["purchaseDate", "originalPurchaseDate", "signedDate"] {
            let value = try #require(transaction[name])
            #expect(value.int64Value == nil, "\(name)")
            #expect(value.doubleValue.map { $0 > 1.7e12 } == true, "\(name)")
        }
        let app = try generator.payload(.appTransaction, index: 0, signer: signer)
        #expect(app["receiptType"] == "Xcode")
        #expect(app["originalPurchaseDate"] == .number("-62135769600000"))

        let renewal = try generator.payload(.renewalInfo, index: 0, signer: signer)
        #expect(renewal["environment"] == "Xcode")
        #expect(renewal["deviceVerificationNonce"]?.stringValue?.count == 36)
    }

    @Test func xcodeMakesNoNotificationsOrRealtimeRequests() {
        for kind in [MintKind.notification, .realtimeRequest] {
            #expect(throws: MintError(.unsupported, "")) {
                try generator.payload(kind, index: 0, signer: Support.xcodeSigner)
            }
        }
    }
}

@Suite struct MintHistoryGeneratorTests {
    /// `vouch mint history` refuses an authority that is not valid over `signedDates`, so every
    /// statement of every story, nested ones included, must be signed inside it.
    @Test func everyStatementIsSignedWithinTheAnnouncedDates() throws {
        let generator = MintHistoryGenerator(seed: 7, date: MintDate.parse("2026-06-01T12:34:56.789Z")!)
        let dates = generator.signedDates
        let low = Int64(dates.lowerBound.timeIntervalSince1970 * 1000)
        let high = Int64(dates.upperBound.timeIntervalSince1970 * 1000)
        #expect(high - low == MintHistoryGenerator.length)
        var stories: Set<String> = []
        for index in 0..<800 {
            stories.insert(generator.story(of: index))
            for item in generator.history(index).items {
                var signed = [item.signedDate.milliseconds]
                if case .notification(_, let transaction, let renewal) = item {
                    signed += [transaction, renewal].compactMap { $0?["signedDate"]?.int64Value }
                }
                for date in signed {
                    #expect((low...high).contains(date), "account \(index): \(date) outside \(low)...\(high)")
                }
            }
        }
        #expect(stories == Set(MintHistoryGenerator.stories))
    }
}
