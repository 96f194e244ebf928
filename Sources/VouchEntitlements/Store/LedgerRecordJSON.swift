internal import Vouch

// The ledger's records as JSON: what the store keeps for each transaction, each chain's renewal
// info and each account claim, and what `vouch ledger export` writes (one object per line,
// published as Schemas/ledger-export.schema.json). One writer and one reader, so a stored
// record reads back as the record that was written, and the export is what the store holds.

enum LedgerRecordJSON {
    /// `channel` of every App Store record.
    static let appStore = "app_store"

    // MARK: Writing

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
                            .object(JSONObject([.init("signedDate", number($0.signedDate))] + revocation($0.facts)))
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
                    .init("additionalTransactionReason", text(statement.additionalTransactionReason)),
                    .init("invitationManagement", text(statement.invitationManagement)),
                    .init("revokedSeatQuantity", statement.revokedSeatQuantity.map { number(Int64($0)) } ?? .null),
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
    static func object(_ renewal: RenewalStatement, key: AppStoreChannel.RenewalKey) -> JSONValue {
        .object(
            JSONObject(
                head("renewalInfo", key) + [
                    .init("signedDate", number(renewal.signedDate)),
                    .init("isInBillingRetryPeriod", .bool(renewal.isInBillingRetryPeriod)),
                    .init("gracePeriodExpiresDate", renewal.gracePeriodExpiresDate.map(number) ?? .null),
                    .init("productId", renewal.productId.map(JSONValue.string) ?? .null),
                    .init("appAccountToken", renewal.appAccountToken.map(JSONValue.string) ?? .null),
                ]))
    }

    /// `{"kind":"accountClaim","channel":…,"environment":…,"originalTransactionId":…,"appAccountToken":…}`.
    static func claim(_ token: String, key: AppStoreChannel.RenewalKey) -> JSONValue {
        .object(JSONObject(head("accountClaim", key) + [.init("appAccountToken", .string(token))]))
    }

    /// The members every record begins with: what it is and the chain it is about.
    private static func head(_ kind: String, _ key: AppStoreChannel.RenewalKey) -> [JSONObject.Member] {
        [
            .init("kind", .string(kind)),
            .init("channel", .string(appStore)),
            .init("environment", .string(key.environment)),
            .init("originalTransactionId", .string(key.originalTransactionId)),
        ]
    }

    private static func number(_ value: Int64) -> JSONValue { .number(String(value)) }

    private static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// `channel` of every Stripe record.
    static let stripe = EntitlementSource.stripe.rawValue

    /// `{"kind":"stripeSubscription","channel":"stripe","environment":…,"subscriptionId":…,"account":…,
    /// "subscription":{…}|null,"payment":{…}|null,"checkout":{…}|null}`: the newest statement of each
    /// kind the subscription's events made, dates in milliseconds.
    static func object(_ record: StripeSubscriptionRecord, key: StripeKey) -> JSONValue {
        func stamp(_ stamp: StripeStamp) -> [JSONObject.Member] {
            [.init("created", number(stamp.created)), .init("eventId", .string(stamp.eventId))]
        }
        let snapshot: JSONValue =
            record.snapshot.map { snapshot in
                .object(
                    JSONObject(
                        stamp(snapshot.stamp) + [
                            .init("status", .string(snapshot.status)),
                            .init(
                                "items",
                                .array(
                                    snapshot.items.map { item in
                                        .object(
                                            JSONObject([
                                                .init("price", text(item.price)),
                                                .init("product", text(item.product)),
                                                .init("currentPeriodStart", item.periodStart.map(number) ?? .null),
                                                .init("currentPeriodEnd", item.periodEnd.map(number) ?? .null),
                                            ]))
                                    })),
                            .init("currentPeriodEnd", snapshot.periodEnd.map(number) ?? .null),
                            .init("cancelAt", snapshot.cancelAt.map(number) ?? .null),
                            .init("endedAt", snapshot.endedAt.map(number) ?? .null),
                            .init("startDate", number(snapshot.startDate)),
                            .init("customer", text(snapshot.customer)),
                            .init("account", text(snapshot.account)),
                        ]))
            } ?? .null
        let payment: JSONValue =
            record.payment.map { payment in
                .object(
                    JSONObject(
                        stamp(payment.stamp) + [
                            .init("paid", .bool(payment.paid)),
                            .init("periodEnd", payment.periodEnd.map(number) ?? .null),
                            .init("amountPaid", payment.amountPaid.map(number) ?? .null),
                            .init("account", text(payment.account)),
                        ]))
            } ?? .null
        let checkout: JSONValue =
            record.checkout.map { .object(JSONObject(stamp($0.stamp) + [.init("account", text($0.account))])) }
            ?? .null
        return .object(
            JSONObject([
                .init("kind", "stripeSubscription"), .init("channel", .string(stripe)),
                .init("environment", .string(key.environment)), .init("subscriptionId", .string(key.id)),
                .init("account", text(record.account)), .init("subscription", snapshot), .init("payment", payment),
                .init("checkout", checkout),
            ]))
    }

    /// `{"kind":"accountClaim","channel":"stripe","environment":…,"subscriptionId":…,"appAccountToken":…}`:
    /// the account a caller bound a Stripe subscription to.
    static func claim(_ token: String, key: StripeKey) -> JSONValue {
        .object(
            JSONObject([
                .init("kind", "accountClaim"), .init("channel", .string(stripe)),
                .init("environment", .string(key.environment)), .init("subscriptionId", .string(key.id)),
                .init("appAccountToken", .string(token)),
            ]))
    }

    /// `{"kind":"stripeRefund","channel":"stripe","environment":…,"chargeId":…,"created":…,"eventId":…,
    /// "amount":…,"amountRefunded":…,"currency":…,"customer":…,"invoice":…,"account":…}`: the newest
    /// `charge.refunded` of a charge, amounts in the currency's smallest unit as Stripe states them.
    static func object(_ refund: StripeRefundRecord, key: StripeKey) -> JSONValue {
        .object(
            JSONObject([
                .init("kind", "stripeRefund"), .init("channel", .string(stripe)),
                .init("environment", .string(key.environment)), .init("chargeId", .string(key.id)),
                .init("created", number(refund.stamp.created)), .init("eventId", .string(refund.stamp.eventId)),
                .init("amount", refund.amount.map(number) ?? .null),
                .init("amountRefunded", number(refund.amountRefunded)), .init("currency", .string(refund.currency)),
                .init("customer", text(refund.customer)), .init("invoice", text(refund.invoice)),
                .init("account", text(refund.account)),
            ]))
    }

    /// `{"kind":"grant","channel":SOURCE,"environment":…,"id":…,"appAccountToken":…,"originalTransactionId":…,
    /// "productId":…,"state":…,"startDate":…,"expiresDate":…,"signedDate":…}`.
    static func object(_ grant: EntitlementGrant) -> JSONValue {
        .object(
            JSONObject([
                .init("kind", "grant"), .init("channel", .string(grant.source.rawValue)),
                .init("environment", .string(grant.account.environment.rawValue)), .init("id", .string(grant.id)),
                .init("appAccountToken", text(grant.account.appAccountToken)),
                .init("originalTransactionId", text(grant.account.originalTransactionId)),
                .init("productId", .string(grant.productId)), .init("state", .string(grant.state.rawValue)),
                .init("startDate", number(grant.startDate.milliseconds)),
                .init("expiresDate", grant.expiresDate.map { number($0.milliseconds) } ?? .null),
                .init("signedDate", number(grant.signedDate.milliseconds)),
            ]))
    }

    // MARK: Reading

    /// What a stored line holds.
    enum Stored {
        case transaction(TransactionRecord)
        case renewal(AppStoreChannel.RenewalKey, RenewalStatement)
        case claim(AppStoreChannel.RenewalKey, String)
        case stripeSubscription(StripeKey, StripeSubscriptionRecord)
        case stripeRefund(StripeKey, StripeRefundRecord)
        case stripeClaim(StripeKey, String)
        case grant(EntitlementGrant)
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
        switch try fields.string("kind") {
        case "stripeSubscription", "stripeRefund", "grant": return try readOtherChannel(fields)
        case "accountClaim" where try fields.string("channel") == stripe:
            return .stripeClaim(
                StripeKey(environment: try fields.string("environment"), id: try fields.string("subscriptionId")),
                try fields.string("appAccountToken"))
        default: break
        }
        let key = AppStoreChannel.RenewalKey(
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
            // A record without the member (or statements without the seat members) holds no seat refund.
            let seatRefund = try fields.object("newestSeatRefund").map { nested throws(RecordFormatError) in
                TransactionRecord.SeatRefund(
                    signedDate: try nested.integer("signedDate"), count: try nested.int32("revokedSeatQuantity"))
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
                    reversalNotified: try fields.optionalInteger("reversalNotifiedDate"), newestSeatRefund: seatRefund)
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

    /// A record of a channel other than the App Store's.
    private static func readOtherChannel(_ fields: Fields) throws(RecordFormatError) -> Stored {
        let environment = try fields.string("environment")
        func stamp(_ fields: Fields) throws(RecordFormatError) -> StripeStamp {
            StripeStamp(created: try fields.integer("created"), eventId: try fields.string("eventId"))
        }
        switch try fields.string("kind") {
        case "stripeSubscription":
            guard try fields.string("channel") == stripe else { throw RecordFormatError(reason: "unknown channel") }
            var record = StripeSubscriptionRecord()
            if let nested = try fields.object("subscription") {
                var items: [StripeSubscriptionRecord.Snapshot.Item] = []
                for (index, value) in (try nested.array("items")).enumerated() {
                    guard let item = value.objectValue else {
                        throw RecordFormatError(reason: "record.subscription.items[\(index)]: expected an object")
                    }
                    let fields = Fields(object: item, path: "record.subscription.items[\(index)]")
                    items.append(
                        .init(
                            price: try fields.optionalString("price"), product: try fields.optionalString("product"),
                            periodStart: try fields.optionalInteger("currentPeriodStart"),
                            periodEnd: try fields.optionalInteger("currentPeriodEnd")))
                }
                record.snapshot = .init(
                    stamp: try stamp(nested), status: try nested.string("status"), items: items,
                    periodEnd: try nested.optionalInteger("currentPeriodEnd"),
                    cancelAt: try nested.optionalInteger("cancelAt"), endedAt: try nested.optionalInteger("endedAt"),
                    startDate: try nested.integer("startDate"),
                    customer: try nested.optionalString("customer"), account: try nested.optionalString("account"))
            }
            if let nested = try fields.object("payment") {
                record.payment = .init(
                    stamp: try stamp(nested), paid: try nested.bool("paid"),
                    periodEnd: try nested.optionalInteger("periodEnd"),
                    amountPaid: try nested.optionalInteger("amountPaid"), account: try nested.optionalString("account"))
            }
            if let nested = try fields.object("checkout") {
                record.checkout = .init(stamp: try stamp(nested), account: try nested.optionalString("account"))
            }
            guard record.snapshot != nil || record.payment != nil || record.checkout != nil else {
                throw RecordFormatError(reason: "a Stripe subscription record without a statement")
            }
            return .stripeSubscription(
                StripeKey(environment: environment, id: try fields.string("subscriptionId")), record)
        case "stripeRefund":
            guard try fields.string("channel") == stripe else { throw RecordFormatError(reason: "unknown channel") }
            return .stripeRefund(
                StripeKey(environment: environment, id: try fields.string("chargeId")),
                StripeRefundRecord(
                    stamp: try stamp(fields), amount: try fields.optionalInteger("amount"),
                    amountRefunded: try fields.integer("amountRefunded"), currency: try fields.string("currency"),
                    customer: try fields.optionalString("customer"), invoice: try fields.optionalString("invoice"),
                    account: try fields.optionalString("account")))
        default:
            let account =
                if let token = try fields.optionalString("appAccountToken") {
                    AccountKey(environment: environment, appAccountToken: token, originalTransactionId: "")
                } else {
                    AccountKey(
                        environment: environment, appAccountToken: nil,
                        originalTransactionId: try fields.string("originalTransactionId"))
                }
            guard let state = Entitlement.State(rawValue: try fields.string("state")) else {
                throw RecordFormatError(reason: "record.state is not a state")
            }
            return .grant(
                EntitlementGrant(
                    source: EntitlementSource(rawValue: try fields.string("channel")), id: try fields.string("id"),
                    account: account, productId: try fields.string("productId"), state: state,
                    startDate: Timestamp(milliseconds: try fields.integer("startDate")),
                    expiresDate: try fields.optionalInteger("expiresDate").map(Timestamp.init(milliseconds:)),
                    signedDate: Timestamp(milliseconds: try fields.integer("signedDate"))))
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
            quantity: try fields.optionalInt32("quantity"),
            isFreeTrial: try fields.bool("isFreeTrial"),
            additionalTransactionReason: try fields.optionalString("additionalTransactionReason"),
            invitationManagement: try fields.optionalString("invitationManagement"),
            revokedSeatQuantity: try fields.optionalInt32("revokedSeatQuantity"))
    }

    private static func readRevocation(_ fields: Fields) throws(RecordFormatError) -> RevocationFacts? {
        guard let date = try fields.optionalInteger("revocationDate") else { return nil }
        return RevocationFacts(
            date: date, reason: try fields.optionalInt32("revocationReason"),
            type: try fields.optionalString("revocationType"),
            percentage: try fields.optionalInt32("revocationPercentage"))
    }

    /// The members of a stored object, read by the models' reader (``PayloadFields``): a
    /// member the record cannot do without must be there, and any error names its path.
    private struct Fields {
        let fields: PayloadFields
        let path: String

        init(object: JSONObject, path: String) {
            fields = PayloadFields(object)
            self.path = path
        }

        private func read<Value>(_ body: (PayloadFields) throws(PayloadFieldError) -> Value?) throws(RecordFormatError)
            -> Value?
        {
            do {
                return try body(fields)
            } catch {
                throw RecordFormatError(reason: "\(path).\(error)")
            }
        }

        private func required<Value>(_ value: Value?, _ name: StaticString) throws(RecordFormatError) -> Value {
            guard let value else { throw RecordFormatError(reason: "\(path).\(name) is missing") }
            return value
        }

        func string(_ name: StaticString) throws(RecordFormatError) -> String {
            try required(try optionalString(name), name)
        }

        func optionalString(_ name: StaticString) throws(RecordFormatError) -> String? {
            try read { fields throws(PayloadFieldError) in try fields.string(name) }
        }

        func integer(_ name: StaticString) throws(RecordFormatError) -> Int64 {
            try required(try optionalInteger(name), name)
        }

        func optionalInteger(_ name: StaticString) throws(RecordFormatError) -> Int64? {
            try read { fields throws(PayloadFieldError) in try fields.int64(name) }
        }

        func optionalInt32(_ name: StaticString) throws(RecordFormatError) -> Int32? {
            try read { fields throws(PayloadFieldError) in try fields.int32(name) }
        }

        func int32(_ name: StaticString) throws(RecordFormatError) -> Int32 {
            try required(try optionalInt32(name), name)
        }

        func bool(_ name: StaticString) throws(RecordFormatError) -> Bool {
            try required(try read { fields throws(PayloadFieldError) in try fields.bool(name) }, name)
        }

        /// A nested array (empty when absent).
        func array(_ name: String) throws(RecordFormatError) -> [JSONValue] {
            guard let value = fields.object[name], !value.isNull else { return [] }
            guard let array = value.arrayValue else {
                throw RecordFormatError(reason: "\(path).\(name): expected an array")
            }
            return array
        }

        /// A nested object, or `nil` when it is `null` or absent.
        func object(_ name: String) throws(RecordFormatError) -> Fields? {
            guard let value = fields.object[name], !value.isNull else { return nil }
            guard let nested = value.objectValue else {
                throw RecordFormatError(reason: "\(path).\(name): expected an object")
            }
            return Fields(object: nested, path: "\(path).\(name)")
        }
    }
}
