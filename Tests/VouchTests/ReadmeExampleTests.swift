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

    @Test func theReadmeWebhookExampleCompilesVerifiesARealNotificationAndAnswersEachStatus() throws {
        let example = try CompiledExample.block("readme-example", in: "README.md")
        #expect(example.contains("verifier.verify(try ResponseBodyV2(json: body))"))
        #expect(example.contains("notification.transaction?.value"))
        #expect(example.contains("WebhookStatus.answering(error)"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = try CompiledExample.compile(
            example + Self.driver, linking: ["Vouch", "VouchOpenSSL"], in: folder)

        let token = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")
        let result = try Subprocess.run([executable.path, #"{"signedPayload":"\#(token)"}"#])
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
