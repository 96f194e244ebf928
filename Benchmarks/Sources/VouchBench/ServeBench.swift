import Dispatch
import Foundation
import Vouch
import VouchBatch
import VouchEntitlements
import VouchMint
import VouchServer

// `vouch serve` measured against `vouch ledger add` of the same data, in one run.
//
// Deliveries: App Store Server Notifications V2 of minted histories (`MintHistoryGenerator`,
// each a `{"signedPayload":…}` body as the App Store posts it) stored three ways, each into a
// fresh SQLite file: by the `vouch ledger add` binary, by the library as that command stores
// (`BatchVerifier` over an `InputReader`, `LedgerStore.add(contentsOf:)` every 10,000), and
// posted to an in-process `HTTPServer` with `LedgerService` (what `vouch serve` runs, with its
// default of 8 threads) by 8 client threads, each on one keep-alive connection, each account's
// notifications in order on one of them. A server's rate is deliveries over the time from the
// first request to the last answer; every answer must be 200, and the server's store must count
// the chains and transactions the others count.
//
// The store alone: the same notifications, verified first, stored by the library in
// transactions of a few (1, 2, 4, 8: one from each client in turn, as the server's group commits
// take them) and of 10,000, each size into a fresh file: what one transaction costs, and what a
// notification costs when the transactions hold that many.
//
// Questions: a store of many accounts' histories (`--serve-accounts`), asked for sampled
// accounts' entitlements through the library call the endpoint makes (`accounts(matching:)`,
// then `entitlements(of:at:)` of each) and through `GET /v1/accounts/{account}/entitlements`
// on one keep-alive connection, in turn for each account; then through 8 connections at once.
// Each request is timed alone.

struct ServeReport {
    /// The machine, the time and the revision measured (``runContext()``).
    var context = ""
    var deliveries = 0
    var deliveryAccounts = 0
    var deliveryBytes = 0
    var mintSeconds = 0.0
    var jobs = 0
    var serverThreads = 0
    var clients = 0
    var chains = 0
    var transactions = 0
    var rounds: [Round] = []
    var groups: [Group] = []

    /// The store alone: the notifications stored in transactions of `size`.
    struct Group {
        var size: Int
        var transactions: Int
        var cpu: Double
    }

    /// The sizes of the store's transactions timed alone: a few, as the server's group commits
    /// take them, and `vouch ledger add`'s 10,000.
    static let groupSizes = [1, 2, 4, 8, 10_000]

    /// One round of the three ways of storing the deliveries.
    struct Round {
        /// `vouch ledger add` (the binary), the library as it stores, the server: seconds.
        var binarySeconds: Double
        var librarySeconds = 0.0
        var serverSeconds = 0.0
        /// CPU seconds of each (the server's with its clients': one process).
        var binaryCPU = 0.0
        var libraryCPU = 0.0
        var serverCPU = 0.0
        /// Store transactions the server ran (`vouch_serve_commits_total`).
        var commits = 0
        /// Requests in the server at once, on average: the sum of their durations
        /// (`vouch_serve_request_duration_seconds_sum`) over the wall time.
        var inFlight = 0.0

        var ratio: Double { binarySeconds / serverSeconds }
    }

    var storeAccounts = 0
    var storeTokens = 0
    var storeSeconds = 0.0
    var storeChains = 0
    var libraryLatency: [Double] = []
    var httpLatency: [Double] = []
    var httpLatency8: [Double] = []
    /// Of the sampled accounts, how many had records.
    var answered = 0

    /// The goals: deliveries through the server at least half of `vouch ledger
    /// add`'s rate; a `GET`'s p99 under 2 ms.
    static let goalRatio = 0.5
    static let goalP99 = 2e-3

    /// The median of the rounds' `value` (the middle one, as every table of the benchmark takes it).
    func median(_ value: (Round) -> Double) -> Double { Paired.median(rounds.map(value)) }
    /// The server's rate over `vouch ledger add`'s, median of the rounds.
    var ratio: Double { median(\.ratio) }
    var worstP99: Double {
        max(
            LedgerTableReport.percentile(httpLatency.sorted(), 0.99),
            LedgerTableReport.percentile(httpLatency8.sorted(), 0.99))
    }

    static func milliseconds(_ seconds: Double) -> String {
        seconds.isNaN ? "–" : String(format: "%.3f ms", seconds * 1e3)
    }

    var markdown: String {
        func row(_ name: String, _ seconds: (Round) -> Double, _ cpu: (Round) -> Double) -> String {
            "| \(name) | \(String(format: "%.2f", median(seconds))) | "
                + "\(String(format: "%.0f", Double(deliveries) / median(seconds))) | "
                + "\(String(format: "%.0f", median(cpu) / Double(max(deliveries, 1)) * 1e6)) | "
                + "\(String(format: "%.2f", median { $0.binarySeconds / seconds($0) })) |"
        }
        func latency(_ name: String, _ times: [Double]) -> String {
            let sorted = times.sorted()
            return "| \(name) | \(times.count) | \(Self.milliseconds(LedgerTableReport.percentile(sorted, 0.5))) | "
                + "\(Self.milliseconds(LedgerTableReport.percentile(sorted, 0.99))) |"
        }
        let largest = (groups.max { $0.size < $1.size }?.cpu ?? .nan) / Double(max(deliveries, 1))
        func groupRow(_ group: Group) -> String {
            let perNotification = group.cpu / Double(max(deliveries, 1))
            return "| \(group.size) | \(group.transactions) | "
                + "\(String(format: "%.0f", group.cpu / Double(max(group.transactions, 1)) * 1e6)) | "
                + "\(String(format: "%.0f", perNotification * 1e6)) | \(String(format: "%.2f", perNotification / largest)) |"
        }
        var lines = [
            "",
            context,
            "",
            "`vouch serve` on loopback: \(deliveries) App Store Server Notifications V2 (`{\"signedPayload\":…}`, "
                + "\(deliveryBytes / max(deliveries, 1)) bytes on average) of \(deliveryAccounts) accounts minted by "
                + "`MintHistoryGenerator` in \(String(format: "%.1f", mintSeconds)) s, each store a fresh SQLite file "
                + "(`FULL` commits), \(chains) chains and \(transactions) transactions in each; "
                + (rounds.count == 1 ? "one round" : "medians of \(rounds.count) rounds")
                + ", the three runs of a round one after the other.",
            "",
            "| deliveries | seconds | deliveries/s | CPU µs per delivery | ratio to `vouch ledger add` |",
            "|---|---:|---:|---:|---:|",
            row(
                "`vouch ledger add --jobs \(jobs)` (the binary, one file of bodies, one per line)", \.binarySeconds,
                \.binaryCPU),
            row(
                "the library as `vouch ledger add` stores (`BatchVerifier`, \(jobs) jobs; `LedgerStore.add(contentsOf:)` every 10,000)",
                \.librarySeconds, \.libraryCPU),
            row(
                "`POST /v1/apple/notifications`: `HTTPServer` + `LedgerService`, \(serverThreads) threads; "
                    + "\(clients) clients, one keep-alive connection each (CPU: the clients' too)",
                \.serverSeconds, \.serverCPU),
            "",
            "The server's rounds (ratio; group commits; requests in the server at once, on average): "
                + rounds.map {
                    String(format: "%.2f; %d commits; %.1f in flight", $0.ratio, $0.commits, $0.inFlight)
                }.joined(separator: " · ") + ".",
            "",
            "The store alone (the library, one thread): the same \(deliveries) notifications, verified first, "
                + "stored in transactions of a few, one from each of \(clients) clients in turn as the server's group "
                + "commits take them, and of 10,000 as `vouch ledger add` stores; each size into a fresh file:",
            "",
            "| notifications per transaction | transactions | CPU µs per transaction | CPU µs per notification | "
                + "per notification, to 10,000 a transaction |",
            "|---:|---:|---:|---:|---:|",
        ]
        lines += groups.map(groupRow)
        lines += [
            "",
            "Entitlements at \(storeAccounts) accounts (\(storeTokens) tokens of `MintHistoryGenerator` histories, "
                + "stored in \(String(format: "%.0f", storeSeconds)) s; \(storeChains) chains); sampled accounts "
                + "(\(answered) of \(libraryLatency.count) with records), each request timed alone:",
            "",
            "| `GET /v1/accounts/{account}/entitlements` | requests | p50 | p99 |",
            "|---|---:|---:|---:|",
            latency("the library: `accounts(matching:)`, then `entitlements(of:at:)` of each", libraryLatency),
            latency("HTTP, 1 client, keep-alive", httpLatency),
            latency("HTTP, \(clients) clients at once, keep-alive", httpLatency8),
            "",
            "Goals: deliveries through the server at least \(String(format: "%.1f", Self.goalRatio)) of `vouch ledger add`'s "
                + "rate: \(String(format: "%.2f", ratio)) (\(ratio >= Self.goalRatio ? "met" : "not met")); "
                + "`GET` p99 under \(Self.milliseconds(Self.goalP99)): worst \(Self.milliseconds(worstP99)) "
                + "(\(worstP99 < Self.goalP99 ? "met" : "not met")).",
        ]
        return lines.joined(separator: "\n")
    }
}

/// A minimal HTTP/1.1 client on one keep-alive TCP connection: a request out, its answer in
/// (a response with `Content-Length`, as the server sends every one).
final class LoopbackClient {
    private let socket: Int32
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    init(port: UInt16) {
        #if os(Linux)
            socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket = Foundation.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        precondition(socket >= 0, "socket: \(String(cString: strerror(errno)))")
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        precondition(status == 0, "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
    }

    deinit {
        close(socket)
    }

    /// Sends `method path` with `headers` and `body`; returns the status and the body.
    func send(_ method: String, _ path: String, headers: String = "", body: [UInt8] = []) -> (
        status: Int, body: [UInt8]
    ) {
        var request = Array(
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)"
                .utf8)
        if method == "POST" {
            request += Array("Content-Type: application/json\r\nContent-Length: \(body.count)\r\n".utf8)
        }
        request += Array("\r\n".utf8)
        request += body
        var offset = 0
        while offset < request.count {
            let sent = request.withUnsafeBytes {
                Foundation.send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            precondition(sent > 0, "send: \(String(cString: strerror(errno)))")
            offset += sent
        }
        return receive()
    }

    private func receive() -> (status: Int, body: [UInt8]) {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        var searched = 0
        while true {
            if headerEnd == nil, buffer.count >= 4 {
                var index = max(0, searched - 3)
                while index + 4 <= buffer.count {
                    if buffer[index] == end[0], buffer[index + 1] == end[1], buffer[index + 2] == end[2],
                        buffer[index + 3] == end[3]
                    {
                        headerEnd = index + 4
                        break
                    }
                    index += 1
                }
                searched = buffer.count
            }
            if let headerEnd {
                let head = String(decoding: buffer[..<headerEnd], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
                var length = 0
                for line in lines.dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" {
                        length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
                if buffer.count >= headerEnd + length {
                    let body = Array(buffer[headerEnd..<(headerEnd + length)])
                    buffer.removeFirst(headerEnd + length)
                    return (status, body)
                }
            }
            let count = scratch.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            precondition(count > 0, "the server closed the connection (\(String(cString: strerror(errno))))")
            buffer += scratch[..<count]
        }
    }
}

/// Where and when a run measured what: the machine (cores, kernel, architecture), the time,
/// and the revision of the sources it was built from (`git describe --always --dirty` in their
/// checkout; `-dirty` with changes not committed).
func runContext(sources: String = #filePath) -> String {
    var names = utsname()
    uname(&names)
    func text<Field>(_ field: Field) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    let git = Process()
    git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    git.arguments = [
        "git", "-C", URL(fileURLWithPath: sources).deletingLastPathComponent().path, "describe", "--always", "--dirty",
    ]
    let output = Pipe()
    git.standardOutput = output
    git.standardError = FileHandle.nullDevice
    var revision = "unknown (no git checkout)"
    if (try? git.run()) != nil {
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        git.waitUntilExit()
        let described = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if git.terminationStatus == 0, !described.isEmpty { revision = described }
    }
    let time = ISO8601DateFormatter().string(from: Date())
    return "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(text(names.sysname)) "
        + "\(text(names.release)) \(text(names.machine)); run at \(time); revision \(revision)."
}

/// An account's identifier as a backend holds it: its `appAccountToken`, or (for an account
/// without one) its first `originalTransactionId`.
func accountIdentifier(_ generator: MintHistoryGenerator, _ index: Int) -> String {
    if let token = generator.appAccountToken(of: index) { return token }
    for item in generator.history(index).items {
        switch item {
        case .transaction(let payload), .notification(_, .some(let payload), _):
            if let id = payload["originalTransactionId"]?.stringValue { return id }
        default: continue
        }
    }
    preconditionFailure("account \(index) has no transaction")
}

func benchServe(
    deliveries target: Int, accounts storeAccounts: Int, requests: Int, jobs: Int, rounds: Int, vouch: URL,
    directory: URL
) throws -> ServeReport {
    var report = ServeReport()
    report.context = runContext()
    report.jobs = jobs
    report.clients = 8
    report.serverThreads = 8
    report.storeAccounts = storeAccounts
    let validity = MintValidity(notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
    let authority = try MintAuthority.generate(MintAuthorityOptions(validity: validity))
    let signer = try MintSigner(authority: authority)
    let root = directory.appendingPathComponent("serve-root.der")
    try Data(try authority.anchorCertificate()).write(to: root)
    var configuration = Verifier.Configuration.acceptingAnyApp()
    configuration.trustAnchors = [try authority.anchorCertificate()]
    let generator = MintHistoryGenerator(seed: 38, date: MintDate.parse("2026-06-01")!)
    let instant = Timestamp(milliseconds: 1_780_272_000_000)  // 2026-06-01

    // 1. Mint: each account's notification bodies, accounts in parallel chunks, until `target`.
    log("serve: minting \(target) App Store notifications …")
    var perAccount: [[[UInt8]]] = []
    let mintStart = now()
    while report.deliveries < target {
        let first = perAccount.count
        let chunk = 256
        nonisolated(unsafe) var minted = [[[UInt8]]](repeating: [], count: chunk)
        minted.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let buffer = buffer
            DispatchQueue.concurrentPerform(iterations: chunk) { offset in
                buffer[offset] = try! generator.history(first + offset).webhookBodies(signer: signer).map {
                    Array($0.utf8)
                }
            }
        }
        for bodies in minted where report.deliveries < target && !bodies.isEmpty {
            perAccount.append(bodies)
            report.deliveries += bodies.count
            report.deliveryBytes += bodies.reduce(0) { $0 + $1.count }
        }
    }
    report.mintSeconds = now() - mintStart
    report.deliveryAccounts = perAccount.count
    let file = directory.appendingPathComponent("notifications.jsonl")
    var lines: [UInt8] = []
    for bodies in perAccount {
        for body in bodies {
            lines += body
            lines.append(0x0A)
        }
    }
    try Data(lines).write(to: file)
    lines = []

    func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    func statistics(_ path: String) throws -> LedgerStore.Statistics {
        let store = try LedgerStore(path: path, access: .readOnly)
        defer { store.close() }
        return try store.statistics()
    }

    // 2. Each round: `vouch ledger add` (the binary), the library as it stores, the server;
    // each into a fresh file, each with a verifier of its own (as a fresh process has).
    let binaryPath = directory.appendingPathComponent("serve-binary.sqlite").path
    let libraryPath = directory.appendingPathComponent("serve-library.sqlite").path
    let servedPath = directory.appendingPathComponent("serve-server.sqlite").path
    let bearer = "bench-\(getpid())"
    func startServer(_ path: String) throws -> (HTTPServer, LedgerService) {
        var service = LedgerService.Configuration(
            verifier: BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: 1))
        service.logFormat = nil
        service.apiTokens = [bearer]
        let store = try LedgerStore(path: path)
        let readers: [any LedgerStoring] = try (0..<report.serverThreads).map { _ in
            try LedgerStore(path: path, access: .readOnly)
        }
        let handler = LedgerService(service, store: store, readers: readers)
        let server = try HTTPServer(
            HTTPServer.Configuration(host: "127.0.0.1", port: 0, threads: report.serverThreads), handler: handler)
        return (server, handler)
    }
    for round in 1...rounds {
        log("serve: round \(round) of \(rounds): vouch ledger add of \(report.deliveries) notifications …")
        let childrenCPU = processCPUSeconds(children: true)
        let added = run(
            "\(shellQuote(vouch.path)) ledger add --jobs \(jobs) --db \(shellQuote(binaryPath)) "
                + "--root \(shellQuote(root.path)) \(shellQuote(file.path)) > /dev/null 2> /dev/null")
        precondition(added.status == 0, "vouch ledger add exited \(added.status)")
        var measured = ServeReport.Round(binarySeconds: added.seconds)
        measured.binaryCPU = processCPUSeconds(children: true) - childrenCPU
        let expected = try statistics(binaryPath)
        report.chains = expected.chains
        report.transactions = expected.transactions

        log("serve: round \(round): the library as vouch ledger add stores …")
        let batchLimit = 10_000
        do {
            let store = try LedgerStore(path: libraryPath)
            var part = EntitlementLedger()
            var pending = 0
            let libraryStart = now()
            let libraryCPU = processCPUSeconds()
            let batch = BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: jobs)
            let summary = try batch.verify(from: try InputReader(path: file.path)) { result in
                guard case .success(let verified) = result.result else { return }
                part.add(verified, stripeAccountKey: EntitlementLedger.defaultStripeAccountKey)
                pending += 1
                if pending == batchLimit {
                    try store.add(contentsOf: part)
                    part = EntitlementLedger()
                    pending = 0
                }
            }
            if pending > 0 { try store.add(contentsOf: part) }
            measured.librarySeconds = now() - libraryStart
            measured.libraryCPU = processCPUSeconds() - libraryCPU
            store.close()
            precondition(summary.verified == report.deliveries, "not every notification verified: \(summary.errors)")
        }
        let libraryStatistics = try statistics(libraryPath)
        precondition(
            libraryStatistics.chains == expected.chains && libraryStatistics.transactions == expected.transactions,
            "the library's store differs from vouch ledger add's")

        log("serve: round \(round): \(report.deliveries) notifications through the server, \(report.clients) clients …")
        do {
            let (server, service) = try startServer(servedPath)
            let port = server.port
            let clients = report.clients
            let bodies = perAccount
            nonisolated(unsafe) var refused = [Int](repeating: 0, count: clients)
            let serverCPU = processCPUSeconds()
            refused.withUnsafeMutableBufferPointer { buffer in
                nonisolated(unsafe) let buffer = buffer
                measured.serverSeconds = timeOnThreads(clients) { thread in
                    let client = LoopbackClient(port: port)
                    for account in stride(from: thread, to: bodies.count, by: clients) {
                        for body in bodies[account] {
                            let answer = client.send("POST", "/v1/apple/notifications", body: body)
                            if answer.status != 200 {
                                if buffer[thread] == 0 {
                                    log("serve: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                                }
                                buffer[thread] += 1
                            }
                        }
                    }
                }
            }
            measured.serverCPU = processCPUSeconds() - serverCPU
            let metrics = String(decoding: LoopbackClient(port: port).send("GET", "/metrics").body, as: UTF8.self)
            for line in metrics.split(separator: "\n") {
                let value = line.split(separator: " ").last.flatMap { Double($0) } ?? 0
                if line.hasPrefix("vouch_serve_commits_total ") { measured.commits = Int(value) }
                if line.hasPrefix("vouch_serve_request_duration_seconds_sum{endpoint=\"/v1/apple/notifications\"}") {
                    measured.inFlight = value / measured.serverSeconds
                }
            }
            server.stop(within: 5)
            service.close()
            precondition(refused.reduce(0, +) == 0, "the server refused \(refused.reduce(0, +)) notifications")
        }
        let served = try statistics(servedPath)
        precondition(
            served.chains == expected.chains && served.transactions == expected.transactions,
            "the server's store differs from vouch ledger add's: \(served.chains) chains, \(served.transactions) transactions"
        )
        for path in [binaryPath, libraryPath, servedPath] { removeStore(path) }
        report.rounds.append(measured)
    }

    // 3. The store alone, by the size of its transactions.
    let sizes = ServeReport.groupSizes.map(String.init).joined(separator: ", ")
    log("serve: the store alone, in transactions of \(sizes) notifications …")
    do {
        var verified: [VerifiedInput] = []
        let batch = BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: jobs)
        _ = try batch.verify(from: try InputReader(path: file.path)) { result in
            if case .success(let input) = result.result { verified.append(input) }
        }
        precondition(verified.count == report.deliveries, "not every notification verified")
        // The order the server's clients deliver in: each client its accounts in turn, each
        // account's notifications in order; one notification of each client after another.
        var streams = [[Int]](repeating: [], count: report.clients)
        var index = 0
        for (account, bodies) in perAccount.enumerated() {
            for _ in bodies {
                streams[account % report.clients].append(index)
                index += 1
            }
        }
        var order: [Int] = []
        for position in 0..<(streams.map(\.count).max() ?? 0) {
            for stream in streams where position < stream.count { order.append(stream[position]) }
        }
        let groupPath = directory.appendingPathComponent("serve-groups.sqlite").path
        for size in ServeReport.groupSizes {
            removeStore(groupPath)
            let store = try LedgerStore(path: groupPath)
            let cpu = processCPUSeconds()
            var transactions = 0
            for first in stride(from: 0, to: order.count, by: size) {
                var ledger = EntitlementLedger.batch()
                for position in order[first..<min(first + size, order.count)] {
                    try ledger.add(
                        verified[position], account: nil, stripeAccountKey: EntitlementLedger.defaultStripeAccountKey)
                }
                try store.add(contentsOf: ledger)
                transactions += 1
            }
            report.groups.append(
                .init(size: size, transactions: transactions, cpu: processCPUSeconds() - cpu))
            store.close()
            let stored = try statistics(groupPath)
            precondition(
                stored.chains == report.chains && stored.transactions == report.transactions,
                "the store of transactions of \(size) differs from vouch ledger add's")
        }
        removeStore(groupPath)
    }
    perAccount = []

    // 4. A store of `storeAccounts` accounts' whole histories, filled by the library in
    // chunks of accounts (each minted in parallel, verified from memory, stored in one
    // transaction).
    let storePath = directory.appendingPathComponent("serve-accounts.sqlite").path
    log("serve: minting and storing the histories of \(storeAccounts) accounts …")
    let storeStart = now()
    do {
        let store = try LedgerStore(path: storePath)
        let batch = BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: jobs)
        let chunk = 2_048
        for first in stride(from: 0, to: storeAccounts, by: chunk) {
            let count = min(chunk, storeAccounts - first)
            nonisolated(unsafe) var minted = [[UInt8]](repeating: [], count: count)
            minted.withUnsafeMutableBufferPointer { buffer in
                nonisolated(unsafe) let buffer = buffer
                DispatchQueue.concurrentPerform(iterations: count) { offset in
                    var bytes: [UInt8] = []
                    for token in try! generator.history(first + offset).tokens(signer: signer) {
                        bytes += Array(token.utf8)
                        bytes.append(0x0A)
                    }
                    buffer[offset] = bytes
                }
            }
            var ledger = EntitlementLedger()
            let summary = try batch.verify(from: try InputReader(bytes: Array(minted.joined()))) { result in
                guard case .success(let verified) = result.result else { return }
                ledger.add(verified, stripeAccountKey: EntitlementLedger.defaultStripeAccountKey)
            }
            precondition(summary.rejected == 0, "not every token verified: \(summary.errors)")
            report.storeTokens += summary.verified
            try store.add(contentsOf: ledger)
            if (first / chunk) % 10 == 9 { log("serve: \(first + count) accounts stored …") }
        }
        report.storeChains = try store.statistics().chains
        store.close()
    }
    report.storeSeconds = now() - storeStart

    // 5. Questions: the library and HTTP with one client, in turn for each account (so that
    // both see the same load), then HTTP with 8 clients at once.
    var random = SampleRandom(state: 0x5EED_0038)
    let identifiers = (0..<requests).map { _ in accountIdentifier(generator, random.below(storeAccounts)) }
    log("serve: \(requests) entitlement questions to the library and through HTTP …")
    do {
        let (server, service) = try startServer(storePath)
        let port = server.port
        let headers = "Authorization: Bearer \(bearer)\r\n"
        @Sendable func ask(_ client: LoopbackClient, _ identifier: String) -> (seconds: Double, records: Bool) {
            let begin = now()
            let answer = client.send("GET", "/v1/accounts/\(identifier)/entitlements?at=2026-06-01", headers: headers)
            let elapsed = now() - begin
            precondition(
                answer.status == 200 && answer.body.first == UInt8(ascii: "["),
                "GET entitlements answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
            return (elapsed, answer.body.count > 2)
        }
        let store = try LedgerStore(path: storePath, access: .readOnly)
        let single = LoopbackClient(port: port)
        for identifier in identifiers.prefix(100) { _ = ask(single, identifier) }  // warm-up
        for identifier in identifiers {
            let begin = now()
            var records = 0
            for account in try store.accounts(matching: identifier).sorted() {
                if try store.entitlements(of: account, at: instant) != nil { records += 1 }
            }
            report.libraryLatency.append(now() - begin)
            if records > 0 { report.answered += 1 }
            let answer = ask(single, identifier)
            report.httpLatency.append(answer.seconds)
            precondition(
                answer.records == (records > 0), "GET entitlements of \(identifier) differs from the library's")
        }
        store.close()
        let clients = report.clients
        nonisolated(unsafe) var times = [[Double]](repeating: [], count: clients)
        times.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let buffer = buffer
            _ = timeOnThreads(clients) { thread in
                let client = LoopbackClient(port: port)
                for index in stride(from: thread, to: identifiers.count, by: clients) {
                    buffer[thread].append(ask(client, identifiers[index]).seconds)
                }
            }
        }
        report.httpLatency8 = times.flatMap { $0 }
        server.stop(within: 5)
        service.close()
    }
    removeStore(storePath)
    try? FileManager.default.removeItem(at: file)
    return report
}
