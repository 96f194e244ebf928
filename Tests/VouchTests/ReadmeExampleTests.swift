import Testing
import Vouch

/// The library example of README.md, kept compiling and true.
struct ReadmeExampleTests {
    @Test func theReadmeExampleVerifiesARealNotification() throws {
        let signedPayload = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")

        var configuration = Verifier.Configuration.acceptingAnyApp()   // trusts the embedded Apple Root CA - G3
        configuration.bundleId = "com.loki-project.loki-messenger"
        configuration.appAppleId = 1470168868            // checked for Production data
        configuration.environment = .sandbox

        let verifier = try Verifier(configuration: configuration)
        var seen: [String] = []
        do {
            let verified = try verifier.verify(signedPayload)          // kind detected from the payload
            if case .notification(let notification) = verified.decoded {
                seen.append(notification.notificationType?.rawValue ?? "")
                seen.append(notification.data?.bundleId ?? "")
                for nested in verified.nested {                         // every nested token was verified too
                    seen.append("\(nested.field) \(nested.payload.kind)")
                }
            }
        } catch {
            Issue.record("\(error.code): \(error.reason)")
        }
        #expect(seen == [
            "DID_RENEW", "com.loki-project.loki-messenger", "data.signedTransactionInfo transaction",
            "data.signedRenewalInfo renewal-info",
        ])
    }
}
