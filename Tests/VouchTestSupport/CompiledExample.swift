internal import Dispatch
public import Foundation

/// Examples of the documentation, compiled and run as users would: the Swift block between
/// `<!-- NAME:begin -->` and `<!-- NAME:end -->` of a page, compiled with `swiftc` against the
/// modules this test run built (the same sanitizer too), linked with OpenSSL, zlib and SQLite.
public enum CompiledExample {
    /// The Swift block of `page` (a path from the package root) between the `NAME` markers.
    public static func block(_ name: String, in page: String) throws -> String {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(page), encoding: .utf8)
        guard let begin = text.range(of: "<!-- \(name):begin -->\n```swift\n"),
            let end = text.range(of: "```\n<!-- \(name):end -->", range: begin.upperBound..<text.endIndex)
        else { throw TestFailure("\(page) has no Swift block between the \(name) markers") }
        return String(text[begin.upperBound..<end.lowerBound])
    }

    /// The folder the test bundle was built into (`.build/debug`, or a sanitizer's own): the
    /// test runner's own folder. (Not `Bundle.allBundles`, which leaks inside Foundation.)
    public static func productsDirectory() throws -> URL {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for directory in [runner.deletingLastPathComponent(), packageRoot.appendingPathComponent(".build/debug")]
        where FileManager.default.fileExists(atPath: directory.appendingPathComponent("Vouch.build").path) {
            return directory
        }
        throw TestFailure("cannot find the build folder from \(runner.path)")
    }

    /// Compiles `source` as a program in `folder`, linked with the objects of `targets` (the
    /// library and the targets of this package it depends on), the C targets' objects, and
    /// OpenSSL, zlib, SQLite and libpq. Returns the executable.
    public static func compile(_ source: String, linking targets: [String], in folder: URL) throws -> URL {
        let products = try productsDirectory()
        let main = folder.appendingPathComponent("main.swift")
        let executable = folder.appendingPathComponent("example")
        try source.write(to: main, atomically: true, encoding: .utf8)
        let modules = products.appendingPathComponent("Modules")
        var arguments = ["swiftc", "-swift-version", "6", "-I", modules.path, "-I", products.path]
        let sources = packageRoot.appendingPathComponent("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            // A system library's map sits in its folder, a C target's in its include folder.
            for map in ["module.modulemap", "include/module.modulemap"].map({
                sources.appendingPathComponent(target).appendingPathComponent($0)
            })
            where FileManager.default.fileExists(atPath: map.path) {
                arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"]
            }
        }
        // The objects the build's output file map names (a folder can keep objects of sources
        // since moved).
        for target in targets {
            let map = products.appendingPathComponent("\(target).build/output-file-map.json")
            guard let data = try? Data(contentsOf: map),
                let entries = try JSONSerialization.jsonObject(with: data) as? [String: [String: String]]
            else { throw TestFailure("cannot read \(map.path)") }
            arguments += entries.values.compactMap { $0["object"] }.sorted()
        }
        // The C targets' objects (a C target has no output file map; a system library has none).
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) where target.hasPrefix("C") {
            let objects = products.appendingPathComponent("\(target).build")
            let cObjects = (try? FileManager.default.contentsOfDirectory(atPath: objects.path)) ?? []
            arguments += cObjects.filter { $0.hasSuffix(".o") }.sorted().map { objects.appendingPathComponent($0).path }
        }
        // libpq's headers sit in a folder of their own (Debian: /usr/include/postgresql), which
        // pkg-config names, as it does for the build.
        let libpq = try Subprocess.run(["pkg-config", "--cflags-only-I", "libpq"])
        guard libpq.status == 0 else { throw TestFailure("pkg-config cannot find libpq: \(libpq.stderr)") }
        arguments += libpq.stdout.split(whereSeparator: \.isWhitespace).flatMap { ["-Xcc", String($0)] }
        let path = products.path
        if path.contains("sanitize-address") { arguments.append("-sanitize=address") }
        if path.contains("sanitize-thread") { arguments.append("-sanitize=thread") }
        arguments += [main.path, "-lcrypto", "-lz", "-lsqlite3", "-lpq", "-o", executable.path]
        let result = try Subprocess.run(arguments)
        guard result.status == 0 else { throw TestFailure("the example does not compile:\n\(result.stderr)") }
        return executable
    }
}

/// Another program, run to its end.
public enum Subprocess {
    /// Runs a program (found on the `PATH` when not a path) in `directory` (the test's own by
    /// default), `input` on its standard input, and collects what it printed.
    public static func run(_ arguments: [String], input: [UInt8]? = nil, in directory: URL? = nil) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        // Standard error is read beside standard output, so that neither pipe fills up.
        let collected = ErrorCollector(errors.fileHandleForReading)
        try stdin.fileHandleForWriting.write(contentsOf: Data(input ?? []))
        try stdin.fileHandleForWriting.close()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = collected.wait()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorCollector: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
