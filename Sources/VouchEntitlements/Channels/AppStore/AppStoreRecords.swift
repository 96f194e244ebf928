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

    /// The record as a store keeps its JSON: the export's, without what is derived.
    var body: String {
        switch self {
        case .transaction(let record): JSONWriter.string(LedgerRecordJSON.object(record, inForce: false))
        case .renewal, .claim: JSONWriter.string(exported)
        }
    }

    /// The record packed (``StoredBody/packed``); `nil` for a claim, which the SQLite store
    /// keeps in columns.
    var packed: [UInt8]? {
        switch self {
        case .transaction(let record): Self.packed(record)
        case .renewal(let key, let statement): Self.packed(statement, key: key)
        case .claim: nil
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

/// The App Store channel's transactions and renewal info as the SQLite store keeps them
/// (``StoredBody/packed``): a kind byte, the chain, then the record's members in the order
/// below (``PackedRecord``), each statement's own in table order. The members after the
/// chain are those of the record's JSON, which the export still writes; a member added to
/// the record goes last and is optional, as a statement's does.
extension AppStoreRecord {
    /// The byte after ``StoredBody/packed`` that tells a packed record's kind.
    enum PackedKind: UInt8 {
        case transaction = 1
        case renewal = 2
    }

    /// `record` packed, its format byte first.
    static func packed(_ record: TransactionRecord) -> [UInt8] {
        let key = record.current
        var writer = PackedRecord.Writer(reservingCapacity: 192)
        writer.byte(StoredBody.packed)
        writer.byte(PackedKind.transaction.rawValue)
        writer.text(key.environment)
        writer.text(key.originalTransactionId)
        writer.text(key.transactionId)
        writer.text(key.ownership)
        writer.optional(record.signed) { writer, statement in writer.nested { $0.write(statement) } }
        writer.optional(record.receipt) { writer, statement in writer.nested { $0.write(statement) } }
        writer.optional(record.receiptCancellation) { writer, cancellation in
            writer.integer(cancellation.signedDate)
            writer.integer(cancellation.date)
        }
        writer.optional(record.newestRevocation) { writer, revocation in
            writer.integer(revocation.signedDate)
            writer.nested { $0.write(revocation.facts) }
        }
        writer.integer(record.reversalNotified)
        writer.optional(record.newestSeatRefund) { writer, refund in
            writer.integer(refund.signedDate)
            writer.integer(refund.count)
        }
        return writer.bytes
    }

    /// `renewal` of the chain `key` packed, its format byte first.
    static func packed(_ renewal: RenewalStatement, key: AppStoreChannel.RenewalKey) -> [UInt8] {
        var writer = PackedRecord.Writer(reservingCapacity: 96)
        writer.byte(StoredBody.packed)
        writer.byte(PackedKind.renewal.rawValue)
        writer.text(key.environment)
        writer.text(key.originalTransactionId)
        writer.nested { $0.write(renewal) }
        return writer.bytes
    }

    /// The record of a whole packed body (``packed(_:)``), its format byte first.
    init(packed body: UnsafeRawBufferPointer) throws(RecordFormatError) {
        guard body.first == StoredBody.packed else { throw RecordFormatError(reason: "not a packed record") }
        var reader = PackedRecord.Reader(UnsafeRawBufferPointer(rebasing: body.dropFirst()))
        try self.init(packed: &reader)
    }

    /// The record `reader` holds after the format byte, read whole.
    private init(packed reader: inout PackedRecord.Reader) throws(RecordFormatError) {
        guard let kind = PackedKind(rawValue: try reader.byte()) else {
            throw RecordFormatError(reason: "a packed record of an unknown kind")
        }
        let key = AppStoreChannel.RenewalKey(environment: try reader.text(), originalTransactionId: try reader.text())
        switch kind {
        case .transaction:
            let transactionId = try reader.text()
            let ownership = try reader.text()
            func statement(_ reader: inout PackedRecord.Reader) throws(RecordFormatError) -> TransactionStatement? {
                try reader.optional { reader throws(RecordFormatError) in
                    try reader.nested { reader throws(RecordFormatError) in
                        try TransactionStatement(
                            packed: &reader, environment: key.environment, transactionId: transactionId,
                            originalTransactionId: key.originalTransactionId, ownership: ownership)
                    }
                }
            }
            let signed = try statement(&reader)
            let receipt = try statement(&reader)
            let cancellation = try reader.optional { reader throws(RecordFormatError) in
                (signedDate: try reader.integer(), date: try reader.integer())
            }
            let revocation = try reader.optional { reader throws(RecordFormatError) in
                (
                    signedDate: try reader.integer(),
                    facts: try reader.nested { reader throws(RecordFormatError) in
                        try RevocationFacts(packed: &reader)
                    }
                )
            }
            let reversal = try reader.optionalInteger()
            let seatRefund = try reader.optional { reader throws(RecordFormatError) in
                TransactionRecord.SeatRefund(signedDate: try reader.integer(), count: try reader.int32())
            }
            guard
                let record = TransactionRecord(
                    signed: signed, receipt: receipt, receiptCancellation: cancellation, newestRevocation: revocation,
                    reversalNotified: reversal, newestSeatRefund: seatRefund)
            else { throw RecordFormatError(reason: "a transaction record without a statement") }
            self = .transaction(record)
        case .renewal:
            self = .renewal(
                key,
                try reader.nested { reader throws(RecordFormatError) in try RenewalStatement(packed: &reader) })
        }
        guard reader.isAtEnd else { throw RecordFormatError(reason: "a packed record holds bytes after its members") }
    }
}
