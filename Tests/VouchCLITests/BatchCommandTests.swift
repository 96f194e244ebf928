import Foundation
import Testing
import VouchTestSupport

@Suite(.serialized) struct BatchCommandTests {
    static func realLines() throws -> [String] {
        let folder = VouchBinary.packageRoot.appendingPathComponent("TestVectors/apple-real/real")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            try VouchBinary.text("apple-real/real/\($0)")
        }
    }

    func scratchFile(_ lines: [String], name: String = "input.jsonl") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
        return url
    }

    /// Writes `file.gz` beside `file` with the system's gzip.
    func gzipKeepingOriginal(_ file: URL) throws {
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-k", file.path]
        try gzip.run()
        gzip.waitUntilExit()
        #expect(gzip.terminationStatus == 0)
    }

    @Test func verifiesEveryLineInOrderAndExitsZero() throws {
        let lines = try Self.realLines()
        let file = try scratchFile(lines)
        let result = try VouchBinary.run(["batch", "--jobs", "2", file.path])
        #expect(result.status == 0, "\(result.stderr)")
        let records = result.stdout.split(separator: "\n").map(String.init)
        #expect(records.count == lines.count)
        for (index, record) in records.enumerated() {
            #expect(record.hasPrefix("{\"line\":\(index + 1),\"status\":\"verified\",\"kind\":\""))
        }
        #expect(
            result.stderr.contains("vouch batch: 1 input, \(lines.count) tokens: \(lines.count) verified, 0 rejected"))
    }

    @Test func anyRejectedLineMakesTheExitStatusOne() throws {
        let lines = try Self.realLines()
        let file = try scratchFile([lines[0], "", "not a token", lines[1]])
        let summaryFile = file.deletingLastPathComponent().appendingPathComponent("summary.json")
        let result = try VouchBinary.run(["batch", "--payload", "none", "--summary-json", summaryFile.path, file.path])
        #expect(result.status == 1)
        let records = result.stdout.split(separator: "\n").map(String.init)
        #expect(records.count == 4)
        #expect(
            records[1]
                == #"{"line":2,"status":"rejected","kind":null,"error":{"code":"empty_line","reason":"the line is empty"}}"#
        )
        let summary = try VouchBinary.object(String(decoding: try Data(contentsOf: summaryFile), as: UTF8.self))
        #expect(summary["lines"] as? Int == 4)
        #expect(summary["verified"] as? Int == 2)
        #expect(summary["rejected"] as? Int == 2)
        #expect(summary["errors"] as? [String: Int] == ["empty_line": 1, "malformed_token": 1])
    }

    @Test func aMissingInputExitsWith66BeforeAnyOutput() throws {
        let file = try scratchFile(try Self.realLines())
        let result = try VouchBinary.run(["batch", file.path, "/nonexistent/dump.jsonl"])
        #expect(result.status == 66)
        #expect(result.stdout == "")
        #expect(result.stderr.contains("cannot read /nonexistent/dump.jsonl"))
    }

    @Test(arguments: [["--jobs", "0"], ["--jobs", "x"], ["--payload", "a,,b"], ["--first-line", "0"]])
    func badOptionsExitWith64(options: [String]) throws {
        let result = try VouchBinary.run(["batch"] + options)
        #expect(result.status == 64)
        #expect(result.stderr.contains("Usage: vouch batch"))
    }

    /// A dump split into parts, each verified on its own, concatenates to one run's output.
    @Test func splitThenConcatenateEqualsOneRun() throws {
        let lines = Array(repeating: try Self.realLines(), count: 3).flatMap { $0 } + ["", "garbage"]
        let whole = try VouchBinary.run(["batch", try scratchFile(lines).path])
        let unnumbered = try VouchBinary.run(["batch", "--no-line-number", try scratchFile(lines).path])
        var numbered = ""
        var plain = ""
        var first = 1
        for part in stride(from: 0, to: lines.count, by: 20).map({ Array(lines[$0..<min($0 + 20, lines.count)]) }) {
            let file = try scratchFile(part)
            numbered += try VouchBinary.run(["batch", "--first-line", String(first), file.path]).stdout
            plain += try VouchBinary.run(["batch", "--no-line-number", file.path]).stdout
            first += part.count
        }
        #expect(whole.stdout.split(separator: "\n").count == lines.count)
        #expect(numbered == whole.stdout)
        #expect(plain == unnumbered.stdout)
    }

    @Test func readsStandardInputAndGzip() throws {
        let lines = try Self.realLines()
        let file = try scratchFile(lines)
        try gzipKeepingOriginal(file)
        let compressed = try VouchBinary.run(["batch", file.path + ".gz"])
        let piped = try VouchBinary.run(["batch", "-"], input: [UInt8](try Data(contentsOf: file)))
        let plain = try VouchBinary.run(["batch", file.path])
        #expect(compressed.status == 0)
        #expect(compressed.stdout == plain.stdout)
        #expect(piped.stdout == plain.stdout)
    }

    @Test func aClosedOutputPipeIsAWriteErrorNotACrash() throws {
        let lines = Array(repeating: try Self.realLines(), count: 40).flatMap { $0 }
        let file = try scratchFile(lines)
        let process = Process()
        process.executableURL = VouchBinary.url
        process.arguments = ["batch", "--jobs", "2", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = try output.fileHandleForReading.read(upToCount: 100)
        try output.fileHandleForReading.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 74)
    }

    struct Measured {
        let status: Int32
        let records: [String]
        /// The peak resident set of the vouch process, as its summary reports it, in KiB.
        let peakKiB: Int
    }

    /// Runs `producer | vouch batch --payload none ARGUMENTS` through a shell and reads vouch's
    /// own peak RSS from its JSON summary (a parent's figure would include this test
    /// process's, which Linux carries across exec).
    func measureBatch(fedBy producer: String, _ arguments: [String] = []) throws -> Measured {
        let folder = try scratchFile([]).deletingLastPathComponent()
        let output = folder.appendingPathComponent("records.jsonl")
        let summary = folder.appendingPathComponent("summary.json")
        let script =
            "s=$1; o=$2; shift 2; \(producer) | \"$0\" batch --payload none --summary-json \"$s\" \"$@\" > \"$o\""
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, VouchBinary.url.path, summary.path, output.path] + arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let report = try VouchBinary.object(String(decoding: try Data(contentsOf: summary), as: UTF8.self))
        let peak = try #require(report["peakResidentBytes"] as? Int)
        let records = String(decoding: try Data(contentsOf: output), as: UTF8.self).split(separator: "\n").map(
            String.init)
        return Measured(status: process.terminationStatus, records: records, peakKiB: peak / 1024)
    }

    /// The bound every hostile stream below stays under: the reader holds at most one line of
    /// 1 MiB, and a few chunks of lines are in flight. A sanitizer adds its own fixed cost:
    /// AddressSanitizer keeps up to 256 MiB of freed memory in quarantine (plus its allocator's
    /// own bookkeeping, up to 64 MiB more as measured under load), ThreadSanitizer
    /// shadows what the program touches.
    static let peakLimitKiB: Int = {
        switch VouchBinary.sanitizer {
        case "address": (100 + 256 + 64) * 1024
        case "thread": 400 * 1024
        default: 100 * 1024
        }
    }()

    @Test func memoryStaysBoundedOnAGibibyteWithoutNewline() throws {
        let measured = try measureBatch(fedBy: "head -c 1073741824 /dev/zero | tr '\\0' 'A'")
        #expect(measured.status == 1)
        #expect(measured.records.count == 1)
        #expect(
            measured.records.first?.contains(#""code":"line_too_long","reason":"the line is 1073741824 bytes"#) == true)
        #expect(measured.peakKiB > 0)
        #expect(measured.peakKiB < Self.peakLimitKiB, "peak RSS \(measured.peakKiB) KiB")
    }

    @Test func randomBinaryGetsARecordForEveryLineInBoundedMemory() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-random-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16 << 20)
        for index in stride(from: 0, to: bytes.count, by: 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.replaceSubrange(index..<index + 8, with: $0) }
        }
        try Data(bytes).write(to: file)
        let newlines = bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let expected = newlines + (bytes.last == 0x0A ? 0 : 1)
        let measured = try measureBatch(fedBy: "cat '\(file.path)'", ["--jobs", "2"])
        #expect(measured.status == 1)
        // Every line gets a record, in order, and every record is a rejection. A line gets more
        // than one only where JSON documents follow each other on it (`[][x` is the document
        // `[]`, which holds no token, then the broken document `[x`): each document is one
        // record, so such a line must start with a document.
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(expected)
        var recordsPerLine = [Int](repeating: 0, count: expected + 1)
        var previous = 0
        for record in measured.records {
            let prefix = #/^\{"line":(\d+),"status":"rejected"/#
            guard let match = record.prefixMatch(of: prefix), let number = Int(match.1) else {
                Issue.record("not a rejection record with its line: \(record.prefix(120))")
                continue
            }
            #expect(number == previous || number == previous + 1, "line \(number) after line \(previous)")
            if number >= 1, number <= expected { recordsPerLine[number] += 1 }
            previous = number
        }
        #expect(previous == expected)
        #expect(recordsPerLine.dropFirst().allSatisfy { $0 >= 1 })
        for (index, line) in lines.enumerated() where recordsPerLine[index + 1] > 1 {
            let first = line.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }
            #expect(first == UInt8(ascii: "{") || first == UInt8(ascii: "["), "line \(index + 1) has several records")
        }
        #expect(measured.peakKiB < Self.peakLimitKiB, "peak RSS \(measured.peakKiB) KiB")
    }

    @Test func hostileLinesEachGetOneRecordWithTheirCode() throws {
        let token = try Self.realLines()[0]
        var input: [UInt8] = []
        input += Array(token.utf8) + [0x0D, 0x0A]  // 1 CRLF: verified
        input += [0x00, 0x00, 0x00, 0x0A]  // 2 NUL bytes
        input += [0xC0, 0xAF, 0xFF, 0x0A]  // 3 invalid UTF-8
        input += Array(repeating: UInt8(ascii: "["), count: 40) + [0x0A]  // 4 not a JSON object
        input += Array(("{\"signedPayload\":" + String(repeating: "[", count: 20)).utf8) + [0x0A]  // 5 too deep
        input += [0x0A]  // 6 empty
        input += Array(repeating: UInt8(ascii: "."), count: (1 << 20) + 1) + [0x0A]  // 7 over 1 MiB
        input += Array(token.utf8)  // 8 last line, no newline
        let result = try VouchBinary.run(["batch", "--payload", "none", "-"], input: input)
        #expect(result.status == 1)
        let records = try result.stdout.split(separator: "\n").map { try VouchBinary.object(String($0)) }
        #expect(records.map { $0["line"] as? Int } == Array(1...8))
        let codes = records.map { ($0["error"] as? [String: Any])?["code"] as? String }
        #expect(
            codes == [
                nil, "malformed_token", "malformed_token", "malformed_token", "json_too_deep", "empty_line",
                "line_too_long", nil,
            ])
    }

    @Test(arguments: [3, 6, 9, 12])
    func aTruncatedGzipStreamGivesTheRecordsOfEveryCompleteLineThenExits66(sixteenths: Int) throws {
        let lines = Array(repeating: try Self.realLines(), count: 20).flatMap { $0 }
        let file = try scratchFile(lines)
        try gzipKeepingOriginal(file)
        let compressed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file.path + ".gz")))
        let cut = Array(compressed.prefix(compressed.count * sixteenths / 16))
        // The lines the cut stream completes, as gzip itself inflates it.
        let inflated = Process()
        inflated.executableURL = URL(fileURLWithPath: "/bin/sh")
        let cutFile = file.path + ".cut.gz"
        try Data(cut).write(to: URL(fileURLWithPath: cutFile))
        inflated.arguments = ["-c", "gzip -dc < '\(cutFile)' 2>/dev/null | wc -l"]
        let count = Pipe()
        inflated.standardOutput = count
        try inflated.run()
        inflated.waitUntilExit()
        let complete = Int(
            String(decoding: count.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines))
        let result = try VouchBinary.run(["batch", "--payload", "none", "-"], input: cut)
        #expect(result.status == 66)
        #expect(result.stderr.contains("the gzip stream is truncated"))
        let records = result.stdout.split(separator: "\n")
        #expect(records.count == complete)
        #expect(records.count < lines.count)
        #expect(records.allSatisfy { $0.contains(#""status":"verified""#) })
        #expect(result.stderr.contains("vouch batch: 1 input, \(records.count) tokens: \(records.count) verified"))
    }
}
