import CBenchOpenSSL
import Foundation
import Vouch
import VouchBatch
import VouchMint
import VouchReceipts

/// Receipt batch throughput against OpenSSL's raw RSA-2048 verification, in one run.
///
/// The floor is what any verifier must do per receipt: SHA-256 of the signed content and one
/// `EVP_PKEY_verify` with the leaf's RSA-2048 key and a prepared context. Every throughput is
/// given as a ratio to that floor measured on the same threads just before and after it.
enum ReceiptBench {
    static func run(lines: Int, jobs: Int, rounds: Int, vouch: String, scratch: URL) throws -> String {
        log("minting \(lines) receipts …")
        let validity = MintValidity(notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
        let authority = try MintReceiptAuthority.generate(.init(validity: validity))
        let signer = MintReceiptSigner(authority: authority)
        let created = MintDate.parse("2025-06-01T12:00:00Z")!
        var receipts: [[UInt8]] = []
        var contents: [[UInt8]] = []
        var signatures: [[UInt8]] = []
        for index in 0..<lines {
            let content = MintReceiptContent.sample(
                receiptCreationDate: created, inAppCount: 1 + index % 3, seed: index)
            let payload = content.encoded()
            let receipt = try signer.sign(payload: payload, digest: .sha256)
            // DER receipts end with the signature OCTET STRING: 04 82 01 00 and 256 bytes.
            precondition(Array(receipt.suffix(260).prefix(4)) == [0x04, 0x82, 0x01, 0x00])
            receipts.append(receipt)
            contents.append(payload)
            signatures.append(Array(receipt.suffix(256)))
        }
        let averageSize = receipts.reduce(0) { $0 + $1.count } / max(lines, 1)
        // The dump holds the minted receipts five times over: a run long enough that the
        // process' start (tens of milliseconds) and the one chain validation weigh little, as in
        // a real dump, without minting (RSA signing) five times as many.
        let repeats = 5
        let file = scratch.appendingPathComponent("receipts.txt")
        let text = Data(receipts.map { Data($0).base64EncodedData() + [0x0A] }.joined())
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let output = try FileHandle(forWritingTo: file)
        for _ in 0..<repeats { try output.write(contentsOf: text) }
        try output.close()
        let fileLines = lines * repeats
        let root = scratch.appendingPathComponent("receipt-root.der")
        try Data(try authority.anchorCertificate()).write(to: root)
        let key = publicKey(ofCertificate: try authority.certificateChain()[0])
        defer { EVP_PKEY_free(key) }
        let floor = SignedMessages(key: key, messages: contents, signatures: signatures, signatureDigest: EVP_sha256())
        let sample = min(lines, 20_000)

        func bracketed(threads: Int, _ measure: () throws -> Double) rethrows -> Double {
            let before = floorRate(floor, threads: threads, sample: sample)
            let measured = try measure()
            let after = floorRate(floor, threads: threads, sample: sample)
            return measured / ((before + after) / 2)
        }
        func cli(_ threads: Int) -> Double {
            let summary = scratch.appendingPathComponent("receipt-summary.json")
            let result = runShell(
                "\(vouch) batch --jobs \(threads) --receipt-root \(shellQuote(root.path)) --summary-json \(shellQuote(summary.path)) \(shellQuote(file.path)) > /dev/null 2>/dev/null"
            )
            precondition(result.status == 0, "vouch batch exited \(result.status) on receipts")
            return Double(fileLines) / result.seconds
        }
        func library(_ threads: Int) throws -> Double {
            var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
            configuration.trustAnchors = [try authority.anchorCertificate()]
            let batch = BatchVerifier(
                verifier: try Verifier(configuration: .acceptingAnyApp()), jobs: threads,
                receiptVerifier: try ReceiptVerifier(configuration: configuration))
            let reader = try InputReader(path: file.path)
            let start = now()
            let summary = try batch.verify(from: reader, format: RecordFormat()) { _ in }
            let elapsed = now() - start
            precondition(
                summary.verified == fileLines, "the library verified \(summary.verified) of \(fileLines) receipts")
            return Double(fileLines) / elapsed
        }

        var floors: [Int: [Double]] = perThreadCount(jobs: jobs, [])
        var ratios: [String: [Double]] = [:]
        var rates: [String: [Double]] = [:]
        for round in 1...rounds {
            log("receipts, round \(round) of \(rounds) …")
            for threads in threadCounts(jobs: jobs) {
                floors[threads, default: []].append(floorRate(floor, threads: threads, sample: sample))
                var measured = 0.0
                let cliRatio = bracketed(threads: threads) {
                    measured = cli(threads)
                    return measured
                }
                ratios["cli\(threads)", default: []].append(cliRatio)
                rates["cli\(threads)", default: []].append(measured)
                let libraryRatio = try bracketed(threads: threads) {
                    measured = try library(threads)
                    return measured
                }
                ratios["lib\(threads)", default: []].append(libraryRatio)
                rates["lib\(threads)", default: []].append(measured)
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func row(_ name: String, _ key: String, _ threads: Int) -> String {
            "| \(name) | \(threads) | \(String(format: "%.0f", median(rates["\(key)\(threads)"]!))) | \(String(format: "%.2f", median(ratios["\(key)\(threads)"]!))) |"
        }
        var table = [
            "",
            "Receipts: \(lines) minted receipts (RSA-2048 leaf, SHA-256, 1 to 3 in-app purchases, \(averageSize) bytes of DER on",
            "average), \(repeats) times over in a dump of \(fileLines) base64 lines; medians of \(rounds) rounds, each ratio against",
            "the RSA floor measured just before and after.",
            "",
            "| measurement | threads | receipts/s | ratio to floor |",
            "|---|---:|---:|---:|",
        ]
        for threads in threadCounts(jobs: jobs) {
            table.append(
                "| floor: OpenSSL SHA-256 + RSA-2048 verify, prepared key and context | \(threads) | \(String(format: "%.0f", median(floors[threads]!))) | 1.00 |"
            )
        }
        for threads in threadCounts(jobs: jobs) {
            table.append(row("`vouch batch`, receipt lines, full payload output", "cli", threads))
        }
        for threads in threadCounts(jobs: jobs) {
            table.append(row("`BatchVerifier.verify(from:format:write:)`, receipt lines", "lib", threads))
        }
        return table.joined(separator: "\n")
    }
}
