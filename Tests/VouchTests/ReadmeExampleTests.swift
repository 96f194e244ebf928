import Foundation
import Testing
import Vouch
import VouchOpenSSL
import VouchTestSupport

/// The library example of README.md, taken from the README itself at test time (the Swift block
/// between `<!-- readme-example:begin -->` and `<!-- readme-example:end -->`), compiled with
/// `swiftc` against the `Vouch` module this test run built (``CompiledExample``), and run on a
/// real notification.
@Suite(.serialized) struct ReadmeExampleTests {
    /// What the test appends to the README's code: it feeds the webhook a body holding a real
    /// Sandbox notification (the first argument), first to the README's own verifier (made for
    /// `com.example.app` in Production, so it must refuse another app's data), then to one made
    /// for that app.
    static let driver = """

        // Appended by ReadmeExampleTests; in a function, so nothing it makes outlives it (a
        // top-level value would be a global that LeakSanitizer can miss a reference to).
        func readmeExampleDriver() throws {
            let body = Data(CommandLine.arguments[1].utf8)
            do {
                _ = try handleNotification(body: body, verifier: verifier)
                print("the README's verifier accepted another app's notification")
            } catch let error as VerificationError {
                print("README verifier: \\(error.code)")
            }
            let sandbox = try Verifier(configuration: .init(bundleId: "com.loki-project.loki-messenger", environment: .sandbox))
            print(try handleNotification(body: body, verifier: sandbox))
        }
        try readmeExampleDriver()

        """

    @Test func theReadmeWebhookExampleCompilesAndVerifiesARealNotification() throws {
        let example = try CompiledExample.block("readme-example", in: "README.md")
        #expect(example.contains("verifier.verify(signedPayload, as: ResponseBodyV2DecodedPayload.self)"))
        #expect(example.contains("notification.transaction?.value"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = try CompiledExample.compile(
            example + Self.driver, linking: ["Vouch", "VouchOpenSSL"], in: folder)

        let token = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")
        let result = try Subprocess.run([executable.path, #"{"signedPayload":"\#(token)"}"#])
        #expect(result.status == 0, "\(result.stderr)")

        // What the webhook must have seen, worked out here with the library itself.
        let verifier = try Verifier(
            configuration: .init(bundleId: "com.loki-project.loki-messenger", environment: .sandbox))
        let transaction = try #require(
            try verifier.verify(token, as: ResponseBodyV2DecodedPayload.self).transaction?.value)
        let stored = try JSONEncoder().encode(transaction).count
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.stdout)")
        #expect(
            lines.first?.hasPrefix("refused: wrong_bundle_id (claims): bundleId is \"com.loki-project.loki-messenger\"")
                == true)
        #expect(lines.dropFirst().first == "README verifier: wrong_bundle_id")
        #expect(
            lines.last == "DID_RENEW 2000001024998954 com.getsession.org.pro_sub until 2025-10-01 07:12:12 +0000, "
                + "no account token, \(stored) bytes stored")
    }
}
