public import Vouch

// The JSON records `vouch entitlements` and `vouch refunds` print, members in a fixed order.
// Dates are UNIX milliseconds (as Apple writes them) with an ISO-8601 twin; amounts are
// milliunits, exact.

extension AccountEntitlements {
    /// `{"environment":…,"appAccountToken":…,"originalTransactionIds":[…],"at":…,"entitlements":[…][,"tier":…]}`;
    /// `tier` only when `includeTier` (a catalog with tiers was given).
    public func json(at instant: Timestamp, includeTier: Bool) -> JSONValue {
        var members: [JSONObject.Member] = [
            .init("environment", .string(account.environment.rawValue)),
            .init("appAccountToken", account.appAccountToken.map(JSONValue.string) ?? .null),
            .init("originalTransactionIds", .array(originalTransactionIds.map(JSONValue.string))),
            .init("at", .number(String(instant.milliseconds))),
            .init("entitlements", .array(entitlements.map(\.json))),
        ]
        if includeTier {
            members.append(
                .init(
                    "tier",
                    tier.map { grant in
                        .object(
                            JSONObject([
                                .init("name", .string(grant.name)),
                                .init("rank", .number(String(grant.rank))),
                                .init("productId", .string(grant.entitlement.productId)),
                                .init("state", .string(grant.entitlement.state.rawValue)),
                                .init("expiresDate", date(grant.entitlement.expiresDate)),
                                .init("expires", iso(grant.entitlement.expiresDate)),
                                .init("transactionId", .string(grant.entitlement.transactionId)),
                                .init("source", .string(grant.entitlement.source.rawValue)),
                            ]))
                    } ?? .null))
        }
        return .object(JSONObject(members))
    }
}

extension Entitlement {
    /// `{"productId":…,"type":…,"subscriptionGroupIdentifier":…,"state":…,"expiresDate":…,"expires":…,"ownership":…,"transactionId":…,"originalTransactionId":…,"purchaseDate":…,"source":…}`,
    /// then, for a multiseat subscription only, `"seats":…,"invitationManagement":…`, and for
    /// an entitlement a refund touched only, `"refundedDate":…,"refunded":…`, and for a Stripe
    /// subscription only, `"subscriptionId":…,"livemode":…`.
    public var json: JSONValue {
        var members: [JSONObject.Member] = [
            .init("productId", .string(productId)),
            .init("type", .string(type.rawValue)),
            .init("subscriptionGroupIdentifier", subscriptionGroupIdentifier.map(JSONValue.string) ?? .null),
            .init("state", .string(state.rawValue)),
            .init("expiresDate", date(expiresDate)),
            .init("expires", iso(expiresDate)),
            .init("ownership", .string(ownership.rawValue)),
            .init("transactionId", .string(transactionId)),
            .init("originalTransactionId", .string(originalTransactionId)),
            .init("purchaseDate", date(purchaseDate)),
            .init("source", .string(source.rawValue)),
        ]
        if let seats {
            members.append(.init("seats", .number(String(seats))))
            members.append(.init("invitationManagement", invitationManagement.map { .string($0.rawValue) } ?? .null))
        }
        if let refundedDate {
            members.append(.init("refundedDate", date(refundedDate)))
            members.append(.init("refunded", iso(refundedDate)))
        }
        if let stripeSubscription {
            members.append(.init("subscriptionId", .string(stripeSubscription.id)))
            members.append(.init("livemode", .bool(stripeSubscription.livemode)))
        }
        return .object(JSONObject(members))
    }
}

extension Revocation {
    /// The record `vouch refunds --json` prints, members in the order of the properties;
    /// `revokedSeatQuantity` only for a seat-based refund.
    public var json: JSONValue {
        var members: [JSONObject.Member] = [
            .init("environment", .string(environment.rawValue)),
            .init("appAccountToken", appAccountToken.map(JSONValue.string) ?? .null),
            .init("originalTransactionId", .string(originalTransactionId)),
            .init("transactionId", .string(transactionId)),
            .init("productId", .string(productId)),
            .init("type", .string(type.rawValue)),
            .init("ownership", .string(ownership.rawValue)),
            .init("kind", .string(kind.rawValue)),
            .init("state", .string(state.rawValue)),
            .init("revocationDate", date(revocationDate)),
            .init("revoked", iso(revocationDate)),
            .init("revocationReason", revocationReason.map { .number(String($0.rawValue)) } ?? .null),
            .init("revocationType", revocationType.map { .string($0.rawValue) } ?? .null),
            .init("revocationPercentage", revocationPercentage.map { .number(String($0)) } ?? .null),
            .init("price", price.map { .number(String($0)) } ?? .null),
            .init("currency", currency.map(JSONValue.string) ?? .null),
            .init("refundedAmount", refundedAmount.map { .number($0.description) } ?? .null),
            .init("reversedDate", date(reversedDate)),
            .init("source", .string(source.rawValue)),
        ]
        if let revokedSeatQuantity {
            members.append(.init("revokedSeatQuantity", .number(String(revokedSeatQuantity))))
        }
        return .object(JSONObject(members))
    }
}

extension RevocationSummary {
    /// `{"revocations":…,"refunds":…,"familyRevocations":…[,"seatRefunds":…],"reversed":…,"refunded":{…},"byProduct":{…},"byReason":{…},"byType":{…},"byMonth":{…},"refundedAmounts":{…}}`,
    /// each bucket `{"count":N,"refunded":{"USD":milliunits,…},"refundedAmounts":{…}}`, keys
    /// sorted; `seatRefunds` only when some seat-based refund is in force, so a summary without
    /// any keeps its shape. `refunded` states exact milliunits; `refundedAmounts` (after every
    /// other member of the summary, and in each bucket) the same amounts in units of the
    /// currency, as decimal strings: `{"USD":{"amount":"129.69","exact":"129.6899667","unit":"USD"}}`,
    /// `amount` rounded to the currency's minor unit (``CurrencyAmount/roundedAmount``),
    /// `exact` not rounded, `unit` the ISO 4217 code.
    public var json: JSONValue {
        var members: [JSONObject.Member] = [
            .init("revocations", .number(String(total.count))),
            .init("refunds", .number(String(refunds))),
            .init("familyRevocations", .number(String(familyRevocations))),
        ]
        if seatRefunds > 0 { members.append(.init("seatRefunds", .number(String(seatRefunds)))) }
        members += [
            .init("reversed", .number(String(reversed))),
            .init("refunded", Self.amounts(total.refunded)),
            .init("byProduct", Self.buckets(byProduct)),
            .init("byReason", Self.buckets(byReason)),
            .init("byType", Self.buckets(byType)),
            .init("byMonth", Self.buckets(byMonth)),
            .init("refundedAmounts", Self.units(total.refunded)),
        ]
        return .object(JSONObject(members))
    }

    static func amounts(_ amounts: [String: MilliunitAmount]) -> JSONValue {
        .object(JSONObject(amounts.sorted { $0.key < $1.key }.map { .init($0.key, .number($0.value.description)) }))
    }

    /// `{"USD":{"amount":"129.69","exact":"129.6899667","unit":"USD"}}`, codes sorted.
    static func units(_ amounts: [String: MilliunitAmount]) -> JSONValue {
        .object(
            JSONObject(
                amounts.sorted { $0.key < $1.key }.map {
                    let amount = CurrencyAmount($0.value, currency: $0.key)
                    return .init(
                        $0.key,
                        .object(
                            JSONObject([
                                .init("amount", .string(amount.roundedAmount)),
                                .init("exact", .string($0.value.currencyUnitsText)),
                                .init("unit", .string($0.key)),
                            ])))
                }))
    }

    static func buckets(_ buckets: [String: Bucket]) -> JSONValue {
        .object(
            JSONObject(
                buckets.sorted { $0.key < $1.key }.map {
                    .init(
                        $0.key,
                        .object(
                            JSONObject([
                                .init("count", .number(String($0.value.count))),
                                .init("refunded", amounts($0.value.refunded)),
                                .init("refundedAmounts", units($0.value.refunded)),
                            ])))
                }))
    }
}

private func date(_ timestamp: Timestamp?) -> JSONValue {
    timestamp.map { .number(String($0.milliseconds)) } ?? .null
}

private func iso(_ timestamp: Timestamp?) -> JSONValue {
    timestamp.map { .string($0.iso8601) } ?? .null
}
