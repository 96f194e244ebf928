import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint
import VouchTestSupport

/// The library example of README.md, taken from the README itself at test time (the Swift block
/// between `<!-- readme-example:begin -->` and `<!-- readme-example:end -->`), compiled with
/// `swiftc` against the modules this test run built (``CompiledExample``), and run in a folder of
/// its own on a real notification and a minted purchase.
@Suite(.serialized) struct ReadmeWebhookExampleTests {
    /// What the test appends to the README's code. It posts a body holding a real Sandbox
    /// notification (the first argument) to the README's own verifier (made for
    /// `com.example.app`, so it must refuse another app's data), then twice to one made for that
    /// app, then a body without `signedPayload`, then the notification to a store opened read
    /// only; each time it prints the status the webhook answered. Then it confirms a minted
    /// purchase (the third argument, under the minted root of the second) for one user and for
    /// another, and asks the store again after opening it anew.
    static let driver = """

        // Appended by ReadmeWebhookExampleTests; in a function, so nothing it makes outlives it
        // (a top-level value would be a global that LeakSanitizer can miss a reference to).
        func readmeExampleDriver() throws {
            let body = Data(CommandLine.arguments[1].utf8)
            print("README verifier: \\(handleNotification(body: body, verifier: verifier, store: store))")
            let app = try Verifier(configuration: .init(
                bundleId: "com.loki-project.loki-messenger", environments: [.production, .sandbox], appAppleId: 1))
            print("the app's verifier: \\(handleNotification(body: body, verifier: app, store: store))")
            print("again: \\(handleNotification(body: body, verifier: app, store: store))")
            let empty = Data(#"{"payload":"x"}"#.utf8)
            print("no signedPayload: \\(handleNotification(body: empty, verifier: app, store: store))")
            let readOnly = try LedgerStore(path: "entitlements.sqlite", access: .readOnly)
            print("a store it cannot write: \\(handleNotification(body: body, verifier: app, store: readOnly))")

            var configuration = Verifier.Configuration(
                bundleId: "com.example.app", environments: [.production], appAppleId: 1234567890)
            configuration.trustAnchors = [Array(try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[2])))]
            let minted = try Verifier(configuration: configuration)
            let user = UUID(uuidString: "7F0A4C2E-3B5D-4E6F-8A9B-0C1D2E3F4A5B")!
            let jws = CommandLine.arguments[3]
            print("confirmed: \\(try confirmPurchase(jws: jws, user: user, verifier: minted, store: store))")
            do {
                _ = try confirmPurchase(jws: jws, user: UUID(), verifier: minted, store: store)
                print("another user: confirmed")
            } catch let error as LedgerError {
                print("another user: \\(error.code), answered \\(WebhookStatus.answering(error))")
            }
            let restarted = try LedgerStore(path: "entitlements.sqlite", catalog: catalog)
            let account = AccountKey(environment: .production, appAccountToken: user)
            print("after a restart: \\(try restarted.entitlements(of: account, at: Date())?.tier?.name ?? "free")")
        }
        try readmeExampleDriver()

        """

    @Test func theReadmeExampleCompilesAnswersEachStatusAndKeepsWhatVerifiedAcrossARestart() throws {
        let example = try CompiledExample.block("readme-example", in: "README.md")
        #expect(example.contains("verifier.verify(try ResponseBodyV2(json: body))"))
        #expect(example.contains("notification.transaction?.value"))
        #expect(example.contains("try store.add(notification)"))
        #expect(example.contains("try store.add(transaction, account: user)"))
        #expect(example.contains("WebhookStatus.answering(error)"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = try CompiledExample.compile(
            example + Self.driver,
            linking: ["Vouch", "VouchOpenSSL", "VouchReceipts", "VouchStripe", "VouchEntitlements"], in: folder)

        // A purchase of the catalog's pro product, a day old and valid for thirty more days.
        let now = Timestamp(Date())
        let expires = Timestamp(milliseconds: now.milliseconds + 30 * 86_400_000)
        var history = MintHistory()
        history.purchase(
            "com.example.pro.monthly", type: .autoRenewableSubscription,
            at: Timestamp(milliseconds: now.milliseconds - 86_400_000), price: 9_990, expires: expires, notify: false)
        let purchase = try #require(try history.tokens(signer: LedgerFixtures.signer).first)
        let root = folder.appendingPathComponent("root.der")
        try Data(try LedgerFixtures.authority.anchorCertificate()).write(to: root)

        let token = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")
        let result = try Subprocess.run(
            [executable.path, #"{"signedPayload":"\#(token)"}"#, root.path, purchase], in: folder)
        #expect(result.status == 0, "\(result.stderr)")

        let renewal =
            "DID_RENEW Sandbox 2000001024998954 com.getsession.org.pro_sub until 2025-10-01 07:12:12 +0000, "
            + "no account token"
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                #"not handled: wrong_bundle_id: bundleId is "com.loki-project.loki-messenger"; expected "com.example.app""#,
                "README verifier: 400",
                renewal,
                "the app's verifier: 200",
                renewal,
                "seen before",
                "again: 200",
                "not handled: malformed_token: the JSON input has no signedPayload member holding a token",
                "no signedPayload: 400",
                renewal,
                "not handled: cannot_write: cannot write entitlements.sqlite: the store was opened read-only",
                "a store it cannot write: 500",
                "confirmed: pro until \(expires.date)",
                "another user: account_conflict, answered 400",
                "after a restart: pro",
            ], "\(result.stdout)")
    }
}
