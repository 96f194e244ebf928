internal import Foundation
public import Vouch

extension LedgerStore {
    /// What a store holds and was fed.
    public struct Statistics: Sendable, Hashable {
        /// Accounts (as ``EntitlementLedger/accounts`` counts them).
        public internal(set) var accounts = 0
        /// Transaction chains.
        public internal(set) var chains = 0
        /// Distinct transactions.
        public internal(set) var transactions = 0
        /// Chains with renewal info.
        public internal(set) var renewalInfos = 0
        /// Chains bound to an account a caller named.
        public internal(set) var claims = 0
        /// Stripe subscriptions.
        public internal(set) var stripeSubscriptions = 0
        /// Refunded Stripe charges.
        public internal(set) var stripeRefunds = 0
        /// Grants of a server's own sources.
        public internal(set) var grants = 0
        /// What the additions read (transaction and renewal info statements, notifications,
        /// receipts, payloads ignored, incomplete ones), each distinct input counted once
        /// however often it was added (``EntitlementLedger/batch()``): a rerun after a stopped
        /// run, or a repeat, counts nothing again.
        public internal(set) var fed = EntitlementLedger.Statistics()
        /// Distinct `notificationUUID`s and their retries (as
        /// ``EntitlementLedger/NotificationDeliveries``); each delivery is held once, so
        /// `duplicates` counts only what a store made before schema 4 had counted.
        public internal(set) var deliveries = EntitlementLedger.NotificationDeliveries()
        /// The latest `signedDate` (or receipt creation date) of any statement held.
        public internal(set) var lastSignedDate: Timestamp?
        /// The size of the file and its write-ahead log, in bytes.
        public internal(set) var bytes: Int64 = 0
        /// The file's schema version.
        public internal(set) var schemaVersion = LedgerStore.schemaVersion

        /// Statements read: transaction and renewal info statements.
        public var statements: Int { fed.transactions + fed.renewalInfos }
    }

    /// What the store holds and was fed.
    public func statistics() throws(LedgerError) -> Statistics {
        try reading { () throws(LedgerError) -> Statistics in
            var statistics = Statistics()
            func integer(_ sql: String) throws(LedgerError) -> Int {
                let query = try statement(sql, phase: .read)
                try query.bind([])
                guard try query.step() else { return 0 }
                return Int(query.integer(0) ?? 0)
            }
            for (path, sql) in Statistics.counts { statistics[keyPath: path] = try integer(sql) }
            var counters: [String: Int64] = [:]
            try statement("SELECT name, value FROM counter", phase: .read).rows { row in
                counters[row.text(0) ?? ""] = row.integer(1)
            }
            for (name, path) in Self.counters { statistics.fed[keyPath: path] = Int(counters[name] ?? 0) }
            statistics.lastSignedDate = counters["lastSignedDate"].map(Timestamp.init(milliseconds:))
            statistics.bytes = [path, path + "-wal"].reduce(0) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0)
            }
            return statistics
        }
    }
}

extension LedgerStore.Statistics {
    /// What a store holds, each count by one query that SQLite and PostgreSQL read alike.
    static var counts: [(WritableKeyPath<LedgerStore.Statistics, Int>, String)] {
        [
            (
                \.accounts,
                "SELECT count(*) FROM (SELECT environment, coalesce(account, '#' || chain) FROM chain "
                    + "WHERE channel = 'app_store' UNION SELECT environment, coalesce(account, '#' || chain) "
                    + "FROM channel_record WHERE refund = 0) AS accounts"
            ),
            (\.stripeSubscriptions, "SELECT count(*) FROM channel_record WHERE channel = 'stripe' AND refund = 0"),
            (\.stripeRefunds, "SELECT count(*) FROM channel_record WHERE channel = 'stripe' AND refund = 1"),
            (\.grants, "SELECT count(*) FROM channel_record WHERE channel != 'stripe'"),
            (\.chains, "SELECT count(*) FROM chain WHERE channel = 'app_store'"),
            (\.transactions, "SELECT count(*) FROM app_store_transaction"),
            (\.renewalInfos, "SELECT count(*) FROM app_store_renewal"),
            (\.claims, "SELECT count(*) FROM claim WHERE channel = 'app_store'"),
            (\.deliveries.notifications, "SELECT count(DISTINCT id) FROM delivery WHERE channel = 'app_store'"),
            (
                \.deliveries.retries,
                "SELECT count(*) - count(DISTINCT id) FROM delivery WHERE channel = 'app_store'"
            ),
            (
                \.deliveries.duplicates,
                "SELECT coalesce(sum(seen - 1), 0) FROM delivery WHERE channel = 'app_store'"
            ),
        ]
    }
}
