internal import Vouch

// The App Store channel's records: a transaction with its merged statements, a chain's renewal
// info, and the account a caller named for a chain.

extension LedgerRecordJSON {
    /// `{"kind":"transaction","channel":…,"environment":…,"originalTransactionId":…,"transactionId":…,"ownership":…,
    /// "inForce":{…},"signed":{…}|null,"receipt":{…}|null,"receiptCancellation":{…}|null,"newestRevocation":{…}|null,
    /// "reversalNotifiedDate":…|null,"newestSeatRefund":{…}|null}`; without `inForce` (derived from the rest) as
    /// the store keeps it.
    static func object(_ record: TransactionRecord, inForce: Bool) -> JSONValue {
        let key = record.current
        return .object(
            JSONObject(
                head("transaction", key.chainKey.renewalKey) + [
                    .init("transactionId", .string(key.transactionId)),
                    .init("ownership", .string(key.ownership)),
                ] + (inForce ? [.init("inForce", statement(record.current))] : []) + [
                    .init("signed", record.signed.map(statement) ?? .null),
                    .init("receipt", record.receipt.map(statement) ?? .null),
                    .init(
                        "receiptCancellation",
                        record.receiptCancellation.map {
                            .object(
                                JSONObject([
                                    .init("receiptCreationDate", number($0.signedDate)),
                                    .init("cancellationDate", number($0.date)),
                                ]))
                        } ?? .null),
                    .init(
                        "newestRevocation",
                        record.newestRevocation.map {
                            .object(JSONObject([.init("signedDate", number($0.signedDate))] + members($0.facts)))
                        } ?? .null),
                    .init("reversalNotifiedDate", record.reversalNotified.map(number) ?? .null),
                    .init(
                        "newestSeatRefund",
                        record.newestSeatRefund.map {
                            .object(
                                JSONObject([
                                    .init("signedDate", number($0.signedDate)),
                                    .init("revokedSeatQuantity", number(Int64($0.count))),
                                ]))
                        } ?? .null),
                ]))
    }

    /// What one statement says; the keys are the record's.
    private static func statement(_ statement: TransactionStatement) -> JSONValue {
        .object(JSONObject(members(statement)))
    }

    /// `{"kind":"renewalInfo","channel":…,"environment":…,"originalTransactionId":…,"signedDate":…,
    /// "isInBillingRetryPeriod":…,"gracePeriodExpiresDate":…,"productId":…,"appAccountToken":…}`.
    static func object(_ renewal: RenewalStatement, key: AppStoreChannel.RenewalKey) -> JSONValue {
        .object(
            JSONObject(
                head("renewalInfo", key) + members(renewal)))
    }

    /// `{"kind":"accountClaim","channel":…,"environment":…,"originalTransactionId":…,"appAccountToken":…}`.
    static func claim(_ token: String, key: AppStoreChannel.RenewalKey) -> JSONValue {
        .object(JSONObject(head("accountClaim", key) + [.init("appAccountToken", .string(token))]))
    }

    /// The members every record begins with: what it is and the chain it is about.
    static func head(_ kind: String, _ key: AppStoreChannel.RenewalKey) -> [JSONObject.Member] {
        [
            .init("kind", .string(kind)),
            .init("channel", .string(appStore)),
            .init("environment", .string(key.environment)),
            .init("originalTransactionId", .string(key.originalTransactionId)),
        ]
    }

}

/// A stored record of the App Store channel.
enum AppStoreRecord: StoredRecord {
    case transaction(TransactionRecord)
    case renewal(AppStoreChannel.RenewalKey, RenewalStatement)
    case claim(AppStoreChannel.RenewalKey, String)

    func insert(into ledger: inout EntitlementLedger) {
        switch self {
        case .transaction(let record): ledger.appStore.insert(record)
        case .renewal(let key, let statement): ledger.appStore.insert(statement, for: key)
        case .claim(let key, let token): ledger.appStore.insert(claim: token, for: key)
        }
    }

    var exported: JSONValue {
        switch self {
        case .transaction(let record): LedgerRecordJSON.object(record, inForce: true)
        case .renewal(let key, let statement): LedgerRecordJSON.object(statement, key: key)
        case .claim(let key, let token): LedgerRecordJSON.claim(token, key: key)
        }
    }
}

/// Reads the App Store channel's records.
enum AppStoreRecordCodec: LedgerRecordCodec {
    static func reads(kind: String, channel: String) -> Bool { channel == LedgerRecordJSON.appStore }

    static func read(_ fields: LedgerRecordJSON.Fields, kind: String) throws(RecordFormatError) -> any StoredRecord {
        let key = AppStoreChannel.RenewalKey(
            environment: try fields.string("environment"),
            originalTransactionId: try fields.string("originalTransactionId"))
        guard try fields.string("channel") == LedgerRecordJSON.appStore else {
            throw RecordFormatError(reason: "unknown channel")
        }
        switch try fields.string("kind") {
        case "transaction":
            let transactionId = try fields.string("transactionId")
            let ownership = try fields.string("ownership")
            func statement(_ name: String) throws(RecordFormatError) -> TransactionStatement? {
                guard let nested = try fields.object(name) else { return nil }
                return try TransactionStatement(
                    record: nested, environment: key.environment, transactionId: transactionId,
                    originalTransactionId: key.originalTransactionId, ownership: ownership)
            }
            let cancellation = try fields.object("receiptCancellation").map { nested throws(RecordFormatError) in
                (signedDate: try nested.integer("receiptCreationDate"), date: try nested.integer("cancellationDate"))
            }
            // A record without the member (or statements without the seat members) holds no seat refund.
            let seatRefund = try fields.object("newestSeatRefund").map { nested throws(RecordFormatError) in
                TransactionRecord.SeatRefund(
                    signedDate: try nested.integer("signedDate"), count: try nested.int32("revokedSeatQuantity"))
            }
            let revocation = try fields.object("newestRevocation").map { nested throws(RecordFormatError) in
                guard let facts = try RevocationFacts(record: nested) else {
                    throw RecordFormatError(reason: "record.newestRevocation.revocationDate is null")
                }
                return (signedDate: try nested.integer("signedDate"), facts: facts)
            }
            guard
                let record = TransactionRecord(
                    signed: try statement("signed"), receipt: try statement("receipt"),
                    receiptCancellation: cancellation, newestRevocation: revocation,
                    reversalNotified: try fields.optionalInteger("reversalNotifiedDate"), newestSeatRefund: seatRefund)
            else { throw RecordFormatError(reason: "a transaction record without a statement") }
            return AppStoreRecord.transaction(record)
        case "renewalInfo":
            return AppStoreRecord.renewal(key, try RenewalStatement(record: fields))
        case "accountClaim":
            return AppStoreRecord.claim(key, try fields.string("appAccountToken"))
        case let kind:
            throw RecordFormatError(reason: "unknown kind \(kind)")
        }
    }
}
