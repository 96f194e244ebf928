import CSQLite
import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Apple's multiseat rules: a period several transactions represent (`additionalTransactionReason`)
/// ends only when every one of them is revoked, its seats are their quantities less the seats a
/// seat-based refund revoked, a seat-based refund never revokes the purchaser's access and is
/// listed as a refund of its own kind, and a member's `ASSIGNED` transaction is an account of
/// its own.
@Suite struct MultiSeatLedgerTests {
    typealias F = LedgerFixtures

    static let product = "com.example.team.monthly"
    static let chain = "4000000000000001"
    /// The chain of the seat-refund history.
    static let refundChain = "4000000000000201"
    static let member = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9"

    /// A transaction of a multiseat subscription expiring on day 30, as Apple signs it.
    static func transaction(
        _ id: String, chain: String = chain, purchased: Int64, signed: Int64, quantity: Int32,
        additional: Bool = true, revokedSeats: Int32? = nil, revoked: Int64? = nil, ownership: String = "PURCHASED",
        token: String? = F.account
    ) -> JSONObject {
        var seats: JSONObject = ["invitationManagement": "APPLE"]
        if let revokedSeats { seats["revokedSeatQuantity"] = .number(String(revokedSeats)) }
        var payload: JSONObject = [
            "transactionId": .string(id), "originalTransactionId": .string(chain), "bundleId": "com.example.app",
            "productId": .string(product), "subscriptionGroupIdentifier": "21000001",
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": .string(ownership),
            "purchaseDate": .number(String(purchased)), "expiresDate": .number(String(F.day(30))),
            "signedDate": .number(String(signed)), "environment": "Sandbox", "transactionReason": "PURCHASE",
            "quantity": .number(String(quantity)), "price": 9990, "currency": "USD", "multiSeatInfo": .object(seats),
        ]
        if additional { payload["additionalTransactionReason"] = "SEAT_ADDITION" }
        if let token { payload["appAccountToken"] = .string(token) }
        if let revoked {
            payload["revocationDate"] = .number(String(revoked))
            payload["revocationReason"] = 0
            payload["revocationType"] = "REFUND_FULL"
            payload["revocationPercentage"] = 100_000
        }
        return payload
    }

    /// A five-seat purchase made alone (no `additionalTransactionReason`), signed when purchased.
    static func fiveSeats(
        _ id: String, chain: String = chain, on day: Int64, ownership: String = "PURCHASED", token: String?
    ) throws -> VerifiedPayload {
        try verified(
            transaction(
                id, chain: chain, purchased: F.day(day), signed: F.day(day), quantity: 5, additional: false,
                ownership: ownership, token: token))
    }

    static func verified(_ payload: JSONObject) throws -> VerifiedPayload {
        try F.verifier.verify(try F.signer.sign(payload: payload))
    }

    /// A `REFUND` notification with subtype `SEATS` carrying `transaction`.
    static func seatRefund(_ transaction: JSONObject, signed: Int64) throws -> VerifiedPayload {
        let notification: JSONObject = [
            "notificationType": "REFUND", "subtype": "SEATS",
            "notificationUUID": .string("5b1f7e4e-0000-4000-8000-\(String(signed).suffix(12))"), "version": "2.0",
            "signedDate": .number(String(signed)),
            "data": .object([
                "environment": "Sandbox", "bundleId": "com.example.app",
                "signedTransactionInfo": .string(try F.signer.sign(payload: transaction)),
            ]),
        ]
        return try verified(notification)
    }

    /// Five seats bought on day 0, three added on day 10; the added ones refunded on day 12.
    static func seatAdditions(originalRevoked: Int64? = nil) throws -> [VerifiedPayload] {
        var payloads = [
            try verified(transaction("4000000000000001", purchased: F.day(0), signed: F.day(10), quantity: 5)),
            try verified(transaction("4000000000000002", purchased: F.day(10), signed: F.day(10), quantity: 3)),
            try verified(
                transaction(
                    "4000000000000002", purchased: F.day(10), signed: F.day(12), quantity: 3, revoked: F.day(12))),
        ]
        if let originalRevoked {
            payloads.append(
                try verified(
                    transaction(
                        "4000000000000001", purchased: F.day(0), signed: originalRevoked, quantity: 5,
                        revoked: originalRevoked)))
        }
        return payloads
    }

    /// Five seats bought on day 0, two of them refunded by seat on day 8, the same statement
    /// signed again on day 9.
    static func seatRefunds() throws -> [VerifiedPayload] {
        [
            try verified(
                transaction(
                    Self.refundChain, chain: Self.refundChain, purchased: F.day(0), signed: F.day(0), quantity: 5,
                    additional: false)),
            try seatRefund(
                transaction(
                    Self.refundChain, chain: Self.refundChain, purchased: F.day(0), signed: F.day(8), quantity: 5,
                    additional: false, revokedSeats: 2),
                signed: F.day(8)),
            try verified(
                transaction(
                    Self.refundChain, chain: Self.refundChain, purchased: F.day(0), signed: F.day(9), quantity: 5,
                    additional: false, revokedSeats: 2)),
        ]
    }

    @Test func aPeriodKeepsAccessWithTheSeatsOfItsTransactionsNotRevoked() throws {
        for order in [try Self.seatAdditions(), try Self.seatAdditions().reversed()] {
            let ledger = F.ledger(order)
            let early = try #require(try F.entitlements(ledger, F.account, at: F.day(5)).entitlements.first)
            #expect(early.seats == 5)
            let both = try F.entitlements(ledger, F.account, at: F.day(11)).entitlements
            #expect(both.map(\.transactionId) == ["4000000000000002"])
            #expect(both.map(\.seats) == [8])
            #expect(both.map(\.invitationManagement) == [.apple])
            // The added seats were refunded on day 12: the five bought first still grant access.
            let after = try F.entitlements(ledger, F.account, at: F.day(15)).entitlements
            #expect(after.map(\.transactionId) == ["4000000000000001"])
            #expect(after.map(\.state) == [.active])
            #expect(after.map(\.seats) == [5])
            #expect(after.first?.expiresDate == F.at(F.day(30)))
            let refund = try #require(ledger.revocations().only)
            #expect(refund.kind == .refund)
            #expect(refund.transactionId == "4000000000000002")
            // A multiseat price is the average of one seat: the whole transaction is price × quantity.
            #expect(refund.refundedAmount == MilliunitAmount(milliunits: 29_970))
            #expect(refund.revokedSeatQuantity == nil)
            #expect(
                JSONWriter.string(after[0].json).hasSuffix(
                    #""source":"app_store","seats":5,"invitationManagement":"APPLE"}"#))
        }
    }

    @Test func accessEndsOnlyWhenEveryTransactionOfThePeriodIsRevoked() throws {
        let ledger = F.ledger(try Self.seatAdditions(originalRevoked: F.day(14)))
        let one = try F.entitlements(ledger, F.account, at: F.day(13)).entitlements
        #expect(one.map(\.transactionId) == ["4000000000000001"])
        #expect(one.map(\.seats) == [5])
        #expect(try F.entitlements(ledger, F.account, at: F.day(14)).entitlements == [])
        #expect(try F.entitlements(ledger, F.account, at: F.day(20)).entitlements == [])
        #expect(ledger.revocations().map(\.transactionId) == ["4000000000000002", "4000000000000001"])
    }

    @Test func aSeatRefundKeepsThePurchasersAccessAndIsListedAsASeatRefund() throws {
        for order in [try Self.seatRefunds(), try Self.seatRefunds().reversed()] {
            let ledger = F.ledger(order)
            let before = try F.entitlements(ledger, F.account, at: F.day(5)).entitlements
            // The day-5 answer is given by the newest statement: two of five seats refunded.
            #expect(before.map(\.seats) == [3])
            let after = try F.entitlements(ledger, F.account, at: F.day(10)).entitlements
            #expect(after.map(\.state) == [.active])
            #expect(after.map(\.transactionId) == [Self.refundChain])
            #expect(after.map(\.seats) == [3])
            let refund = try #require(ledger.revocations().only)
            #expect(refund.kind == .seatRefund)
            #expect(refund.state == .revoked)
            #expect(refund.revokedSeatQuantity == 2)
            // Dated by the first statement that carried the two seats, not the later repeat.
            #expect(refund.revocationDate == F.at(F.day(8)))
            #expect(refund.refundedAmount == nil)
            #expect(refund.revocationType == nil)
            #expect(refund.price == 9990)
            #expect(ledger.revocations(since: F.at(F.day(9))) == [])
            #expect(JSONWriter.string(refund.json).contains(#""kind":"seat_refund","state":"revoked""#))
            #expect(JSONWriter.string(refund.json).hasSuffix(#""source":"app_store","revokedSeatQuantity":2}"#))
            let summary = RevocationSummary(ledger.revocations())
            #expect(summary.seatRefunds == 1)
            #expect(summary.refunds == 0)
            #expect(summary.total.count == 1)
            #expect(summary.total.refunded.isEmpty)
            #expect(JSONWriter.string(summary.json).contains(#""familyRevocations":0,"seatRefunds":1,"reversed":0"#))
        }
    }

    /// A newer statement without the revoked seats restores them: the seat refund is listed as
    /// reversed, dated by that statement.
    @Test func aNewerStatementWithoutTheRevokedSeatsReversesTheSeatRefund() throws {
        let restored = try Self.verified(
            Self.transaction(
                Self.refundChain, chain: Self.refundChain, purchased: F.day(0), signed: F.day(11), quantity: 5,
                additional: false))
        for order in [try Self.seatRefunds() + [restored], [restored] + (try Self.seatRefunds())] {
            let ledger = F.ledger(order)
            #expect(try F.entitlements(ledger, F.account, at: F.day(12)).entitlements.map(\.seats) == [5])
            let refund = try #require(ledger.revocations().only)
            #expect(refund.kind == .seatRefund)
            #expect(refund.state == .reversed)
            #expect(refund.reversedDate == F.at(F.day(11)))
            #expect(refund.revocationDate == F.at(F.day(8)))
            #expect(RevocationSummary(ledger.revocations()).seatRefunds == 0)
            #expect(RevocationSummary(ledger.revocations()).reversed == 1)
        }
    }

    /// Two statements signed at one instant: the one with more seats revoked grants less, so it
    /// is in force in either order.
    @Test func ofTwoStatementsSignedAtOnceTheOneWithMoreSeatsRevokedIsInForce() throws {
        let fewer = try Self.verified(
            Self.transaction(
                Self.refundChain, chain: Self.refundChain, purchased: F.day(0), signed: F.day(8), quantity: 5,
                additional: false, revokedSeats: 1))
        let more = try Self.verified(
            Self.transaction(
                Self.refundChain, chain: Self.refundChain, purchased: F.day(0), signed: F.day(8), quantity: 5,
                additional: false, revokedSeats: 3))
        for order in [[fewer, more], [more, fewer]] {
            let ledger = F.ledger(order)
            #expect(try F.entitlements(ledger, F.account, at: F.day(10)).entitlements.map(\.seats) == [2])
            #expect(ledger.revocations().map(\.revokedSeatQuantity) == [3])
        }
    }

    /// A member's transaction (`ASSIGNED`) sharing the purchaser's `originalTransactionId`
    /// takes neither the purchaser's claimed account nor the purchaser's entitlement; a member
    /// with a chain and token of their own is their own account.
    @Test func anAssignedMemberIsAnAccountOfItsOwn() throws {
        let purchase = try Self.fiveSeats(Self.chain, on: 0, token: nil)
        let anonymous = try Self.fiveSeats("4000000000000101", on: 1, ownership: "ASSIGNED", token: nil)
        let named = try Self.fiveSeats(
            "4000000000000102", chain: "4000000000000102", on: 1, ownership: "ASSIGNED", token: Self.member)
        for membersFirst in [false, true] {
            var ledger = EntitlementLedger()
            if membersFirst {
                ledger.add(anonymous)
                ledger.add(named)
            }
            try ledger.add(purchase, account: try #require(UUID(uuidString: F.account)))
            if !membersFirst {
                ledger.add(anonymous)
                ledger.add(named)
            }
            let purchaser = try F.entitlements(ledger, F.account, at: F.day(2)).entitlements
            #expect(purchaser.map(\.ownership) == [.purchased])
            #expect(purchaser.map(\.seats) == [5])
            let byChain = AccountKey(environment: .sandbox, originalTransactionId: Self.chain)
            let member = try #require(ledger.entitlements(of: byChain, at: F.at(F.day(2)))?.entitlements)
            #expect(member.map(\.transactionId) == ["4000000000000101"])
            #expect(member.map(\.ownership) == [.assigned])
            #expect(member.map(\.seats) == [5])
            let byToken = AccountKey(environment: .sandbox, appAccountToken: Self.member)
            let other = try #require(ledger.entitlements(of: byToken, at: F.at(F.day(2)))?.entitlements)
            #expect(other.map(\.transactionId) == ["4000000000000102"])
            #expect(ledger.accounts.count == 3)
        }
    }

    /// A member's token on a chain sharing the purchaser's `originalTransactionId` does not stand
    /// in the way of the purchaser's claim, whatever came first.
    @Test func anAssignedMembersTokenDoesNotBlockThePurchasersClaim() throws {
        let purchase = try Self.fiveSeats(Self.chain, on: 0, token: nil)
        let member = try Self.fiveSeats("4000000000000101", on: 1, ownership: "ASSIGNED", token: Self.member)
        for memberFirst in [true, false] {
            var ledger = EntitlementLedger()
            if memberFirst { ledger.add(member) }
            try ledger.add(purchase, account: try #require(UUID(uuidString: F.account)))
            if !memberFirst { ledger.add(member) }
            #expect(try F.entitlements(ledger, F.account, at: F.day(2)).entitlements.map(\.ownership) == [.purchased])
            #expect(try F.entitlements(ledger, Self.member, at: F.day(2)).entitlements.map(\.ownership) == [.assigned])
            // The purchaser's chain still refuses another account.
            let error = #expect(throws: LedgerError.self) {
                try ledger.add(purchase, account: try #require(UUID(uuidString: Self.member)))
            }
            #expect(error?.code == .accountConflict)
        }
    }

    /// The store answers as the in-memory ledger for all of it, and keeps the seat refund's date
    /// across separate additions.
    @Test func theStoreAnswersAsTheLedgerForMultiseatData() throws {
        let payloads =
            try Self.seatAdditions(originalRevoked: F.day(14))
            + Self.seatRefunds() + [try Self.fiveSeats("4000000000000101", on: 1, ownership: "ASSIGNED", token: nil)]
        let memory = F.ledger(payloads)
        // One addition each, in both orders: the stored record keeps the seat refund's date.
        for order in [payloads, payloads.reversed()] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "vouch-multiseat-\(UUID().uuidString).sqlite"
            ).path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            do {
                let store = try LedgerStore(path: path)
                for payload in order { _ = try store.add(payload) }
            }
            try Self.expectSameAnswers(try LedgerStore(path: path, access: .readOnly), memory)
        }
    }

    /// A store whose records were written without the seat members (and without
    /// `newestSeatRefund`), by a version of schema 2, reads them as records without seats once a
    /// writer brought it to this schema, and answers as before.
    @Test func storedRecordsWithoutTheSeatMembersStillRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-multiseat-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let memory = LedgerStoreTests.memory()
        do {
            let store = try LedgerStore(path: path, catalog: LedgerDeterminismTests.catalog)
            try store.add(contentsOf: memory)
        }
        let members = [
            "additionalTransactionReason", "invitationManagement", "revokedSeatQuantity", "newestSeatRefund",
        ]
        for member in members { #expect(try Self.count(path, containing: member) > 0) }
        let stripped = members.reduce("body") { "replace(\($0), ',\"\($1)\":null', '')" }
        // (Schema 2 kept bodies as their JSON.)
        // Records of that kind were written by a version of schema 2, whose records a writer of
        // this version gives their checksums.
        try LedgerStoreTests.sqlite(
            path,
            """
            \(LedgerStoreTests.unpackBodies)
            UPDATE app_store_transaction SET body = \(stripped);
            ALTER TABLE app_store_transaction DROP COLUMN checksum;
            ALTER TABLE app_store_renewal DROP COLUMN checksum;
            ALTER TABLE channel_record DROP COLUMN checksum;
            ALTER TABLE claim DROP COLUMN checksum;
            ALTER TABLE delivery DROP COLUMN checksum;
            DROP TABLE fed_input;
            PRAGMA user_version = 2;
            """)
        for member in members { #expect(try Self.count(path, containing: member) == 0) }
        _ = try LedgerStore(path: path, catalog: LedgerDeterminismTests.catalog)
        let store = try LedgerStore(path: path, access: .readOnly, catalog: LedgerDeterminismTests.catalog)
        #expect(try LedgerStoreTests.answers(store) == LedgerStoreTests.answers(memory))
    }

    /// How many stored transaction records mention `member`.
    static func count(_ path: String, containing member: String) throws -> Int {
        let handle = try LedgerStoreTests.connect(path)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        // A body is packed (schema 5) or its JSON (schema 2): `vouch_unpack` is NULL for JSON.
        let sql =
            "SELECT count(*) FROM app_store_transaction "
            + "WHERE instr(coalesce(vouch_unpack(body), body), '\"\(member)\"') > 0"
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw CocoaError(.fileReadUnknown)
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw CocoaError(.fileReadUnknown) }
        return Int(sqlite3_column_int64(statement, 0))
    }

    static func expectSameAnswers(_ store: LedgerStore, _ memory: EntitlementLedger) throws {
        for day in [5, 11, 13, 15] as [Int64] {
            let instant = F.at(F.day(day))
            #expect(
                try store.entitlements(at: instant).map { JSONWriter.string($0.json(at: instant, includeTier: false)) }
                    == memory.entitlements(at: instant).map {
                        JSONWriter.string($0.json(at: instant, includeTier: false))
                    })
            for account in memory.accounts {
                #expect(
                    try store.entitlements(of: account, at: instant) == memory.entitlements(of: account, at: instant))
            }
        }
        let revocations = try store.revocations()
        #expect(revocations == memory.revocations())
        #expect(revocations.map(\.kind) == [.seatRefund, .refund, .refund])
        #expect(revocations.first?.revocationDate == F.at(F.day(8)))
    }
}

extension Array {
    /// The one element, or `nil` when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
