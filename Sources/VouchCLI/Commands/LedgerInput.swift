import Foundation
import Vouch
import VouchEntitlements

/// Reads dumps into an entitlement ledger for `vouch entitlements` and `vouch refunds`: the
/// inputs `vouch batch` reads (files or standard input, gzip, one token or JSON body per line),
/// every token verified with the same trust options; a rejected line is counted and reported
/// on stderr, never used.
struct LedgerInput {
    /// The options both commands share with `vouch batch` (less `--at`, `--kind` and the
    /// record options), and `--chain-at`.
    static let valued: Set<String> = [
        "--root", "--bundle-id", "--app-apple-id", "--environment", "--xcode-cert", "--field", "--jobs", "--chain-at",
        "--summary-json",
    ]
    static let flags: Set<String> = ["--no-strict-x509"]

    static let optionsHelp = """
          --summary-json FILE    Also write the summary as JSON to FILE
          --jobs N               Verify on N threads (default: all cores)
          --field NAME           In JSON lines, read the token from this member
          --root FILE            Trust this root certificate (DER or PEM) instead of the
                                 embedded Apple Root CA - G3; repeatable
          --bundle-id ID         Require this bundleId
          --app-apple-id N       Require this appAppleId (checked for Production data)
          --environment ENV      Require Production, Sandbox, Xcode or LocalTesting
          --chain-at WHEN        Validate chains at: signed (default), now, or ISO-8601
                                 ('vouch batch --at')
          --xcode-cert FILE      Trust this Xcode StoreKit testing certificate; repeatable
          --no-strict-x509       Relax OpenSSL's RFC 5280 strict checks
        """

    /// At most this many rejected lines are reported one by one; all are counted.
    static let reportedRejections = 100

    let command: String
    let batch: BatchVerifier
    let paths: [String]

    init(command: String, arguments: Arguments) throws {
        self.command = command
        // `--at` means something else here; chains are validated at `--chain-at`.
        var options = try TrustOptions(arguments.removing("--at"))
        options.configuration.validationTime = try arguments.value("--chain-at").map {
            do {
                return try TrustOptions.validationTime($0)
            } catch {
                throw UsageError("--chain-at must be 'signed', 'now' or an ISO-8601 instant; got '\($0)'")
            }
        } ?? .signedDate
        var batch = BatchVerifier(verifier: try options.makeVerifier(), field: arguments.value("--field"))
        if let text = arguments.value("--jobs") {
            guard let jobs = Int(text), (1...1024).contains(jobs) else {
                throw UsageError("--jobs must be a whole number from 1 to 1024; got '\(text)'")
            }
            batch.jobs = jobs
        }
        self.batch = batch
        paths = arguments.positionals.isEmpty ? ["-"] : arguments.positionals
    }

    /// What reading gave: the counts, and the first rejections.
    struct Reading {
        var summary = BatchSummary()
        var seconds: Double = 0
    }

    /// Feeds every verified payload of every input to `ledger`. Every input is opened before
    /// any is read; an input that cannot be read (or a truncated gzip stream) is an
    /// ``InputError``.
    func read(into ledger: inout EntitlementLedger) throws -> Reading {
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
        let start = Date()
        var reading = Reading()
        var reported = 0
        for input in inputs {
            do {
                let reader = try LineReader.open(FileDescriptorSource(descriptor: input.descriptor))
                let part = try batch.verifyLines(from: reader) { line, result in
                    switch result {
                    case .success(let verified):
                        ledger.add(verified)
                    case .failure(let error):
                        reported += 1
                        if reported <= Self.reportedRejections {
                            Output.error("vouch \(command): \(input.name):\(line): rejected, not used: \(error.code): \(error.reason)")
                        } else if reported == Self.reportedRejections + 1 {
                            Output.error("vouch \(command): further rejected lines are counted only ('vouch batch' lists them all)")
                        }
                    }
                }
                reading.summary.add(part)
            } catch let error as InputFailure {
                throw InputError("cannot read \(input.name): \(error)")
            }
        }
        reading.seconds = Date().timeIntervalSince(start)
        return reading
    }

    /// `vouch COMMAND: N lines, V verified, R rejected (by code) in S s`.
    func describe(_ reading: Reading, ledger: EntitlementLedger) -> String {
        let summary = reading.summary
        var text = "vouch \(command): \(summary.lines) lines, \(summary.verified) verified, \(summary.rejected) rejected in "
            + String(format: "%.2f s", reading.seconds)
            + "; \(ledger.chainCount) chains, \(ledger.transactionCount) transactions"
        if !summary.errors.isEmpty {
            text += "\n  rejected by code: " + summary.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        let statistics = ledger.statistics
        if statistics.ignored > 0 || statistics.incomplete > 0 {
            text += "\n  not about entitlements: \(statistics.ignored); lacking a member the rules need: \(statistics.incomplete)"
        }
        return text
    }

    /// The input counts as JSON: `{"lines":…,"verified":…,"rejected":…,"errors":{…},"ignored":…,"incomplete":…}`.
    func inputJSON(_ reading: Reading, ledger: EntitlementLedger) -> JSONValue {
        let summary = reading.summary
        return .object(JSONObject([
            .init("lines", .number(String(summary.lines))),
            .init("verified", .number(String(summary.verified))),
            .init("rejected", .number(String(summary.rejected))),
            .init("errors", .object(JSONObject(summary.errors.sorted { $0.key < $1.key }.map { .init($0.key, .number(String($0.value))) }))),
            .init("ignored", .number(String(ledger.statistics.ignored))),
            .init("incomplete", .number(String(ledger.statistics.incomplete))),
            .init("chains", .number(String(ledger.chainCount))),
            .init("transactions", .number(String(ledger.transactionCount))),
        ]))
    }

    /// The exit status once the output is written: 0 when every line verified, 1 otherwise.
    func status(_ reading: Reading) -> Int32 {
        reading.summary.rejected == 0 ? ExitCode.verified : ExitCode.rejected
    }

    /// Writes `json` to the `--summary-json` file, if one was asked for.
    static func writeSummary(_ json: JSONValue, to path: String?) throws {
        guard let path else { return }
        guard FileManager.default.createFile(atPath: path, contents: Data(JSONWriter.encode(json) + [0x0A])) else {
            throw WriteError("cannot write the summary to \(path)")
        }
    }

    /// An instant: `now`, a date (`2026-02-01`, midnight UTC) or an ISO-8601 instant.
    static func instant(_ text: String, option: String, now: Date = Date()) throws(UsageError) -> Timestamp {
        if text == "now" { return Timestamp(milliseconds: Int64((now.timeIntervalSince1970 * 1000).rounded(.down))) }
        let dateOnly = text.count == 10 ? text + "T00:00:00Z" : text
        guard case .fixed(let milliseconds) = try? TrustOptions.validationTime(dateOnly), dateOnly != "signed", dateOnly != "now" else {
            throw UsageError("\(option) must be 'now', a date such as 2026-02-01 or an ISO-8601 instant such as 2026-02-01T12:00:00Z; got '\(text)'")
        }
        return Timestamp(milliseconds: milliseconds)
    }

    /// Reads the `--tiers` catalog.
    static func catalog(_ path: String?) throws -> ProductCatalog {
        guard let path else { return ProductCatalog() }
        guard let data = FileManager.default.contents(atPath: path) else { throw InputError("cannot read --tiers \(path)") }
        do {
            return try ProductCatalog(json: [UInt8](data))
        } catch {
            throw UsageError("--tiers \(path): \(error)")
        }
    }
}

/// Output that cannot be written: exit 74.
struct WriteError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension Arguments {
    /// These arguments without any value of `name`.
    func removing(_ name: String) -> Arguments {
        var copy = self
        copy.dropOption(name)
        return copy
    }
}
