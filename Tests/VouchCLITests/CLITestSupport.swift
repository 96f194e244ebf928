import Foundation
import Testing
import VouchTestSupport

/// Runs the built `vouch` binary.
enum VouchBinary {
    static let packageRoot = VouchTestSupport.packageRoot

    /// The `vouch` executable built beside the test bundle.
    static let url: URL = {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [runner.deletingLastPathComponent().appendingPathComponent("vouch")]
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("vouch"))
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/vouch"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the binary with `arguments`; through `launcher` (a command and its arguments, such
    /// as `setpriv` to run it as another user) when one is given.
    static func run(_ arguments: [String], input: [UInt8]? = nil, launcher: [String] = []) throws -> Result {
        let process = Process()
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = Array(launcher.dropFirst()) + [url.path] + arguments
        } else {
            process.executableURL = url
            process.arguments = arguments
        }
        process.currentDirectoryURL = packageRoot
        // Standard input and error go through files, so no pipe can fill up and block.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inputURL = scratch.appendingPathComponent("stdin")
        let errorURL = scratch.appendingPathComponent("stderr")
        try Data(input ?? []).write(to: inputURL)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }

    /// Runs a bash script with `$0` the binary and `arguments` after it, in the package root,
    /// stderr discarded; returns its exit status and what it printed on stdout.
    static func shell(_ script: String, environment: [String: String] = [:], _ arguments: [String] = []) throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script, url.path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = packageRoot
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The sanitizer this test process (and so the `vouch` built beside it) runs under, if any.
    static let sanitizer: String? = {
        guard let process = dlopen(nil, RTLD_NOW) else { return nil }
        defer { dlclose(process) }
        if dlsym(process, "__asan_init") != nil { return "address" }
        if dlsym(process, "__tsan_init") != nil { return "thread" }
        return nil
    }()

    /// A project vector's path relative to the package root, the binary's working directory.
    static func vector(_ path: String) -> String { "TestVectors/\(path)" }

    static func text(_ path: String) throws -> String { try TestVectors.text(path) }

    /// Parses one JSON object printed by the tool.
    static func object(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        guard let object = value as? [String: Any] else { throw TestFailure("not a JSON object: \(text)") }
        return object
    }
}
