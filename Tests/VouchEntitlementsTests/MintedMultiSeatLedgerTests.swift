import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// The team plans `vouch mint history --story multiseat` and `multiseat-claims` mint, fed to a
/// ledger: the purchaser's entitlement counts the period's seats and keeps access through a seat
/// refund, listed as a seat refund; each member is an account of their own.
@Suite struct MintedMultiSeatLedgerTests {
    typealias F = LedgerFixtures

    static let end = MintDate.parse("2026-06-01T00:00:00Z")!
    static let endMilliseconds = Int64(end.timeIntervalSince1970 * 1000)
    static let day: Int64 = 86_400_000

    /// A generator of team plans, and its first account with an `appAccountToken`.
    static func plan(_ story: String) throws -> (generator: MintHistoryGenerator, index: Int, token: String) {
        var generator = MintHistoryGenerator(seed: 8, date: end, environment: .sandbox)
        generator.story = story
        let index = try #require((0..<10).first { generator.appAccountToken(of: $0) != nil })
        return (generator, index, try #require(generator.appAccountToken(of: index)))
    }

    /// The `purchaseDate` of the history's first transaction: the day the plan was bought.
    static func start(_ history: MintHistory) throws -> Int64 {
        guard case .notification(_, let transaction?, _) = try #require(history.items.first) else {
            Issue.record("the history does not start with a notification")
            return 0
        }
        return try #require(transaction["purchaseDate"]?.int64Value)
    }

    @Test func aMintedTeamPlanGivesThePurchaserItsSeatsAndEachMemberAnAccount() throws {
        let (generator, index, token) = try Self.plan("multiseat")
        let history = generator.history(index)
        let start = try Self.start(history)
        let ledger = try F.ledger(history)
        func purchaser(_ days: Int64) throws -> [Entitlement] {
            try F.entitlements(ledger, token, at: start + days * Self.day).entitlements
        }

        // Five seats, then eight once three are added on day 10, in one period: so a ledger that
        // has seen the statements up to day 15 answers.
        #expect(try purchaser(5).map(\.seats) == [5])
        #expect(try purchaser(5).map(\.invitationManagement) == [.apple])
        let tokens = try history.tokens(signer: F.signer)
        let known = zip(history.items, tokens).filter { $0.0.signedDate.milliseconds <= start + 15 * Self.day }
        let early = F.ledger(try known.map { try F.verifier.verify($0.1) })
        let eight = try F.entitlements(early, token, at: start + 15 * Self.day).entitlements
        #expect(eight.map(\.seats) == [8])
        #expect(eight.map(\.ownership) == [.purchased])
        #expect(early.revocations() == [])
        // The full history: the newest statement of the added seats (two refunded) answers for
        // every instant of the period, as the ledger's rule is.
        #expect(try purchaser(15).map(\.seats) == [6])
        // Two seats refunded on day 20: six seats, and the purchaser keeps access.
        let refunded = try purchaser(22)
        #expect(refunded.map(\.state) == [.active])
        #expect(refunded.map(\.seats) == [6])
        #expect(refunded.map(\.invitationManagement) == [.apple])
        #expect(refunded.first?.expiresDate == F.at(start + 30 * Self.day))
        // Four seats renew from day 30, through the end.
        #expect(try purchaser(31).map(\.seats) == [4])
        let atEnd = try F.entitlements(ledger, token, at: Self.endMilliseconds).entitlements
        #expect(atEnd.map(\.seats) == [4])
        #expect(atEnd.map(\.state) == [.active])
        #expect(atEnd.map(\.productId) == ["com.example.team.monthly"])

        // The seat refund is listed as its own kind, and ends nothing.
        let refunds = ledger.revocations()
        #expect(refunds.map(\.kind) == [.seatRefund])
        #expect(refunds.map(\.revokedSeatQuantity) == [2])
        #expect(refunds.map(\.revocationDate) == [F.at(start + 20 * Self.day)])
        #expect(refunds.map(\.state) == [.revoked])
        #expect(JSONWriter.string(refunds[0].json).contains(#""kind":"seat_refund""#))

        // Each member is an account of their own, by their own token; one leaves at day 30.
        let members = generator.seatHolders(of: index).members
        let kept = try F.entitlements(ledger, members[0], at: start + 15 * Self.day).entitlements
        #expect(kept.map(\.ownership) == [.assigned])
        #expect(kept.map(\.seats) == [1])
        #expect(kept.map(\.invitationManagement) == [.apple])
        #expect(try F.entitlements(ledger, members[0], at: Self.endMilliseconds).entitlements.count == 1)
        let left = try F.entitlements(ledger, members[1], at: start + 15 * Self.day).entitlements
        #expect(left.map(\.ownership) == [.assigned])
        #expect(try F.entitlements(ledger, members[1], at: start + 31 * Self.day).entitlements == [])
        #expect(ledger.accounts.count == 3)
        #expect(Set(ledger.accounts.compactMap(\.appAccountToken)) == Set([token] + members))
    }

    @Test func aMintedTeamPlanWhoseAppHostsTheInvitationsRenewsFewerSeats() throws {
        let (generator, index, token) = try Self.plan("multiseat-claims")
        let history = generator.history(index)
        let start = try Self.start(history)
        let ledger = try F.ledger(history)
        let first = try F.entitlements(ledger, token, at: start + 25 * Self.day).entitlements
        #expect(first.map(\.seats) == [4])
        #expect(first.map(\.invitationManagement) == [.developer])
        let atEnd = try F.entitlements(ledger, token, at: Self.endMilliseconds).entitlements
        #expect(atEnd.map(\.seats) == [2])
        #expect(atEnd.map(\.state) == [.active])
        // Released claims are the app's to act on: no revocation, no other account.
        #expect(ledger.revocations() == [])
        #expect(ledger.accounts.count == 1)
    }
}
