import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchTestSupport

/// The same statements in any order, repeated or split, give byte-identical answers.
struct LedgerDeterminismTests {
    typealias F = LedgerFixtures

    static let catalog = ProductCatalog(
        tiers: [
            .init(name: "plus", rank: 10, products: ["com.example.plus.monthly"]),
            .init(
                name: "pro", rank: 20,
                products: ["com.example.pro.monthly", "com.example.pro.lifetime", "com.example.pro.trial"]),
        ],
        trialDays: ["com.example.pro.trial": 14], lengthDays: ["com.example.pass.month": 30])

    /// Several accounts living through every kind of event, in both environments.
    static func histories() -> [MintHistory] {
        var result: [MintHistory] = []
        for index in 0..<6 {
            let environment: AppStoreEnvironment = index % 3 == 2 ? .sandbox : .production
            let token = index == 4 ? nil : "00000000-0000-4000-8000-00000000000\(index)"
            var history = MintHistory(
                environment: environment, appAccountToken: token,
                firstTransactionId: 2_000_000_000_000_000 + Int64(index) * 1_000)
            let offset = Int64(index)
            let first = history.purchase(
                "com.example.plus.monthly", type: .autoRenewableSubscription, at: F.time(offset),
                price: 4_990, expires: F.time(offset + 31))
            let second = history.renew(first, until: F.time(offset + 59))
            let pro = history.upgrade(
                second, to: "com.example.pro.monthly", at: F.time(offset + 45), until: F.time(offset + 76), price: 9_990
            )
            if index % 2 == 0 {
                history.failRenewal(pro, graceUntil: F.time(offset + 92))
            } else {
                history.expire(pro)
            }
            let lifetime = history.purchase(
                "com.example.pro.lifetime", type: .nonConsumable, at: F.time(offset + 3), price: 29_990)
            history.refund(
                lifetime, at: F.time(offset + 20), reason: RevocationReason(rawValue: Int32(index % 2)),
                type: .refundProrated,
                percentage: 50_000 + Int32(index))
            if index % 3 == 0 { history.reverseRefund(lifetime, at: F.time(offset + 33)) }
            history.purchase("com.example.coins.100", type: .consumable, at: F.time(offset + 4), price: 999)
            history.purchase("com.example.pro.trial", type: .nonConsumable, at: F.time(offset + 1), price: 0)
            history.purchase(
                "com.example.pass.month", type: .nonRenewingSubscription, at: F.time(offset + 2), price: 2_990)
            let shared = history.shareWithFamily(lifetime, at: F.time(offset + 5))
            if index % 2 == 1 { history.revokeFamilySharing(shared, at: F.time(offset + 12)) }
            history.restate(first, at: F.time(offset + 100))
            result.append(history)
        }
        return result
    }

    static let payloads: [VerifiedPayload] = {
        try! histories().flatMap { try $0.tokens(signer: F.signer) }.map { try F.verifier.verify($0) }
    }()

    static let instants: [Int64] = [
        F.day(0), F.day(2, hours: 5), F.day(10), F.day(25), F.day(40), F.day(50), F.day(80), F.day(200),
    ]

    /// Everything the ledger answers, as the CLI writes it.
    static func answers(_ ledger: EntitlementLedger) -> String {
        var text = ""
        for instant in instants { text += F.output(ledger, at: instant, tiers: true) }
        let revocations = ledger.revocations()
        for revocation in revocations { text += JSONWriter.string(revocation.json) + "\n" }
        text += JSONWriter.string(RevocationSummary(revocations).json) + "\n"
        return text
    }

    /// A seeded shuffle, so a failure can be replayed.
    static func shuffled<T>(_ items: [T], seed: UInt64) -> [T] {
        var items = items
        var random = SeededRandom(seed: seed)
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(index, random.below(index + 1))
        }
        return items
    }

    @Test func theFixtureCoversEveryState() {
        let ledger = F.ledger(Self.payloads, catalog: Self.catalog)
        let answers = Self.answers(ledger)
        for state in [
            "\"active\"", "\"grace_period\"", "\"trial\"", "\"non_renewing\"", "\"reversed\"", "\"revoked\"",
            "\"family_revocation\"", "\"FAMILY_SHARED\"", "\"Sandbox\"", "\"tier\":{\"name\":\"pro\"",
        ] {
            #expect(answers.contains(state), "no \(state) in the answers")
        }
    }

    @Test(arguments: [1, 2, 3, 42, 1234] as [UInt64])
    func duplicateAndOutOfOrderInputGivesTheSameAnswerAsSortedInput(seed: UInt64) {
        let sorted = Self.payloads.sorted { $0.decodedSignedDate < $1.decodedSignedDate }
        let expected = Self.answers(F.ledger(sorted, catalog: Self.catalog))
        let noisy = Self.shuffled(Self.payloads + Self.payloads.prefix(Int(seed % 40) + 5), seed: seed)
        #expect(Self.answers(F.ledger(noisy, catalog: Self.catalog)) == expected)
        #expect(Self.answers(F.ledger(noisy.reversed(), catalog: Self.catalog)) == expected)
    }

    @Test(arguments: [2, 3, 7] as [Int])
    func ledgersOfAnySplitMergeToTheSameAnswer(parts: Int) {
        let expected = Self.answers(F.ledger(Self.payloads, catalog: Self.catalog))
        let shuffled = Self.shuffled(Self.payloads, seed: UInt64(parts))
        var merged = EntitlementLedger(catalog: Self.catalog)
        for part in 0..<parts {
            let slice = shuffled.enumerated().filter { $0.offset % parts == part }.map(\.element)
            merged.merge(F.ledger(slice))
        }
        #expect(Self.answers(merged) == expected)
        #expect(merged.statistics == F.ledger(Self.payloads).statistics)
    }

    @Test func memoryFollowsTransactionsNotTokens() {
        let once = F.ledger(Self.payloads)
        let thrice = F.ledger(Self.payloads + Self.payloads + Self.payloads)
        #expect(thrice.chainCount == once.chainCount)
        #expect(thrice.transactionCount == once.transactionCount)
        #expect(thrice.statistics.transactions == 3 * once.statistics.transactions)
        // 6 accounts: a subscription chain, a lifetime, a coin pack, a trial, a pass and a
        // family member's chain each.
        #expect(once.chainCount == 36)
    }
}

extension VerifiedPayload {
    /// The `signedDate` of the payload, for sorting.
    var decodedSignedDate: Int64 { payload["signedDate"]?.int64Value ?? 0 }
}
