import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// `changeInstants(of:)`: between two of an account's change instants its answer stays the
/// same, so answering only at them gives every instant's answer.
struct ChangeInstantsTests {
    typealias F = LedgerFixtures

    /// The answer at `instant` by the latest change instant at or before it (nothing before
    /// the first).
    static func carried(_ ledger: EntitlementLedger, _ account: AccountKey, _ changes: [Timestamp], at instant: Int64)
        -> [Entitlement]
    {
        guard let change = changes.last(where: { $0.milliseconds <= instant }) else { return [] }
        return ledger.entitlements(of: account, at: change)?.entitlements ?? []
    }

    @Test func theAnswerJustBeforeEachChangeInstantIsTheAnswerAtThePreviousOne() throws {
        let ledger = KeyedLedgerTests.fixture.ledger
        var checked = 0
        for account in ledger.accounts {
            let changes = ledger.changeInstants(of: account)
            #expect(changes.map(\.milliseconds) == Set(changes.map(\.milliseconds)).sorted(), "\(account)")
            #expect(!changes.isEmpty, "\(account)")
            let first = try #require(changes.first)
            #expect(
                ledger.entitlements(of: account, at: Timestamp(milliseconds: first.milliseconds - 1))?.entitlements
                    == [],
                "\(account) before its first change")
            for (before, next) in zip(changes, changes.dropFirst()) {
                let justBefore = Timestamp(milliseconds: next.milliseconds - 1)
                #expect(
                    ledger.entitlements(of: account, at: justBefore)?.entitlements
                        == ledger.entitlements(of: account, at: before)?.entitlements,
                    "\(account) between \(before.iso8601) and \(next.iso8601)")
                checked += 1
            }
        }
        #expect(checked > 400)
    }

    @Test func everyHalfDayIsAnsweredByTheLatestChangeInstantBeforeIt() {
        let ledger = KeyedLedgerTests.fixture.ledger
        var differing: [String] = []
        var entitled = 0
        for account in ledger.accounts {
            let changes = ledger.changeInstants(of: account)
            for half in -20..<400 {
                let instant = F.day(Int64(half) / 2, hours: Int64(half % 2) * 12)
                let answer = ledger.entitlements(of: account, at: Timestamp(milliseconds: instant))?.entitlements ?? []
                if !answer.isEmpty { entitled += 1 }
                if answer != Self.carried(ledger, account, changes, at: instant) {
                    differing.append("\(account) at \(Timestamp(milliseconds: instant).iso8601)")
                }
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(5))")
        #expect(entitled > 1000)
    }

    /// The two-channel story (App Store and Stripe, a failed card, a refund, a cancellation),
    /// every six hours from before its first step to after its web period's end.
    @Test(arguments: MintStripe.APIVersion.allCases)
    func theTwoChannelStoryIsAnsweredByItsChangeInstants(api: MintStripe.APIVersion) throws {
        let scenario = try StripeLedgerTests.scenario(api)
        let moments = scenario.moments
        let ledger = try StripeLedgerTests.ledger(scenario, through: Timestamp(milliseconds: .max))
        let accounts = ledger.accounts
        #expect(!accounts.isEmpty)
        let step: Int64 = 6 * 3_600_000
        var entitled = 0
        for account in accounts {
            let changes = ledger.changeInstants(of: account)
            var instant = moments.webPlus.milliseconds - 2 * F.dayLength
            while instant < moments.webPeriodEnd.milliseconds + 2 * F.dayLength {
                let answer = ledger.entitlements(of: account, at: Timestamp(milliseconds: instant))?.entitlements ?? []
                if answer.contains(where: { $0.source == .stripe }) { entitled += 1 }
                #expect(
                    answer == Self.carried(ledger, account, changes, at: instant),
                    "\(account) at \(Timestamp(milliseconds: instant).iso8601)")
                instant += step
            }
        }
        #expect(entitled > 10)
    }

    @Test func anUnknownAccountHasNoChangeInstants() {
        let ledger = KeyedLedgerTests.fixture.ledger
        #expect(ledger.changeInstants(of: AccountKey(environment: .production, originalTransactionId: "0")).isEmpty)
    }
}
