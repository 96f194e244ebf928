import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMint
@testable import VouchMintPKI

/// The order of the dates in minted payloads, as Apple's data has them: what is out of order
/// in one payload, or in a notification and the tokens it nests.
enum MintDateOrder {
    static func value(_ object: JSONObject?, _ name: String) -> Int64? { object?[name]?.int64Value }

    static func transaction(_ payload: JSONObject) -> [String] {
        var problems: [String] = []
        let signed = value(payload, "signedDate")
        let purchase = value(payload, "purchaseDate")
        if let original = value(payload, "originalPurchaseDate"), let purchase, original > purchase {
            problems.append("originalPurchaseDate after purchaseDate")
        }
        if let purchase, let signed, purchase > signed { problems.append("purchaseDate after signedDate") }
        if let expires = value(payload, "expiresDate"), let purchase, expires <= purchase {
            problems.append("expiresDate not after purchaseDate")
        }
        if let revoked = value(payload, "revocationDate") {
            if let purchase, revoked <= purchase { problems.append("revocationDate not after purchaseDate") }
            if let signed, revoked > signed { problems.append("revocationDate after signedDate") }
        }
        return problems
    }

    static func renewalInfo(_ payload: JSONObject) -> [String] {
        var problems: [String] = []
        let recent = value(payload, "recentSubscriptionStartDate")
        let renewal = value(payload, "renewalDate")
        if let recent, let renewal, recent > renewal {
            problems.append("recentSubscriptionStartDate after renewalDate")
        }
        if let recent, let signed = value(payload, "signedDate"), recent > signed {
            problems.append("recentSubscriptionStartDate after signedDate")
        }
        if let grace = value(payload, "gracePeriodExpiresDate"), let renewal, grace <= renewal {
            problems.append("gracePeriodExpiresDate not after renewalDate")
        }
        return problems
    }

    static func notification(_ outer: JSONObject, transaction: JSONObject?, renewal: JSONObject?) -> [String] {
        var problems: [String] = []
        let signed = value(outer, "signedDate") ?? 0
        if let transaction {
            problems += Self.transaction(transaction).map { "transaction: " + $0 }
            if let nested = value(transaction, "signedDate"), nested > signed {
                problems.append("transaction signed after the notification")
            }
        }
        if let renewal {
            problems += renewalInfo(renewal).map { "renewal info: " + $0 }
            if let nested = value(renewal, "signedDate"), nested > signed {
                problems.append("renewal info signed after the notification")
            }
            if let transaction {
                if let recent = value(renewal, "recentSubscriptionStartDate") {
                    if let original = value(transaction, "originalPurchaseDate"), recent < original {
                        problems.append("recentSubscriptionStartDate before originalPurchaseDate")
                    }
                    if let purchase = value(transaction, "purchaseDate"), recent > purchase {
                        problems.append("recentSubscriptionStartDate after purchaseDate")
                    }
                }
                if renewal["renewalDate"] != transaction["expiresDate"] {
                    problems.append("renewalDate is not expiresDate")
                }
            }
        }
        let status = outer["data"]?.objectValue?["status"]?.int64Value
        if let status, let expires = value(transaction, "expiresDate") {
            switch status {
            case 1 where expires <= signed: problems.append("active, but expired before it was signed")
            case 2, 3: if expires > signed { problems.append("expired or in billing retry before the expiry") }
            case 4:
                if expires > signed { problems.append("in a grace period before the expiry") }
                if let grace = value(renewal, "gracePeriodExpiresDate"), grace <= signed {
                    problems.append("in a grace period that had ended")
                }
            default: break
            }
        }
        return problems
    }
}

/// Minted data tells one story: only what was asked for, dates in order, nothing free refunded,
/// and data about an existing transaction carrying its purchase.
@Suite struct MintCoherenceTests {
    typealias Support = MintTestSupport
    let signer = Support.signer

    private func generator(
        _ settings: [String] = [], revoked: Int = 0, transaction: JSONObject? = nil,
        date: String = "2025-06-01T12:00:00Z"
    ) throws -> MintGenerator {
        MintGenerator(
            seed: 42, date: MintDate.parse(date)!, overrides: try settings.map { try MintOverride(parsing: $0) },
            revokedPercentage: revoked, transaction: transaction)
    }

    /// A notification and the payloads of the tokens it nests.
    private func notification(_ generator: MintGenerator, _ index: Int) throws -> (
        outer: JSONObject, transaction: JSONObject?, renewal: JSONObject?
    ) {
        let outer = try generator.payload(.notification, index: index, signer: signer)
        let data = outer["data"]?.objectValue
        return (
            outer, try data?["signedTransactionInfo"]?.stringValue.map { try Support.Token($0).payload },
            try data?["signedRenewalInfo"]?.stringValue.map { try Support.Token($0).payload }
        )
    }

    // MARK: Only what is asked for

    @Test func noTransactionIsRevokedUnlessAsked() throws {
        let minted = try generator()
        for index in 0..<2000 {
            let payload = try minted.payload(.transaction, index: index, signer: signer)
            #expect(payload["revocationDate"] == nil && payload["revocationType"] == nil, "item \(index)")
        }
    }

    @Test func askingForRevocationsLeavesTheOtherTransactionsAsTheyWere() throws {
        let plain = try generator()
        let revoking = try generator(revoked: 5)
        var revoked = 0
        for index in 0..<600 {
            let payload = try revoking.payload(.transaction, index: index, signer: signer)
            if payload["revocationDate"] != nil {
                revoked += 1
            } else {
                #expect(payload == (try plain.payload(.transaction, index: index, signer: signer)))
            }
        }
        #expect(revoked > 10)
    }

    @Test func notificationsRefundOrRevokeOnlyWhenAsked() throws {
        let minted = try generator()
        var types = Set<String>()
        for index in 0..<2000 {
            let (outer, transaction, _) = try notification(minted, index)
            let type = try #require(outer["notificationType"]?.stringValue)
            types.insert(type)
            #expect(transaction?["revocationDate"] == nil, "\(type)")
        }
        #expect(!types.contains("REFUND") && !types.contains("REVOKE"))
        #expect(types.contains("REFUND_DECLINED") && types.contains("DID_RENEW"))
        let refunds = try generator(["notificationType=REFUND"])
        for index in 0..<50 {
            #expect(try notification(refunds, index).transaction?["revocationDate"] != nil)
        }
    }

    // MARK: Free items

    @Test func whatIsRefundedWasPaidFor() throws {
        let revoking = try generator(revoked: 100)
        var refunds = 0
        for index in 0..<1000 {
            let payload = try revoking.payload(.transaction, index: index, signer: signer)
            guard payload["revocationType"] != "FAMILY_REVOKE" else { continue }
            refunds += 1
            #expect(try #require(payload["price"]?.int64Value) > 0, "item \(index)")
            #expect(payload["offerDiscountType"] != "FREE_TRIAL", "item \(index)")
        }
        #expect(refunds > 800)
        for type in ["REFUND", "REFUND_DECLINED", "REFUND_REVERSED", "CONSUMPTION_REQUEST"] {
            let minted = try generator(["notificationType=\(type)"])
            for index in 0..<300 {
                let transaction = try #require(try notification(minted, index).transaction)
                #expect(try #require(transaction["price"]?.int64Value) > 0, "\(type) \(index)")
            }
        }
    }

    // MARK: Dates

    @Test(arguments: ["Sandbox", "Production"])
    func datesAreInOrder(environment: String) throws {
        let setting = "environment=\(environment)"
        let transactions = try generator([setting], revoked: 5)
        let renewals = try generator([setting])
        for index in 0..<1000 {
            let transaction = try transactions.payload(.transaction, index: index, signer: signer)
            #expect(MintDateOrder.transaction(transaction) == [], "transaction \(index)")
            let renewal = try renewals.payload(.renewalInfo, index: index, signer: signer)
            #expect(MintDateOrder.renewalInfo(renewal) == [], "renewal info \(index)")
        }
        var steered: [[String]] = [[]]
        for scenario in PayloadBuilder.notificationScenarios {
            steered.append(
                ["notificationType=\(scenario.type.rawValue)"]
                    + (scenario.subtype.map { ["subtype=\($0.rawValue)"] } ?? []))
        }
        for settings in steered {
            let minted = try generator([setting] + settings)
            for index in 0..<(settings.isEmpty ? 1000 : 60) {
                let (outer, transaction, renewal) = try notification(minted, index)
                #expect(
                    MintDateOrder.notification(outer, transaction: transaction, renewal: renewal) == [],
                    "\(settings) \(index)")
            }
        }
    }

    // MARK: Test notifications

    @Test func productionTestNotificationsNameTheAppAsApplesDo() throws {
        let production = try generator([
            "environment=Production", "notificationType=TEST", "bundleId=com.example.birdwatch",
        ])
        let data = try #require(try notification(production, 0).outer["data"]?.objectValue)
        #expect(data.members.map(\.name) == ["appAppleId", "bundleId", "environment"])
        #expect(data["appAppleId"] == 6_449_120_931)
        let sandbox = try generator(["notificationType=TEST"])
        #expect(
            try notification(sandbox, 0).outer["data"]?.objectValue?.members.map(\.name) == ["bundleId", "environment"])
    }

    // MARK: About an existing transaction

    static let account = "5d1c2f0a-6b7e-4c8d-9e0f-1a2b3c4d5e6f"

    /// A transaction minted a month before the data about it: a first purchase without an offer.
    private func existing(_ settings: [String]) throws -> JSONObject {
        let minted = try generator(
            ["environment=Production", "appAccountToken=\(Self.account)"] + settings, date: "2025-05-01T08:00:00Z")
        for index in 0..<100 {
            let payload = try minted.payload(.transaction, index: index, signer: signer)
            if payload["transactionReason"] == "PURCHASE" && payload["offerType"] == nil
                && payload["originalTransactionId"] == payload["transactionId"]
            {
                return payload
            }
        }
        throw MintError(.unsupported, "no first purchase among the first 100 items")
    }

    @Test func aRefundOfAnExistingTransactionCarriesItsPurchase() throws {
        let bought = try existing(["productId=com.example.birdwatch.lifetime"])
        let refunds = try generator(["notificationType=REFUND"], transaction: bought)
        for index in 0..<20 {
            let (outer, transaction, renewal) = try notification(refunds, index)
            let refunded = try #require(transaction)
            #expect(renewal == nil)
            // The transaction as it stated itself, signed again, with the revocation added.
            var expected = bought
            for name in ["signedDate", "revocationReason", "revocationDate", "revocationType", "revocationPercentage"] {
                expected[name] = refunded[name]
            }
            #expect(refunded == expected)
            for name in ["purchaseDate", "price", "appAccountToken", "transactionId", "currency"] {
                #expect(refunded[name] == bought[name], "\(name)")
            }
            let purchase = try #require(bought["purchaseDate"]?.int64Value)
            let revoked = try #require(refunded["revocationDate"]?.int64Value)
            let signed = try #require(outer["signedDate"]?.int64Value)
            #expect(purchase < revoked && revoked <= signed)
            let data = try #require(outer["data"]?.objectValue)
            #expect(data["bundleId"] == "com.example.birdwatch" && data["environment"] == "Production")
            #expect(data["appAppleId"] == 6_449_120_931)
        }
    }

    @Test func eventsAboutAnExistingSubscriptionFollowItInTime() throws {
        let bought = try existing(["productId=com.example.birdwatch.pro.monthly"])
        let purchase = try #require(bought["purchaseDate"]?.int64Value)
        let expires = try #require(bought["expiresDate"]?.int64Value)
        let later = "2025-06-20T00:00:00Z"
        for type in [
            "DID_RENEW", "EXPIRED", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "REFUND", "REFUND_DECLINED",
            "SUBSCRIBED",
        ] {
            let minted = try generator(["notificationType=\(type)"], transaction: bought, date: later)
            let (outer, transaction, renewal) = try notification(minted, 0)
            let nested = try #require(transaction)
            let signed = try #require(outer["signedDate"]?.int64Value)
            #expect(MintDateOrder.notification(outer, transaction: nested, renewal: renewal) == [], "\(type)")
            #expect(nested["originalTransactionId"] == bought["originalTransactionId"], "\(type)")
            #expect(nested["appAccountToken"] == bought["appAccountToken"], "\(type)")
            #expect(renewal?["appAccountToken"] == bought["appAccountToken"], "\(type)")
            switch type {
            case "DID_RENEW":
                // The next period, from the expiry, a new transaction signed when it renewed.
                #expect(nested["purchaseDate"]?.int64Value == expires)
                #expect(
                    try #require(Int64(nested["transactionId"]?.stringValue ?? "")) > Int64(
                        bought["transactionId"]!.stringValue!)!)
                #expect(nested["transactionReason"] == "RENEWAL")
                #expect(nested["price"] == bought["price"])
                #expect((expires...(expires + 59_000)).contains(signed))
            case "EXPIRED", "DID_FAIL_TO_RENEW":
                #expect(nested == bought.replacing("signedDate", with: nested["signedDate"]))
                #expect((expires...(expires + 59_000)).contains(signed))
            case "GRACE_PERIOD_EXPIRED":
                #expect(signed >= expires + 16 * 86_400_000)
            case "SUBSCRIBED":
                // Sent when the purchase is made.
                #expect((purchase...(purchase + 59_000)).contains(signed))
            default:
                #expect(signed > purchase)
            }
        }
    }

    @Test func notificationsAboutATransactionAreEventsThatFitIt() throws {
        let bought = try existing(["productId=com.example.birdwatch.lifetime"])
        let minted = try generator(transaction: bought)
        var types = Set<String>()
        for index in 0..<60 {
            let (outer, transaction, _) = try notification(minted, index)
            types.insert(try #require(outer["notificationType"]?.stringValue))
            #expect(transaction?["transactionId"] == bought["transactionId"])
            #expect(transaction?["revocationDate"] == nil)
        }
        #expect(types == ["ONE_TIME_CHARGE", "REFUND_DECLINED", "CONSUMPTION_REQUEST"])
    }

    @Test func eventsThatCannotBeAboutTheTransactionAreRefusedWithTheReason() throws {
        let lifetime = try existing(["productId=com.example.birdwatch.lifetime"])
        let free = try existing(["productId=com.example.birdwatch.lifetime", "price=0"])
        let refunded = try generator(["notificationType=REFUND"], transaction: lifetime).payload(
            .notification, index: 0, signer: signer)
        let refundedTransaction = try Support.Token(
            try #require(refunded["data"]?.objectValue?["signedTransactionInfo"]?.stringValue)
        ).payload
        let cases: [([String], JSONObject, String, MintError.Code, String)] = [
            (["notificationType=REFUND"], free, "2025-06-01", .invalidInput, "was free"),
            (["notificationType=DID_RENEW"], lifetime, "2025-06-01", .invalidInput, "is Non-Consumable"),
            (["notificationType=REFUND"], lifetime, "2025-04-01", .invalidInput, "was bought at"),
            (["notificationType=REVOKE"], lifetime, "2025-06-01", .invalidInput, "was not shared"),
            (["notificationType=REFUND"], refundedTransaction, "2025-06-01", .invalidInput, "was revoked"),
            (["productId=com.example.other"], lifetime, "2025-06-01", .unsupported, "productId comes from"),
        ]
        for (settings, transaction, date, code, reason) in cases {
            let minted = try generator(settings, transaction: transaction, date: date)
            let error = #expect(throws: MintError.self) { try minted.payload(.notification, index: 0, signer: signer) }
            #expect(error?.code == code, "\(settings)")
            #expect(error?.reason.contains(reason) == true, "\(settings): \(error?.reason ?? "")")
        }
        // A reversal restores a refunded transaction.
        let reversal = try generator(["notificationType=REFUND_REVERSED"], transaction: refundedTransaction)
        let restored = try #require(try notification(reversal, 0).transaction)
        #expect(restored["revocationDate"] == nil && restored["transactionId"] == lifetime["transactionId"])
    }
}

extension JSONObject {
    fileprivate func replacing(_ name: String, with value: JSONValue?) -> JSONObject {
        var copy = self
        copy[name] = value
        return copy
    }
}
