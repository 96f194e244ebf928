import Foundation
import Vouch

enum BatchCommand {
    static let usage = """
        Usage: vouch batch [options] [FILE ...|-]

        Verifies every line of the inputs (files in order, or standard input for '-' or no
        FILE) and prints one JSON record per line, in input order, on stdout:
          {"line":N,"status":"verified"|"rejected","kind":…,"payload":…[,"error":{"code":…,"reason":…}]}
        A line is a bare compact JWS or a JSON object holding one (signedPayload,
        signedTransactionInfo, signedRenewalInfo, signedTransaction,
        signedAppTransactionInfo, or --field). Blank lines get a record too (empty_line).
        Gzipped input (by its magic bytes) is read transparently. Line numbers continue
        across files.

        Options:
          --jobs N               Verify on N threads (default: all cores)
          --payload WHAT         full (default), none, or FIELD,FIELD… (dotted paths such as
                                 data.bundleId reach into objects)
          --summary-json FILE    Also write the summary as JSON to FILE
          --no-line-number       Leave "line" out of each record (for split dumps)
          --first-line N         Number the first line N (default 1)
          --field NAME           In JSON lines, read the token from this member
          --kind KIND            Require this kind of every token (default: detected)
          --root FILE            Trust this root certificate (DER or PEM) instead of the
                                 embedded Apple Root CA - G3; repeatable
          --bundle-id ID         Require this bundleId
          --app-apple-id N       Require this appAppleId (checked for Production data)
          --environment ENV      Require Production, Sandbox, Xcode or LocalTesting
          --at WHEN              Validate chains at: signed (default), now, or ISO-8601
          --xcode-cert FILE      Trust this Xcode StoreKit testing certificate; repeatable
          --no-strict-x509       Relax OpenSSL's RFC 5280 strict checks
          -h, --help             Show this help

        A summary (counts by status, kind and error code, time, lines/s) goes to stderr at
        the end; while running, a progress line too when stderr is a terminal.

        Exit status: 0 every line verified, 1 any line rejected, 64 usage error,
        66 unreadable or truncated input, 74 output write error.
        """

    static let valued: Set<String> = VerifyCommand.valued.union(["--jobs", "--payload", "--summary-json", "--first-line"])
    static let flags: Set<String> = ["--no-strict-x509", "--no-line-number"]

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, valued: valued, flags: flags)
        let options = try TrustOptions(arguments)
        var batch = BatchVerifier(verifier: try options.makeVerifier(), kind: options.kind, field: arguments.value("--field"))
        if let text = arguments.value("--jobs") {
            guard let jobs = Int(text), (1...1024).contains(jobs) else {
                throw UsageError("--jobs must be a whole number from 1 to 1024; got '\(text)'")
            }
            batch.jobs = jobs
        }
        var format = BatchVerifier.RecordFormat(payload: try payloadSelection(arguments.value("--payload") ?? "full"))
        format.lineNumbers = !arguments.flag("--no-line-number")
        if let text = arguments.value("--first-line") {
            guard let first = Int(text), first >= 1 else { throw UsageError("--first-line must be a whole number ≥ 1; got '\(text)'") }
            format.firstLine = first
        }

        // Open every input first: an unreadable one stops the run before any output.
        let paths = arguments.positionals.isEmpty ? ["-"] : arguments.positionals
        var inputs: [(name: String, descriptor: Int32)] = []
        defer { for input in inputs where input.descriptor != 0 { close(input.descriptor) } }
        for path in paths {
            if path == "-" {
                inputs.append(("standard input", 0))
                continue
            }
            var status = stat()
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw InputError("cannot read \(path): \(String(cString: strerror(errno)))") }
            inputs.append((path, descriptor))
            if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                throw InputError("cannot read \(path): it is a directory")
            }
        }
        let totalSize = knownSize(of: inputs.map(\.descriptor))
        let progress = Progress(enabled: isatty(2) == 1, totalBytes: totalSize)
        let start = Date()

        var summary = BatchSummary()
        var failure: (code: Int32, message: String)? = nil
        for input in inputs {
            do {
                let reader = try LineReader.open(FileDescriptorSource(descriptor: input.descriptor))
                let done = summary
                let part = try batch.verifyLines(
                    from: reader, format: format,
                    write: { bytes in
                        guard Output.write(bytes: bytes, to: .standardOutput) else { throw WriteFailure(errno: errno) }
                    },
                    progress: { progress.update(done, $0, elapsed: Date().timeIntervalSince(start)) })
                summary.add(part)
                format.firstLine += part.lines
            } catch let error as InputFailure {
                failure = (ExitCode.unreadableInput, "cannot read \(input.name): \(error)")
                break
            } catch let error as WriteFailure {
                failure = (ExitCode.writeError, "cannot write the output: \(String(cString: strerror(error.errno)))")
                break
            }
        }
        progress.clear()
        let elapsed = Date().timeIntervalSince(start)
        Output.error(describe(summary, elapsed: elapsed))
        if let path = arguments.value("--summary-json") {
            let json = JSONWriter.encode(summaryJSON(summary, elapsed: elapsed)) + [0x0A]
            guard FileManager.default.createFile(atPath: path, contents: Data(json)) else {
                Output.error("Error: cannot write the summary to \(path)")
                return ExitCode.writeError
            }
        }
        if let failure {
            Output.error("Error: \(failure.message)")
            return failure.code
        }
        return summary.rejected == 0 ? ExitCode.verified : ExitCode.rejected
    }

    struct WriteFailure: Error {
        let errno: Int32
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

    /// This process's peak resident set size so far.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024  // KiB on Linux
        #else
        getrusage(RUSAGE_SELF, &usage)
        return usage.ru_maxrss  // bytes on macOS
        #endif
    }

    /// The total size when every input is a regular file.
    static func knownSize(of descriptors: [Int32]) -> Int? {
        var total = 0
        for descriptor in descriptors {
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            total += Int(status.st_size)
        }
        return total
    }

    static func describe(_ summary: BatchSummary, elapsed: TimeInterval) -> String {
        let rate = elapsed > 0 ? Double(summary.lines) / elapsed : 0
        var lines = [
            "vouch batch: \(summary.lines) lines, \(summary.verified) verified, \(summary.rejected) rejected in "
                + String(format: "%.2f s (%.0f lines/s), peak memory %.1f MiB", elapsed, rate, Double(peakResidentBytes()) / 1_048_576)
        ]
        if !summary.kinds.isEmpty {
            lines.append("  verified by kind: " + summary.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if !summary.errors.isEmpty {
            lines.append("  rejected by code: " + summary.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    static func summaryJSON(_ summary: BatchSummary, elapsed: TimeInterval) -> JSONValue {
        func counts(_ dictionary: [String: Int]) -> JSONValue {
            .object(JSONObject(dictionary.sorted { $0.key < $1.key }.map { .init($0.key, .number(String($0.value))) }))
        }
        return .object(JSONObject([
            .init("lines", .number(String(summary.lines))),
            .init("verified", .number(String(summary.verified))),
            .init("rejected", .number(String(summary.rejected))),
            .init("kinds", counts(summary.kinds)),
            .init("errors", counts(summary.errors)),
            .init("elapsedSeconds", .number(String(format: "%.3f", elapsed))),
            .init("linesPerSecond", .number(String(format: "%.1f", elapsed > 0 ? Double(summary.lines) / elapsed : 0))),
            .init("peakResidentBytes", .number(String(peakResidentBytes()))),
        ]))
    }

    /// A progress line on stderr, redrawn at most twice a second.
    final class Progress {
        let enabled: Bool
        let totalBytes: Int?
        var lastDraw = Date.distantPast
        var drawn = false

        init(enabled: Bool, totalBytes: Int?) {
            self.enabled = enabled
            self.totalBytes = totalBytes
        }

        func update(_ before: BatchSummary, _ current: BatchSummary, elapsed: TimeInterval) {
            guard enabled, Date().timeIntervalSince(lastDraw) >= 0.5, elapsed > 0 else { return }
            lastDraw = Date()
            let lines = before.lines + current.lines
            var text = "\r\(lines) lines, " + String(format: "%.0f lines/s", Double(lines) / elapsed)
            if let totalBytes, totalBytes > 0 {
                let done = Double(before.bytesConsumed + current.bytesConsumed) / Double(totalBytes)
                let remaining = done > 0 ? elapsed / done - elapsed : 0
                text += String(format: ", %.1f%%, ETA %.0f s", done * 100, remaining)
            }
            Output.write(text + "\u{1B}[K", to: .standardError)
            drawn = true
        }

        func clear() {
            if drawn { Output.write("\r\u{1B}[K", to: .standardError) }
        }
    }
}
