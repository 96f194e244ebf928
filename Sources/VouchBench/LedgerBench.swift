import Dispatch
import Foundation
import Vouch
import VouchEntitlements
import VouchMint


// The entitlement ledger over verified payloads, against batch verification of the same
// payloads in the same run.
//
// Minted per-account histories are written as an App Store Server API export would hold them:
// each transaction and each renewal info as a token of its own, one per line. The file is
// verified with `BatchVerifier.verifyLines(from:deliver:)` three times: without a ledger,
// feeding every payload to an `EntitlementLedger`, and without again; the ledger's cost is
// the difference in wall time to the mean of the runs around it, and the time spent in
// `add` itself. Memory is the growth of the resident set while the ledger fills (the runs before
// it have already grown the allocator's per-thread arenas for verification).

struct LedgerBenchReport {
    var payloads = 0
    var accounts = 0
    var ledgerAccounts = 0
    var bytes = 0
    var mintSeconds = 0.0
    var verifySeconds: [Double] = []
    var ledgerRunSeconds = 0.0
    var addSeconds = 0.0
    var chains = 0
    var transactions = 0
    var heapBytes: Int?
    var entitlementsSeconds = 0.0
    var entitledAccounts = 0
    var revocationsSeconds = 0.0
    var revocations = 0

    var markdown: String {
        let verify = verifySeconds.reduce(0, +) / Double(max(verifySeconds.count, 1))
        let overhead = (ledgerRunSeconds - verify) / verify
        let own = addSeconds / verify
        var lines = [
            "",
            "Entitlement ledger: \(payloads) verified payloads (transactions and renewal info of the histories of \(accounts) minted accounts,",
            "average token \(bytes / max(payloads, 1)) bytes), minted in \(String(format: "%.1f", mintSeconds)) s.",
            "",
            "| measurement | seconds | payloads/s | ratio to verification |",
            "|---|---:|---:|---:|",
            "| `BatchVerifier.verifyLines(from:deliver:)`, results dropped (mean of the runs before and after) | \(String(format: "%.2f", verify)) | \(String(format: "%.0f", Double(payloads) / verify)) | 1.00 |",
            "| the same, each payload added to an `EntitlementLedger` | \(String(format: "%.2f", ledgerRunSeconds)) | \(String(format: "%.0f", Double(payloads) / ledgerRunSeconds)) | \(String(format: "%.3f", ledgerRunSeconds / verify)) |",
            "| time inside `EntitlementLedger.add` alone | \(String(format: "%.2f", addSeconds)) | \(String(format: "%.0f", Double(payloads) / addSeconds)) | \(String(format: "%.3f", own)) |",
            "| `entitlements(at:)` of all \(ledgerAccounts) accounts (\(entitledAccounts) entitled) | \(String(format: "%.2f", entitlementsSeconds)) | | |",
            "| `revocations()` (\(revocations)) | \(String(format: "%.2f", revocationsSeconds)) | | |",
            "",
            "The ledger adds \(String(format: "%.1f", overhead * 100)) % to the wall time of batch verification (its own time is "
                + "\(String(format: "%.1f", own * 100)) % of it, spent on the thread that receives results in order).",
            "It holds \(chains) chains and \(transactions) transactions"
                + (heapBytes.map { "; resident memory grew by \(String(format: "%.1f MiB", Double($0) / 1_048_576)) while it filled, \($0 / max(transactions, 1)) bytes per transaction." } ?? "."),
        ]
        if overhead < 0 { lines.append("(A negative overhead is noise: the ledger runs beside the verifying threads.)") }
        return lines.joined(separator: "\n")
    }
}

/// The resident set size now (not the peak), from `/proc/self/statm` where there is one.
func residentBytes() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func benchLedger(payloads target: Int, jobs: Int, authority: MintAuthority, signer: MintSigner, directory: URL) throws -> LedgerBenchReport {
    var report = LedgerBenchReport()
    let file = directory.appendingPathComponent("ledger-export.jwsl")
    guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = FileHandle(forWritingAtPath: file.path) else {
        throw CocoaError(.fileWriteUnknown)
    }

    // 1. Mint: accounts in parallel chunks, written in order, until `target` lines.
    log("ledger: minting \(target) transactions and renewal infos …")
    let generator = MintHistoryGenerator(seed: 2026, date: MintDate.parse("2026-06-01")!)
    let accountsPerChunk = 256
    var written = 0, account = 0
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
                        case .notification(_, let transaction, let renewal): payloads = [transaction, renewal].compactMap { $0 }
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
                var kept = 0, end = 0
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
    var configuration = Verifier.Configuration()
    configuration.trustAnchors = [try authority.anchorCertificate()]
    let batch = BatchVerifier(verifier: try Verifier(configuration: configuration), jobs: jobs)

    func verifyRun(_ deliver: (VerifiedPayload) -> Void) throws -> Double {
        let descriptor = open(file.path, O_RDONLY)
        defer { close(descriptor) }
        let reader = try LineReader.open(FileDescriptorSource(descriptor: descriptor))
        let start = now()
        let summary = try batch.verifyLines(from: reader) { _, result in
            if case .success(let verified) = result { deliver(verified) }
        }
        let elapsed = now() - start
        precondition(summary.verified == written, "the ledger benchmark's tokens did not all verify: \(summary.errors)")
        return elapsed
    }

    log("ledger: verifying \(written) payloads without a ledger …")
    report.verifySeconds.append(try verifyRun { _ in })
    log("ledger: verifying \(written) payloads into a ledger …")
    let heapBefore = residentBytes()
    var ledger = EntitlementLedger()
    var addTime = 0.0
    report.ledgerRunSeconds = try verifyRun { verified in
        let start = now()
        ledger.add(verified)
        addTime += now() - start
    }
    report.addSeconds = addTime
    if let heapBefore, let heapAfter = residentBytes() { report.heapBytes = heapAfter - heapBefore }
    report.chains = ledger.chainCount
    report.transactions = ledger.transactionCount
    log("ledger: verifying \(written) payloads without a ledger again …")
    report.verifySeconds.append(try verifyRun { _ in })

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
