internal import Vouch

// The records of grants of a server's own sources.

extension LedgerRecordJSON {
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

}

extension EntitlementGrant: StoredRecord {
    func insert(into ledger: inout EntitlementLedger) { ledger.grants.insert(self) }

    var exported: JSONValue { LedgerRecordJSON.object(self) }
}

/// Reads the records of grants, of any source.
enum GrantRecordCodec: LedgerRecordCodec {
    static func reads(kind: String, channel: String) -> Bool { kind == "grant" }

    static func read(_ fields: LedgerRecordJSON.Fields, kind: String) throws(RecordFormatError) -> any StoredRecord {
        let environment = try fields.string("environment")
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
        return EntitlementGrant(
            source: EntitlementSource(rawValue: try fields.string("channel")), id: try fields.string("id"),
            account: account, productId: try fields.string("productId"), state: state,
            startDate: Timestamp(milliseconds: try fields.integer("startDate")),
            expiresDate: try fields.optionalInteger("expiresDate").map(Timestamp.init(milliseconds:)),
            signedDate: Timestamp(milliseconds: try fields.integer("signedDate")))
    }
}
