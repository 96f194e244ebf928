import CBenchOpenSSL  // the module Swift sees the C library's timespec and rusage through
import Dispatch
import Foundation
import Vouch
import VouchBatch
import VouchEntitlements
import VouchMint

// The entitlement ledger over verified payloads, against batch verification of the same
// payloads in the same run.
//
// Minted per-account histories are written as an App Store Server API export would hold them:
// each transaction and each renewal info as a token of its own, one per line. The file is
// verified with `BatchVerifier.verify(from:deliver:)` three times: without a ledger,
// feeding every payload to an `EntitlementLedger`, and without again. The ledger's cost is
// the CPU time spent in `add` (on the delivering thread) against the CPU time of verifying
// the same payloads without it (every thread): a ratio the machine's load hardly moves, where
// wall times on a shared machine do. The wall times are reported too. Memory is the growth of the resident set while the ledger fills (the runs before
// it have already grown the allocator's per-thread arenas for verification).

struct LedgerBenchReport {
    var payloads = 0
    var accounts = 0
    var ledgerAccounts = 0
    var bytes = 0
    var mintSeconds = 0.0
    var verifySeconds: [Double] = []
    /// CPU time of the whole process (every thread) in each run without a ledger.
    var verifyCPUSeconds: [Double] = []
    var ledgerRunSeconds = 0.0
    var ledgerRunCPUSeconds = 0.0
    var addSeconds = 0.0
    /// CPU time of the thread inside `add`.
    var addCPUSeconds = 0.0
    var chains = 0
    var transactions = 0
    var heapBytes: Int?
    var entitlementsSeconds = 0.0
    var entitledAccounts = 0
    var revocationsSeconds = 0.0
    var revocations = 0

    var markdown: String {
        let verify = verifySeconds.reduce(0, +) / Double(max(verifySeconds.count, 1))
        let verifyCPU = verifyCPUSeconds.reduce(0, +) / Double(max(verifyCPUSeconds.count, 1))
        let overhead = (ledgerRunSeconds - verify) / verify
        let cpu = addCPUSeconds / verifyCPU
        let lines = [
            "",
            "Entitlement ledger: \(payloads) verified payloads (transactions and renewal info of the histories of \(accounts) minted accounts,",
            "average token \(bytes / max(payloads, 1)) bytes), minted in \(String(format: "%.1f", mintSeconds)) s.",
            "",
            "| measurement | wall s | CPU s | payloads/s (wall) | CPU ratio to verification |",
            "|---|---:|---:|---:|---:|",
            "| `BatchVerifier.verify(from:deliver:)`, results dropped (mean of the runs before and after) | \(String(format: "%.2f", verify)) | \(String(format: "%.2f", verifyCPU)) | \(String(format: "%.0f", Double(payloads) / verify)) | 1.000 |",
            "| the same, each payload added to an `EntitlementLedger` | \(String(format: "%.2f", ledgerRunSeconds)) | \(String(format: "%.2f", ledgerRunCPUSeconds)) | \(String(format: "%.0f", Double(payloads) / ledgerRunSeconds)) | \(String(format: "%.3f", ledgerRunCPUSeconds / verifyCPU)) |",
            "| inside `EntitlementLedger.add` alone (one thread) | \(String(format: "%.2f", addSeconds)) | \(String(format: "%.2f", addCPUSeconds)) | \(String(format: "%.0f", Double(payloads) / addSeconds)) | \(String(format: "%.3f", cpu)) |",
            "| `entitlements(at:)` of all \(ledgerAccounts) accounts (\(entitledAccounts) entitled) | \(String(format: "%.2f", entitlementsSeconds)) | | |",
            "| `revocations()` (\(revocations)) | \(String(format: "%.2f", revocationsSeconds)) | | |",
            "",
            "The ledger's CPU time is \(String(format: "%.1f", cpu * 100)) % of the CPU time of verifying the same payloads; "
                + "its wall time in this run: \(String(format: "%+.1f", overhead * 100)) % (it runs on the thread that receives results in order, beside the verifying threads; wall times move with the machine's load).",
            "It holds \(chains) chains and \(transactions) transactions"
                + (heapBytes.map {
                    "; resident memory grew by \(String(format: "%.1f MiB", Double($0) / 1_048_576)) while it filled, \($0 / max(transactions, 1)) bytes per transaction."
                } ?? "."),
        ]
        return lines.joined(separator: "\n")
    }
}

/// User and system CPU time of the whole process so far, or of its children waited for.
func processCPUSeconds(children: Bool = false) -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(children ? RUSAGE_CHILDREN.rawValue : RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(
        usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// CPU time of the calling thread so far.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func benchLedger(payloads target: Int, jobs: Int, authority: MintAuthority, signer: MintSigner, directory: URL) throws
    -> LedgerBenchReport
{
    var report = LedgerBenchReport()
    let file = directory.appendingPathComponent("ledger-export.jwsl")
    guard FileManager.default.createFile(atPath: file.path, contents: nil),
        let handle = FileHandle(forWritingAtPath: file.path)
    else {
        throw CocoaError(.fileWriteUnknown)
    }

    // 1. Mint: accounts in parallel chunks, written in order, until `target` lines.
    log("ledger: minting \(target) transactions and renewal infos …")
    let generator = MintHistoryGenerator(seed: 2026, date: MintDate.parse("2026-06-01")!)
    let accountsPerChunk = 256
    var written = 0
    var account = 0
    let mintStart = now()
    while written < target {
        let chunks = jobs * 4
        let first = account
        nonisolated(unsafe) var outputs = [(lines: Int, bytes: [UInt8])](repeating: (0, []), count: chunks)
        outputs.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let buffer = buffer
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                var bytes: [UInt8] = []
                var lines = 0
                for index in (first + chunk * accountsPerChunk)..<(first + (chunk + 1) * accountsPerChunk) {
                    for item in generator.history(index).items {
                        let payloads: [JSONObject]
                        switch item {
                        case .transaction(let payload), .renewalInfo(let payload): payloads = [payload]
                        case .notification(_, let transaction, let renewal):
                            payloads = [transaction, renewal].compactMap { $0 }
                        }
                        for payload in payloads {
                            bytes += Array(try! signer.sign(payload: payload).utf8)
                            bytes.append(0x0A)
                            lines += 1
                        }
                    }
                }
                buffer[chunk] = (lines, bytes)
            }
        }
        for output in outputs where written < target {
            var bytes = output.bytes
            if written + output.lines > target {
                // Keep exactly the lines still wanted.
                var kept = 0
                var end = 0
                while kept < target - written, let newline = bytes[end...].firstIndex(of: 0x0A) {
                    end = newline + 1
                    kept += 1
                }
                bytes.removeSubrange(end...)
                written += kept
            } else {
                written += output.lines
            }
            handle.write(Data(bytes))
            report.bytes += bytes.count
        }
        account += chunks * accountsPerChunk
    }
    try handle.close()
    report.mintSeconds = now() - mintStart
    report.payloads = written
    report.accounts = account

    // 2. Verify: without, with and again without a ledger.
    var configuration = Verifier.Configuration.acceptingAnyApp()
    configuration.trustAnchors = [try authority.anchorCertificate()]
    let batch = BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: jobs)

    func verifyRun(_ deliver: (VerifiedPayload) -> Void) throws -> (wall: Double, cpu: Double) {
        let reader = try InputReader(path: file.path)
        let start = now()
        let startCPU = processCPUSeconds()
        let summary = try batch.verify(from: reader) { result in
            if let verified = result.payload { deliver(verified) }
        }
        let elapsed = now() - start
        let cpu = processCPUSeconds() - startCPU
        precondition(summary.verified == written, "the ledger benchmark's tokens did not all verify: \(summary.errors)")
        return (elapsed, cpu)
    }

    log("ledger: verifying \(written) payloads without a ledger …")
    var run = try verifyRun { _ in }
    report.verifySeconds.append(run.wall)
    report.verifyCPUSeconds.append(run.cpu)
    log("ledger: verifying \(written) payloads into a ledger …")
    let heapBefore = residentBytes()
    var ledger = EntitlementLedger()
    var addTime = 0.0
    var addCPU = 0.0
    run = try verifyRun { verified in
        let start = now()
        let startCPU = threadCPUSeconds()
        ledger.add(verified)
        addTime += now() - start
        addCPU += threadCPUSeconds() - startCPU
    }
    report.ledgerRunSeconds = run.wall
    report.ledgerRunCPUSeconds = run.cpu
    report.addSeconds = addTime
    report.addCPUSeconds = addCPU
    let heapAfter = residentBytes()
    if heapBefore > 0, heapAfter > 0 { report.heapBytes = heapAfter - heapBefore }
    report.chains = ledger.chainCount
    report.transactions = ledger.transactionCount
    log("ledger: verifying \(written) payloads without a ledger again …")
    run = try verifyRun { _ in }
    report.verifySeconds.append(run.wall)
    report.verifyCPUSeconds.append(run.cpu)

    // 3. The answers.
    var start = now()
    let answers = ledger.entitlements(at: Timestamp(milliseconds: 1_780_272_000_000))
    report.entitlementsSeconds = now() - start
    report.ledgerAccounts = answers.count
    report.entitledAccounts = answers.filter { !$0.entitlements.isEmpty }.count
    start = now()
    report.revocations = ledger.revocations().count
    report.revocationsSeconds = now() - start
    try? FileManager.default.removeItem(at: file)
    return report
}
