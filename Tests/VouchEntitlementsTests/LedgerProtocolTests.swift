import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Every ledger answers through one protocol: code written against `LedgerReading` gives the
/// same answers from memory and from a store; one user's answer spans environments.
@Suite struct LedgerProtocolTests {
    typealias F = LedgerFixtures

    static let catalog = ProductCatalog(tiers: [
        .init(name: "plus", rank: 1, products: ["com.example.plus.monthly"]),
        .init(name: "pro", rank: 2, products: ["com.example.pro.monthly"]),
    ])

    /// The same user with a Production subscription to plus and a Sandbox (TestFlight) one to pro.
    static func ledger() throws -> EntitlementLedger {
        var production = MintHistory(environment: .production, appAccountToken: F.account)
        production.purchase(
            "com.example.plus.monthly", type: .autoRenewableSubscription, at: F.time(1), price: 4_990,
            expires: F.time(31))
        var sandbox = MintHistory(environment: .sandbox, appAccountToken: F.account, firstTransactionId: 3_000)
        sandbox.purchase(
            "com.example.pro.monthly", type: .autoRenewableSubscription, at: F.time(2), price: 9_990,
            expires: F.time(32))
        return try F.ledger(production, sandbox, catalog: catalog)
    }

    /// What a server asks, written once for any ledger.
    static func answers<L: LedgerReading>(_ ledger: L) throws(L.Failure) -> [String] {
        let at = Date(timeIntervalSince1970: Double(F.day(10)) / 1000)
        var lines = try ledger.entitlements(at: at).map {
            JSONWriter.string($0.json(at: Timestamp(at), includeTier: true))
        }
        lines += try ledger.accounts(inTier: "pro", at: at).map(\.description)
        lines += try ledger.accounts(entitledTo: "com.example.plus.monthly", at: at).map(\.description)
        lines += try ledger.accounts(matching: UUID(uuidString: F.account)!).map(\.description)
        lines += try ledger.revocations().map { JSONWriter.string($0.json) }
        // Found and answered in one call (a store: in one read transaction), by the token in
        // upper case, by an `originalTransactionId`, and by an id no account has.
        for identifier in [F.account.uppercased(), "3000", "nobody"] {
            let found = try ledger.entitlements(ofAccountsMatching: identifier, at: Timestamp(at))
            let answers = found.map { JSONWriter.string($0.json(at: Timestamp(at), includeTier: true)) }
            lines.append("\(identifier): \(answers.count) \(answers.joined(separator: " "))")
        }
        let user = try ledger.entitlements(ofUser: F.account.uppercased(), at: Timestamp(at))
        lines.append("\(user.tier?.name ?? "-") \(user.tierEnvironment?.rawValue ?? "-") \(user.entitlements.count)")
        return lines
    }

    @Test func codeWrittenAgainstTheProtocolAnswersAlikeFromMemoryAndFromAStore() throws {
        let memory = try Self.ledger()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-protocol-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try LedgerStore(path: path, catalog: Self.catalog)
        try store.add(contentsOf: memory)
        let fromMemory = Self.answers(memory)  // no `try`: memory cannot fail
        #expect(fromMemory.count == 10)
        // Each identifier's line begins with how many accounts it named.
        #expect(
            fromMemory[6...8].map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == [
                "\(F.account.uppercased()): 2", "3000: 1", "nobody: 0",
            ])
        #expect(try Self.answers(store) == fromMemory)
        for account in memory.accounts {
            #expect(try store.changeInstants(of: account) == memory.changeInstants(of: account))
        }
    }

    @Test func oneUsersAnswerSpansEnvironmentsWithATierOverThoseThatCount() throws {
        let ledger = try Self.ledger()
        let every = ledger.entitlements(ofUser: F.account, at: F.time(10))
        #expect(every.environments.map(\.account.environment) == [.production, .sandbox])
        #expect(every.entitlements.map(\.environment) == [.production, .sandbox])
        #expect(
            every.entitlements.map(\.entitlement.productId) == ["com.example.plus.monthly", "com.example.pro.monthly"])
        #expect(every.tier?.name == "pro")
        #expect(every.tierEnvironment == .sandbox)

        let productionOnly = ledger.entitlements(ofUser: F.account, at: F.time(10), tierEnvironments: [.production])
        #expect(productionOnly.environments.count == 2)
        #expect(productionOnly.tier?.name == "plus")
        #expect(productionOnly.tierEnvironment == .production)

        let asked = ledger.entitlements(ofUser: F.account, at: F.time(10), environments: [.sandbox])
        #expect(asked.environments.map(\.account.environment) == [.sandbox])
        #expect(ledger.entitlements(ofUser: "nobody", at: F.time(10)).environments.isEmpty)
    }
}

/// A store closes: its connection goes, and every later call says so.
@Suite struct LedgerStoreCloseTests {
    @Test func aClosedStoreRefusesEveryCallWithCannotOpenAndClosesOnce() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-close-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try LedgerStore(path: path)
        try store.add(
            EntitlementGrant(
                source: EntitlementSource(rawValue: "manual"), id: "g1",
                account: AccountKey(environment: .production, appAccountToken: LedgerFixtures.account),
                productId: "pro",
                startDate: Timestamp(milliseconds: 0), expiresDate: nil, signedDate: Timestamp(milliseconds: 1)))
        #expect(try store.accounts().count == 1)
        store.close()
        store.close()
        do {
            _ = try store.accounts()
            Issue.record("a closed store answered")
        } catch {
            #expect(error.code == .cannotOpen)
        }
        // The file is whole: another store opens it and answers.
        #expect(try LedgerStore(path: path, access: .readOnly).accounts().count == 1)
    }
}
