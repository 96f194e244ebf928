internal import Vouch

// The ledger's records as JSON: what the store keeps for each transaction, each chain's renewal
// info and each account claim, and what `vouch ledger export` writes (one object per line,
// published as Schemas/ledger-export.schema.json). One writer and one reader, so a stored
// record reads back as the record that was written, and the export is what the store holds.

/// A stored record that cannot be read back.
struct RecordFormatError: Error {
    let reason: String
}

enum LedgerRecordJSON {
    /// `channel` of every App Store record.
    static let appStore = "app_store"

    // MARK: Writing

    /// `{"kind":"transaction","channel":…,"environment":…,"originalTransactionId":…,"transactionId":…,"ownership":…,
    /// "inForce":{…},"signed":{…}|null,"receipt":{…}|null,"receiptCancellation":{…}|null,"newestRevocation":{…}|null,
    /// "reversalNotifiedDate":…|null}`; without `inForce` (derived from the rest) as the store keeps it.
    static func object(_ record: TransactionRecord, inForce: Bool) -> JSONValue {
        let key = record.current
        return .object(
            JSONObject(
                [
                    .init("kind", "transaction"),
                    .init("channel", .string(appStore)),
                    .init("environment", .string(key.environment)),
                    .init("originalTransactionId", .string(key.originalTransactionId)),
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
                            .object(JSONObject([.init("signedDate", number($0.signedDate))] + revocation($0.facts)))
                        } ?? .null),
                    .init("reversalNotifiedDate", record.reversalNotified.map(number) ?? .null),
                ]))
    }

    /// What one statement says; the keys are the record's.
    private static func statement(_ statement: TransactionStatement) -> JSONValue {
        .object(
            JSONObject(
                [
                    .init("signedDate", number(statement.signedDate)),
                    .init("productId", .string(statement.productId)),
                    .init("type", .string(statement.type)),
                    .init(
                        "subscriptionGroupIdentifier",
                        statement.subscriptionGroupIdentifier.map(JSONValue.string) ?? .null),
                    .init("purchaseDate", number(statement.purchaseDate)),
                    .init("expiresDate", statement.expiresDate.map(number) ?? .null),
                    .init("isUpgraded", .bool(statement.isUpgraded)),
                    .init("appAccountToken", statement.appAccountToken.map(JSONValue.string) ?? .null),
                ] + (statement.revocation.map(revocation) ?? revocation(nil)) + [
                    .init("price", statement.price.map(number) ?? .null),
                    .init("currency", statement.currency.map(JSONValue.string) ?? .null),
                    .init("quantity", statement.quantity.map { number(Int64($0)) } ?? .null),
                    .init("isFreeTrial", .bool(statement.isFreeTrial)),
                ]))
    }

    private static func revocation(_ facts: RevocationFacts?) -> [JSONObject.Member] {
        [
            .init("revocationDate", facts.map { number($0.date) } ?? .null),
            .init("revocationReason", facts?.reason.map { number(Int64($0)) } ?? .null),
            .init("revocationType", facts?.type.map(JSONValue.string) ?? .null),
            .init("revocationPercentage", facts?.percentage.map { number(Int64($0)) } ?? .null),
        ]
    }

    /// `{"kind":"renewalInfo","channel":…,"environment":…,"originalTransactionId":…,"signedDate":…,
    /// "isInBillingRetryPeriod":…,"gracePeriodExpiresDate":…,"productId":…,"appAccountToken":…}`.
    static func object(_ renewal: RenewalStatement, key: EntitlementLedger.RenewalKey) -> JSONValue {
        .object(
            JSONObject([
                .init("kind", "renewalInfo"),
                .init("channel", .string(appStore)),
                .init("environment", .string(key.environment)),
                .init("originalTransactionId", .string(key.originalTransactionId)),
                .init("signedDate", number(renewal.signedDate)),
                .init("isInBillingRetryPeriod", .bool(renewal.isInBillingRetryPeriod)),
                .init("gracePeriodExpiresDate", renewal.gracePeriodExpiresDate.map(number) ?? .null),
                .init("productId", renewal.productId.map(JSONValue.string) ?? .null),
                .init("appAccountToken", renewal.appAccountToken.map(JSONValue.string) ?? .null),
            ]))
    }

    /// `{"kind":"accountClaim","channel":…,"environment":…,"originalTransactionId":…,"appAccountToken":…}`.
    static func claim(_ token: String, key: EntitlementLedger.RenewalKey) -> JSONValue {
        .object(
            JSONObject([
                .init("kind", "accountClaim"),
                .init("channel", .string(appStore)),
                .init("environment", .string(key.environment)),
                .init("originalTransactionId", .string(key.originalTransactionId)),
                .init("appAccountToken", .string(token)),
            ]))
    }

    private static func number(_ value: Int64) -> JSONValue { .number(String(value)) }

    // MARK: Reading

    /// What a stored line holds.
    enum Stored {
        case transaction(TransactionRecord)
        case renewal(EntitlementLedger.RenewalKey, RenewalStatement)
        case claim(EntitlementLedger.RenewalKey, String)
    }

    /// Reads a record written by ``object(_:)`` and its siblings.
    static func read(_ bytes: [UInt8]) throws(RecordFormatError) -> Stored {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(bytes, limits: .init(maximumDepth: 4))
        } catch {
            throw RecordFormatError(reason: "not a JSON object: \(error)")
        }
        let fields = Fields(object: object, path: "record")
        let key = EntitlementLedger.RenewalKey(
            environment: try fields.string("environment"),
            originalTransactionId: try fields.string("originalTransactionId"))
        guard try fields.string("channel") == appStore else { throw RecordFormatError(reason: "unknown channel") }
        switch try fields.string("kind") {
        case "transaction":
            let transactionId = try fields.string("transactionId")
            let ownership = try fields.string("ownership")
            func statement(_ name: String) throws(RecordFormatError) -> TransactionStatement? {
                guard let nested = try fields.object(name) else { return nil }
                return try readStatement(
                    nested, environment: key.environment, originalTransactionId: key.originalTransactionId,
                    transactionId: transactionId, ownership: ownership)
            }
            let cancellation = try fields.object("receiptCancellation").map { nested throws(RecordFormatError) in
                (signedDate: try nested.integer("receiptCreationDate"), date: try nested.integer("cancellationDate"))
            }
            let revocation = try fields.object("newestRevocation").map { nested throws(RecordFormatError) in
                guard let facts = try readRevocation(nested) else {
                    throw RecordFormatError(reason: "record.newestRevocation.revocationDate is null")
                }
                return (signedDate: try nested.integer("signedDate"), facts: facts)
            }
            guard
                let record = TransactionRecord(
                    signed: try statement("signed"), receipt: try statement("receipt"),
                    receiptCancellation: cancellation, newestRevocation: revocation,
                    reversalNotified: try fields.optionalInteger("reversalNotifiedDate"))
            else { throw RecordFormatError(reason: "a transaction record without a statement") }
            return .transaction(record)
        case "renewalInfo":
            return .renewal(
                key,
                RenewalStatement(
                    signedDate: try fields.integer("signedDate"),
                    isInBillingRetryPeriod: try fields.bool("isInBillingRetryPeriod"),
                    gracePeriodExpiresDate: try fields.optionalInteger("gracePeriodExpiresDate"),
                    productId: try fields.optionalString("productId"),
                    appAccountToken: try fields.optionalString("appAccountToken")))
        case "accountClaim":
            return .claim(key, try fields.string("appAccountToken"))
        case let kind:
            throw RecordFormatError(reason: "unknown kind \(kind)")
        }
    }

    private static func readStatement(
        _ fields: Fields, environment: String, originalTransactionId: String, transactionId: String, ownership: String
    ) throws(RecordFormatError) -> TransactionStatement {
        TransactionStatement(
            signedDate: try fields.integer("signedDate"), environment: environment, transactionId: transactionId,
            originalTransactionId: originalTransactionId, productId: try fields.string("productId"),
            type: try fields.string("type"),
            subscriptionGroupIdentifier: try fields.optionalString("subscriptionGroupIdentifier"),
            purchaseDate: try fields.integer("purchaseDate"), expiresDate: try fields.optionalInteger("expiresDate"),
            isUpgraded: try fields.bool("isUpgraded"), ownership: ownership,
            appAccountToken: try fields.optionalString("appAccountToken"), revocation: try readRevocation(fields),
            price: try fields.optionalInteger("price"), currency: try fields.optionalString("currency"),
            quantity: try fields.optionalInteger("quantity").flatMap { Int32(exactly: $0) },
            isFreeTrial: try fields.bool("isFreeTrial"))
    }

    private static func readRevocation(_ fields: Fields) throws(RecordFormatError) -> RevocationFacts? {
        guard let date = try fields.optionalInteger("revocationDate") else { return nil }
        return RevocationFacts(
            date: date, reason: try fields.optionalInteger("revocationReason").flatMap { Int32(exactly: $0) },
            type: try fields.optionalString("revocationType"),
            percentage: try fields.optionalInteger("revocationPercentage").flatMap { Int32(exactly: $0) })
    }

    /// Typed reads of an object's members, naming the member at fault.
    private struct Fields {
        let object: JSONObject
        let path: String

        func value(_ name: String) throws(RecordFormatError) -> JSONValue {
            guard let value = object[name] else { throw RecordFormatError(reason: "\(path).\(name) is missing") }
            return value
        }

        func string(_ name: String) throws(RecordFormatError) -> String {
            guard let text = try value(name).stringValue else {
                throw RecordFormatError(reason: "\(path).\(name) is not a string")
            }
            return text
        }

        func optionalString(_ name: String) throws(RecordFormatError) -> String? {
            let value = try value(name)
            if value.isNull { return nil }
            guard let text = value.stringValue else {
                throw RecordFormatError(reason: "\(path).\(name) is not a string")
            }
            return text
        }

        func integer(_ name: String) throws(RecordFormatError) -> Int64 {
            guard let number = try value(name).int64Value else {
                throw RecordFormatError(reason: "\(path).\(name) is not an integer")
            }
            return number
        }

        func optionalInteger(_ name: String) throws(RecordFormatError) -> Int64? {
            let value = try value(name)
            if value.isNull { return nil }
            guard let number = value.int64Value else {
                throw RecordFormatError(reason: "\(path).\(name) is not an integer")
            }
            return number
        }

        func bool(_ name: String) throws(RecordFormatError) -> Bool {
            guard let flag = try value(name).boolValue else {
                throw RecordFormatError(reason: "\(path).\(name) is not a boolean")
            }
            return flag
        }

        func object(_ name: String) throws(RecordFormatError) -> Fields? {
            let value = try value(name)
            if value.isNull { return nil }
            guard let nested = value.objectValue else {
                throw RecordFormatError(reason: "\(path).\(name) is not an object")
            }
            return Fields(object: nested, path: "\(path).\(name)")
        }
    }
}
