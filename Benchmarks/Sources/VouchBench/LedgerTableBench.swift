import CBenchOpenSSL  // timespec, clock_gettime and mallinfo2
import Foundation
import Vouch
import VouchBatch
import VouchEntitlements

// The keyed ledger at scale: histories of many accounts made by `vouch mint history`, verified
// with `BatchVerifier.verify(from:deliver:)` into an `EntitlementLedger` and, beside it, into a
// `LedgerStore`; then lookups of sampled accounts by appAccountToken, originalTransactionId and
// transactionId, each timed alone (the answer for one account: its lookup and its
// `entitlements(of:at:)`). The add rate is payloads per second spent inside `add` (on the
// delivering thread), not the verification's; memory is the growth of the bytes in use on the
// heap (glibc's mallinfo2, every arena) while the ledger fills, per transaction held: unlike
// the resident set, it leaves out what verification's threads freed and the allocator kept.
//
// A SQLite store's lookups are timed warm: its file is read through once before them, so that
// the kernel's cache holds it, as it holds the file of a store a server keeps answering from.
// The adds leave the file partly out of that cache (a large file, other files read since, or a
// kernel that pages out what has been idle a while), and an uncached page is a read from the
// disk: one pass by appAccountToken over a second sample of accounts is timed before the read, as
// the adds left the cache. A PostgreSQL store's tables and indexes are read through the same
// way, by `pg_prewarm` in its `read` mode (into the kernel's cache, as the SQLite file is),
// through `psql` (that of `VOUCH_TEST_POSTGRESQL_BIN`, else the one on the PATH); without
// either the table says its lookups were not warmed. The same file is then read once more
// through a memory map (`LedgerStore.Options.memoryMapBytes`), by a reader opened before the
// adds, with the same keys: what a server that maps its file answers. Its warming maps every
// page too (`check()` reads them all), as a server that has answered a while has touched them.

struct LedgerTableReport {
    var accounts = 0
    var payloads = 0
    var bytes = 0
    /// Seconds `vouch mint history` took; nil when the histories of an earlier run were reused.
    var mintSeconds: Double?
    var verifySeconds = 0.0
    var addSeconds = 0.0
    var chains = 0
    var transactions = 0
    var ledgerAccounts = 0
    var heapGrowth: Int?
    /// The stores measured beside memory: the SQLite file, and a PostgreSQL server when one is named.
    var stores: [StoreColumn] = []
    var lookups: [(name: String, memory: [Double])] = []

    /// One stored ledger's column: its add time, its size and its lookups (in ``lookups``' order).
    struct StoreColumn {
        let name: String
        let store: any LedgerStoring
        /// What the table says of its size: the file with its log, or the server's tables.
        let sizeLabel: String
        /// The p99 lookup the issue sets as its goal, in seconds.
        let goalP99: Double
        /// What is read through before the timed lookups.
        let warming: Warming
        /// Whether it holds what was verified (its adds are timed) and is timed before it is
        /// read through; false for a second reader of a store another column filled.
        var fills = true
        var addSeconds = 0.0
        /// Seconds reading the store through took; nil when it could not be read through.
        var readSeconds: Double?
        /// Lookups by appAccountToken before the store was read through (a second sample of accounts).
        var coldLookups: [Double] = []
        var bytes: Int64 = 0
        var lookups: [[Double]] = []
        var pending = EntitlementLedger()
    }

    /// How a store is read into the kernel's cache before its timed lookups.
    enum Warming {
        /// A file and its write-ahead log, read through.
        case file(String)
        /// A PostgreSQL server's relations of the store's schema, by `pg_prewarm`.
        case postgreSQL(String)
        /// A file read through, then every page of it through the memory map of `store` (its
        /// `check()`), as a server that has answered a while has touched them.
        case mapped(String, LedgerStore)

        /// Reads the store through; false when it could not be.
        func warm() -> Bool {
            switch self {
            case .file(let path):
                for file in [path, path + "-wal"] { readThrough(file) }
                return true
            case .mapped(let path, let store):
                for file in [path, path + "-wal"] { readThrough(file) }
                return (try? store.check()) != nil
            case .postgreSQL(let uri):
                let psql =
                    ProcessInfo.processInfo.environment["VOUCH_TEST_POSTGRESQL_BIN"].map { $0 + "/psql" } ?? "psql"
                let sql =
                    "CREATE EXTENSION IF NOT EXISTS pg_prewarm; SELECT sum(pg_prewarm(c.oid, 'read')) FROM pg_class c "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                    + "AND c.relkind IN ('r', 'i')"
                return run(
                    "\(shellQuote(psql)) -X -q -v ON_ERROR_STOP=1 \(shellQuote(uri)) -c \(shellQuote(sql)) > /dev/null"
                )
                .status == 0
            }
        }
    }

    static func percentile(_ sorted: [Double], _ share: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * share))]
    }

    static func microseconds(_ seconds: Double) -> String {
        seconds.isNaN ? "–" : String(format: "%.1f µs", seconds * 1e6)
    }

    var markdown: String {
        var lines = [
            "",
            "Keyed ledger: \(accounts) accounts minted by `vouch mint history` (\(payloads) tokens, \(bytes / 1_048_576) MiB, "
                + (mintSeconds.map { "minted in \(String(format: "%.0f", $0)) s" } ?? "minted by an earlier run")
                + "), verified in \(String(format: "%.0f", verifySeconds)) s "
                + "into \(ledgerAccounts) ledger accounts, \(chains) chains, \(transactions) transactions.",
            "",
            "| measurement | `EntitlementLedger` (memory) |" + stores.map { " \($0.name) |" }.joined(),
            "|---|---:|" + stores.map { _ in "---:|" }.joined(),
            "| add rate, payloads/s (time inside `add`; a store's in transactions of 20,000 payloads) | "
                + "\(String(format: "%.0f", Double(payloads) / addSeconds)) |"
                + stores.map {
                    " " + ($0.addSeconds > 0 ? String(format: "%.0f", Double(payloads) / $0.addSeconds) : "–") + " |"
                }
                .joined(),
        ]
        for (index, lookup) in lookups.enumerated() {
            let memory = lookup.memory.sorted()
            var line =
                "| \(lookup.name), p50 / p99 | "
                + "\(Self.microseconds(Self.percentile(memory, 0.5))) / \(Self.microseconds(Self.percentile(memory, 0.99))) |"
            for column in stores {
                let times = index < column.lookups.count ? column.lookups[index].sorted() : []
                line +=
                    " \(Self.microseconds(Self.percentile(times, 0.5))) / \(Self.microseconds(Self.percentile(times, 0.99))) |"
            }
            lines.append(line)
        }
        if stores.contains(where: { !$0.coldLookups.isEmpty }) {
            lines.append(
                "| lookup by `appAccountToken` and `entitlements(of:at:)` before the store is read through "
                    + "(a second sample of accounts; the kernel's cache as the adds left it), p50 / p99 | – |"
                    + stores.map { column in
                        let times = column.coldLookups.sorted()
                        guard !times.isEmpty else { return " – |" }
                        return
                            " \(Self.microseconds(Self.percentile(times, 0.5))) / \(Self.microseconds(Self.percentile(times, 0.99))) |"
                    }.joined())
        }
        lines.append(
            "| bytes per transaction (heap in use; a store's size on disk) | "
                + (heapGrowth.map { String($0 / max(transactions, 1)) } ?? "–") + " |"
                + stores.map { " " + ($0.bytes > 0 ? String($0.bytes / Int64(max(transactions, 1))) : "–") + " |" }
                .joined())
        lines.append("")
        lines.append(
            "Lookups: \(lookups.first?.memory.count ?? 0) sampled accounts in memory, "
                + "\(stores.first?.lookups.first?.count ?? 0) in each store, each timed alone. Goals of p99: memory 50 µs"
                + stores.map { ", \($0.name) \(Self.microseconds($0.goalP99))" }.joined() + "; "
                + stores.map { column in
                    let worst = column.lookups.map { Self.percentile($0.sorted(), 0.99) }.max() ?? .nan
                    return
                        "\(column.name) worst p99 \(Self.microseconds(worst)) (\(worst <= column.goalP99 ? "met" : "not met"))"
                }.joined(separator: ", ") + ". Sizes: "
                + stores.map { "\($0.name) \($0.sizeLabel)" }.joined(separator: "; ")
                + "."
                + stores.map { column in
                    column.readSeconds.map {
                        " \(column.name): read through in \(String(format: "%.1f", $0)) s before the timed lookups."
                    } ?? " \(column.name): not read through before the timed lookups."
                }.joined()
        )
        return lines.joined(separator: "\n")
    }
}

/// A small seeded generator for the samples (xorshift64*).
struct SampleRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

func benchLedgerTable(
    accounts: Int, jobs: Int, store withStore: Bool, postgreSQL: String? = nil, vouch: URL, directory: URL,
    histories kept: URL? = nil, samples: Int = 100_000, storeSamples: Int = 10_000
) throws -> LedgerTableReport {
    var report = LedgerTableReport()
    report.accounts = accounts
    let folder = kept ?? directory
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let ca = folder.appendingPathComponent("ledger-ca")
    let histories = folder.appendingPathComponent("histories.jwsl.gz")
    // Written once the histories are whole: kept histories are reused for the same count only.
    let minted = folder.appendingPathComponent("accounts.txt")
    let quoted = shellQuote(vouch.path)

    // 1. Mint, as a user would: a CA valid over the histories, then the histories, gzipped.
    if kept != nil, (try? String(contentsOf: minted, encoding: .utf8)) == "\(accounts)\n" {
        log("ledger table: the histories of \(accounts) accounts minted before, in \(folder.path)")
    } else {
        try? FileManager.default.removeItem(at: minted)
        try? FileManager.default.removeItem(at: ca)
        log("ledger table: minting the histories of \(accounts) accounts with vouch mint history …")
        guard
            run(
                "\(quoted) mint ca --out \(shellQuote(ca.path)) --not-before 2025-01-01 --not-after 2045-01-01 > /dev/null"
            ).status == 0
        else { throw CocoaError(.executableLoad) }
        let mint = run(
            "\(quoted) mint history --ca \(shellQuote(ca.path)) --count \(accounts) --seed 29 --date 2026-06-01 "
                + "| gzip -1 > \(shellQuote(histories.path))")
        guard mint.status == 0 else { throw CocoaError(.executableLoad) }
        report.mintSeconds = mint.seconds
        try Data("\(accounts)\n".utf8).write(to: minted)
    }

    // 2. Verify into the ledger (and the store, in transactions of 20,000 payloads).
    var configuration = Verifier.Configuration.acceptingAnyApp()
    configuration.trustAnchors = [Array(try Data(contentsOf: ca.appendingPathComponent("root.der")))]
    let batch = BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: jobs)
    let storePath = directory.appendingPathComponent("ledger.sqlite").path
    if withStore {
        report.stores.append(
            .init(
                name: "`LedgerStore` (SQLite)", store: try LedgerStore(path: storePath),
                sizeLabel: "the file with its log", goalP99: 200e-6, warming: .file(storePath)))
        if let postgreSQL {
            report.stores.append(
                .init(
                    name: "`PostgreSQLLedgerStore` (loopback)", store: try PostgreSQLLedgerStore(postgreSQL),
                    sizeLabel: "the server's tables and indexes", goalP99: 1e-3,
                    warming: .postgreSQL(postgreSQL)))
        }
    }
    // The same file read through a memory map (`memoryMapBytes`): a reader of what the first
    // column stores, timed after it.
    var mapped: LedgerTableReport.StoreColumn?
    if withStore {
        let store = try LedgerStore(path: storePath, access: .readOnly, options: .init(memoryMapBytes: 1 << 40))
        mapped = .init(
            name: "`LedgerStore` (SQLite, memory-mapped)", store: store, sizeLabel: "the same file", goalP99: 200e-6,
            warming: .mapped(storePath, store), fills: false)
    }
    var ledger = EntitlementLedger()
    var pendingCount = 0
    var transactionIds: [String] = []
    var random = SampleRandom(state: 0x9E37_79B9_7F4A_7C15)
    log("ledger table: verifying into the ledger\(withStore ? " and the store" : "") …")
    let before = heapBytes()
    let start = now()
    let summary = try batch.verify(from: try InputReader(path: histories.path)) { result in
        guard let verified = result.payload else { return }
        report.payloads += 1
        if case .transaction(let transaction) = verified.decoded, let id = transaction.transactionId {
            // A reservoir of transaction ids to look up.
            if transactionIds.count < samples {
                transactionIds.append(id)
            } else {
                let slot = random.below(report.payloads)
                if slot < samples { transactionIds[slot] = id }
            }
        }
        let addStart = threadCPUSeconds()
        ledger.add(verified)
        report.addSeconds += threadCPUSeconds() - addStart
        pendingCount += report.stores.isEmpty ? 0 : 1
        for index in report.stores.indices {
            let storeStart = now()
            report.stores[index].pending.add(verified)
            if pendingCount == 20_000 {
                try report.stores[index].store.add(contentsOf: report.stores[index].pending)
                report.stores[index].pending = EntitlementLedger()
            }
            report.stores[index].addSeconds += now() - storeStart
        }
        if pendingCount == 20_000 { pendingCount = 0 }
    }
    for index in report.stores.indices where pendingCount > 0 {
        let storeStart = now()
        try report.stores[index].store.add(contentsOf: report.stores[index].pending)
        report.stores[index].addSeconds += now() - storeStart
        report.stores[index].pending = EntitlementLedger()
    }
    report.verifySeconds = now() - start
    if let mapped { report.stores.append(mapped) }
    // SQLite's page cache (2 MiB) and the sampled transaction ids are counted too: a few MiB
    // against the ledger's.
    report.heapGrowth = heapBytes() - before
    report.bytes = summary.bytesConsumed
    report.chains = ledger.chainCount
    report.transactions = ledger.transactionCount

    // 3. Lookups of sampled accounts, each timed alone.
    let all = ledger.accounts
    report.ledgerAccounts = all.count
    let instant = Timestamp(milliseconds: 1_780_272_000_000)
    let sampled = (0..<samples).map { _ in all[random.below(all.count)] }
    let tokens = sampled.compactMap(\.appAccountTokenUUID)
    let chains = sampled.compactMap { ledger.entitlements(of: $0, at: instant)?.originalTransactionIds.first }

    func timed<Key>(_ keys: [Key], _ body: (Key) throws -> Int) rethrows -> [Double] {
        var times: [Double] = []
        times.reserveCapacity(keys.count)
        var sink = 0
        for key in keys {
            let begin = now()
            sink &+= try body(key)
            times.append(now() - begin)
        }
        if sink == -1 { print(sink) }  // keeps the answers alive
        return times
    }
    log("ledger table: \(samples) lookups of each kind in memory …")
    let byToken = timed(tokens) { uuid in
        ledger.accounts(matching: uuid).reduce(0) {
            $0 + (ledger.entitlements(of: $1, at: instant)?.entitlements.count ?? 0)
        }
    }
    let byChain = timed(chains) { chain in
        ledger.accounts(matching: chain).reduce(0) {
            $0 + (ledger.entitlements(of: $1, at: instant)?.entitlements.count ?? 0)
        }
    }
    let byTransaction = timed(transactionIds) { id in
        ledger.accounts(withTransactionId: id).reduce(0) {
            $0 + (ledger.entitlements(of: $1, at: instant)?.entitlements.count ?? 0)
        }
    }
    let inOneCall = timed(tokens) { uuid in
        ledger.entitlements(ofAccountsMatching: uuid.uuidString, at: instant).reduce(0) { $0 + $1.entitlements.count }
    }
    for index in report.stores.indices {
        let store = report.stores[index].store
        if report.stores[index].fills {
            log(
                "ledger table: \(storeSamples) lookups by appAccountToken in \(report.stores[index].name) as the adds left it …"
            )
            report.stores[index].coldLookups = try timed(Array(tokens.suffix(storeSamples))) { uuid in
                try store.accounts(matching: uuid).reduce(0) {
                    $0 + ((try store.entitlements(of: $1, at: instant))?.entitlements.count ?? 0)
                }
            }
        }
        let begin = now()
        if report.stores[index].warming.warm() {
            report.stores[index].readSeconds = now() - begin
        } else {
            log(
                "ledger table: \(report.stores[index].name) could not be read through; its lookups are timed as they come"
            )
        }
        log("ledger table: \(storeSamples) lookups of each kind in \(report.stores[index].name) …")
        let byToken = try timed(Array(tokens.prefix(storeSamples))) { uuid in
            try store.accounts(matching: uuid).reduce(0) {
                $0 + ((try store.entitlements(of: $1, at: instant))?.entitlements.count ?? 0)
            }
        }
        let byChain = try timed(Array(chains.prefix(storeSamples))) { chain in
            try store.accounts(matching: chain).reduce(0) {
                $0 + ((try store.entitlements(of: $1, at: instant))?.entitlements.count ?? 0)
            }
        }
        let byTransaction = try timed(Array(transactionIds.prefix(storeSamples))) { id in
            try store.accounts(withTransactionId: id).reduce(0) {
                $0 + ((try store.entitlements(of: $1, at: instant))?.entitlements.count ?? 0)
            }
        }
        let inOneCall = try timed(Array(tokens.prefix(storeSamples))) { uuid in
            try store.entitlements(ofAccountsMatching: uuid.uuidString, at: instant).reduce(0) {
                $0 + $1.entitlements.count
            }
        }
        report.stores[index].lookups = [byToken, byChain, byTransaction, inOneCall]
        report.stores[index].bytes = try store.statistics().bytes
        store.close()
    }
    report.lookups = [
        ("lookup by `appAccountToken` (`UUID`) and `entitlements(of:at:)`", byToken),
        ("lookup by `originalTransactionId` and `entitlements(of:at:)`", byChain),
        ("lookup by `transactionId` and `entitlements(of:at:)`", byTransaction),
        ("`entitlements(ofAccountsMatching:at:)` by `appAccountToken`, one call (`vouch serve`'s answer)", inOneCall),
    ]
    if kept == nil { try? FileManager.default.removeItem(at: histories) }
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
    return report
}

/// Reads the file at `path` through, so that the kernel's cache holds it (a missing file: nothing).
func readThrough(_ path: String) {
    guard let handle = FileHandle(forReadingAtPath: path) else { return }
    defer { try? handle.close() }
    while let chunk = try? handle.read(upToCount: 8 << 20), !chunk.isEmpty {}
}

/// Bytes in use on the heap: allocated in every arena, and in blocks of their own.
func heapBytes() -> Int {
    let info = mallinfo2()
    return Int(info.uordblks + info.hblkhd)
}
