import CBenchOpenSSL
import Foundation
import Vouch
import VouchBatch
import VouchMint

// vouch-bench: batch verification measured against OpenSSL's raw P-256 floor, in one run.
//
//   swift run -c release --package-path Benchmarks vouch-bench [--lines N] [--rounds N] [--no-million]
//   swift run -c release --package-path Benchmarks vouch-bench --ledger-table-only [--ledger-accounts N]
//   scripts/with-postgresql Benchmarks/.build/release/vouch-bench --ledger-table-only  (a PostgreSQL column)
//   swift run -c release --package-path Benchmarks vouch-bench --serve [--serve-deliveries N] [--serve-accounts N]
//
// (which builds the `vouch` binary it runs beside it). It uses the libraries' public API only.
// Every throughput is printed with its ratio to the floor measured in the same run on the
// same number of threads, since absolute figures move with the machine's load.

struct Options {
    var lines = 100_000
    var million = true
    var jobs = ProcessInfo.processInfo.activeProcessorCount
    var rounds = 3
    var receiptLines = 20_000
    var onlyReceipts = false
    /// Payloads for the entitlement ledger's figure; 0 leaves it out.
    var ledgerPayloads = 1_000_000
    var ledgerOnly = false
    /// Accounts of the keyed ledger's table (`vouch mint history --count`); 0 leaves it out.
    var ledgerAccounts = 1_000_000
    var ledgerTableOnly = false
    /// Where the keyed ledger's table keeps its minted histories and CA (`--ledger-histories
    /// DIR`): minted there when missing, reused when there; nil mints into the scratch directory
    /// and removes them.
    var ledgerHistories: URL?
    var ledgerStore = true
    var stripeOnly = false
    /// A PostgreSQL server for the keyed ledger's PostgreSQL column (`--postgresql URI`, or
    /// `VOUCH_TEST_POSTGRESQL`, which `scripts/with-postgresql` sets); none leaves it out.
    var postgreSQL = ProcessInfo.processInfo.environment["VOUCH_TEST_POSTGRESQL"]
    /// `vouch serve` against `vouch ledger add`, alone (`--serve`): notifications delivered,
    /// accounts of the store asked, questions asked.
    var serve = false
    var serveDeliveries = 20_000
    var serveAccounts = 100_000
    var serveRequests = 10_000

    init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--lines":
                index += 1
                lines = Int(arguments[index]) ?? lines
            case "--no-million":
                million = false
            case "--rounds":
                index += 1
                rounds = max(1, Int(arguments[index]) ?? rounds)
            case "--receipt-lines":
                index += 1
                receiptLines = Int(arguments[index]) ?? receiptLines
            case "--only-receipts":
                onlyReceipts = true
            case "--jobs":
                index += 1
                jobs = Int(arguments[index]) ?? jobs
            case "--ledger":
                index += 1
                ledgerPayloads = max(0, Int(arguments[index]) ?? ledgerPayloads)
            case "--ledger-only":
                ledgerOnly = true
            case "--ledger-accounts":
                index += 1
                ledgerAccounts = max(0, Int(arguments[index]) ?? ledgerAccounts)
            case "--ledger-table-only":
                ledgerTableOnly = true
            case "--ledger-histories":
                index += 1
                ledgerHistories = URL(fileURLWithPath: arguments[index])
            case "--no-ledger-store":
                ledgerStore = false
            case "--stripe-only":
                stripeOnly = true
            case "--postgresql":
                index += 1
                postgreSQL = arguments[index]
            case "--serve":
                serve = true
            case "--serve-deliveries":
                index += 1
                serveDeliveries = max(1, Int(arguments[index]) ?? serveDeliveries)
            case "--serve-accounts":
                index += 1
                serveAccounts = max(1, Int(arguments[index]) ?? serveAccounts)
            case "--serve-requests":
                index += 1
                serveRequests = max(1, Int(arguments[index]) ?? serveRequests)
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: vouch-bench [--lines N] [--jobs N] [--rounds N] [--no-million] [--receipt-lines N] [--only-receipts] [--ledger N] [--ledger-only] [--ledger-accounts N] [--ledger-table-only] [--ledger-histories DIR] [--no-ledger-store] [--postgresql URI] [--stripe-only] [--serve] [--serve-deliveries N] [--serve-accounts N] [--serve-requests N]\n"
                            .utf8))
                exit(64)
            }
            index += 1
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let jobs = options.jobs
let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("vouch")
guard FileManager.default.isExecutableFile(atPath: binary.path) else {
    print("vouch-bench: \(binary.path) is missing: run 'swift build -c release --package-path Benchmarks' first")
    exit(69)
}
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }

@Sendable func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

@Sendable func log(_ text: String) {
    // What the report has printed so far goes out first (every output stream is flushed), so
    // that both streams sent to one file keep their order.
    fflush(nil)
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Runs `body(thread)` on `threads` threads and returns the wall time.
func timeOnThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
    let group = DispatchGroup()
    let start = now()
    for thread in 0..<threads {
        group.enter()
        let worker = Thread {
            body(thread)
            group.leave()
        }
        worker.stackSize = 4 << 20
        worker.start()
    }
    group.wait()
    return now() - start
}

/// The thread counts a benchmark measures: one thread and all of `jobs` (one entry when equal).
func threadCounts(jobs: Int) -> [Int] { Set([1, jobs]).sorted() }

/// `value` for each of ``threadCounts(jobs:)``.
func perThreadCount<Value>(jobs: Int, _ value: Value) -> [Int: Value] {
    Dictionary(uniqueKeysWithValues: threadCounts(jobs: jobs).map { ($0, value) })
}

if options.ledgerTableOnly {
    print(
        try benchLedgerTable(
            accounts: options.ledgerAccounts, jobs: jobs, store: options.ledgerStore, postgreSQL: options.postgreSQL,
            vouch: binary, directory: scratch, histories: options.ledgerHistories
        ).markdown)
    try? FileManager.default.removeItem(at: scratch)  // exit skips the deferred removal
    exit(0)
}

if options.serve {
    print(
        try benchServe(
            deliveries: options.serveDeliveries, accounts: options.serveAccounts, requests: options.serveRequests,
            jobs: jobs, rounds: options.rounds, vouch: binary, directory: scratch
        ).markdown)
    try? FileManager.default.removeItem(at: scratch)  // exit skips the deferred removal
    exit(0)
}

if options.onlyReceipts {
    print(
        try ReceiptBench.run(
            lines: options.receiptLines, jobs: jobs, rounds: options.rounds, vouch: shellQuote(binary.path),
            scratch: scratch))
    try? FileManager.default.removeItem(at: scratch)
    exit(0)
}

// MARK: 1. Mint

log("minting \(options.lines) transactions …")
let validity = MintValidity(notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
let authority = try MintAuthority.generate(MintAuthorityOptions(validity: validity))
let signer = try MintSigner(authority: authority)
if options.stripeOnly {
    print(try StripeBench.report(jobs: jobs, scratch: scratch))
    try? FileManager.default.removeItem(at: scratch)  // exit skips the deferred removal
    exit(0)
}
if options.ledgerOnly {
    print(
        try benchLedger(
            payloads: options.ledgerPayloads, jobs: jobs, authority: authority, signer: signer, directory: scratch
        ).markdown)
    try? FileManager.default.removeItem(at: scratch)  // exit skips the deferred removal
    exit(0)
}
let leafKey = publicKey(ofCertificate: try authority.certificateChain()[0])
let configuration = {
    var configuration = Verifier.Configuration.acceptingAnyApp()
    configuration.trustAnchors = [try! authority.anchorCertificate()]
    return configuration
}()
/// Tokens of one key after which `fastVerify` builds the key's table (its documented "about
/// 1,000"; `tableCost` checks that the next token does build it).
let threshold = 1_000

// A key's table, first: before the big buffers of the run are freed, each new table is
// mapped fresh, so the resident set grows by exactly what the tables hold. On the run's first
// tokens, minted alone for it.
let generator = MintGenerator(seed: 2026, date: MintDate.parse("2025-06-01T12:00:00Z")!)
let tableCosts = try tableCost(
    (0..<threshold + 2).map { try! generator.token(.transaction, index: $0, signer: signer) },
    configuration: configuration, threshold: threshold)
nonisolated(unsafe) var tokens = [String](repeating: "", count: options.lines)
let mintTime = tokens.withUnsafeMutableBufferPointer { buffer in
    nonisolated(unsafe) let buffer = buffer
    return timeOnThreads(jobs) { thread in
        for index in stride(from: thread, to: options.lines, by: jobs) {
            buffer[index] = try! generator.token(.transaction, index: index, signer: signer)
        }
    }
}
let tokensFile = scratch.appendingPathComponent("transactions.jwsl")
try Data((tokens.joined(separator: "\n") + "\n").utf8).write(to: tokensFile)
let averageLength = tokens.reduce(0) { $0 + $1.utf8.count } / max(tokens.count, 1)
let anchor = scratch.appendingPathComponent("root.der")
try Data(try authority.anchorCertificate()).write(to: anchor)

// MARK: 2. The floor: SHA-256 of the signing input and one P-256 verification, nothing else

/// Base64url without padding, as a minted token's segments are, read by Foundation.
func base64URLDecoded(_ segment: ArraySlice<UInt8>) -> [UInt8] {
    var text = String(decoding: segment, as: UTF8.self)
        .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
    return [UInt8](Data(base64Encoded: text)!)
}

func derSignature(_ raw: [UInt8]) -> [UInt8] {
    func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var body = Array(bytes.drop(while: { $0 == 0 }))
        if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
        return [0x02, UInt8(body.count)] + body
    }
    let content = integer(raw[0..<32]) + integer(raw[32..<64])
    return [0x30, UInt8(content.count)] + content
}

var signingInputs: [[UInt8]] = []
var derSignatures: [[UInt8]] = []
for token in tokens {
    let bytes = Array(token.utf8)
    let lastDot = bytes.lastIndex(of: UInt8(ascii: "."))!
    signingInputs.append(Array(bytes[..<lastDot]))
    derSignatures.append(derSignature(base64URLDecoded(bytes[(lastDot + 1)...])))
}
nonisolated(unsafe) let sharedKey = leafKey
let preparedInputs = SignedMessages(key: leafKey, messages: signingInputs, signatures: derSignatures)

// The same signatures for the raw rates: digests and DER.
var collected = RawSignatures()
for index in tokens.indices {
    var digest = [UInt8](repeating: 0, count: 32)
    _ = SHA256(preparedInputs.messages[index], preparedInputs.messages[index].count, &digest)
    collected.digests += digest
    collected.der.append(preparedInputs.signatures[index])
}
let rawSignatures = collected
/// The tokens as bytes, for `Verifier.verifyChunk`.
let tokenBytes = tokens.map { Array($0.utf8) }

// MARK: 3. vouch batch, end to end (a separate process; output to /dev/null)

/// Runs a shell command; returns the wall time and its exit status.
func runShell(_ command: String) -> (seconds: Double, status: Int32) { run(command) }

func run(_ command: String) -> (seconds: Double, status: Int32) {
    var pid: pid_t = 0
    let arguments = ["/bin/sh", "-c", command]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let start = now()
    guard posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0 else { return (0, -1) }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (now() - start, (status >> 8) & 0xFF)
}

func shellQuote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

let vouch = shellQuote(binary.path)
let file = shellQuote(tokensFile.path)
let root = shellQuote(anchor.path)
let summaryFile = scratch.appendingPathComponent("summary.json")

/// What the benchmark reads of `vouch batch --summary-json`.
struct SummaryFigures: Decodable {
    var verified: Int
    var peakResidentBytes: Int?
}

/// Runs `vouch batch` on the output of `feed` (or the tokens file); returns its rate and the
/// peak RSS it reports itself (the shell's own figure would include this process's, which
/// Linux carries across exec).
func cliRun(jobs: Int, lines: Int, feed: String? = nil, options extra: String = "") -> (rate: Double, peakBytes: Int) {
    let input = feed.map { "\($0) | " } ?? ""
    let result = run(
        "\(input)\(vouch) batch\(extra) --jobs \(jobs) --root \(root) --summary-json \(shellQuote(summaryFile.path)) \(feed == nil ? file : "-") > /dev/null 2>/dev/null"
    )
    precondition(result.status == 0, "vouch batch exited \(result.status)")
    let summary = try! JSONDecoder().decode(SummaryFigures.self, from: Data(contentsOf: summaryFile))
    precondition(summary.verified == lines, "vouch batch did not verify every line")
    return (Double(lines) / result.seconds, summary.peakResidentBytes ?? 0)
}

func cliRate(jobs: Int) -> (rate: Double, peakBytes: Int) { cliRun(jobs: jobs, lines: options.lines) }

// A newcomer's first run: `vouch mint ca` a moment before `vouch mint transaction`, with every
// default (the authority valid from now, tokens signed up to now), then `vouch batch`. Its rate
// shows whether the chain cache holds for such data as it does for the corpus above.
let freshLines = 20_000
let freshCA = scratch.appendingPathComponent("fresh-ca")
let freshFile = scratch.appendingPathComponent("fresh.jwsl")
log("minting a fresh authority and \(freshLines) transactions with the vouch binary …")
precondition(run("\(vouch) mint ca --out \(shellQuote(freshCA.path)) > /dev/null").status == 0, "vouch mint ca failed")
precondition(
    run(
        "\(vouch) mint transaction --ca \(shellQuote(freshCA.path)) --count \(freshLines) > \(shellQuote(freshFile.path))"
    ).status == 0,
    "vouch mint transaction failed")

func freshRate(jobs: Int) -> Double {
    let freshRoot = shellQuote(freshCA.appendingPathComponent("root.der").path)
    let result = run(
        "\(vouch) batch --jobs \(jobs) --root \(freshRoot) --summary-json \(shellQuote(summaryFile.path)) \(shellQuote(freshFile.path)) > /dev/null 2>/dev/null"
    )
    precondition(result.status == 0, "vouch batch exited \(result.status) on the freshly minted tokens")
    return Double(freshLines) / result.seconds
}

// MARK: 4. The library's batch API

func linesRate(jobs: Int, fastVerify: Bool = true) throws -> Double {
    var configuration = configuration
    configuration.fastVerify = fastVerify
    let verifier = try Verifier(configuration: configuration)
    let reader = try InputReader(path: tokensFile.path)
    var written = 0
    let start = now()
    let summary = try BatchVerifier(verifier: verifier, jobs: jobs).verify(from: reader, format: RecordFormat()) {
        written += $0.count
    }
    let elapsed = now() - start
    precondition(summary.verified == options.lines && written > 0)
    return Double(options.lines) / elapsed
}

func verifyAllRate(jobs: Int) throws -> Double {
    let verifier = try Verifier(configuration: configuration)
    let start = now()
    let results = BatchVerifier(verifier: verifier, jobs: jobs).verifyAll(tokens)
    let elapsed = now() - start
    precondition(results.allSatisfy { (try? $0.get()) != nil })
    return Double(options.lines) / elapsed
}

/// `BatchVerifier.verify(_:deliver:)`: the same tokens, each typed result delivered in order
/// and dropped, none kept.
func streamRate(jobs: Int) throws -> Double {
    let verifier = try Verifier(configuration: configuration)
    var verified = 0
    let start = now()
    try BatchVerifier(verifier: verifier, jobs: jobs).verify(tokens) { _, result in
        if case .success = result { verified += 1 }
    }
    let elapsed = now() - start
    precondition(verified == options.lines)
    return Double(options.lines) / elapsed
}

/// A throughput and the floor measured around it: a short floor run on the same number of
/// threads just before and just after, so both see the same load on the machine.
struct Paired {
    var rates: [Double] = []
    var ratios: [Double] = []
    var peakBytes = 0

    mutating func add(rate: Double, floor: Double) {
        rates.append(rate)
        ratios.append(rate / floor)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    var rate: Double { Self.median(rates) }
    var ratio: Double { Self.median(ratios) }
}

let floorSample = min(options.lines, 30_000)
func bracketed(threads: Int, _ measure: () throws -> Double) rethrows -> (rate: Double, floor: Double) {
    let before = floorRate(preparedInputs, threads: threads, sample: floorSample)
    let rate = try measure()
    let after = floorRate(preparedInputs, threads: threads, sample: floorSample)
    return (rate, (before + after) / 2)
}

// Each measurement runs `options.rounds` times, rounds interleaved; the table gives medians.
var floors: [Int: [Double]] = perThreadCount(jobs: jobs, [])
var fresh = Paired()
var cli1 = Paired()
var cliN = Paired()
var lines1 = Paired()
var linesN = Paired()
var all1 = Paired()
var allN = Paired()
var stream1 = Paired()
var streamN = Paired()
for round in 1...options.rounds {
    log("round \(round) of \(options.rounds): vouch batch, library, each between two floor runs …")
    var peak = 0
    var result = bracketed(threads: 1) { () -> Double in
        let run = cliRate(jobs: 1)
        return run.rate
    }
    cli1.add(rate: result.rate, floor: result.floor)
    floors[1]!.append(result.floor)
    result = bracketed(threads: jobs) { () -> Double in
        let run = cliRate(jobs: jobs)
        peak = run.peakBytes
        return run.rate
    }
    cliN.add(rate: result.rate, floor: result.floor)
    cliN.peakBytes = max(cliN.peakBytes, peak)
    floors[jobs]!.append(result.floor)
    result = bracketed(threads: jobs) { freshRate(jobs: jobs) }
    fresh.add(rate: result.rate, floor: result.floor)
    result = try bracketed(threads: 1) { try linesRate(jobs: 1) }
    lines1.add(rate: result.rate, floor: result.floor)
    result = try bracketed(threads: jobs) { try linesRate(jobs: jobs) }
    linesN.add(rate: result.rate, floor: result.floor)
    result = try bracketed(threads: 1) { try verifyAllRate(jobs: 1) }
    all1.add(rate: result.rate, floor: result.floor)
    result = try bracketed(threads: jobs) { try verifyAllRate(jobs: jobs) }
    allN.add(rate: result.rate, floor: result.floor)
    result = try bracketed(threads: 1) { try streamRate(jobs: 1) }
    stream1.add(rate: result.rate, floor: result.floor)
    result = try bracketed(threads: jobs) { try streamRate(jobs: jobs) }
    streamN.add(rate: result.rate, floor: result.floor)
}
let floor1 = Paired.median(floors[1]!)
let floorN = Paired.median(floors[jobs]!)

// MARK: 4b. Fixed-key ES256 against OpenSSL's own verify on the same key and signatures

/// A run between two raw `EVP_PKEY_verify` runs on the same threads.
func bracketedRaw(threads: Int, _ measure: () throws -> Double) rethrows -> (rate: Double, floor: Double) {
    let before = rawVerifyRate(key: sharedKey, rawSignatures, threads: threads, sample: floorSample)
    let rate = try measure()
    let after = rawVerifyRate(key: sharedKey, rawSignatures, threads: threads, sample: floorSample)
    return (rate, (before + after) / 2)
}

/// The first tokens' payloads as verification returns them (`VerifiedPayload.payload`, what
/// the typed model is made from), for the typed model to cycle through: small enough to stay
/// in this machine's per-core cache as a chunk's freshly parsed payloads do (all of them would
/// not).
let payloadWorkingSet: [JSONObject] = {
    let verifier = try! Verifier(configuration: configuration)
    return tokens.prefix(1_000).map { try! verifier.verify($0).payload }
}()
/// Their average size as JSON (the base64url payload segment's decoded length).
let payloadWorkingSetBytes =
    tokens.prefix(payloadWorkingSet.count).reduce(0) { total, token in
        let segment = token.split(separator: ".", omittingEmptySubsequences: false)[1]
        return total + segment.utf8.count * 3 / 4
    } / max(payloadWorkingSet.count, 1)

/// Payloads per second on one thread through the typed model (`DecodedPayload(kind:json:)`),
/// as many as there are tokens.
func typedModelRate() throws -> Double {
    var members = 0
    let start = now()
    for index in tokens.indices {
        guard
            case .transaction(let transaction) = try DecodedPayload(
                kind: .transaction, json: payloadWorkingSet[index % payloadWorkingSet.count])
        else {
            preconditionFailure("a minted transaction decoded as another kind")
        }
        members += transaction.json.members.count
    }
    let elapsed = now() - start
    precondition(members > 0)
    return Double(tokens.count) / elapsed
}

var raws: [Int: [Double]] = perThreadCount(jobs: jobs, [])
var fixed1 = Paired()
var fixedN = Paired()
var chunks: [Int: Paired] = perThreadCount(jobs: jobs, Paired())
var genericChunks: [Int: Paired] = perThreadCount(jobs: jobs, Paired())
var rawCLI1 = Paired()
var rawCLIN = Paired()
var rawLines1 = Paired()
var rawLinesN = Paired()
var rawAll1 = Paired()
var rawAllN = Paired()
var rawStream1 = Paired()
var rawStreamN = Paired()
var genericCLIN = Paired()
var genericLinesN = Paired()
var typed1 = Paired()
// `openssl speed` in every round, between two raw runs like the rest: its ratio to the raw rate
// is then a median too, and the goals below divide by it.
var speeds: [Int: Paired] = perThreadCount(jobs: jobs, Paired())
var speedMissing = false
for round in 1...options.rounds {
    log("round \(round) of \(options.rounds): fixed-key path and generic path, each between two raw verify runs …")
    for threads in threadCounts(jobs: jobs) {
        var ratios = (withTable: 0.0, withoutTable: 0.0, fixedKeyPath: 0.0)
        var result = try bracketedRaw(threads: threads) {
            ratios = try chunkRatios(
                tokenBytes, rawSignatures, key: sharedKey, configuration: configuration, warmUp: threshold + 64,
                threads: threads)
            return 0
        }
        // The ratios come from the interleaved timing; the raw rate around gives the rates.
        chunks[threads]!.add(rate: ratios.withTable * result.floor, floor: result.floor)
        genericChunks[threads]!.add(rate: ratios.withoutTable * result.floor, floor: result.floor)
        if threads == jobs { fixedN.add(rate: ratios.fixedKeyPath * result.floor, floor: result.floor) }
        if threads == 1 { fixed1.add(rate: ratios.fixedKeyPath * result.floor, floor: result.floor) }
        raws[threads]!.append(result.floor)
        result = bracketedRaw(threads: threads) { cliRate(jobs: threads).rate }
        if threads == 1 { rawCLI1.add(rate: result.rate, floor: result.floor) }
        if threads == jobs { rawCLIN.add(rate: result.rate, floor: result.floor) }
        result = try bracketedRaw(threads: threads) { try linesRate(jobs: threads) }
        if threads == 1 { rawLines1.add(rate: result.rate, floor: result.floor) }
        if threads == jobs { rawLinesN.add(rate: result.rate, floor: result.floor) }
        result = try bracketedRaw(threads: threads) { try verifyAllRate(jobs: threads) }
        if threads == 1 { rawAll1.add(rate: result.rate, floor: result.floor) }
        if threads == jobs { rawAllN.add(rate: result.rate, floor: result.floor) }
        result = try bracketedRaw(threads: threads) { try streamRate(jobs: threads) }
        if threads == 1 { rawStream1.add(rate: result.rate, floor: result.floor) }
        if threads == jobs { rawStreamN.add(rate: result.rate, floor: result.floor) }
        if threads == 1 {
            result = try bracketedRaw(threads: 1) { try typedModelRate() }
            typed1.add(rate: result.rate, floor: result.floor)
        }
        if !speedMissing {
            var speed: Double? = nil
            result = bracketedRaw(threads: threads) {
                speed = opensslSpeed(multi: threads)
                return speed ?? 0
            }
            if speed == nil {
                speedMissing = true
            } else {
                speeds[threads]!.add(rate: result.rate, floor: result.floor)
            }
        }
    }
    var result = bracketedRaw(threads: jobs) {
        cliRun(jobs: jobs, lines: options.lines, options: " --no-fast-verify").rate
    }
    genericCLIN.add(rate: result.rate, floor: result.floor)
    result = try bracketedRaw(threads: jobs) { try linesRate(jobs: jobs, fastVerify: false) }
    genericLinesN.add(rate: result.rate, floor: result.floor)
}
let raw1 = Paired.median(raws[1]!)
let rawN = Paired.median(raws[jobs]!)
let speed1: Paired? = speedMissing ? nil : speeds[1]!
let speedN: Paired? = speedMissing ? nil : speeds[jobs]!

// MARK: 5. Latency: the first token of a chain, then warm tokens

var coldSamples: [Double] = []
for index in 0..<15 {
    let verifier = try Verifier(configuration: configuration)
    let start = now()
    _ = try verifier.verify(tokens[index])
    coldSamples.append(now() - start)
}
let cold = coldSamples.sorted()[coldSamples.count / 2]
// Warm, generic path: a verifier that never builds a table.
var genericConfiguration = configuration
genericConfiguration.fastVerify = false
let warmVerifier = try Verifier(configuration: genericConfiguration)
_ = try warmVerifier.verify(tokens[0])
let warmCount = min(5000, tokens.count)
let warmStart = now()
for index in 0..<warmCount { _ = try warmVerifier.verify(tokens[index]) }
let warm = (now() - warmStart) / Double(warmCount)
// Single `verify` calls on a default verifier: the token past the threshold builds the table,
// the ones after it use it.
let hotVerifier = try Verifier(configuration: configuration)
for index in 0..<threshold { _ = try hotVerifier.verify(tokens[index % tokens.count]) }
let buildingStart = now()
_ = try hotVerifier.verify(tokens[threshold % tokens.count])
let building = now() - buildingStart
let hotStart = now()
for index in 0..<warmCount { _ = try hotVerifier.verify(tokens[(threshold + 1 + index) % tokens.count]) }
let hot = (now() - hotStart) / Double(warmCount)

// MARK: 6. Peak RSS at 1,000,000 lines (the 100,000-line file ten times through a pipe)

var million: (rate: Double, peakBytes: Int, floor: Double)? = nil
if options.million {
    log("verifying \(options.lines * 10) lines for peak RSS …")
    let result = bracketed(threads: jobs) { () -> Double in
        let run = cliRun(
            jobs: jobs, lines: options.lines * 10, feed: "for i in 1 2 3 4 5 6 7 8 9 10; do cat \(file); done")
        million = (run.rate, run.peakBytes, 0)
        return run.rate
    }
    million?.floor = result.floor
}

// MARK: Report

func format(_ rate: Double) -> String { String(format: "%.0f", rate) }
func ratio(_ rate: Double, _ floor: Double) -> String { String(format: "%.2f", rate / floor) }
func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

print(
    """
    Vouch batch benchmark: \(options.lines) minted transactions (P-384 root and intermediate, P-256 leaf),
    average token \(averageLength) bytes, \(jobs) threads for "all cores"; minted in \(String(format: "%.1f", mintTime)) s.
    Each figure is the median of \(options.rounds) interleaved rounds; each ratio divides a run by the floor measured
    on the same threads just before and after it (\(floorSample) signatures each time), so both see the same load.

    | measurement | threads | tokens/s | ratio to floor |
    |---|---:|---:|---:|
    | floor: OpenSSL SHA-256 + P-256 verify, prepared key and context | 1 | \(format(floor1)) | 1.00 |
    | floor: OpenSSL SHA-256 + P-256 verify, prepared key and context | \(jobs) | \(format(floorN)) | 1.00 |
    | `vouch batch`, full payload output | 1 | \(format(cli1.rate)) | \(String(format: "%.2f", cli1.ratio)) |
    | `vouch batch`, full payload output | \(jobs) | \(format(cliN.rate)) | \(String(format: "%.2f", cliN.ratio)) |
    | `vouch batch`, full payload output, \(freshLines) tokens of a CA minted just before (`mint ca` + `mint transaction`) | \(jobs) | \(format(fresh.rate)) | \(String(format: "%.2f", fresh.ratio)) |
    | `BatchVerifier.verify(from:format:write:)` (records written) | 1 | \(format(lines1.rate)) | \(String(format: "%.2f", lines1.ratio)) |
    | `BatchVerifier.verify(from:format:write:)` (records written) | \(jobs) | \(format(linesN.rate)) | \(String(format: "%.2f", linesN.ratio)) |
    | `BatchVerifier.verifyAll` (typed results) | 1 | \(format(all1.rate)) | \(String(format: "%.2f", all1.ratio)) |
    | `BatchVerifier.verifyAll` (typed results) | \(jobs) | \(format(allN.rate)) | \(String(format: "%.2f", allN.ratio)) |
    | `BatchVerifier.verify(_:deliver:)` (typed results, delivered, none kept) | 1 | \(format(stream1.rate)) | \(String(format: "%.2f", stream1.ratio)) |
    | `BatchVerifier.verify(_:deliver:)` (typed results, delivered, none kept) | \(jobs) | \(format(streamN.rate)) | \(String(format: "%.2f", streamN.ratio)) |

    | latency | µs | ratio to one floor verification |
    |---|---:|---:|
    | first token of a chain (cold: full chain validation), median of 15 | \(String(format: "%.0f", cold * 1e6)) | \(String(format: "%.1f", cold * floor1)) |
    | a token whose chain is cached (warm), generic verify, mean of \(warmCount) | \(String(format: "%.1f", warm * 1e6)) | \(String(format: "%.2f", warm * floor1)) |
    | the token after \(threshold) of one key (builds the key's table) | \(String(format: "%.0f", building * 1e6)) | \(String(format: "%.1f", building * floor1)) |
    | a token of a hot key (fixed-key table), single `verify`, mean of \(warmCount) | \(String(format: "%.1f", hot * 1e6)) | \(String(format: "%.2f", hot * floor1)) |

    | peak RSS of `vouch batch` (\(jobs) threads) | |
    |---|---:|
    | \(options.lines) lines | \(mib(cliN.peakBytes)) |
    """)
if let million {
    print(
        "| \(options.lines * 10) lines (through a pipe; \(format(million.rate)) tokens/s, \(ratio(million.rate, million.floor)) of the floor) | \(mib(million.peakBytes)) |"
    )
}

func speed(_ value: Paired?) -> String { value.map { format($0.rate) } ?? "(openssl not installed)" }
print(
    """

    Fixed-key ES256 against OpenSSL's own P-256 verify (`EVP_PKEY_verify` on prepared digests, one kept
    context per thread, the same key and signatures: what `openssl speed ecdsap256` times). Ratios divide
    each run by that raw rate measured on the same threads just before and after it; the `verifyChunk` rows
    and the fixed-key path alone take theirs from the raw verification of each chunk's signatures, timed
    beside it on the same thread.

    | measurement | threads | tokens/s | ratio to raw verify |
    |---|---:|---:|---:|
    | raw OpenSSL verify, `EVP_PKEY_verify` | 1 | \(format(raw1)) | 1.00 |
    | raw OpenSSL verify, `EVP_PKEY_verify` | \(jobs) | \(format(rawN)) | 1.00 |
    | `openssl speed -elapsed -seconds 2 ecdsap256`, same run | 1 | \(speed(speed1)) | \(speed1.map { String(format: "%.2f", $0.ratio) } ?? "") |
    | `openssl speed -elapsed -seconds 2 -multi \(jobs) ecdsap256`, same run | \(jobs) | \(speed(speedN)) | \(speedN.map { String(format: "%.2f", $0.ratio) } ?? "") |
    | fixed-key path alone (derived: a raw verify less what the table saves per token in `verifyChunk`, chunk by chunk) | 1 | \(format(fixed1.rate)) | \(String(format: "%.2f", fixed1.ratio)) |
    | fixed-key path alone (derived: a raw verify less what the table saves per token in `verifyChunk`, chunk by chunk) | \(jobs) | \(format(fixedN.rate)) | \(String(format: "%.2f", fixedN.ratio)) |
    | `Verifier.verifyChunk`, chunks of 64, key's table built (timed between the raw verify and the generic path) | 1 | \(format(chunks[1]!.rate)) | \(String(format: "%.2f", chunks[1]!.ratio)) |
    | `Verifier.verifyChunk`, chunks of 64, key's table built (timed between the raw verify and the generic path) | \(jobs) | \(format(chunks[jobs]!.rate)) | \(String(format: "%.2f", chunks[jobs]!.ratio)) |
    | `Verifier.verifyChunk`, chunks of 64, generic path (`fastVerify = false`, timed likewise) | 1 | \(format(genericChunks[1]!.rate)) | \(String(format: "%.2f", genericChunks[1]!.ratio)) |
    | `Verifier.verifyChunk`, chunks of 64, generic path (`fastVerify = false`, timed likewise) | \(jobs) | \(format(genericChunks[jobs]!.rate)) | \(String(format: "%.2f", genericChunks[jobs]!.ratio)) |
    | `BatchVerifier.verify(from:format:write:)`, generic path (`fastVerify = false`) | \(jobs) | \(format(genericLinesN.rate)) | \(String(format: "%.2f", genericLinesN.ratio)) |
    | `BatchVerifier.verify(from:format:write:)` (records written) | 1 | \(format(rawLines1.rate)) | \(String(format: "%.2f", rawLines1.ratio)) |
    | `BatchVerifier.verify(from:format:write:)` (records written) | \(jobs) | \(format(rawLinesN.rate)) | \(String(format: "%.2f", rawLinesN.ratio)) |
    | `BatchVerifier.verifyAll` (typed results) | 1 | \(format(rawAll1.rate)) | \(String(format: "%.2f", rawAll1.ratio)) |
    | `BatchVerifier.verifyAll` (typed results) | \(jobs) | \(format(rawAllN.rate)) | \(String(format: "%.2f", rawAllN.ratio)) |
    | `BatchVerifier.verify(_:deliver:)` (typed results, delivered, none kept) | 1 | \(format(rawStream1.rate)) | \(String(format: "%.2f", rawStream1.ratio)) |
    | `BatchVerifier.verify(_:deliver:)` (typed results, delivered, none kept) | \(jobs) | \(format(rawStreamN.rate)) | \(String(format: "%.2f", rawStreamN.ratio)) |
    | `vouch batch --no-fast-verify`, full payload output | \(jobs) | \(format(genericCLIN.rate)) | \(String(format: "%.2f", genericCLIN.ratio)) |
    | `vouch batch`, full payload output | 1 | \(format(rawCLI1.rate)) | \(String(format: "%.2f", rawCLI1.ratio)) |
    | `vouch batch`, full payload output | \(jobs) | \(format(rawCLIN.rate)) | \(String(format: "%.2f", rawCLIN.ratio)) |

    | a key's table | |
    |---|---:|
    | build time (the `verify` call that builds it less the next one), median of 16 | \(String(format: "%.1f ms", tableCosts.seconds * 1e3)) (\(String(format: "%.0f", tableCosts.seconds * raw1)) raw verifications) |
    | memory held (resident set growth per verifier holding one, less one without) | \(String(format: "%.0f KiB", Double(tableCosts.bytes) / 1024)) |
    """)

// A token's time on one thread, by part: each part's ratio to the raw rate around it, over the
// median raw rate, so that parts measured minutes apart compare as if measured together.
func microseconds(_ run: Paired) -> Double { 1e6 / (run.ratio * raw1) }
let tokenTime = microseconds(rawLines1)
var parts: [(String, Double)] = [
    ("the signature: fixed-key path (derived, as above)", microseconds(fixed1)),
    ("the typed model (`DecodedPayload(kind:json:)`)", microseconds(typed1)),
]
// The tokens before the threshold take the generic path, and one of them waits for the table:
// a fixed cost, spread over the run's tokens (taken from the raw rate and the table's build time).
let switching =
    (Double(threshold) * max(0, 1e6 / raw1 - microseconds(fixed1)) + tableCosts.seconds * 1e6) / Double(options.lines)
parts.append(
    (
        "the first \(threshold) tokens' generic verify and the table's build, over \(options.lines) (estimated)",
        switching
    ))
let rest = tokenTime - parts.reduce(0) { $0 + $1.1 }
func share(_ value: Double) -> String { String(format: "%.1f µs | %.0f %%", value, 100 * value / tokenTime) }
print(
    """

    Where a token's time goes on one thread, in `BatchVerifier.verify(from:format:write:)` (records written). The
    typed model runs on its own, \(tokens.count) times over the first \(payloadWorkingSet.count) payloads (\(payloadWorkingSetBytes) bytes of JSON on
    average) as verification returns them, which stay in cache as a chunk's freshly parsed payloads do.
    Each part's figure is its ratio to the raw rate around it, over the median raw rate.

    | part | µs per token | share |
    |---|---:|---:|
    | whole token | \(share(tokenTime)) |
    \(parts.map { "| \($0.0) | \(share($0.1)) |" }.joined(separator: "\n"))
    | the rest: reading, splitting, base64url, SHA-256, signer lookup, the payload's strict JSON parse, claims, record, release | \(share(rest)) |
    """)

// The goals are ratios to `openssl speed -multi N`: a run's ratio to the raw rate around it,
// divided by how `openssl speed` compares with that raw rate (both medians of the rounds), so
// no figure rests on one `openssl speed` run taken minutes away from it.
if let speedN {
    let speedCommand = jobs > 1 ? "openssl speed -multi \(jobs)" : "openssl speed"
    func goal(_ name: String, _ run: Paired, _ target: Double) -> String {
        let against = run.ratio / speedN.ratio
        // Three places, so that a figure just under the goal does not print as the goal.
        let figures = "\(String(format: "%.2f", run.ratio)) | \(String(format: "%.3f", against))×"
        let verdict = against >= target ? "met" : "not met"
        return "| \(name) | \(figures) | ≥ \(String(format: "%.1f", target))× | \(verdict) |"
    }
    print(
        """

        Goals on \(jobs) threads, against `\(speedCommand) ecdsap256` (which ran at \(String(format: "%.2f", speedN.ratio)) of the
        raw rate, median of \(options.rounds) rounds):

        | run | ratio to raw verify | against `\(speedCommand)` | goal | |
        |---|---:|---:|---:|---|
        \(goal("`vouch batch --jobs \(jobs)`, full payload output", rawCLIN, 2.0))
        \(goal("`BatchVerifier.verify(from:format:write:)` (records written)", rawLinesN, 2.5))
        \(goal("`BatchVerifier.verifyAll` (typed results)", rawAllN, 2.5))
        \(goal("`BatchVerifier.verify(_:deliver:)` (typed results, delivered, none kept)", rawStreamN, 2.5))
        """)
}

print(
    try ReceiptBench.run(
        lines: options.receiptLines, jobs: jobs, rounds: options.rounds, vouch: vouch, scratch: scratch))
if options.ledgerPayloads > 0 {
    print(
        try benchLedger(
            payloads: options.ledgerPayloads, jobs: jobs, authority: authority, signer: signer, directory: scratch
        ).markdown)
}
if options.ledgerAccounts > 0 {
    print(
        try benchLedgerTable(
            accounts: options.ledgerAccounts, jobs: jobs, store: options.ledgerStore, postgreSQL: options.postgreSQL,
            vouch: binary, directory: scratch, histories: options.ledgerHistories
        ).markdown)
}
print(try StripeBench.report(jobs: jobs, scratch: scratch))
