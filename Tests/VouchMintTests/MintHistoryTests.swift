import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMint
@testable import VouchMintPKI

@Suite struct MintHistoryTests {
    typealias Support = MintTestSupport

    /// 2026-01-01T00:00:00Z and days after it.
    static func day(_ n: Int64) -> Timestamp { Timestamp(milliseconds: 1_767_225_600_000 + n * 86_400_000) }

    /// The payload of each item, nested tokens as objects.
    private func payloads(_ history: MintHistory) -> [JSONObject] {
        history.items.map { item in
            switch item {
            case .transaction(let payload), .renewalInfo(let payload): return payload
            case .notification(var payload, let transaction, let renewal):
                var data = payload["data"]?.objectValue ?? JSONObject()
                data["signedTransactionInfo"] = transaction.map(JSONValue.object)
                data["signedRenewalInfo"] = renewal.map(JSONValue.object)
                payload["data"] = .object(data)
                return payload
            }
        }
    }

    @Test func theTestNotificationNamesTheAppInProductionAsApplesDo() throws {
        var production = MintHistory(bundleId: "com.example.app", appAppleId: 6_449_120_931)
        production.testNotification(at: Self.day(3))
        var sandbox = MintHistory(environment: .sandbox)
        sandbox.testNotification(at: Self.day(3))
        let test = try #require(payloads(production).first)
        #expect(test["notificationType"] == "TEST" && test["subtype"] == nil)
        #expect(test["signedDate"] == .number(Self.day(3).rawValue))
        let data = try #require(test["data"]?.objectValue)
        #expect(data.members.map(\.name) == ["appAppleId", "bundleId", "environment"])
        #expect(data["appAppleId"] == 6_449_120_931 && data["environment"] == "Production")
        #expect(payloads(sandbox).first?["data"]?.objectValue?.members.map(\.name) == ["bundleId", "environment"])

        // A Production verifier that names the app accepts it.
        let token = try #require(try production.tokens(signer: Support.signer).first)
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try Support.authority.anchorCertificate()]
        configuration.bundleId = "com.example.app"
        configuration.environment = .production
        configuration.appAppleId = 6_449_120_931
        configuration.acceptsAnyApp = false
        #expect(try Verifier(configuration: configuration).verify(token).payload["notificationType"] == "TEST")
    }

    @Test func webhookBodiesAreWhatTheAppStorePostsForEachNotification() throws {
        var history = MintHistory(appAccountToken: "7F0A4C2E-3B5D-4E6F-8A9B-0C1D2E3F4A5B")
        let lifetime = history.purchase(
            "com.example.pro.lifetime", type: .nonConsumable, at: Self.day(1), price: 29_990)
        history.restate(lifetime, at: Self.day(2))
        history.refund(lifetime, at: Self.day(4))
        history.testNotification(at: Self.day(5))
        let bodies = try history.webhookBodies(signer: Support.signer)
        #expect(bodies.count == 3)
        var types: [String] = []
        for body in bodies {
            let object = try StrictJSON.parseObject(Array(body.utf8))
            #expect(object.members.map(\.name) == ["signedPayload"])
            let token = try Support.Token(try #require(object["signedPayload"]?.stringValue))
            types.append(try #require(token.payload["notificationType"]?.stringValue))
        }
        #expect(types == ["ONE_TIME_CHARGE", "REFUND", "TEST"])
        #expect(MintHistory.webhookBody(signedPayload: "a.b.c") == #"{"signedPayload":"a.b.c"}"#)
        #expect(history.items.map(\.isNotification) == [true, false, true, true])
    }

    @Test func aRenewalAfterAFreeTrialCostsTheRegularPrice() throws {
        var history = MintHistory()
        let trial = history.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: Self.day(0), price: 4_990,
            expires: Self.day(14), freeTrial: true)
        #expect(trial.price == 0)
        let renewed = history.renew(trial, until: Self.day(44))
        #expect(renewed.price == 4_990)
        #expect(renewed.purchaseDate == Self.day(14) && renewed.expiresDate == Self.day(44))
        let subscribed = try #require(payloads(history).first?["data"]?.objectValue)
        #expect(subscribed["signedRenewalInfo"]?.objectValue?["renewalPrice"] == 4_990)
        #expect(subscribed["signedTransactionInfo"]?.objectValue?["offerDiscountType"] == "FREE_TRIAL")
    }

    /// The error signing refuses the history of `steps` with, or `nil` when it signs.
    static func refusal(_ steps: (inout MintHistory) -> Void) -> MintError? {
        var history = MintHistory()
        steps(&history)
        do {
            _ = try history.tokens(signer: Support.signer)
            return nil
        } catch {
            return error
        }
    }

    /// Each history of steps is refused when signed (`unsupported`), the reason naming its step.
    static func expectRefused(_ cases: [(String, (inout MintHistory) -> Void)]) {
        for (step, steps) in cases {
            let error = refusal(steps)
            #expect(error?.code == .unsupported, "\(step)")
            #expect(error?.reason.contains(step) == true, "\(error?.reason ?? "")")
        }
    }

    @Test func stepsOutOfOrderAreRefusedWhenSigned() throws {
        let cases: [(String, (inout MintHistory) -> Void)] = [
            (
                "refund of",
                { history in
                    let bought = history.purchase("p", type: .nonConsumable, at: Self.day(10), price: 990)
                    history.refund(bought, at: Self.day(9))
                }
            ),
            (
                "renewal of",
                { history in
                    let bought = history.purchase("p", type: .nonConsumable, at: Self.day(10), price: 990)
                    history.renew(bought, until: Self.day(40))
                }
            ),
            (
                "grace period of",
                { history in
                    let bought = history.purchase(
                        "s", type: .autoRenewableSubscription, at: Self.day(0), price: 990, expires: Self.day(30))
                    history.failRenewal(bought, graceUntil: Self.day(20))
                }
            ),
            (
                "expiry of",
                { history in
                    history.expire(history.purchase("p", type: .consumable, at: Self.day(1), price: 990))
                }
            ),
            (
                "upgrade of",
                { history in
                    let bought = history.purchase(
                        "s", type: .autoRenewableSubscription, at: Self.day(10), price: 990, expires: Self.day(40))
                    history.upgrade(bought, to: "t", at: Self.day(5), until: Self.day(35), price: 1_990)
                }
            ),
            (
                "statement of",
                { history in
                    history.restate(
                        history.purchase("p", type: .consumable, at: Self.day(3), price: 990), at: Self.day(2))
                }
            ),
        ]
        Self.expectRefused(cases)
        #expect(
            Self.refusal { history in
                let bought = history.purchase("p", type: .nonConsumable, at: Self.day(10), price: 990)
                history.refund(bought, at: Self.day(11))
            } == nil)
    }
}

@Suite struct MintHistoryStoryTests {
    /// Every account's own steps come in the order they happen, each dated as Apple dates it;
    /// a family member's (appended after) are in order too.
    @Test(arguments: [AppStoreEnvironment.production, .sandbox])
    func everyStoryIsToldInOrder(environment: AppStoreEnvironment) throws {
        let generator = MintHistoryGenerator(
            seed: 11, date: MintDate.parse("2026-06-01T00:00:00Z")!, environment: environment)
        for index in 0..<400 {
            let history = generator.history(index)
            var previous: [String: Int64] = [:]
            for item in history.items {
                var transaction: JSONObject
                switch item {
                case .transaction(let payload):
                    transaction = payload
                    #expect(MintDateOrder.transaction(payload) == [], "account \(index)")
                case .renewalInfo(let payload):
                    transaction = payload
                case .notification(let outer, let nested, let renewal):
                    transaction = nested ?? outer
                    #expect(
                        MintDateOrder.notification(outer, transaction: nested, renewal: renewal) == [],
                        "account \(index) \(generator.story(of: index))")
                }
                // Each owner's steps in order; the purchaser and a family member apart.
                let owner = transaction["inAppOwnershipType"]?.stringValue ?? ""
                let signed = item.signedDate.milliseconds
                #expect(signed >= previous[owner, default: 0], "account \(index) \(generator.story(of: index))")
                previous[owner] = signed
                if transaction["isUpgraded"] == true, let expires = transaction["expiresDate"]?.int64Value {
                    #expect(signed < expires, "account \(index): upgraded after its expiry")
                }
            }
        }
    }
}
