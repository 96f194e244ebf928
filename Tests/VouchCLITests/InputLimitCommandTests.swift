import Foundation
import Testing

/// `vouch verify`, `vouch inspect` and `vouch receipt verify` read at most 2 MiB of their one
/// input and refuse it as too large, however long it goes on: `/dev/zero` as the file, and a
/// pipe fed by `yes`, which never ends.
@Suite(.serialized) struct InputLimitCommandTests {
    /// Far more than the command needs (well under a second in a release build), enough for a
    /// debug build under a sanitizer on a loaded machine; a command that reads on forever reaches
    /// it and fails the test.
    static let timeout: TimeInterval = VouchBinary.sanitizer == nil ? 60 : 300

    struct Outcome {
        /// `nil` when the command was still running at the timeout (it was killed).
        var status: Int32?
        var stdout: String
        var stderr: String
        var seconds: Double
    }

    /// Runs `vouch arguments` with standard input fed by `yes` (when `fedByYes`) or empty, and
    /// kills it by its PID when it has not ended within ``timeout``; `yes` is killed by its PID
    /// once the command has ended.
    static func run(_ arguments: [String], fedByYes: Bool) throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-input-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outputURL = scratch.appendingPathComponent("stdout")
        let errorURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)

        let process = Process()
        process.executableURL = VouchBinary.url
        process.arguments = arguments
        process.currentDirectoryURL = VouchBinary.packageRoot
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        var writer: Process?
        var pipe: Pipe?
        if fedByYes {
            let endless = Pipe()
            let yes = Process()
            yes.executableURL = URL(fileURLWithPath: "/usr/bin/yes")
            yes.standardOutput = endless
            yes.standardError = FileHandle.nullDevice
            try yes.run()
            writer = yes
            pipe = endless
            process.standardInput = endless
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let start = Date()
        try process.run()
        while process.isRunning, Date().timeIntervalSince(start) < timeout { usleep(10_000) }
        let finished = !process.isRunning
        if !finished { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(start)
        if let writer {
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
        }
        try? pipe?.fileHandleForReading.close()
        try? pipe?.fileHandleForWriting.close()
        return Outcome(
            status: finished ? process.terminationStatus : nil,
            stdout: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self), seconds: seconds)
    }

    /// The `error.code` of the one JSON record the command printed.
    static func code(_ stdout: String) throws -> String? {
        let record = try VouchBinary.object(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        return (record["error"] as? [String: Any])?["code"] as? String
    }

    static let reason = "the input is larger than 2097152 bytes; reading stopped there"

    @Test(arguments: [
        (["verify", "--json", "/dev/zero"], false), (["verify", "--json", "-"], true),
    ])
    func verifyRefusesAnEndlessInputAsTooLargeAndEnds(arguments: [String], fedByYes: Bool) throws {
        let outcome = try Self.run(arguments, fedByYes: fedByYes)
        #expect(outcome.status == 1, "after \(outcome.seconds) s: \(outcome.stderr)")
        #expect(try Self.code(outcome.stdout) == "token_too_large")
        #expect(outcome.stderr.contains("vouch: rejected: token_too_large: \(Self.reason)\n"))
    }

    @Test(arguments: [(["inspect", "/dev/zero"], false), (["inspect", "-"], true)])
    func inspectRefusesAnEndlessInputAsTooLargeAndEnds(arguments: [String], fedByYes: Bool) throws {
        let outcome = try Self.run(arguments, fedByYes: fedByYes)
        #expect(outcome.status == 1, "after \(outcome.seconds) s: \(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains("vouch: cannot decode: token_too_large: \(Self.reason)\n"))
    }

    @Test(arguments: [
        (["receipt", "verify", "--format", "json", "/dev/zero"], false),
        (["receipt", "verify", "--format", "json", "-"], true),
    ])
    func receiptVerifyRefusesAnEndlessInputAsTooLargeAndEnds(arguments: [String], fedByYes: Bool) throws {
        let outcome = try Self.run(arguments, fedByYes: fedByYes)
        #expect(outcome.status == 1, "after \(outcome.seconds) s: \(outcome.stderr)")
        #expect(try Self.code(outcome.stdout) == "receipt_too_large")
        #expect(outcome.stderr.contains("vouch: rejected: receipt_too_large: \(Self.reason)\n"))
    }

    @Test func anInputOfTheLimitIsReadWholeAndOneByteMoreIsRefused() throws {
        // A JSON document of exactly 2 MiB holding no token (its one string is passed over as
        // it streams) is read to its end; with a newline after it, the input is too large.
        let opening = Array(#"{"note":""#.utf8)
        let closing = Array(#""}"#.utf8)
        let document =
            opening + [UInt8](repeating: UInt8(ascii: "A"), count: (2 << 20) - opening.count - closing.count)
            + closing
        #expect(document.count == 2 << 20)
        let whole = try VouchBinary.run(["verify", "-"], input: document)
        #expect(whole.status == 1)
        #expect(whole.stderr.contains("malformed_token"), "\(whole.stderr)")
        #expect(!whole.stderr.contains("token_too_large"), "\(whole.stderr)")
        let over = try VouchBinary.run(["verify", "-"], input: document + [0x0A])
        #expect(over.status == 1)
        #expect(over.stderr.hasSuffix("vouch: rejected: token_too_large: \(Self.reason)\n"), "\(over.stderr)")
    }
}
