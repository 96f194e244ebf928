import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchStripe

/// `revocations(of:)`: one account's revocations, from its own data, equal to the ledger-wide
/// answer's for that account, in memory and in the store; and a store of schema 1 brought to
/// schema 2 by its first writer.
@Suite struct AccountRevocationTests {
    typealias F = LedgerFixtures
    typealias S = StripeLedgerTests

    static let other = UUID(uuidString: "2B3C4D5E-6F70-4819-A2B3-C4D5E6F7A8B9")!

    /// An active subscription of `customer` for `account`, stated at `created`.
    static func subscription(_ id: String, customer: String, account: UUID, created: Int64) -> StripeDelivery {
        S.event(
            "customer.subscription.updated", created: created,
            object: [
                "id": .string(id), "object": "subscription", "customer": .string(customer), "status": "active",
                "start_date": 50, "metadata": ["account_id": .string(account.uuidString)],
                "items": [
                    "object": "list",
                    "data": [
                        [
                            "id": .string("si_\(id)"), "object": "subscription_item",
                            "price": ["id": "price_plus", "object": "price", "product": "prod_plus"],
                            "current_period_start": 50, "current_period_end": 5_000,
                        ]
                    ],
                ],
            ], eventId: "evt_\(id)_\(created)")
    }

    /// A full refund of the charge `id` of `customer`, naming `account` in its metadata when given.
    static func refund(_ id: String, customer: String, account: UUID? = nil, created: Int64) -> StripeDelivery {
        S.event(
            "charge.refunded", created: created,
            object: [
                "id": .string(id), "object": "charge", "amount": 999, "amount_refunded": 999, "currency": "usd",
                "customer": .string(customer),
                "metadata": .object(account.map { ["account_id": .string($0.uuidString)] } ?? [:]),
            ], eventId: "evt_\(id)")
    }

    /// App Store histories with refunds and reversals, the two-channel story, and a Stripe
    /// customer shared by two accounts with a refund of each kind.
    static func ledger() throws -> EntitlementLedger {
        var ledger = F.ledger(LedgerDeterminismTests.payloads)
        let story = try S.scenario(.basil)
        for delivery in story.deliveries {
            switch try S.verify(delivery) {
            case .appStore(let payload): ledger.add(payload)
            case .stripe(let event): ledger.add(event)
            }
        }
        for delivery in [
            subscription("sub_old", customer: "cus_shared", account: S.account, created: 100),
            subscription("sub_new", customer: "cus_shared", account: other, created: 200),
            refund("ch_by_customer", customer: "cus_shared", created: 300),
            refund("ch_by_metadata", customer: "cus_shared", account: S.account, created: 310),
            refund("ch_unknown", customer: "cus_nobody", created: 320),
        ] {
            ledger.add(try S.verified(delivery))
        }
        return ledger
    }

    /// The account a revocation is told with, as its members name it.
    static func owner(_ revocation: Revocation) -> AccountKey {
        revocation.appAccountToken.map { AccountKey(environment: revocation.environment, appAccountToken: $0) }
            ?? AccountKey(environment: revocation.environment, originalTransactionId: revocation.originalTransactionId)
    }

    @Test func anAccountsRevocationsAreTheLedgersForThatAccount() throws {
        let ledger = try Self.ledger()
        let all = ledger.revocations()
        #expect(all.contains { $0.source == .stripe } && all.contains { $0.source == .appStore })
        var told = 0
        for account in ledger.accounts {
            let mine = ledger.revocations(of: account)
            #expect(mine == all.filter { Self.owner($0) == account }, "\(account)")
            told += mine.count
        }
        // Every revocation but the charge of a customer no account is known by.
        #expect(told == all.count - 1)
        #expect(!ledger.accounts.contains(Self.owner(try #require(all.first { $0.transactionId == "ch_unknown" }))))
        // A charge goes to the account its metadata names, else to its customer's newest
        // subscription's account.
        let first = AccountKey(environment: .sandbox, appAccountToken: S.account)
        let second = AccountKey(environment: .sandbox, appAccountToken: Self.other)
        #expect(ledger.revocations(of: first).map(\.transactionId).contains("ch_by_metadata"))
        #expect(!ledger.revocations(of: first).map(\.transactionId).contains("ch_by_customer"))
        #expect(ledger.revocations(of: second).map(\.transactionId) == ["ch_by_customer"])
        #expect(ledger.revocations(of: AccountKey(environment: .production, appAccountToken: "nobody")) == [])
    }

    @Test func theStoreAnswersAnAccountsRevocationsAsTheLedger() throws {
        let ledger = try Self.ledger()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-revocations-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try LedgerStore(path: path, catalog: ledger.catalog)
        try store.add(contentsOf: ledger)
        #expect(try store.revocations() == ledger.revocations())
        for account in ledger.accounts {
            #expect(try store.revocations(of: account) == ledger.revocations(of: account), "\(account)")
        }
    }

    /// A store of schema 1 (no Stripe customer column, refunds without their account, no
    /// checksums) is refused by a reader, brought to the current schema by its first writer in
    /// one transaction, and then answers as a store made at the current schema.
    @Test func aStoreOfSchema1IsBroughtToSchema2ByItsFirstWriter() throws {
        let ledger = try Self.ledger()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-schema1-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let store = try LedgerStore(path: path, catalog: ledger.catalog)
            try store.add(contentsOf: ledger)
        }
        try LedgerStoreTests.sqlite(
            path,
            """
            \(LedgerStoreTests.unpackBodies)
            DROP INDEX channel_record_by_customer;
            ALTER TABLE channel_record DROP COLUMN customer;
            UPDATE channel_record SET account = NULL WHERE refund = 1;
            ALTER TABLE app_store_transaction DROP COLUMN checksum;
            ALTER TABLE app_store_renewal DROP COLUMN checksum;
            ALTER TABLE channel_record DROP COLUMN checksum;
            ALTER TABLE claim DROP COLUMN checksum;
            ALTER TABLE delivery DROP COLUMN checksum;
            DROP TABLE fed_input;
            PRAGMA user_version = 1;
            """)
        let refused = #expect(throws: LedgerError.self) {
            try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        }
        #expect(refused?.code == .cannotOpen)
        #expect(refused?.reason.contains("is a Vouch store of schema 1") == true)

        _ = try LedgerStore(path: path, catalog: ledger.catalog)
        let store = try LedgerStore(path: path, access: .readOnly, catalog: ledger.catalog)
        #expect(try store.statistics().schemaVersion == LedgerStore.schemaVersion)
        #expect(try store.revocations() == ledger.revocations())
        for account in ledger.accounts {
            #expect(try store.revocations(of: account) == ledger.revocations(of: account), "\(account)")
        }
    }
}
