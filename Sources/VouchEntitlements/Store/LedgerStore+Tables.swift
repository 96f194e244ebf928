internal import Foundation
internal import Vouch

// The store's tables: joining a batch of statements into the stored records, and reading records
// back into a ledger, each by the channel's own codec (`LedgerRecordJSON.codecs`).
extension LedgerStore {
    func store(_ delta: EntitlementLedger) throws(LedgerError) -> Change {
        var touched = Set(delta.appStore.chains.keys.map(\.renewalKey))
        touched.formUnion(delta.appStore.renewals.keys)
        touched.formUnion(delta.appStore.claims.keys)
        var merged = EntitlementLedger()
        try load(touched, into: &merged, phase: .write)
        let before = merged
        for (key, token) in delta.appStore.claims {
            if let owner = merged.appStore.owner(of: key), owner != token {
                throw AppStoreChannel.conflict(key, claimed: token, owner: owner)
            }
        }
        merged.merge(delta)

        var change = Change()
        let putTransaction = try statement(
            "INSERT OR REPLACE INTO app_store_transaction (environment, original_transaction_id, ownership, "
                + "transaction_id, revoked, body, checksum) VALUES (?, ?, ?, ?, ?, ?, ?)", phase: .write)
        let putRenewal = try statement(
            "INSERT OR REPLACE INTO app_store_renewal (environment, original_transaction_id, body, checksum) "
                + "VALUES (?, ?, ?, ?)",
            phase: .write)
        let putClaim = try statement("INSERT OR REPLACE INTO claim VALUES (?, ?, ?, ?)", phase: .write)
        let putChain = try statement("INSERT OR REPLACE INTO chain VALUES (?, ?, ?, ?, ?)", phase: .write)
        var lastSigned: Int64?
        for key in touched {
            for chain in merged.appStore.chainKeys(of: key) {
                for (id, record) in merged.appStore.chains[chain] ?? [:] {
                    let known = before.appStore.chains[chain]?[id]
                    guard known != record else { continue }
                    if known == nil { change.newTransactions += 1 } else { change.changedTransactions += 1 }
                    for statement in [record.signed, record.receipt] {
                        if let date = statement?.signedDate { lastSigned = max(lastSigned ?? date, date) }
                    }
                    try putTransaction.run(
                        [
                            .text(chain.environment), .text(chain.originalTransactionId), .text(chain.ownership),
                            .text(id),
                            .integer(record.newestRevocation == nil && record.newestSeatRefund == nil ? 0 : 1),
                        ] + Self.body(LedgerRecordJSON.object(record, inForce: false)))
                }
                let account = merged.appStore.account(of: chain)?.appAccountToken
                if account != before.appStore.account(of: chain)?.appAccountToken
                    || before.appStore.chains[chain] == nil
                {
                    try putChain.run([
                        .text(Self.channel), .text(chain.environment), .text(chain.originalTransactionId),
                        .text(chain.ownership), account.map(SQLiteStatement.Value.text) ?? .null,
                    ])
                }
            }
            if let renewal = merged.appStore.renewals[key], renewal != before.appStore.renewals[key] {
                change.renewalInfos += 1
                lastSigned = max(lastSigned ?? renewal.signedDate, renewal.signedDate)
                try putRenewal.run(
                    [.text(key.environment), .text(key.originalTransactionId)]
                        + Self.body(LedgerRecordJSON.object(renewal, key: key)))
            }
            if let token = merged.appStore.claims[key], before.appStore.claims[key] == nil {
                change.claims += 1
                try putClaim.run([
                    .text(Self.channel), .text(key.environment), .text(key.originalTransactionId), .text(token),
                ])
            }
        }
        try storeDeliveries(delta, into: &change)
        try storeOtherChannels(delta, into: &change, lastSigned: &lastSigned)
        try count(delta.statistics, lastSigned: lastSigned)
        return change
    }

    /// Joins the Stripe subscriptions, refunded charges and grants of `delta` into the stored
    /// ones, writing each record that changed.
    func storeOtherChannels(_ delta: EntitlementLedger, into change: inout Change, lastSigned: inout Int64?)
        throws(LedgerError)
    {
        let get = try statement(
            "SELECT \(RecordTable.channelRecord.columns) FROM channel_record "
                + "WHERE channel = ? AND environment = ? AND refund = ? AND id = ?",
            phase: .write)
        let put = try statement(
            "INSERT OR REPLACE INTO channel_record (channel, environment, refund, id, account, chain, customer, "
                + "body, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", phase: .write)
        func known(_ channel: String, _ environment: String, refund: Bool, _ id: String) throws(LedgerError)
            -> EntitlementLedger
        {
            var ledger = EntitlementLedger()
            try get.rows([.text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id)]) {
                row throws(LedgerError) in try insert(verified(row, .channelRecord), into: &ledger)
            }
            return ledger
        }
        func write(
            _ channel: String, _ environment: String, refund: Bool, _ id: String, account: AccountKey?,
            customer: String? = nil, _ body: JSONValue
        ) throws(LedgerError) {
            change.otherRecords += 1
            try put.run(
                [
                    .text(channel), .text(environment), .integer(refund ? 1 : 0), .text(id),
                    account?.appAccountToken.map(SQLiteStatement.Value.text) ?? .null,
                    .text(account?.originalTransactionId ?? id), customer.map(SQLiteStatement.Value.text) ?? .null,
                ] + Self.body(body))
        }
        let stripe = LedgerRecordJSON.stripe
        let putClaim = try statement("INSERT OR REPLACE INTO claim VALUES (?, ?, ?, ?)", phase: .write)
        for key in Set(delta.stripe.subscriptions.keys).union(delta.stripe.claims.keys).sorted() {
            var merged = try known(stripe, key.environment, refund: false, key.id)
            try loadClaim(of: key, into: &merged)
            let before = merged.stripe.subscriptions[key]
            let accountBefore = merged.stripe.subscriptionAccounts[key]
            if let record = delta.stripe.subscriptions[key] { merged.stripe.insert(record, for: key) }
            if let token = delta.stripe.claims[key], merged.stripe.claims[key] == nil {
                try merged.stripe.claim(key, for: token)
                change.claims += 1
                try putClaim.run([.text(stripe), .text(key.environment), .text(key.id), .text(token)])
            } else if let token = delta.stripe.claims[key], let owner = merged.stripe.owner(of: key), owner != token {
                throw StripeChannel.conflict(key, claimed: token, owner: owner)
            }
            guard let joined = merged.stripe.subscriptions[key],
                joined != before || merged.stripe.subscriptionAccounts[key] != accountBefore
            else { continue }
            for stamp in [joined.snapshot?.stamp, joined.payment?.stamp, joined.checkout?.stamp].compactMap({ $0 }) {
                lastSigned = max(lastSigned ?? stamp.created, stamp.created)
            }
            try write(
                stripe, key.environment, refund: false, key.id, account: merged.stripe.subscriptionAccounts[key],
                customer: joined.snapshot?.customer, LedgerRecordJSON.object(joined, key: key))
        }
        for (key, refund) in delta.stripe.refunds {
            var merged = try known(stripe, key.environment, refund: true, key.id)
            let before = merged.stripe.refunds[key]
            merged.stripe.insert(refund, for: key)
            guard let newest = merged.stripe.refunds[key], newest != before else { continue }
            lastSigned = max(lastSigned ?? newest.stamp.created, newest.stamp.created)
            let account = newest.account.map {
                AccountKey(environment: key.environment, appAccountToken: $0, originalTransactionId: key.id)
            }
            try write(
                stripe, key.environment, refund: true, key.id, account: account, customer: newest.customer,
                LedgerRecordJSON.object(newest, key: key))
        }
        for (key, grant) in delta.grants.grants {
            var merged = try known(key.source, key.environment, refund: false, key.id)
            let before = merged.grants.grants[key]
            merged.grants.insert(grant)
            guard let newest = merged.grants.grants[key], newest != before else { continue }
            lastSigned = max(lastSigned ?? newest.signedDate.milliseconds, newest.signedDate.milliseconds)
            try write(
                key.source, key.environment, refund: false, key.id, account: newest.account,
                LedgerRecordJSON.object(newest))
        }
    }

    func storeDeliveries(_ delta: EntitlementLedger, into change: inout Change) throws(LedgerError) {
        let known = try statement(
            "SELECT signed_date, seen FROM delivery WHERE channel = ? AND id = ?", phase: .write)
        let put = try statement("INSERT OR REPLACE INTO delivery VALUES (?, ?, ?, ?)", phase: .write)
        for (uuid, sightings) in delta.appStore.deliveries {
            var seen: [Int64: Int64] = [:]
            try known.rows([.text(Self.channel), .text(uuid)]) { row in
                seen[row.integer(0) ?? 0] = row.integer(1) ?? 0
            }
            for sighting in sightings.all.sorted(by: { $0.signedDate < $1.signedDate }) {
                if seen[sighting.signedDate] != nil {
                    change.duplicateNotifications += sighting.count
                } else {
                    if seen.isEmpty { change.newNotifications += 1 } else { change.retriedNotifications += 1 }
                    change.duplicateNotifications += sighting.count - 1
                }
                seen[sighting.signedDate, default: 0] += Int64(sighting.count)
                try put.run([
                    .text(Self.channel), .text(uuid), .integer(sighting.signedDate),
                    .integer(seen[sighting.signedDate]!),
                ])
            }
        }
    }

    /// The counters of what was fed, by name.
    static var counters: [(String, WritableKeyPath<EntitlementLedger.Statistics, Int>)] {
        [
            ("transactions", \.transactions), ("renewalInfos", \.renewalInfos), ("notifications", \.notifications),
            ("ignored", \.ignored), ("incomplete", \.incomplete), ("receipts", \.receipts),
            ("stripeEvents", \.stripeEvents), ("grants", \.grants),
        ]
    }

    func count(_ statistics: EntitlementLedger.Statistics, lastSigned: Int64?) throws(LedgerError) {
        let add = try statement(
            "INSERT INTO counter VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = value + ?2", phase: .write)
        for (name, path) in Self.counters where statistics[keyPath: path] != 0 {
            try add.run([.text(name), .integer(Int64(statistics[keyPath: path]))])
        }
        if let lastSigned {
            try statement(
                "INSERT INTO counter VALUES ('lastSignedDate', ?1) ON CONFLICT (name) DO UPDATE SET value = max(value, ?1)",
                phase: .write
            ).run([.integer(lastSigned)])
        }
    }

    /// A record's body and its checksum, the last two values of every write of a record.
    static func body(_ object: JSONValue) -> [SQLiteStatement.Value] {
        let text = JSONWriter.string(object)
        return [.text(text), .integer(checksum(text.utf8))]
    }

    // MARK: Reading records

    /// Reads every record of the chains of `keys` (each ownership), their renewal info and
    /// claims into `ledger`.
    func load(
        _ keys: Set<AppStoreChannel.RenewalKey>, into ledger: inout EntitlementLedger,
        phase: SQLiteConnection.Phase
    ) throws(LedgerError) {
        let transactions = try statement(
            "SELECT \(RecordTable.appStoreTransaction.columns) FROM app_store_transaction "
                + "WHERE environment = ? AND original_transaction_id = ?",
            phase: phase)
        let renewal = try statement(
            "SELECT \(RecordTable.appStoreRenewal.columns) FROM app_store_renewal "
                + "WHERE environment = ? AND original_transaction_id = ?", phase: phase)
        let claim = try statement(
            "SELECT account FROM claim WHERE channel = ? AND environment = ? AND chain = ?", phase: phase)
        for key in keys {
            let values: [SQLiteStatement.Value] = [.text(key.environment), .text(key.originalTransactionId)]
            try transactions.rows(values) { row throws(LedgerError) in
                try insert(verified(row, .appStoreTransaction), into: &ledger)
            }
            try renewal.rows(values) { row throws(LedgerError) in
                try insert(verified(row, .appStoreRenewal), into: &ledger)
            }
            try claim.rows([.text(Self.channel)] + values) { row in
                if let token = row.text(0) { ledger.appStore.insert(claim: token, for: key) }
            }
        }
    }

    /// Reads the account a caller bound the Stripe subscription `key` to, if any, into `ledger`.
    func loadClaim(of key: StripeKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
        try statement(
            "SELECT account FROM claim WHERE channel = 'stripe' AND environment = ? AND chain = ?", phase: .read
        ).rows([.text(key.environment), .text(key.id)]) { row in
            if let token = row.text(0) { ledger.stripe.insert(claim: token, for: key) }
        }
    }

    /// Reads one stored body into `ledger`, with the claim of a Stripe subscription.
    func insert(_ body: [UInt8], into ledger: inout EntitlementLedger) throws(LedgerError) {
        let stored: any StoredRecord
        do {
            stored = try LedgerRecordJSON.read(body)
        } catch {
            throw LedgerError(.corruptStore, "\(path) holds a record that does not read: \(error.reason)")
        }
        if case .subscription(let key, _)? = stored as? StripeRecord { try loadClaim(of: key, into: &ledger) }
        stored.insert(into: &ledger)
    }

    /// Every record of every table, in the export's order, to `body`.
    func eachRecord(_ body: ([UInt8]) throws(LedgerError) -> Void) throws(LedgerError) {
        func records(_ table: RecordTable) throws(LedgerError) {
            try statement("SELECT \(table.columns) FROM \(table.name) ORDER BY \(table.order)", phase: .read).rows {
                row throws(LedgerError) in try body(verified(row, table))
            }
        }
        try records(.appStoreTransaction)
        try records(.appStoreRenewal)
        try statement("SELECT \(Self.claimJSON) FROM claim ORDER BY channel, environment, chain", phase: .read).rows {
            row throws(LedgerError) in try body(row.bytes(0))
        }
        try records(.channelRecord)
    }

    /// A claim row as its record, made by SQLite so that every record reads through one reader.
    static let claimJSON =
        "json_object('kind', 'accountClaim', 'channel', channel, 'environment', environment, "
        + "CASE channel WHEN 'app_store' THEN 'originalTransactionId' ELSE 'subscriptionId' END, chain, "
        + "'appAccountToken', account)"

    /// Everything the store holds, as one ledger answering by the store's catalog (its
    /// `statistics` are its own; the store's are ``statistics()``).
    public func ledger() throws(LedgerError) -> EntitlementLedger {
        try reading { () throws(LedgerError) -> EntitlementLedger in
            var ledger = EntitlementLedger(catalog: catalog)
            try eachRecord { bytes throws(LedgerError) in try insert(bytes, into: &ledger) }
            return ledger
        }
    }

    /// Writes every record the store holds, one JSON object per call, newline-free, in a
    /// stable order (transactions, renewal info, account claims, each by its keys): the
    /// records of `vouch ledger export` (Schemas/ledger-export.schema.json).
    public func export(_ write: ([UInt8]) throws -> Void) throws {
        var failure: (any Error)?
        try reading { () throws(LedgerError) in
            try eachRecord { bytes throws(LedgerError) in
                guard failure == nil else { return }
                let object: JSONValue
                do throws(RecordFormatError) {
                    object = try LedgerRecordJSON.read(bytes).exported
                } catch {
                    throw LedgerError(.corruptStore, "\(path) holds a record that does not read: \(error.reason)")
                }
                do { try write(JSONWriter.encode(object)) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

}
