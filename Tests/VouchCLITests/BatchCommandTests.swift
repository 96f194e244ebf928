import Foundation
import Testing

@Suite(.serialized) struct BatchCommandTests {
    static func realLines() throws -> [String] {
        let folder = VouchBinary.packageRoot.appendingPathComponent("TestVectors/apple-real/real")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            try VouchBinary.text("apple-real/real/\($0)")
        }
    }

    func scratchFile(_ lines: [String], name: String = "input.jsonl") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
        return url
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
        #expect(result.stderr.contains("vouch batch: \(lines.count) lines, \(lines.count) verified, 0 rejected"))
    }

    @Test func anyRejectedLineMakesTheExitStatusOne() throws {
        let lines = try Self.realLines()
        let file = try scratchFile([lines[0], "", "not a token", lines[1]])
        let summaryFile = file.deletingLastPathComponent().appendingPathComponent("summary.json")
        let result = try VouchBinary.run(["batch", "--payload", "none", "--summary-json", summaryFile.path, file.path])
        #expect(result.status == 1)
        let records = result.stdout.split(separator: "\n").map(String.init)
        #expect(records.count == 4)
        #expect(records[1] == #"{"line":2,"status":"rejected","kind":null,"error":{"code":"empty_line","reason":"the line is empty"}}"#)
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
        var numbered = "", plain = ""
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
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-k", file.path]
        try gzip.run()
        gzip.waitUntilExit()
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

    @Test func memoryStaysBoundedOnAHugeLineWithoutNewline() throws {
        // 256 MiB of one line through standard input; vouch reports its own peak RSS (a
        // parent's figure would include this test process's, which Linux carries across exec).
        let summary = try scratchFile([]).deletingLastPathComponent().appendingPathComponent("summary.json")
        let script = "head -c 268435456 /dev/zero | tr '\\0' 'A' | \"$0\" batch --payload none --summary-json \"$1\" > /dev/null"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, VouchBinary.url.path, summary.path]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        let report = try VouchBinary.object(String(decoding: try Data(contentsOf: summary), as: UTF8.self))
        #expect(report["lines"] as? Int == 1)
        #expect(report["errors"] as? [String: Int] == ["line_too_long": 1])
        let peak = try #require(report["peakResidentBytes"] as? Int)
        #expect(peak > 0)
        #expect(peak < 100 << 20, "peak RSS \(peak) bytes")
    }
}
