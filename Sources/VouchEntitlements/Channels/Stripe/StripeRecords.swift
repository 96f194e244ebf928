internal import Vouch

// The Stripe channel's records: a subscription (the newest statement of each kind its events
// made), a refunded charge, and the account a caller bound a subscription to.

extension LedgerRecordJSON {
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

}

/// A stored record of the Stripe channel.
enum StripeRecord: StoredRecord {
    case subscription(StripeKey, StripeSubscriptionRecord)
    case refund(StripeKey, StripeRefundRecord)
    case claim(StripeKey, String)

    func insert(into ledger: inout EntitlementLedger) {
        switch self {
        case .subscription(let key, let record): ledger.stripe.insert(record, for: key)
        case .refund(let key, let refund): ledger.stripe.insert(refund, for: key)
        case .claim(let key, let token): ledger.stripe.insert(claim: token, for: key)
        }
    }

    var exported: JSONValue {
        switch self {
        case .subscription(let key, let record): LedgerRecordJSON.object(record, key: key)
        case .refund(let key, let refund): LedgerRecordJSON.object(refund, key: key)
        case .claim(let key, let token): LedgerRecordJSON.claim(token, key: key)
        }
    }
}

/// Reads the Stripe channel's records.
enum StripeRecordCodec: LedgerRecordCodec {
    static func reads(kind: String, channel: String) -> Bool { channel == LedgerRecordJSON.stripe && kind != "grant" }

    static func read(_ fields: LedgerRecordJSON.Fields, kind: String) throws(RecordFormatError) -> any StoredRecord {
        typealias Fields = LedgerRecordJSON.Fields
        let environment = try fields.string("environment")
        func stamp(_ fields: Fields) throws(RecordFormatError) -> StripeStamp {
            StripeStamp(created: try fields.integer("created"), eventId: try fields.string("eventId"))
        }
        switch kind {
        case "stripeSubscription":
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
            return StripeRecord.subscription(
                StripeKey(environment: environment, id: try fields.string("subscriptionId")), record)
        case "stripeRefund":
            return StripeRecord.refund(
                StripeKey(environment: environment, id: try fields.string("chargeId")),
                StripeRefundRecord(
                    stamp: try stamp(fields), amount: try fields.optionalInteger("amount"),
                    amountRefunded: try fields.integer("amountRefunded"), currency: try fields.string("currency"),
                    customer: try fields.optionalString("customer"), invoice: try fields.optionalString("invoice"),
                    account: try fields.optionalString("account")))
        case "accountClaim":
            return StripeRecord.claim(
                StripeKey(environment: environment, id: try fields.string("subscriptionId")),
                try fields.string("appAccountToken"))
        default:
            throw RecordFormatError(reason: "unknown kind \(kind) of channel stripe")
        }
    }
}
