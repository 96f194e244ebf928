import Foundation
import Testing
import Vouch
import VouchMint
import VouchTestSupport

/// Minted multiseat data (App Store Server API 1.25, Notifications 2.25) verifies with the
/// minted authority and decodes into the models with Apple's multiseat members.
@Suite struct MintMultiSeatTests {
    typealias Support = MintTestSupport

    static let verifier: Verifier = {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try! Support.authority.anchorCertificate()]
        configuration.bundleId = "com.example.app"
        return try! Verifier(configuration: configuration)
    }()

    static let end = MintDate.parse("2026-06-01T00:00:00Z")!

    /// The history of account `index` living `story`, every token verified, in order.
    static func verified(_ story: String, index: Int = 0) throws -> (MintHistory, [VerifiedPayload]) {
        var generator = MintHistoryGenerator(seed: 21, date: end, environment: .sandbox)
        generator.story = story
        let history = generator.history(index)
        return (history, try history.tokens(signer: Support.signer).map { try verifier.verify($0) })
    }

    /// The transaction a payload states (a notification's nested one).
    static func transaction(_ payload: VerifiedPayload) -> JWSTransactionDecodedPayload? {
        switch payload.decoded {
        case .transaction(let transaction): return transaction
        case .notification:
            guard case .transaction(let nested)? = payload.nested(.signedTransactionInfo)?.decoded else { return nil }
            return nested
        default: return nil
        }
    }

    static func notification(_ payload: VerifiedPayload) -> ResponseBodyV2DecodedPayload? {
        guard case .notification(let notification) = payload.decoded else { return nil }
        return notification
    }

    static func renewalInfo(_ payload: VerifiedPayload) -> JWSRenewalInfoDecodedPayload? {
        guard case .renewalInfo(let renewal)? = payload.nested(.signedRenewalInfo)?.decoded else { return nil }
        return renewal
    }

    @Test func aTeamPlanVerifiesAndDecodesWithItsSeats() throws {
        let (history, payloads) = try Self.verified("multiseat")
        let kinds = payloads.map { payload in
            Self.notification(payload).map { "\($0.notificationType?.rawValue ?? "")/\($0.subtype?.rawValue ?? "")" }
                ?? "transaction"
        }
        #expect(
            kinds == [
                "SUBSCRIBED/INITIAL_BUY", "transaction", "DID_CHANGE_RENEWAL_PREF/INCREASE_QUANTITY", "REFUND/SEATS",
                "DID_CHANGE_RENEWAL_PREF/DECREASE_QUANTITY", "DID_RENEW/", "DID_RENEW/", "DID_RENEW/",
                // The first member: assigned, then renewed with the plan; the second: assigned, then expired.
                "transaction", "DID_RENEW/", "DID_RENEW/", "DID_RENEW/", "transaction", "EXPIRED/VOLUNTARY",
            ])

        // The purchase: five seats at one price, invitations Apple hosts.
        let bought = try #require(Self.transaction(payloads[0]))
        #expect(bought.quantity == 5)
        #expect(bought.price == 9_990)
        #expect(bought.inAppOwnershipType == .purchased)
        #expect(bought.multiSeatInfo?.invitationManagement == .apple)
        #expect(bought.multiSeatInfo?.priceTiers?.map(\.price) == [9_990])
        #expect(bought.multiSeatInfo?.priceTiers?.map(\.quantity) == [5])
        #expect(bought.multiSeatInfo?.revokedSeatQuantity == nil)
        #expect(bought.additionalTransactionReason == nil)
        #expect(Self.renewalInfo(payloads[0])?.renewalQuantity == 5)

        // Three seats added partway through the period: two transactions, both with the reason.
        let restated = try #require(Self.transaction(payloads[1]))
        #expect(restated.transactionId == bought.transactionId)
        #expect(restated.additionalTransactionReason == .seatAddition)
        let added = try #require(Self.transaction(payloads[2]))
        #expect(added.transactionId != bought.transactionId)
        #expect(added.originalTransactionId == bought.originalTransactionId)
        #expect(added.additionalTransactionReason == .seatAddition)
        #expect(added.quantity == 3)
        #expect(added.price == 8_990)
        #expect(added.expiresDate == bought.expiresDate)
        #expect(added.multiSeatInfo?.invitationManagement == .apple)
        #expect(added.multiSeatInfo?.priceTiers?.map(\.quantity) == [3])
        let increased = try #require(Self.renewalInfo(payloads[2]))
        #expect(increased.renewalQuantity == 8)
        #expect(increased.multiSeatInfo?.renewalPriceTiers?.map(\.price) == [9_990, 8_990])
        // The average of 5 × 9.99 and 3 × 8.99, rounded to the milliunit.
        #expect(increased.renewalPrice == 9_615)

        // Two of the added seats refunded: the transaction stays valid, without revocation fields.
        let refunded = try #require(Self.transaction(payloads[3]))
        #expect(refunded.transactionId == added.transactionId)
        #expect(refunded.multiSeatInfo?.revokedSeatQuantity == 2)
        #expect(refunded.revocationDate == nil)
        #expect(refunded.revocationReason == nil)
        #expect(refunded.revocationType == nil)

        // Four seats renew: the decrease is in the renewal info; the next periods have four.
        #expect(Self.renewalInfo(payloads[4])?.renewalQuantity == 4)
        #expect(Self.renewalInfo(payloads[4])?.multiSeatInfo?.renewalPriceTiers?.map(\.quantity) == [4])
        let renewed = try #require(Self.transaction(payloads[5]))
        #expect(renewed.quantity == 4)
        #expect(renewed.price == 9_990)
        #expect(renewed.additionalTransactionReason == nil)
        #expect(renewed.multiSeatInfo?.revokedSeatQuantity == nil)
        #expect(renewed.multiSeatInfo?.priceTiers?.map(\.quantity) == [4])
        #expect(renewed.purchaseDate == bought.expiresDate)

        // Each member has a transaction of their own, with their own token.
        let generator = MintHistoryGenerator(seed: 21, date: Self.end, environment: .sandbox)
        let members = generator.seatHolders(of: 0).members
        let first = try #require(Self.transaction(payloads[8]))
        let second = try #require(Self.transaction(payloads[12]))
        for (member, token) in zip([first, second], members) {
            #expect(member.inAppOwnershipType == .assigned)
            #expect(member.appAccountToken == token)
            #expect(member.originalTransactionId == member.transactionId)
            #expect(member.originalTransactionId != bought.originalTransactionId)
            #expect(member.quantity == 1)
            #expect(member.multiSeatInfo?.invitationManagement == .apple)
            #expect(member.multiSeatInfo?.priceTiers == nil)
            #expect(member.expiresDate == bought.expiresDate)
        }
        #expect(members[0] != members[1])
        #expect(history.items.count == payloads.count)
    }

    @Test func aTeamPlanWhoseAppHostsTheInvitationsReleasesSeatClaims() throws {
        let (_, payloads) = try Self.verified("multiseat-claims")
        let notifications = payloads.compactMap(Self.notification)
        #expect(
            notifications.map { $0.notificationType?.rawValue ?? "" } == [
                "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_RENEW", "UNCLAIM_SEATS", "DID_RENEW", "DID_RENEW",
            ])
        let bought = try #require(Self.transaction(payloads[0]))
        #expect(bought.multiSeatInfo?.invitationManagement == .developer)
        #expect(bought.quantity == 4)
        #expect(notifications[1].subtype == .decreaseQuantity)
        #expect(Self.renewalInfo(payloads[1])?.renewalQuantity == 2)
        #expect(Self.transaction(payloads[2])?.quantity == 2)
        let unclaim = notifications[3]
        let claims = MintHistoryGenerator(seed: 21, date: Self.end, environment: .sandbox).seatHolders(of: 0).claims
        #expect(unclaim.unclaimInfo?.unclaimSeatIds == claims)
        #expect(claims.allSatisfy { UUID(uuidString: $0) != nil && $0 == $0.lowercased() })
        #expect(unclaim.data?.environment == .sandbox)
        #expect(payloads[3].nested.isEmpty)
        #expect(unclaim.signedDate == bought.expiresDate)
    }

    /// Notifications and renewal info about an existing multiseat transaction (`vouch mint
    /// notification --transaction FILE`) carry its seats: a restatement as it stated them, a
    /// renewal its price tiers without refunded seats, and renewal info the seats that renew.
    @Test func dataAboutAnExistingMultiseatTransactionCarriesItsSeats() throws {
        let (_, payloads) = try Self.verified("multiseat")
        let refunded = try #require(Self.transaction(payloads[3]))
        #expect(refunded.multiSeatInfo?.revokedSeatQuantity == 2)
        let generator = MintGenerator(
            seed: 4, date: try #require(refunded.expiresDate).date.addingTimeInterval(86_400),
            transaction: refunded.json)
        var renewed = 0
        var renewing = 0
        for index in 0..<60 {
            let payload = try Self.verifier.verify(
                try generator.token(.notification, index: index, signer: Support.signer))
            let transaction = try #require(Self.transaction(payload))
            #expect(transaction.quantity == 3)
            #expect(transaction.multiSeatInfo?.invitationManagement == .apple)
            #expect(transaction.multiSeatInfo?.priceTiers?.map(\.price) == [8_990])
            if transaction.transactionId == refunded.transactionId {
                #expect(transaction.multiSeatInfo?.revokedSeatQuantity == 2)
                #expect(transaction.additionalTransactionReason == .seatAddition)
            } else {
                #expect(transaction.multiSeatInfo?.revokedSeatQuantity == nil)
                renewed += 1
            }
            if let renewal = Self.renewalInfo(payload), renewal.autoRenewStatus == .on {
                #expect(renewal.renewalQuantity == 3)
                #expect(renewal.multiSeatInfo?.renewalPriceTiers?.map(\.quantity) == [3])
                renewing += 1
            }
        }
        #expect(renewed > 0)
        #expect(renewing > 0)
    }

    /// Each owner's steps (the purchaser's, each member's) come in the order they happen, each
    /// dated as Apple dates it.
    @Test(arguments: [AppStoreEnvironment.production, .sandbox])
    func everyTeamPlanIsToldInOrder(environment: AppStoreEnvironment) throws {
        for story in MintHistoryGenerator.storiesOnRequest {
            var generator = MintHistoryGenerator(seed: 11, date: Self.end, environment: environment)
            generator.story = story
            for index in 0..<40 {
                var previous: [String: Int64] = [:]
                for item in generator.history(index).items {
                    var transaction: JSONObject?
                    switch item {
                    case .transaction(let payload):
                        transaction = payload
                        #expect(MintDateOrder.transaction(payload) == [], "\(story) \(index)")
                    case .renewalInfo(let payload):
                        transaction = payload
                    case .notification(let outer, let nested, let renewal):
                        transaction = nested
                        #expect(
                            MintDateOrder.notification(outer, transaction: nested, renewal: renewal) == [],
                            "\(story) \(index)")
                    }
                    let owner =
                        (transaction?["inAppOwnershipType"]?.stringValue ?? "")
                        + (transaction?["appAccountToken"]?.stringValue ?? "")
                    let signed = item.signedDate.milliseconds
                    #expect(signed >= previous[owner, default: 0], "\(story) \(index)")
                    previous[owner] = signed
                }
                #expect(throws: Never.self) { try generator.history(index).tokens(signer: Support.signer) }
            }
        }
    }

    /// The seed never picks the team plans: the accounts of a seed are as before.
    @Test func theSeedNeverPicksATeamPlan() {
        let generator = MintHistoryGenerator(seed: 21, date: Self.end)
        let picked = Set((0..<500).map { generator.story(of: $0) })
        #expect(picked == Set(MintHistoryGenerator.stories))
        var asked = generator
        asked.story = "multiseat"
        #expect(asked.story(of: 3) == "multiseat")
        #expect(asked.appAccountToken(of: 3) == generator.appAccountToken(of: 3))
    }

    @Test func seatStepsOutOfOrderAreRefusedWhenSigned() {
        func day(_ n: Int64) -> Timestamp { Timestamp(milliseconds: 1_767_225_600_000 + n * 86_400_000) }
        let five = [MultiSeatPriceTier(price: 9_990, quantity: 5)]
        let cases: [(String, (inout MintHistory) -> Void)] = [
            (
                "not before its expiry",
                { history in
                    var bought = history.purchaseSeats(
                        "t", at: day(0), expires: day(30), tiers: five, invitations: .apple)
                    history.addSeats(&bought, at: day(31), tiers: five)
                }
            ),
            (
                "not a multiseat subscription",
                { history in
                    var bought = history.purchase(
                        "t", type: .autoRenewableSubscription, at: day(0), price: 990, expires: day(30))
                    history.addSeats(&bought, at: day(3), tiers: five)
                }
            ),
            (
                "is not fewer than 5",
                { history in
                    let bought = history.purchaseSeats(
                        "t", at: day(0), expires: day(30), tiers: five, invitations: .apple)
                    history.reduceRenewalSeats(bought, to: five, at: day(3))
                }
            ),
            (
                "5 of its 5 seats refunded",
                { history in
                    let bought = history.purchaseSeats(
                        "t", at: day(0), expires: day(30), tiers: five, invitations: .apple)
                    let some = history.refundSeats(bought, seats: 2, at: day(3))
                    history.refundSeats(some, seats: 3, at: day(4))
                }
            ),
            (
                "no seats refunded",
                { history in
                    let bought = history.purchaseSeats(
                        "t", at: day(0), expires: day(30), tiers: five, invitations: .apple)
                    history.refundSeats(bought, seats: 0, at: day(3))
                }
            ),
            (
                "does not host the invitations",
                { history in
                    let bought = history.purchaseSeats(
                        "t", at: day(0), expires: day(30), tiers: five, invitations: .apple)
                    history.unclaimSeats(["0f8fad5b-d9cb-469f-a165-70867728950e"], of: bought, at: day(3))
                }
            ),
        ]
        MintHistoryTests.expectRefused(cases)
    }
}
