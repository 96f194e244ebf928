import Foundation
import Vouch
import VouchBatch

/// `vouch batch`: every token of a dump verified, one JSON record per token.
struct BatchCommand: Command {
    let path = ["batch"]
    let summary = "Verify every token of a dump, one JSON record per token"
    let usage = "vouch batch [options] [FILE ...|-]"
    let discussion = """
        Verifies every token of the inputs (files in order, or standard input for '-' or no
        FILE) and prints one JSON record per token, in input order, on stdout:
          {"line":N,["document":D,"path":P,]["echo":{…},]"status":"verified"|"rejected",
           "kind":…,"payload":…[,"error":{"code":…,"reason":…}]}
        A line is a bare compact JWS or a JSON object holding one (signedPayload,
        signedTransactionInfo, signedRenewalInfo, signedTransaction,
        signedAppTransactionInfo, or --field): one record per line. JSON documents (App
        Store Server API responses, arrays, pretty-printed or several in a row) give a
        record per token, with its document and JSON path. Blank lines get a record too
        (empty_line) unless --skip-empty. Gzipped input (by its magic bytes) is read
        transparently. Line and document numbers continue across files. A line holding a
        legacy app receipt (its base64 text, or a JSON object with receipt-data or
        latest_receipt) gets a record of kind "receipt"; --bundle-id, --environment, --at
        (signed: the receipt's creation date), --xcode-cert and --no-strict-x509 apply to
        receipts too.

        A summary (inputs, tokens, receipts and deliveries read; counts by status, kind and
        error code, time, records/s, peak memory) goes to stderr at the end; while running, a
        progress line too when stderr is a terminal and CI is not set (--progress and
        --no-progress decide; never with TERM=dumb unless asked). When the output cannot be
        written, the summary counts the records written before it.
        """
    let positionals = Positionals.any
    let exitStatus = """
        0 every token verified (or --rejections-ok), 1 any rejected, 64 usage error,
        66 unreadable or truncated input, 74 output write error.
        """
    let examples = [
        "vouch batch --bundle-id com.example.app tokens.jsonl.gz > records.jsonl",
        "vouch batch --payload none --summary-json summary.json --jobs 4 day-1.jsonl day-2.jsonl",
        "vouch batch --field data[].lastTransactions[].signedTransactionInfo subscriptions.json",
    ]

    var options: [CommandOption] {
        [
            InputArguments.jobs,
            .value(
                "--payload", "WHAT",
                help: "full (default), none, or FIELD,FIELD… (dotted paths such as\ndata.bundleId reach into objects)"),
            .value("--summary-json", "FILE", help: "Also write the summary as JSON to FILE (- for stdout)"),
            .flag("--no-line-number", help: "Leave \"line\" and \"document\" out of each record (for split dumps)"),
            .value("--first-line", "N", help: "Number the first line N (default 1)"),
            .flag("--skip-empty", help: "Give blank lines no record"),
            .value(
                "--shard", "I/N",
                help:
                    "Verify only share I of N: every Nth file from the Ith when\nseveral files are given, else every Nth document (line)"
            ),
            .value(
                "--echo", "FIELD", repeatable: true,
                help: "Copy this top-level member of each input object into its\nrecord (\"echo\":{…})"),
            .flag("--rejections-ok", help: "Exit 0 when tokens are rejected (usage and I/O errors\nstill fail)"),
            .flag(
                "--no-fast-verify",
                help:
                    "Verify every signature with OpenSSL's generic P-256 path,\nnever with a key's precomputed table (same verdicts)"
            ),
        ] + ProgressLine.options + InputArguments.options + TrustOptions.options + [TrustOptions.receiptRoot]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        var options = try TrustOptions(arguments, console: console)
        options.configuration.fastVerify = !arguments.flag("--no-fast-verify")
        var batch = BatchVerifier(verifier: try options.makeVerifier(), kind: options.kind)
        var documents = try InputArguments(arguments)
        documents.options.echo = arguments.values("--echo")
        if let empty = documents.options.echo.first(where: \.isEmpty) {
            throw UsageError("--echo needs a member name; got '\(empty)'")
        }
        var shard: Shard?
        if let text = arguments.value("--shard") {
            guard let parsed = Shard(text) else {
                throw UsageError("--shard must be I/N with 1 ≤ I ≤ N, such as 2/8; got '\(text)'")
            }
            shard = parsed
        }
        batch.receiptVerifier = try options.makeReceiptVerifier(arguments)
        if let jobs = try InputArguments.jobs(arguments) { batch.jobs = jobs }
        let format = RecordFormat(
            payload: try Self.payloadSelection(arguments.value("--payload") ?? "full"),
            numbers: arguments.flag("--no-line-number") ? .never : .always, echo: documents.options.echo)
        var run = BatchVerifier.RunOptions(skipEmpty: arguments.flag("--skip-empty"))
        var firstLine = 1
        var firstDocument = 1
        if let text = arguments.value("--first-line") {
            guard let first = Int(text), first >= 1 else {
                throw UsageError("--first-line must be a whole number ≥ 1; got '\(text)'")
            }
            firstLine = first
        }

        // Open every input first: an unreadable one stops the run before any output.
        let paths = arguments.positionals.isEmpty ? ["-"] : arguments.positionals
        let inputs = try console.openInputs(paths)
        defer { for input in inputs where input.owned { close(input.descriptor) } }
        let progress = try ProgressLine(arguments, console: console, inputs: inputs)
        // Several files are shared out whole (gzip cannot be split); one input by document.
        let byFile = shard != nil && inputs.count > 1
        if !byFile { run.shard = shard }
        let start = Date()

        var summary = BatchSummary()
        // What reached the output: whole chunks as the pipeline counted them, plus the records
        // of a chunk cut short by a failed write, read back from the bytes that got through.
        var report = BatchReport()
        var failure: (any Error)? = nil
        for (number, input) in inputs.enumerated() {
            let mine = !byFile || shard!.includes(number + 1)
            // Another shard's file is read only to keep numbers those of one whole run.
            if !mine, format.numbers == .never { continue }
            // The pipeline's running totals for this input, as far as the report has them.
            var counted = BatchSummary()
            do {
                let reader = try documents.reader(input, firstLine: firstLine, firstDocument: firstDocument)
                defer {
                    firstLine += reader.linesRead
                    firstDocument += reader.documentsRead
                }
                guard mine else {
                    while try reader.next() != nil {}
                    continue
                }
                let done = summary
                let part = try batch.verify(
                    from: reader, options: run, format: format,
                    write: { bytes in
                        do {
                            try console.output.write(bytes)
                        } catch let error as WriteError {
                            report.add(records: bytes.prefix(error.written))
                            throw error
                        }
                    },
                    progress: { current in
                        report.add(current, since: counted)
                        counted = current
                        progress.update(
                            Counted.results(
                                total: report.lines, receipts: report.receipts, deliveries: report.deliveries)
                                + " (\(report.verified) verified, \(report.rejected) rejected)",
                            count: report.lines, bytes: done.bytesConsumed + current.bytesConsumed)
                    })
                summary.add(part)
            } catch let error as WriteError {
                failure = error
                break
            } catch let error as InputError {
                failure = error
                break
            } catch {
                failure = InputError("cannot read \(input.name): \(error)")
                break
            }
        }
        progress.clear()
        let elapsed = Date().timeIntervalSince(start)
        console.diagnose(Self.describe(report, inputs: inputs.count, elapsed: elapsed))
        if let path = arguments.value("--summary-json") {
            let destination = try console.destination(path)
            try destination.write(JSONWriter.encode(Self.summaryJSON(report, elapsed: elapsed)) + [0x0A])
            try destination.close()
        }
        if let failure { throw failure }
        return report.rejected == 0 || arguments.flag("--rejections-ok") ? ExitCode.success : ExitCode.rejected
    }

    static func payloadSelection(_ text: String) throws(UsageError) -> VerificationRecord.PayloadSelection {
        switch text {
        case "full": return .full
        case "none": return .none
        default:
            let fields = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard !fields.contains(where: \.isEmpty) else {
                throw UsageError("--payload must be full, none or a comma-separated list of fields; got '\(text)'")
            }
            return .fields(fields)
        }
    }

    /// This process's peak resident set size so far: its own high-water mark (`VmHWM`), not
    /// `ru_maxrss`, which a process started through fork and exec inherits from its parent.
    static func peakResidentBytes() -> Int {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kibibytes = Int(
                line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        {
            return kibibytes * 1024
        }
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return usage.ru_maxrss * 1024  // KiB on Linux
        #else
            getrusage(RUSAGE_SELF, &usage)
            return usage.ru_maxrss  // bytes on macOS
        #endif
    }

    /// `vouch batch: 1 input, 21 tokens: 21 verified, 0 rejected in 0.05 s (420 records/s), …`.
    static func describe(_ summary: BatchReport, inputs: Int, elapsed: TimeInterval) -> String {
        let rate = elapsed > 0 ? Double(summary.lines) / elapsed : 0
        var lines = [
            "vouch batch: " + Counted.phrase(inputs, "input") + ", "
                + Counted.results(total: summary.lines, receipts: summary.receipts, deliveries: summary.deliveries)
                + ": \(summary.verified) verified, \(summary.rejected) rejected in "
                + String(
                    format: "%.2f s (%.0f records/s), peak memory %.1f MiB", elapsed, rate,
                    Double(peakResidentBytes()) / 1_048_576)
        ]
        if !summary.kinds.isEmpty {
            lines.append(
                "  verified by kind: "
                    + summary.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if !summary.errors.isEmpty {
            lines.append(
                "  rejected by code: "
                    + summary.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    static func summaryJSON(_ summary: BatchReport, elapsed: TimeInterval) -> JSONValue {
        func counts(_ dictionary: [String: Int]) -> JSONValue {
            .object(JSONObject(dictionary.sorted { $0.key < $1.key }.map { .init($0.key, .number(String($0.value))) }))
        }
        return .object(
            JSONObject([
                .init("lines", .number(String(summary.lines))),
                .init("verified", .number(String(summary.verified))),
                .init("rejected", .number(String(summary.rejected))),
                .init("kinds", counts(summary.kinds)),
                .init("errors", counts(summary.errors)),
                .init("elapsedSeconds", .number(String(format: "%.3f", elapsed))),
                .init(
                    "linesPerSecond", .number(String(format: "%.1f", elapsed > 0 ? Double(summary.lines) / elapsed : 0))
                ),
                .init("peakResidentBytes", .number(String(peakResidentBytes()))),
            ]))
    }
}

/// The counts a batch run reports: of the records that reached the output.
struct BatchReport {
    var lines = 0
    var verified = 0
    var rejected = 0
    /// Records of legacy app receipts and of Stripe deliveries (`kind` `receipt`, `stripe_event`).
    var receipts = 0
    var deliveries = 0
    var kinds: [String: Int] = [:]
    var errors: [String: Int] = [:]

    /// Adds what `current` counted beyond `before` (the pipeline's running totals).
    mutating func add(_ current: BatchSummary, since before: BatchSummary) {
        lines += current.lines - before.lines
        verified += current.verified - before.verified
        rejected += current.rejected - before.rejected
        receipts += current.receipts - before.receipts
        deliveries += current.deliveries - before.deliveries
        for (kind, count) in current.kinds { kinds[kind, default: 0] += count - (before.kinds[kind] ?? 0) }
        for (code, count) in current.errors { errors[code, default: 0] += count - (before.errors[code] ?? 0) }
        kinds = kinds.filter { $0.value != 0 }
        errors = errors.filter { $0.value != 0 }
    }

    /// Adds the complete records (`{…}\n` lines of the record format) at the start of `bytes`.
    mutating func add(records bytes: ArraySlice<UInt8>) {
        var start = bytes.startIndex
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            defer { start = end + 1 }
            guard let record = try? StrictJSON.parseObject(Array(bytes[start..<end])) else { continue }
            lines += 1
            switch record["kind"]?.stringValue {
            case "receipt": receipts += 1
            case VerifiedInput.stripeEventKind: deliveries += 1
            default: break
            }
            if record["status"]?.stringValue == "verified" {
                verified += 1
                if let kind = record["kind"]?.stringValue { kinds[kind, default: 0] += 1 }
            } else {
                rejected += 1
                if let code = record["error"]?.objectValue?["code"]?.stringValue { errors[code, default: 0] += 1 }
            }
        }
    }
}
