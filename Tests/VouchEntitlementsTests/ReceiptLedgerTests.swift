import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchReceipts

/// Receipts in the ledger: their purchases stand for transactions no signed statement is known
/// of, their cancellations revoke, they never restore; accounts a caller names, and the refusal
/// of a second claimant.
struct ReceiptLedgerTests {
    typealias F = LedgerFixtures

    static let authority: MintReceiptAuthority = try! MintReceiptAuthority.generate(.init(validity: F.validity))
    static let verifier: ReceiptVerifier = {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try! authority.anchorCertificate()]
        return try! ReceiptVerifier(configuration: configuration)
    }()

    static let lifetime = "com.example.pro.lifetime"
    static let monthly = "com.example.plus.monthly"

    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }

    /// A verified Sandbox receipt created at `created` holding `purchases`.
    static func receipt(created: Int64, _ purchases: [MintInAppPurchase]) throws -> VerifiedReceipt {
        var content = MintReceiptContent(receiptCreationDate: date(created))
        content.bundleId = "com.example.app"
        content.inApp = purchases
        return try verifier.verify(try MintReceiptSigner(authority: authority).sign(content))
    }

    static func purchase(
        _ productId: String, id: String, chain: String? = nil, at purchased: Int64, expires: Int64? = nil,
        cancelled: Int64? = nil
    ) -> MintInAppPurchase {
        var purchase = MintInAppPurchase(productId: productId, transactionId: id, purchaseDate: date(purchased))
        purchase.originalTransactionId = chain ?? id
        purchase.subscriptionExpirationDate = expires.map(date)
        purchase.cancellationDate = cancelled.map(date)
        return purchase
    }

    /// A Sandbox history of one lifetime purchase on day 1, with ids from 2000000000000000.
    static func lifetimeHistory(token: String? = nil) -> (MintHistory, MintHistory.Transaction) {
        var history = MintHistory(environment: .sandbox, appAccountToken: token)
        let bought = history.purchase(lifetime, type: .nonConsumable, at: F.time(1), price: 29_990, notify: false)
        return (history, bought)
    }

    static let chainAccount = AccountKey(environment: .sandbox, originalTransactionId: "2000000000000000")

    @Test func aReceiptsPurchasesAreEntitlementsOfTheirChains() throws {
        let receipt = try Self.receipt(
            created: F.day(20),
            [
                Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1)),
                Self.purchase(Self.monthly, id: "2000000000000001", at: F.day(2), expires: F.day(33)),
                Self.purchase(
                    Self.monthly, id: "2000000000000002", chain: "2000000000000001", at: F.day(33),
                    expires: F.day(61)),
            ])
        var ledger = EntitlementLedger()
        ledger.add(receipt)
        #expect(ledger.statistics.receipts == 1)
        #expect(ledger.statistics.transactions == 3)
        #expect(ledger.chainCount == 2)
        let answer = try #require(ledger.entitlements(of: Self.chainAccount, at: F.at(F.day(40))))
        #expect(answer.entitlements.map(\.productId) == [Self.lifetime])
        #expect(answer.entitlements.first?.type == .nonConsumable)
        let subscription = try F.entitlements(ledger, "2000000000000001", at: F.day(40))
        #expect(subscription.account.environment == .sandbox)
        #expect(subscription.entitlements.map(\.transactionId) == ["2000000000000002"])
        #expect(subscription.entitlements.first?.expiresDate?.milliseconds == F.day(61))
        #expect(try F.entitlements(ledger, "2000000000000001", at: F.day(61)).entitlements.isEmpty)
    }

    @Test func aTransactionKnownFromSignedDataFollowsTheNewestSignedStatement() throws {
        var (history, bought) = Self.lifetimeHistory()
        history.restate(bought, at: F.time(5))
        // The receipt, created later, states another product for the transaction: the signed
        // statement stays in force.
        let receipt = try Self.receipt(
            created: F.day(30), [Self.purchase("com.example.other", id: bought.transactionId, at: F.day(1))])
        var ledger = try F.ledger(history)
        ledger.add(receipt)
        let answer = try #require(ledger.entitlements(of: Self.chainAccount, at: F.at(F.day(40))))
        #expect(answer.entitlements.map(\.productId) == [Self.lifetime])
        #expect(ledger.transactionCount == 1)
    }

    @Test func aReceiptNeverRestoresARevokedTransaction() throws {
        var (history, bought) = Self.lifetimeHistory()
        history.refund(bought, at: F.time(10))
        let receipt = try Self.receipt(
            created: F.day(30), [Self.purchase(Self.lifetime, id: bought.transactionId, at: F.day(1))])
        var ledger = try F.ledger(history)
        ledger.add(receipt)
        #expect(try #require(ledger.entitlements(of: Self.chainAccount, at: F.at(F.day(40)))).entitlements.isEmpty)
        #expect(ledger.revocations().map(\.state) == [.revoked])

        // Receipt only: an older receipt's cancellation stays, whatever a newer receipt omits.
        var receipts = EntitlementLedger()
        receipts.add(
            try Self.receipt(
                created: F.day(12),
                [Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1), cancelled: F.day(10))]
            ))
        receipts.add(
            try Self.receipt(created: F.day(30), [Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1))]))
        #expect(try #require(receipts.entitlements(of: Self.chainAccount, at: F.at(F.day(40)))).entitlements.isEmpty)
    }

    @Test func aReceiptsCancellationRevokesFromItsDate() throws {
        // A receipt alone: the cancellation is a refund without a type or amount.
        var ledger = EntitlementLedger()
        ledger.add(
            try Self.receipt(
                created: F.day(12),
                [Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1), cancelled: F.day(10))]
            ))
        let chain = Self.chainAccount
        #expect(try #require(ledger.entitlements(of: chain, at: F.at(F.day(9)))).entitlements.count == 1)
        #expect(try #require(ledger.entitlements(of: chain, at: F.at(F.day(10)))).entitlements.isEmpty)
        let revocation = try #require(ledger.revocations().first)
        #expect(revocation.kind == .refund)
        #expect(revocation.state == .revoked)
        #expect(revocation.revocationDate.milliseconds == F.day(10))
        #expect(revocation.revocationType == nil)
        #expect(revocation.refundedAmount == nil)

        // After a signed statement: a receipt created later revokes it.
        let (history, bought) = Self.lifetimeHistory()
        var signed = try F.ledger(history)
        signed.add(
            try Self.receipt(
                created: F.day(12),
                [Self.purchase(Self.lifetime, id: bought.transactionId, at: F.day(1), cancelled: F.day(10))]
            ))
        #expect(try #require(signed.entitlements(of: chain, at: F.at(F.day(11)))).entitlements.isEmpty)
        #expect(signed.revocations().map(\.state) == [.revoked])
    }

    @Test func aSignedStatementNewerThanTheReceiptsCancellationIsInForce() throws {
        // Signed on day 20 without a revocation (a refund reversed), after a receipt of day 12
        // that showed the cancellation: access is restored, and the revocation shows reversed.
        var (history, bought) = Self.lifetimeHistory()
        history.restate(bought, at: F.time(20))
        var ledger = try F.ledger(history)
        ledger.add(
            try Self.receipt(
                created: F.day(12),
                [Self.purchase(Self.lifetime, id: bought.transactionId, at: F.day(1), cancelled: F.day(10))]
            ))
        #expect(try #require(ledger.entitlements(of: Self.chainAccount, at: F.at(F.day(11)))).entitlements.count == 1)
        let revocation = try #require(ledger.revocations().first)
        #expect(revocation.state == .reversed)
        #expect(revocation.reversedDate?.milliseconds == F.day(20))
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func receiptsAndSignedDataInAnyOrderGiveTheSameAnswer(seed: UInt64) throws {
        var (history, bought) = Self.lifetimeHistory()
        let plus = history.purchase(
            Self.monthly, type: .autoRenewableSubscription, at: F.time(2), price: 4_990, expires: F.time(33))
        history.refund(bought, at: F.time(15))
        history.reverseRefund(bought, at: F.time(25))
        enum Input {
            case token(VerifiedPayload)
            case receipt(VerifiedReceipt)
        }
        var inputs = try history.tokens(signer: F.signer).map { Input.token(try F.verifier.verify($0)) }
        inputs.append(
            .receipt(
                try Self.receipt(
                    created: F.day(18),
                    [
                        Self.purchase(Self.lifetime, id: bought.transactionId, at: F.day(1), cancelled: F.day(15)),
                        Self.purchase(Self.monthly, id: plus.transactionId, at: F.day(2), expires: F.day(33)),
                        Self.purchase(
                            Self.monthly, id: "2000000000000100", chain: plus.transactionId, at: F.day(33),
                            expires: F.day(64)),
                    ])))
        inputs.append(
            .receipt(
                try Self.receipt(
                    created: F.day(3), [Self.purchase(Self.lifetime, id: bought.transactionId, at: F.day(1))])))
        func answers(_ inputs: [Input]) -> String {
            var ledger = EntitlementLedger()
            for input in inputs {
                switch input {
                case .token(let payload): ledger.add(payload)
                case .receipt(let receipt): ledger.add(receipt)
                }
            }
            return [F.day(10), F.day(20), F.day(40)].map { F.output(ledger, at: $0) }.joined()
                + ledger.revocations().map { JSONWriter.string($0.json) }.joined(separator: "\n")
        }
        let expected = answers(inputs)
        #expect(expected.contains("2000000000000100"))
        #expect(expected.contains("\"state\":\"reversed\""))
        #expect(answers(LedgerDeterminismTests.shuffled(inputs + inputs.prefix(2), seed: seed)) == expected)
    }

    @Test func aCallerNamedAccountOwnsTheReceiptsChains() throws {
        let receipt = try Self.receipt(
            created: F.day(20), [Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1))])
        var ledger = EntitlementLedger()
        try ledger.add(receipt, account: UUID(uuidString: F.account)!)
        let account = AccountKey(environment: .sandbox, appAccountToken: UUID(uuidString: F.account)!)
        #expect(ledger.accounts == [account])
        #expect(ledger.entitlements(of: account, at: F.at(F.day(30)))?.entitlements.map(\.productId) == [Self.lifetime])
        // The same account again is fine; another is refused, and nothing of it is added.
        try ledger.add(receipt, account: UUID(uuidString: F.account)!)
        let second = try Self.receipt(
            created: F.day(25),
            [
                Self.purchase(Self.monthly, id: "2000000000000005", at: F.day(21), expires: F.day(52)),
                Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1)),
            ])
        let before = F.output(ledger, at: F.day(30))
        let error = #expect(throws: LedgerError.self) {
            try ledger.add(second, account: UUID(uuidString: F.otherAccount)!)
        }
        #expect(error?.code == .accountConflict)
        #expect(error?.reason.contains("2000000000000000") == true)
        #expect(F.output(ledger, at: F.day(30)) == before)
        #expect(ledger.chainCount == 1)
    }

    @Test func aChainWhoseSignedDataNamesAnAccountIsRefusedToAnother() throws {
        let (history, bought) = Self.lifetimeHistory(token: F.account)
        var ledger = try F.ledger(history)
        let receipt = try Self.receipt(
            created: F.day(20), [Self.purchase(Self.lifetime, id: bought.transactionId, at: F.day(1))])
        let error = #expect(throws: LedgerError.self) {
            try ledger.add(receipt, account: UUID(uuidString: F.otherAccount)!)
        }
        #expect(error?.code == .accountConflict)
        try ledger.add(receipt, account: UUID(uuidString: F.account)!)

        // A payload carrying another account's token is refused for this one.
        let (other, _) = Self.lifetimeHistory(token: F.otherAccount)
        let payload = try F.verifier.verify(try other.tokens(signer: F.signer)[0])
        var fresh = EntitlementLedger()
        let refused = #expect(throws: LedgerError.self) {
            try fresh.add(payload, account: UUID(uuidString: F.account)!)
        }
        #expect(refused?.code == .accountConflict)
        #expect(fresh.chainCount == 0)
        try fresh.add(payload, account: UUID(uuidString: F.otherAccount)!)
        #expect(fresh.accounts.map(\.appAccountToken) == [F.otherAccount])
    }

    @Test func theTokenAppleSignedOutranksAClaim() throws {
        var ledger = EntitlementLedger()
        try ledger.add(
            try Self.receipt(created: F.day(20), [Self.purchase(Self.lifetime, id: "2000000000000000", at: F.day(1))]),
            account: UUID(uuidString: F.otherAccount)!)
        let (history, _) = Self.lifetimeHistory(token: F.account)
        for token in try history.tokens(signer: F.signer) { ledger.add(try F.verifier.verify(token)) }
        #expect(ledger.accounts.map(\.appAccountToken) == [F.account])
    }
}
