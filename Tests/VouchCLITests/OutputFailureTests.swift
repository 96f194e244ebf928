import Foundation
import Testing

@testable import VouchCLI

/// Output that cannot be written (a reader that went away, a full disk) ends every command
/// with exit 74 and one line on stderr: no signal, no crash report.
@Suite(.serialized) struct OutputFailureTests {
    static let ca = VouchBinary.vector("minted/ca")
    static let brokenPipe = "Error: cannot write standard output: Broken pipe\n"

    struct Ended {
        let status: Int32
        /// The lines the reader took before going away.
        let lines: [String]
        let stderr: String
    }

    /// Runs `vouch ARGUMENTS` with stdout into a pipe, reads `lines` lines from it and closes
    /// it, as `| head -N` does.
    static func runUntilTheReaderLeaves(_ arguments: [String], lines count: Int) throws -> Ended {
        let process = Process()
        process.executableURL = VouchBinary.url
        process.arguments = arguments
        process.currentDirectoryURL = VouchBinary.packageRoot
        let errorURL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorURL) }
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        var buffer: [UInt8] = []
        var lines: [String] = []
        let reader = output.fileHandleForReading
        while lines.count < count {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            while lines.count < count, let end = buffer.firstIndex(of: 0x0A) {
                lines.append(String(decoding: buffer[..<end], as: UTF8.self))
                buffer.removeSubrange(...end)
            }
        }
        try reader.close()
        process.waitUntilExit()
        return Ended(
            status: process.terminationStatus, lines: lines,
            stderr: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }

    /// Runs `vouch ARGUMENTS > /dev/full`.
    static func runIntoAFullDisk(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = VouchBinary.url
        process.arguments = arguments
        process.currentDirectoryURL = VouchBinary.packageRoot
        let errors = Pipe()
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        process.standardInput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    @Test func mintIntoHeadOneExitsQuietlyWith74() throws {
        let ended = try Self.runUntilTheReaderLeaves(
            ["mint", "transaction", "--ca", Self.ca, "--count", "100"], lines: 1)
        #expect(ended.lines.count == 1)
        #expect(ended.lines.first?.split(separator: ".").count == 3)
        #expect(ended.status == 74)
        #expect(ended.stderr == Self.brokenPipe)
    }

    @Test func batchIntoHeadFiveExitsWith74AndASummaryOfTheRecordsWritten() throws {
        let tokens = try VouchBinary.run([
            "mint", "transaction", "--ca", Self.ca, "--count", "600", "--date", "2025-06-01",
        ])
        #expect(tokens.status == 0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-head-\(UUID().uuidString).jwsl")
        try Data(tokens.stdout.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let ended = try Self.runUntilTheReaderLeaves(
            ["batch", "--root", VouchBinary.vector("minted/ca/root.der"), file.path], lines: 5)
        #expect(ended.status == 74)
        #expect(ended.lines.count == 5)
        #expect(ended.lines.allSatisfy { $0.contains(#""status":"verified""#) })
        let stderr = ended.stderr.split(separator: "\n").map(String.init)
        #expect(stderr.last.map { $0 + "\n" } == Self.brokenPipe)
        // The summary counts what reached the pipe: at least what was read, less than all.
        let first = try #require(stderr.first)
        let written = try #require(Int(first.dropFirst("vouch batch: 1 input, ".count).prefix { $0.isNumber }))
        #expect(first.hasPrefix("vouch batch: 1 input, \(written) tokens: \(written) verified, 0 rejected"))
        #expect(written >= 5 && written < 600)
        #expect(!ended.stderr.contains("Fatal") && !ended.stderr.contains("Backtrace"))
    }

    @Test(arguments: [
        ["mint", "transaction", "--ca", ca, "--count", "50"], ["verify", "--help"], ["--version"], ["help", "mint"],
        ["inspect", VouchBinary.vector("apple-real/real/transaction-production-1.jws")],
        ["verify", VouchBinary.vector("apple-real/real/transaction-production-1.jws")],
    ])
    func writingToAFullDiskExitsWith74AndOneLine(arguments: [String]) throws {
        let result = try Self.runIntoAFullDisk(arguments)
        #expect(result.status == 74)
        #expect(result.stderr == "Error: cannot write standard output: No space left on device\n")
    }

    @Test func batchIntoAFullDiskSaysNoRecordWasWritten() throws {
        let result = try Self.runIntoAFullDisk([
            "batch", VouchBinary.vector("apple-real/real/transaction-production-1.jws"),
        ])
        #expect(result.status == 74)
        #expect(result.stderr.hasPrefix("vouch batch: 1 input, 0 tokens: 0 verified, 0 rejected"))
        #expect(result.stderr.hasSuffix("\nError: cannot write standard output: No space left on device\n"))
    }

    // MARK: In-process accounting

    /// Accepts `limit` bytes, then fails as a closed pipe does.
    final class ClosingSink: OutputSink, @unchecked Sendable {
        let limit: Int
        private var taken = 0
        private(set) var accepted: [UInt8] = []

        init(limit: Int) { self.limit = limit }

        func write(_ bytes: [UInt8]) throws(WriteError) {
            let room = max(0, limit - taken)
            accepted += bytes.prefix(room)
            taken += min(room, bytes.count)
            if bytes.count > room { throw WriteError(destination: "standard output", errno: EPIPE, written: room) }
        }
    }

    @Test func theBatchSummaryCountsExactlyTheRecordsThatGotThroughACutWrite() throws {
        let real = VouchBinary.packageRoot.appendingPathComponent("TestVectors/apple-real/real")
        let lines = try FileManager.default.contentsOfDirectory(atPath: real.path).sorted().map {
            try VouchBinary.text("apple-real/real/\($0)")
        }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-cut-\(UUID().uuidString)")
        try Data((Array(repeating: lines, count: 4).flatMap { $0 }.joined(separator: "\n") + "\n").utf8).write(
            to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let sink = ClosingSink(limit: 3_000)
        let errors = MemorySink()
        let console = Console(output: sink, error: errors, inputDescriptor: -1, errorIsTerminal: false, now: { Date() })
        let status = CommandRegistry.vouch.run(["batch", "--payload", "none", "-j", "1", input.path], console: console)
        #expect(status == 74)
        let complete = sink.accepted.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().count
        #expect(complete > 0 && complete < lines.count * 4)
        #expect(errors.text.hasPrefix("vouch batch: 1 input, \(complete) tokens: "))
        #expect(errors.text.hasSuffix("Error: cannot write standard output: Broken pipe\n"))
    }
}
