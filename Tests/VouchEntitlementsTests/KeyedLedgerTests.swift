import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// The ledger's indexes: every lookup answers what a scan of every account answers, and they
/// follow a chain when a newer statement moves it to another account.
struct KeyedLedgerTests {
    typealias F = LedgerFixtures

    /// The determinism fixture (every kind of event, both environments) and 120 generated
    /// accounts, with every transaction's id and chain.
    static let fixture: (ledger: EntitlementLedger, transactions: [(id: String, chain: String, environment: String)]) =
        {
            let generator = MintHistoryGenerator(seed: 29, date: Date(timeIntervalSince1970: 1_780_272_000))
            let histories = LedgerDeterminismTests.histories() + (0..<120).map { generator.history($0) }
            var ledger = EntitlementLedger(catalog: LedgerDeterminismTests.catalog)
            var transactions: [(String, String, String)] = []
            for history in histories {
                for item in history.items {
                    let payloads: [JSONObject]
                    switch item {
                    case .transaction(let payload): payloads = [payload]
                    case .renewalInfo: payloads = []
                    case .notification(_, let transaction, _): payloads = transaction.map { [$0] } ?? []
                    }
                    for payload in payloads {
                        transactions.append(
                            (
                                payload["transactionId"]!.stringValue!, payload["originalTransactionId"]!.stringValue!,
                                payload["environment"]!.stringValue!
                            ))
                    }
                }
                for token in try! history.tokens(signer: F.signer) { ledger.add(try! F.verifier.verify(token)) }
            }
            return (ledger, transactions)
        }()

    static let instant = Timestamp(milliseconds: F.day(60))

    @Test func everyLookupAnswersWhatAScanOfEveryAccountAnswers() throws {
        let ledger = Self.fixture.ledger
        let all = ledger.entitlements(at: Self.instant)
        #expect(all.count > 100)
        #expect(all.map(\.account) == ledger.accounts)
        var identifiers = Set<String>()
        for answer in all {
            #expect(ledger.entitlements(of: answer.account, at: Self.instant) == answer)
            if let token = answer.account.appAccountToken {
                identifiers.insert(token)
                identifiers.insert(token.uppercased())
            }
            identifiers.formUnion(answer.originalTransactionIds)
        }
        identifiers.insert("no such account")
        for identifier in identifiers {
            let scanned = all.filter {
                $0.account.appAccountToken == identifier.lowercased() || $0.originalTransactionIds.contains(identifier)
            }.map(\.account)
            #expect(ledger.accounts(matching: identifier) == scanned, "accounts(matching: \(identifier))")
            if let uuid = UUID(uuidString: identifier) {
                #expect(
                    ledger.accounts(matching: uuid)
                        == all.filter { $0.account.appAccountTokenUUID == uuid }.map(\.account))
            }
        }
        for transaction in Self.fixture.transactions {
            let scanned = all.filter {
                $0.account.environment.rawValue == transaction.environment
                    && $0.originalTransactionIds.contains(transaction.chain)
            }.map(\.account)
            #expect(ledger.accounts(withTransactionId: transaction.id) == scanned, "transaction \(transaction.id)")
        }
        #expect(ledger.accounts(withTransactionId: "1").isEmpty)
    }

    /// An account id is lowered exactly when Foundation's `UUID(uuidString:)` reads it, whatever
    /// its form: the ids written by hand around the 8-4-4-4-12 form, and thousands of UUIDs of
    /// random case with one character changed, deleted or added at random.
    @Test func anAccountIdIsLoweredExactlyWhenFoundationReadsItAsAUUID() {
        func expected(_ text: String) -> String { UUID(uuidString: text) != nil ? text.lowercased() : text }
        func kept(_ text: String) -> String? {
            AccountKey(environment: .production, appAccountToken: text).appAccountToken
        }
        let token = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
        #expect(kept(token.uppercased()) == token)
        #expect(kept(token) == token)
        let written = [
            "", "2000000000004000", "user-42", String(token.dropLast()), token + "0", token + " ", " " + token,
            "{" + token + "}", token.replacingOccurrences(of: "-", with: ""),
            token.replacingOccurrences(of: "-", with: "_"),
            String(token.prefix(8)) + String(token.dropFirst(8).prefix(1)) + "-" + String(token.dropFirst(10)),
            token.replacingOccurrences(of: "a", with: "g"), token.replacingOccurrences(of: "0", with: "\u{FF10}"),
            token + "\u{0}", String(token.dropLast()) + "\u{0}", "\u{301}" + token, token.uppercased() + "\u{301}",
        ]
        for text in written { #expect(kept(text) == expected(text), "\(text.debugDescription)") }
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFgG- {}\u{0}é")
        var lowered = 0
        for _ in 0..<5_000 {
            var bytes = Array(UUID().uuidString.map { Bool.random(using: &random) ? Character($0.lowercased()) : $0 })
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes[at] = alphabet.randomElement(using: &random)!
            case 1: bytes.remove(at: at)
            case 2: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
            default: break
            }
            let text = String(bytes)
            #expect(kept(text) == expected(text), "\(text.debugDescription)")
            if kept(text) != text { lowered += 1 }
        }
        #expect(lowered > 0)
    }

    @Test func anAccountKeyMadeByTheCallerFindsTheAccount() throws {
        let ledger = Self.fixture.ledger
        let token = "00000000-0000-4000-8000-000000000001"
        let byUUID = AccountKey(environment: .production, appAccountToken: UUID(uuidString: token)!)
        let byText = AccountKey(environment: .production, appAccountToken: token.uppercased())
        #expect(byUUID == byText)
        #expect(byUUID.appAccountToken == token)
        #expect(ledger.accounts(matching: token) == [byUUID])
        #expect(ledger.entitlements(of: byUUID, at: Self.instant)?.account == byUUID)
        // Account 4 of the fixture has no token: it is known by its chains.
        let chain = AccountKey(environment: .production, originalTransactionId: "2000000000004000")
        #expect(chain.appAccountToken == nil)
        #expect(ledger.accounts(matching: "2000000000004000") == [chain])
        #expect(ledger.entitlements(of: chain, at: Self.instant)?.originalTransactionIds == ["2000000000004000"])
        #expect(
            ledger.entitlements(of: AccountKey(environment: .sandbox, appAccountToken: token), at: Self.instant) == nil)
    }

    @Test func aChainMovesToTheAccountItsNewestTokenNames() throws {
        var history = MintHistory()
        let first = history.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: F.time(0), price: 4_990,
            expires: F.time(31))
        let purchaseItems = history.items.count
        var before = EntitlementLedger()
        for token in try history.tokens(signer: F.signer) { before.add(try F.verifier.verify(token)) }
        let chainAccount = AccountKey(environment: .production, originalTransactionId: first.originalTransactionId)
        #expect(before.accounts == [chainAccount])

        // The app starts sending the account id: the renewal carries it.
        var renewal = first
        renewal.payload["appAccountToken"] = .string(F.account)
        history.renew(renewal, until: F.time(62))
        let ledger = try F.ledger(history)
        let tokenAccount = AccountKey(environment: .production, appAccountToken: F.account)
        #expect(ledger.accounts == [tokenAccount])
        #expect(ledger.accounts(matching: first.originalTransactionId) == [tokenAccount])
        #expect(ledger.accounts(withTransactionId: first.transactionId) == [tokenAccount])
        #expect(ledger.entitlements(of: chainAccount, at: F.at(F.day(40))) == nil)
        #expect(ledger.entitlements(of: tokenAccount, at: F.at(F.day(40)))?.entitlements.count == 1)

        // Fed in the other order, or merged from parts, the indexes end the same.
        let tokens = try history.tokens(signer: F.signer)
        var reversed = EntitlementLedger()
        for token in tokens.reversed() { reversed.add(try F.verifier.verify(token)) }
        #expect(reversed.accounts == [tokenAccount])
        var merged = before
        var rest = EntitlementLedger()
        for token in tokens.dropFirst(purchaseItems) {
            rest.add(try F.verifier.verify(token))
        }
        merged.merge(rest)
        #expect(merged.accounts == [tokenAccount])
        #expect(F.output(merged, at: F.day(40)) == F.output(ledger, at: F.day(40)))
    }

    @Test func theDateQuestionsAnswerAsTheTimestampOnes() throws {
        let ledger = Self.fixture.ledger
        let date = Self.instant.date
        #expect(ledger.entitlements(at: date) == ledger.entitlements(at: Self.instant))
        let account = ledger.accounts[0]
        #expect(ledger.entitlements(of: account, at: date) == ledger.entitlements(of: account, at: Self.instant))
        #expect(
            ledger.accounts(entitledTo: "com.example.pro.monthly", at: date)
                == ledger.accounts(entitledTo: "com.example.pro.monthly", at: Self.instant))
        #expect(ledger.revocations(since: Date(timeIntervalSince1970: 0)) == ledger.revocations())
        #expect(ledger.revocations(since: nil) == ledger.revocations())
        #expect(ledger.accounts(inTier: "pro", at: date) == ledger.accounts(inTier: "pro", at: Self.instant))
        let pro = try #require(ledger.catalog.tier(named: "pro"))
        #expect(pro == ServiceTier(name: "pro", rank: 20))
        #expect(ledger.accounts(inTier: pro, at: date) == ledger.accounts(inTier: "pro", at: Self.instant))
        #expect(!ledger.accounts(inTier: pro, at: date).isEmpty)
    }

    @Test func tiersAreValuesOrderedByRank() throws {
        let plus = ServiceTier(name: "plus", rank: 10)
        let pro = ServiceTier(name: "pro", rank: 20)
        #expect(plus < pro)
        #expect([pro, plus].max() == pro)
        #expect(LedgerDeterminismTests.catalog.tier(named: "plus") == plus)
        #expect(LedgerDeterminismTests.catalog.tier(named: "gold") == nil)
        let answer = try #require(
            Self.fixture.ledger.entitlements(at: Self.instant).first { $0.tier != nil })
        #expect(answer.tier?.tier == ServiceTier(name: answer.tier!.name, rank: answer.tier!.rank))
    }

    @Test func aTypedVerifiedPayloadGoesInAsItsUntypedOne() throws {
        var history = MintHistory(appAccountToken: F.account)
        history.purchase("com.example.pro.lifetime", type: .nonConsumable, at: F.time(1), price: 29_990, notify: false)
        let token = try history.tokens(signer: F.signer)[0]
        var typed = EntitlementLedger()
        typed.add(try F.verifier.verify(token, as: JWSTransactionDecodedPayload.self))
        let untyped = try F.ledger(history)
        #expect(F.output(typed, at: F.day(2)) == F.output(untyped, at: F.day(2)))
        #expect(typed.transactionCount == 1)
    }
}
