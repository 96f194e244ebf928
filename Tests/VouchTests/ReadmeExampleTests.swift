import Foundation
import Testing
import Vouch
import VouchOpenSSL
import VouchTestSupport

/// The library example of README.md, taken from the README itself at test time (the Swift block
/// between `<!-- readme-example:begin -->` and `<!-- readme-example:end -->`), compiled with
/// `swiftc` against the `Vouch` module this test run built, and run on a real notification.
@Suite(.serialized) struct ReadmeExampleTests {
    /// What the test appends to the README's code: it posts a body holding a real Sandbox
    /// notification (the first argument), first to the README's own verifier (made for
    /// `com.example.app`, so it must refuse another app's data), then to one made for that app
    /// in Production and Sandbox, then posts a body without `signedPayload`; each time it prints
    /// the status the webhook answered.
    static let driver = """

        // Appended by ReadmeExampleTests; in a function, so nothing it makes outlives it (a
        // top-level value would be a global that LeakSanitizer can miss a reference to).
        func readmeExampleDriver() throws {
            let body = Data(CommandLine.arguments[1].utf8)
            print("README verifier: \\(handleNotification(body: body, verifier: verifier))")
            let app = try Verifier(configuration: .init(
                bundleId: "com.loki-project.loki-messenger", environments: [.production, .sandbox], appAppleId: 1))
            print("the app's verifier: \\(handleNotification(body: body, verifier: app))")
            print("no signedPayload: \\(handleNotification(body: Data(#"{"payload":"x"}"#.utf8), verifier: app))")
        }
        try readmeExampleDriver()

        """

    /// The README's Swift block between the markers.
    static func readmeExample() throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let begin = readme.range(of: "<!-- readme-example:begin -->\n```swift\n"),
            let end = readme.range(of: "```\n<!-- readme-example:end -->", range: begin.upperBound..<readme.endIndex)
        else { throw TestFailure("README.md has no Swift block between the readme-example markers") }
        return String(readme[begin.upperBound..<end.lowerBound])
    }

    /// The folder the test bundle was built into (`.build/debug`, or a sanitizer's own): the
    /// test runner's own folder. (Not `Bundle.allBundles`, which leaks inside Foundation.)
    static func productsDirectory() throws -> URL {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for directory in [runner.deletingLastPathComponent(), packageRoot.appendingPathComponent(".build/debug")]
        where FileManager.default.fileExists(atPath: directory.appendingPathComponent("Vouch.build").path) {
            return directory
        }
        throw TestFailure("cannot find the build folder from \(runner.path)")
    }

    /// Compiles `source` as a program linked with the built `Vouch` (and the targets of this
    /// package it links), the same sanitizer as the test run, and OpenSSL and zlib.
    static func compile(_ source: String, in folder: URL) throws -> URL {
        let products = try productsDirectory()
        let main = folder.appendingPathComponent("main.swift")
        let executable = folder.appendingPathComponent("readme-example")
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
        // The library's objects, and those of the package's own targets it depends on: the ones
        // the build's output file map names (a folder can keep objects of sources since moved).
        for target in ["Vouch", "VouchOpenSSL"] {
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
        let path = products.path
        if path.contains("sanitize-address") { arguments.append("-sanitize=address") }
        if path.contains("sanitize-thread") { arguments.append("-sanitize=thread") }
        arguments += [main.path, "-lcrypto", "-lz", "-o", executable.path]
        let result = try run(arguments)
        guard result.status == 0 else { throw TestFailure("the README example does not compile:\n\(result.stderr)") }
        return executable
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }

    @Test func theReadmeWebhookExampleCompilesVerifiesARealNotificationAndAnswersEachStatus() throws {
        let example = try Self.readmeExample()
        #expect(example.contains("verifier.verify(try ResponseBodyV2(json: body))"))
        #expect(example.contains("notification.transaction?.value"))
        #expect(example.contains("WebhookStatus.answering(error)"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = try Self.compile(example + Self.driver, in: folder)

        let token = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")
        let result = try Self.run([executable.path, #"{"signedPayload":"\#(token)"}"#])
        #expect(result.status == 0, "\(result.stderr)")

        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                #"not handled: wrong_bundle_id: bundleId is "com.loki-project.loki-messenger"; expected "com.example.app""#,
                "README verifier: 400",
                "DID_RENEW Sandbox 2000001024998954 com.getsession.org.pro_sub until 2025-10-01 07:12:12 +0000, "
                    + "no account token",
                "the app's verifier: 200",
                "not handled: malformed_token: the JSON input has no signedPayload member holding a token",
                "no signedPayload: 400",
            ], "\(result.stdout)")
    }
}
