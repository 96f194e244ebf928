import Foundation
import Testing

/// `vouch verify` and `vouch batch` on App Store Server API responses and real dumps: paths,
/// sharding, echoed members, exit status, memory.
@Suite(.serialized) struct DocumentCommandTests {
    static let transaction = try! VouchBinary.text("apple-real/real/transaction-sandbox-13.jws")
    static let renewal = try! VouchBinary.text("apple-real/real/renewalInfo-sandbox-9.jws")
    static let renewed = try! VouchBinary.text("apple-real/real/transaction-sandbox-14.jws")

    static func statuses(renewal: String = renewal) -> String {
        #"{"environment":"Sandbox","bundleId":"com.loki-project.loki-messenger","data":[{"subscriptionGroupIdentifier":"21440045","lastTransactions":[{"originalTransactionId":"2000001024993299","status":1,"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"}]}]}"#
    }

    static func tampered(_ token: String) -> String {
        var characters = Array(token)
        characters[characters.count - 10] = characters[characters.count - 10] == "A" ? "B" : "A"
        return String(characters)
    }

    func scratch(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-documents-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test func verifyChecksEveryTokenOfAResponseAndNamesTheTamperedOne() throws {
        let result = try VouchBinary.run(
            ["verify", "-"], input: Array(Self.statuses(renewal: Self.tampered(Self.renewal)).utf8))
        #expect(result.status == 1)
        #expect(
            result.stdout.hasPrefix("data[0].lastTransactions[0].signedTransactionInfo (line 1): VERIFIED transaction"))
        #expect(
            result.stderr.contains(
                "vouch: rejected: data[0].lastTransactions[0].signedRenewalInfo (line 1): bad_signature"))
        let json = try VouchBinary.run(["verify", "--json", "-"], input: Array(Self.statuses().utf8))
        #expect(json.status == 0)
        #expect(
            lines(json.stdout).map { $0.prefix(80) } == [
                #"{"line":1,"document":1,"path":"data[0].lastTransactions[0].signedTransactionInfo","#.prefix(80),
                #"{"line":1,"document":1,"path":"data[0].lastTransactions[0].signedRenewalInfo","st"#.prefix(80),
            ])
    }

    @Test func verifyReadsPagesSeparatedByBlankLines() throws {
        let input = Self.statuses() + "\n\n" + Self.statuses() + "\n"
        let result = try VouchBinary.run(["verify", "--json", "-"], input: Array(input.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            lines(result.stdout).map { $0.prefix(22) }
                == [
                    #"{"line":1,"document":1"#, #"{"line":1,"document":1"#, #"{"line":3,"document":3"#,
                    #"{"line":3,"document":3"#,
                ].map { $0.prefix(22) })
    }

    @Test func batchReadsPrettyPrintedGzippedPagesWithoutGlue() throws {
        let page = #"""
            {
              "revision": "1",
              "bundleId": "com.loki-project.loki-messenger",
              "environment": "Sandbox",
              "hasMore": true,
              "signedTransactions": [
                "\#(Self.transaction)",
                "\#(Self.renewed)"
              ]
            }
            """#
        let file = try scratch("history.json", Array((page + "\n" + page + "\n").utf8))
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = [file.path]
        try gzip.run()
        gzip.waitUntilExit()
        let result = try VouchBinary.run(["batch", "--payload", "none", file.path + ".gz"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            lines(result.stdout) == [
                #"{"line":7,"document":1,"path":"signedTransactions[0]","status":"verified","kind":"transaction"}"#,
                #"{"line":8,"document":1,"path":"signedTransactions[1]","status":"verified","kind":"transaction"}"#,
                #"{"line":17,"document":2,"path":"signedTransactions[0]","status":"verified","kind":"transaction"}"#,
                #"{"line":18,"document":2,"path":"signedTransactions[1]","status":"verified","kind":"transaction"}"#,
            ])
    }

    /// A mixed input: bare tokens, garbage, blank lines, one-line objects and a response.
    static func mixedInput(_ seed: Int) -> String {
        var parts: [String] = []
        for index in 0..<40 {
            switch (index + seed) % 6 {
            case 0: parts.append(transaction)
            case 1: parts.append(#"{"id":"\#(index)","signedPayload":"\#(renewal)"}"#)
            case 2: parts.append("not a token \(index)")
            case 3: parts.append("")
            case 4: parts.append(statuses())
            default: parts.append("[\n  \"\(renewed)\",\n  \"\(tampered(renewed))\"\n]")
            }
        }
        return parts.joined(separator: "\n") + "\n"
    }

    @Test func shardsOfOneInputAreDisjointAndTogetherAreTheWholeRun() throws {
        let file = try scratch("mixed.jsonl", Array(Self.mixedInput(0).utf8))
        let whole = try VouchBinary.run(["batch", "--payload", "none", file.path])
        #expect(whole.status == 1)
        var union: [String] = []
        for index in 1...3 {
            let shard = try VouchBinary.run(["batch", "--payload", "none", "--shard", "\(index)/3", file.path])
            #expect(shard.status == (shard.stdout.contains(#""status":"rejected""#) ? 1 : 0))
            #expect(!lines(shard.stdout).isEmpty)
            union += lines(shard.stdout)
        }
        #expect(Set(union).count == union.count)
        #expect(union.sorted() == lines(whole.stdout).sorted())
    }

    @Test func shardsOfSeveralFilesShareTheFilesAndTogetherAreTheWholeRun() throws {
        let files = try (0..<5).map { try scratch("part-\($0).jsonl", Array(Self.mixedInput($0).utf8)).path }
        for numbers in [[String](), ["--no-line-number"]] {
            let whole = try VouchBinary.run(["batch", "--payload", "none"] + numbers + files)
            var union: [String] = []
            for index in 1...2 {
                let shard = try VouchBinary.run(
                    ["batch", "--payload", "none", "--shard", "\(index)/2"] + numbers + files)
                union += lines(shard.stdout)
            }
            #expect(union.count == lines(whole.stdout).count)
            #expect(union.sorted() == lines(whole.stdout).sorted())
        }
    }

    @Test func echoedIdsTravelWithRecordsAndRejectionsCanBeResults() throws {
        let input =
            #"{"id":"a-1","signedPayload":"\#(Self.transaction)"}"# + "\n" + #"{"signedPayload":"garbage","id":7}"#
            + "\n"
        let result = try VouchBinary.run(
            ["batch", "--payload", "none", "--echo", "id", "--rejections-ok", "-"], input: Array(input.utf8))
        #expect(result.status == 0)
        #expect(
            lines(result.stdout) == [
                #"{"line":1,"echo":{"id":"a-1"},"status":"verified","kind":"transaction"}"#,
                #"{"line":2,"echo":{"id":7},"status":"rejected","kind":null,"error":{"code":"malformed_token","reason":"a compact JWS has 3 segments separated by dots; found 1"}}"#,
            ])
        // A usage error still fails.
        let usage = try VouchBinary.run(["batch", "--rejections-ok", "--shard", "3/2", "-"], input: [])
        #expect(usage.status == 64)
        #expect(usage.stderr.hasPrefix("Error: --shard must be I/N"))
    }

    @Test func skipEmptyLeavesBlankLinesOutAndKeepsNumbers() throws {
        let input = "\n" + Self.transaction + "\n  \n\n" + Self.renewal + "\n"
        let result = try VouchBinary.run(["batch", "--payload", "none", "--skip-empty", "-"], input: Array(input.utf8))
        #expect(result.status == 0)
        #expect(lines(result.stdout).map { $0.prefix(10) } == [#"{"line":2,"#, #"{"line":5,"#])
    }

    /// Started by a process of 600 MiB through fork and exec (as Python's workers are), the
    /// summary gives vouch's own peak, not the one getrusage inherits.
    @Test func peakMemoryIsTheProcessesOwn() throws {
        let summary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-summary-\(UUID().uuidString).json")
        let script = """
            import os, sys
            ballast = bytearray(600 << 20)
            for i in range(0, len(ballast), 4096): ballast[i] = 1
            pid = os.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            _, status = os.waitpid(pid, 0)
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", script, VouchBinary.url.path, "batch", "--summary-json", summary.path,
            VouchBinary.packageRoot.appendingPathComponent("TestVectors/apple-real/real/transaction-sandbox-13.jws")
                .path,
        ]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let diagnostics = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(diagnostics)")
        let report = try VouchBinary.object(String(decoding: try Data(contentsOf: summary), as: UTF8.self))
        let peak = try #require(report["peakResidentBytes"] as? Int)
        #expect(peak > 0)
        #expect(peak < BatchCommandTests.peakLimitKiB * 1024, "peak \(peak)")
    }

    /// A gibibyte-long string in one document, without a newline, streams through.
    @Test func aGibibyteDocumentWithoutNewlineStaysInBoundedMemory() throws {
        let summary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-summary-\(UUID().uuidString).json")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-records-\(UUID().uuidString).jsonl")
        let script = """
            (printf '{"note":"'; head -c 1073741824 /dev/zero | tr '\\0' A; printf '","signedTransactions":["%s"]}' "$3") \
            | "$0" batch --payload none --summary-json "$1" - > "$2"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, VouchBinary.url.path, summary.path, output.path, Self.transaction]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(
            String(decoding: try Data(contentsOf: output), as: UTF8.self)
                == #"{"line":1,"document":1,"path":"signedTransactions[0]","status":"verified","kind":"transaction"}"#
                + "\n")
        let report = try VouchBinary.object(String(decoding: try Data(contentsOf: summary), as: UTF8.self))
        let peak = try #require(report["peakResidentBytes"] as? Int)
        #expect(peak < BatchCommandTests.peakLimitKiB * 1024, "peak \(peak)")
    }

    /// Runs a shell script; returns its exit status and what it printed on stdout.
    func shell(_ script: String, environment: [String: String] = [:], _ arguments: [String] = []) throws -> (
        status: Int32, output: String
    ) {
        try VouchBinary.shell(script, environment: environment, arguments)
    }

    /// On a terminal (made by script(1)), progress counts verified and rejected records; it
    /// stays off with --no-progress and with TERM=dumb. (CI, which keeps it off too, is unset.)
    @Test func progressShowsVerifiedAndRejectedAndCanBeSwitchedOff() throws {
        let input = try scratch("two.jsonl", Array((Self.transaction + "\nnot a token\n").utf8))
        let command = { (options: String) in
            "unset CI; script -qec \"'$0' batch --payload none \(options) '\(input.path)' > /dev/null\" /dev/null"
        }
        let shown = try shell(command(""), environment: ["TERM": "xterm"])
        #expect(shown.output.contains("2 tokens (1 verified, 1 rejected)"), "\(shown.output)")
        #expect(!(try shell(command("--no-progress"), environment: ["TERM": "xterm"]).output.contains("tokens (")))
        #expect(!(try shell(command(""), environment: ["TERM": "dumb"]).output.contains("tokens (")))
    }
}
