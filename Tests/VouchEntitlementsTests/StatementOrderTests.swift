import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchStripe

/// One rule decides which of two statements about one thing is newer, for every kind the ledger
/// keeps: the later signed instant, then the one that grants less (a revocation, then the
/// earlier end), then the content. A tie never opens access, whatever the order of arrival.
@Suite struct StatementOrderTests {
    typealias F = LedgerFixtures
    typealias S = StripeLedgerTests

    /// A transaction of a monthly subscription, signed at `signedDate`, expiring at `expires`.
    static func transaction(signedDate: Int64, expires: Int64, revoked: Int64? = nil) throws -> VerifiedPayload {
        var payload: JSONObject = [
            "transactionId": "3000000000000001", "originalTransactionId": "3000000000000001",
            "bundleId": "com.example.app", "productId": "com.example.pro.monthly",
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED",
            "purchaseDate": .number(String(F.day(0))), "expiresDate": .number(String(expires)),
            "signedDate": .number(String(signedDate)), "environment": "Sandbox", "transactionReason": "PURCHASE",
            "appAccountToken": .string(F.account),
        ]
        if let revoked {
            payload["revocationDate"] = .number(String(revoked))
            payload["revocationReason"] = 0
        }
        return try F.verifier.verify(try F.signer.sign(payload: payload))
    }

    /// Two statements signed at one instant: the one that ends earlier is in force, in either
    /// order (by content alone, the later expiry would win: its text is greater).
    @Test func ofTwoTransactionStatementsSignedAtOnceTheEarlierEndIsInForce() throws {
        let signed = F.day(1)
        let short = try Self.transaction(signedDate: signed, expires: F.day(10))
        let long = try Self.transaction(signedDate: signed, expires: F.day(30))
        for order in [[short, long], [long, short]] {
            let ledger = F.ledger(order)
            let answer = try F.entitlements(ledger, F.account, at: F.day(15))
            #expect(answer.entitlements.isEmpty)
            let early = try F.entitlements(ledger, F.account, at: F.day(5))
            #expect(early.entitlements.first?.expiresDate == F.at(F.day(10)))
        }
        // A revocation signed at the same instant wins over both.
        let revoked = try Self.transaction(signedDate: signed, expires: F.day(30), revoked: F.day(2))
        for order in [[short, revoked, long], [long, revoked, short], [revoked, long, short]] {
            #expect(try F.entitlements(F.ledger(order), F.account, at: F.day(5)).entitlements.isEmpty)
        }
        // A later signature wins whatever it grants.
        let renewed = try Self.transaction(signedDate: signed + 1, expires: F.day(30))
        #expect(try F.entitlements(F.ledger([renewed, short]), F.account, at: F.day(15)).entitlements.count == 1)
    }

    /// Two grant statements signed at one instant: the one that ends wins over the one without
    /// an end, and the earlier end over the later.
    @Test func ofTwoGrantStatementsSignedAtOnceTheEarlierEndWins() throws {
        let account = AccountKey(environment: .production, appAccountToken: "u-1")
        func grant(expires: Int64?) -> EntitlementGrant {
            EntitlementGrant(
                source: EntitlementSource(rawValue: "manual"), id: "G-1", account: account, productId: "pro",
                startDate: F.at(F.day(0)), expiresDate: expires.map(F.at), signedDate: F.at(F.day(0)))
        }
        let grants = [grant(expires: nil), grant(expires: F.day(20)), grant(expires: F.day(10))]
        for order in [grants, grants.reversed(), [grants[1], grants[0], grants[2]]] {
            var ledger = EntitlementLedger()
            for item in order { ledger.add(item) }
            #expect(
                ledger.entitlements(of: account, at: F.at(F.day(5)))?.entitlements.first?.expiresDate == F.at(F.day(10))
            )
            #expect(ledger.entitlements(of: account, at: F.at(F.day(15)))?.entitlements == [])
        }
    }

    /// Two Stripe subscription objects created in the same second: the one whose status grants
    /// nothing wins, whatever the event ids (which alone would pick `evt_b`, the active one).
    @Test func ofTwoStripeEventsCreatedInOneSecondTheOneThatGrantsLessWins() throws {
        let account = AccountKey(environment: .sandbox, appAccountToken: S.account)
        let canceled = S.subscription(status: "canceled", created: 200, periodEnd: 1_000, eventId: "evt_a")
        let active = S.subscription(status: "active", created: 200, periodEnd: 1_000, eventId: "evt_b")
        for order in [[canceled, active], [active, canceled]] {
            #expect(
                try S.ledger(order).entitlements(of: account, at: Timestamp(milliseconds: 300_000))?.entitlements == [])
        }
        // Of two that both grant, the earlier end.
        let short = S.subscription(status: "active", created: 200, periodEnd: 500, eventId: "evt_d")
        let long = S.subscription(status: "active", created: 200, periodEnd: 1_000, eventId: "evt_c")
        for order in [[short, long], [long, short]] {
            let answer = try S.ledger(order).entitlements(of: account, at: Timestamp(milliseconds: 300_000))
            #expect(answer?.entitlements.first?.expiresDate == Timestamp(milliseconds: 500_000))
        }
    }
}
