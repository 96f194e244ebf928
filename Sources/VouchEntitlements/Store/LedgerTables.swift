internal import Foundation
internal import Vouch

/// The rows of a store's tables as joining a batch reads and writes them, each store in its own
/// SQL (``LedgerStore`` in SQLite's, ``PostgreSQLLedgerStore`` in PostgreSQL's). What a batch
/// changes, and which rows say so, is decided once for every store, by ``join(_:)``: it loads
/// the touched records into an ``EntitlementLedger``, merges the batch by the ledger's own rules
/// and writes the records that changed. Every call runs inside the store's write transaction.
protocol LedgerTables {
    /// The store as reasons name it: a file's path, a server's address.
    var name: String { get }
    /// Reads every record of the chains of `keys` (each ownership), their renewal info and
    /// claims into `ledger`.
    func loadChains(_ keys: Set<AppStoreChannel.RenewalKey>, into ledger: inout EntitlementLedger)
        throws(LedgerError)
    /// The stored record of `id` in `channel` and `environment` (none or one).
    func records(channel: String, environment: String, refund: Bool, id: String) throws(LedgerError)
        -> [any StoredRecord]
    /// The account a caller bound the Stripe subscription `key` to, if any.
    func stripeClaim(of key: StripeKey) throws(LedgerError) -> String?
    /// How often each `signedDate` of each notification of `ids` was seen: by id, then by
    /// `signedDate` (a notification never seen is absent).
    func deliveries(channel: String, ids: [String]) throws(LedgerError) -> [String: [Int64: Int64]]
    /// Writes (inserts or replaces) one App Store transaction's record.
    func putTransaction(
        _ chain: AppStoreChannel.ChainKey, transactionId: String, revoked: Bool, record: TransactionRecord
    ) throws(LedgerError)
    /// Writes (inserts or replaces) one chain's renewal info.
    func putRenewal(_ key: AppStoreChannel.RenewalKey, renewal: RenewalStatement) throws(LedgerError)
    /// Writes (inserts or replaces) the account a caller bound a chain or subscription to.
    func putClaim(channel: String, environment: String, chain: String, account: String) throws(LedgerError)
    /// Writes (inserts or replaces) a chain and the account it belongs to.
    func putChain(channel: String, _ chain: AppStoreChannel.ChainKey, account: String?) throws(LedgerError)
    /// Writes (inserts or replaces) one record of another channel.
    func putRecord(
        channel: String, environment: String, refund: Bool, id: String, account: String?, chain: String,
        body: String, customer: String?) throws(LedgerError)
    /// Writes (inserts or replaces) how often a notification's `signedDate` was seen.
    func putDelivery(channel: String, id: String, signedDate: Int64, seen: Int64) throws(LedgerError)
    /// Records the inputs of `digests` (ascending, distinct) as fed and returns those the store
    /// did not hold before (``EntitlementLedger/inputs``).
    func newInputs(_ digests: [Int64]) throws(LedgerError) -> [Int64]
    /// Adds `value` to the counter `name`.
    func addCounter(_ name: String, _ value: Int64) throws(LedgerError)
    /// Raises the counter `lastSignedDate` to `value` when it is lower.
    func raiseLastSignedDate(_ value: Int64) throws(LedgerError)
    /// Sends the writes a store holds to send together, if any: ``join(_:)`` ends with it, so
    /// that its transaction commits all it wrote. A store that writes each row at once has
    /// nothing to send.
    func flushWrites() throws(LedgerError)
}

extension LedgerTables {
    func flushWrites() throws(LedgerError) {}

    /// The record of one stored body of JSON.
    func record(_ body: [UInt8]) throws(LedgerError) -> any StoredRecord {
        do {
            return try LedgerRecordJSON.read(body)
        } catch {
            throw LedgerError(.corruptStore, "\(name) holds a record that does not read: \(error.reason)")
        }
    }

    /// Reads one stored record into `ledger`, with the claim of a Stripe subscription.
    func insert(_ stored: any StoredRecord, into ledger: inout EntitlementLedger) throws(LedgerError) {
        if case .subscription(let key, _)? = stored as? StripeRecord { try loadClaim(of: key, into: &ledger) }
        stored.insert(into: &ledger)
    }

    /// Reads the account a caller bound the Stripe subscription `key` to, if any, into `ledger`.
    func loadClaim(of key: StripeKey, into ledger: inout EntitlementLedger) throws(LedgerError) {
        if let token = try stripeClaim(of: key) { ledger.stripe.insert(claim: token, for: key) }
    }

    /// Joins `delta` (a batch of verified data gathered in a ledger) into the stored records:
    /// each record it touches is loaded, merged by the ledger's rules and written when it
    /// changed; the notification deliveries and the counters of what was fed are added.
    ///
    /// Throws ``LedgerError/Code/accountConflict`` when the batch binds a chain or subscription
    /// the store holds for another account; the caller's transaction then stores nothing.
    func join(_ delta: EntitlementLedger) throws(LedgerError) -> LedgerStore.Change {
        var touched = Set(delta.appStore.chains.keys.map(\.renewalKey))
        touched.formUnion(delta.appStore.renewals.keys)
        touched.formUnion(delta.appStore.claims.keys)
        var merged = EntitlementLedger()
        try loadChains(touched, into: &merged)
        let before = merged
        for (key, token) in delta.appStore.claims {
            if let owner = merged.appStore.owner(of: key), owner != token {
                throw AppStoreChannel.conflict(key, claimed: token, owner: owner)
            }
        }
        merged.merge(delta)

        var change = LedgerStore.Change()
        let appStore = LedgerRecordJSON.appStore
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
                    try putTransaction(
                        chain, transactionId: id,
                        revoked: record.newestRevocation != nil || record.newestSeatRefund != nil, record: record)
                }
                let account = merged.appStore.account(of: chain)?.appAccountToken
                if account != before.appStore.account(of: chain)?.appAccountToken
                    || before.appStore.chains[chain] == nil
                {
                    try putChain(channel: appStore, chain, account: account)
                }
            }
            if let renewal = merged.appStore.renewals[key], renewal != before.appStore.renewals[key] {
                change.renewalInfos += 1
                lastSigned = max(lastSigned ?? renewal.signedDate, renewal.signedDate)
                try putRenewal(key, renewal: renewal)
            }
            if let token = merged.appStore.claims[key], before.appStore.claims[key] == nil {
                change.claims += 1
                try putClaim(
                    channel: appStore, environment: key.environment, chain: key.originalTransactionId, account: token)
            }
        }
        try joinDeliveries(delta, into: &change)
        try joinOtherChannels(delta, into: &change, lastSigned: &lastSigned)
        let fed = try newlyFed(delta)
        for (name, path) in LedgerStore.counters where fed[keyPath: path] != 0 {
            try addCounter(name, Int64(fed[keyPath: path]))
        }
        if let lastSigned { try raiseLastSignedDate(lastSigned) }
        try flushWrites()
        return change
    }

    /// What the inputs of `delta` that the store did not hold add to its counters, recording
    /// them as held: an input added again counts nothing. A ledger that does not know its
    /// inputs (made otherwise than by ``EntitlementLedger/batch()``) is counted whole.
    private func newlyFed(_ delta: EntitlementLedger) throws(LedgerError) -> EntitlementLedger.Statistics {
        guard let inputs = delta.inputs else { return delta.statistics }
        var fed = EntitlementLedger.Statistics()
        guard !inputs.isEmpty else { return fed }
        for digest in try newInputs(inputs.keys.sorted()) {
            if let added = inputs[digest] { fed.add(added) }
        }
        return fed
    }

    /// Joins the Stripe subscriptions, refunded charges and grants of `delta` into the stored
    /// ones, writing each record that changed.
    private func joinOtherChannels(
        _ delta: EntitlementLedger, into change: inout LedgerStore.Change, lastSigned: inout Int64?
    ) throws(LedgerError) {
        func known(_ channel: String, _ environment: String, refund: Bool, _ id: String) throws(LedgerError)
            -> EntitlementLedger
        {
            var ledger = EntitlementLedger()
            for record in try records(channel: channel, environment: environment, refund: refund, id: id) {
                try insert(record, into: &ledger)
            }
            return ledger
        }
        func write(
            _ channel: String, _ environment: String, refund: Bool, _ id: String, account: AccountKey?,
            customer: String? = nil, _ body: JSONValue
        ) throws(LedgerError) {
            change.otherRecords += 1
            try putRecord(
                channel: channel, environment: environment, refund: refund, id: id,
                account: account?.appAccountToken, chain: account?.originalTransactionId ?? id,
                body: JSONWriter.string(body), customer: customer)
        }
        let stripe = LedgerRecordJSON.stripe
        for key in Set(delta.stripe.subscriptions.keys).union(delta.stripe.claims.keys).sorted() {
            var merged = try known(stripe, key.environment, refund: false, key.id)
            try loadClaim(of: key, into: &merged)
            let before = merged.stripe.subscriptions[key]
            let accountBefore = merged.stripe.subscriptionAccounts[key]
            if let record = delta.stripe.subscriptions[key] { merged.stripe.insert(record, for: key) }
            if let token = delta.stripe.claims[key], merged.stripe.claims[key] == nil {
                try merged.stripe.claim(key, for: token)
                change.claims += 1
                try putClaim(channel: stripe, environment: key.environment, chain: key.id, account: token)
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

    /// Counts each notification delivery of `delta` as new, a retry signed anew, or a duplicate
    /// of a `signedDate` seen before (the store's dedup key: `notificationUUID` and
    /// `signedDate`), and writes each new delivery once (`seen` 1): a delivery read again, in
    /// this addition or a later one, is a duplicate of the addition's summary and leaves the
    /// store as it is, so that a rerun counts what a single run counts.
    private func joinDeliveries(_ delta: EntitlementLedger, into change: inout LedgerStore.Change)
        throws(LedgerError)
    {
        let channel = LedgerRecordJSON.appStore
        let stored = try deliveries(channel: channel, ids: Array(delta.appStore.deliveries.keys))
        for (uuid, sightings) in delta.appStore.deliveries {
            let seen = stored[uuid] ?? [:]
            var known = seen.count
            for sighting in sightings.all.sorted(by: { $0.signedDate < $1.signedDate }) {
                if seen[sighting.signedDate] != nil {
                    change.duplicateNotifications += sighting.count
                    continue
                }
                if known == 0 { change.newNotifications += 1 } else { change.retriedNotifications += 1 }
                known += 1
                change.duplicateNotifications += sighting.count - 1
                try putDelivery(channel: channel, id: uuid, signedDate: sighting.signedDate, seen: 1)
            }
        }
    }

    /// The advisory lock names of what joining `delta` reads and writes: its chains, Stripe
    /// subscriptions and refunded charges, grants and notifications. A store serving many
    /// writers serialises the writers of one name by it.
    static func lockNames(of delta: EntitlementLedger) -> Set<String> {
        var names = Set<String>()
        let appStore = LedgerRecordJSON.appStore
        var touched = Set(delta.appStore.chains.keys.map(\.renewalKey))
        touched.formUnion(delta.appStore.renewals.keys)
        touched.formUnion(delta.appStore.claims.keys)
        for key in touched { names.insert("\(appStore)|chain|\(key.environment)|\(key.originalTransactionId)") }
        for uuid in delta.appStore.deliveries.keys { names.insert("\(appStore)|delivery|\(uuid)") }
        let stripe = LedgerRecordJSON.stripe
        for key in Set(delta.stripe.subscriptions.keys).union(delta.stripe.claims.keys) {
            names.insert("\(stripe)|subscription|\(key.environment)|\(key.id)")
        }
        for key in delta.stripe.refunds.keys { names.insert("\(stripe)|refund|\(key.environment)|\(key.id)") }
        for key in delta.grants.grants.keys { names.insert("\(key.source)|grant|\(key.environment)|\(key.id)") }
        return names
    }
}
