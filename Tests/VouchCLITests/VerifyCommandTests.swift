import Foundation
import Testing
import VouchTestSupport

@Suite(.serialized) struct VerifyCommandTests {
    let transaction = VouchBinary.vector("apple-real/real/transaction-production-1.jws")

    @Test func verifiesARealTokenAsText() throws {
        let result = try VouchBinary.run(["verify", transaction])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "VERIFIED transaction")
        #expect(result.stdout.contains("  transactionId: \""))
        #expect(result.stdout.contains("signedDate: 1770982951313 (2026-02-13T11:42:31.313Z)"))
    }

    @Test func printsOneJSONRecordWithJSON() throws {
        let result = try VouchBinary.run(["verify", "--json", transaction])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix(#"{"status":"verified","kind":"transaction","payload":{"#))
        let record = try VouchBinary.object(result.stdout)
        let payload = try #require(record["payload"] as? [String: Any])
        #expect(payload["environment"] as? String == "Production")
        #expect(record["error"] == nil)
    }

    @Test func readsANotificationBodyFromStandardInputAndExpandsNestedTokens() throws {
        let token = try VouchBinary.text("apple-real/real/notification-sandbox-21.jws")
        let body = Array("{\"signedPayload\":\"\(token)\"}\n".utf8)
        let result = try VouchBinary.run(["verify", "--json", "-"], input: body)
        #expect(result.status == 0, "\(result.stderr)")
        let record = try VouchBinary.object(result.stdout)
        #expect(record["kind"] as? String == "notification")
        let data = try #require((record["payload"] as? [String: Any])?["data"] as? [String: Any])
        let transaction = try #require(data["signedTransactionInfo"] as? [String: Any])
        #expect(transaction["transactionId"] as? String == "2000001024998954")
        #expect(data["signedRenewalInfo"] is [String: Any])
    }

    /// `--environment Production,Sandbox`: each token against the environment it names, in
    /// every command that reads the trust options.
    @Test func severalEnvironmentsAcceptEachTokenAgainstItsOwn() throws {
        let sandbox = VouchBinary.vector("apple-real/real/notification-sandbox-21.jws")
        let both = try VouchBinary.run(["verify", "--environment", "Production,sandbox", sandbox])
        #expect(both.status == 0, "\(both.stderr)")
        #expect(try VouchBinary.run(["verify", "--environment", "Sandbox,Production", transaction]).status == 0)
        let batch = try VouchBinary.run(["batch", "--environment", "Production,Sandbox", transaction, sandbox])
        #expect(batch.status == 0, "\(batch.stderr)")
        let records = try batch.stdout.split(separator: "\n").map { try VouchBinary.object(String($0)) }
        #expect(records.map { $0["status"] as? String } == ["verified", "verified"])

        let other = try VouchBinary.run(["verify", "--environment", "Xcode,LocalTesting", transaction])
        #expect(other.status == 1)
        #expect(
            other.stderr.contains(
                #"wrong_environment: environment is "Production"; expected "LocalTesting" or "Xcode""#))
        let one = try VouchBinary.run(["verify", "--environment", "Sandbox", transaction])
        #expect(one.stderr.contains(#"wrong_environment: environment is "Production"; expected "Sandbox""#))
    }

    @Test func anEnvironmentListWithAnUnknownOrEmptyNameIsAUsageError() throws {
        for list in ["Production,", "Production,Staging", ",Sandbox"] {
            let result = try VouchBinary.run(["verify", "--environment", list, transaction])
            #expect(result.status == 64, "\(list)")
            #expect(
                result.stderr.hasPrefix("Error: --environment must be one of Production, Sandbox, Xcode, LocalTesting;")
            )
        }
    }

    @Test func aTamperedTokenIsRejectedWithItsCodeOnStderrAndInJSON() throws {
        var token = Array(try VouchBinary.text("apple-real/real/transaction-production-1.jws"))
        let dot = token.lastIndex(of: ".")!
        token[dot + 10] = token[dot + 10] == "A" ? "B" : "A"
        let result = try VouchBinary.run(["verify", "--json"], input: Array(String(token).utf8))
        #expect(result.status == 1)
        #expect(result.stderr.contains("rejected: bad_signature: "))
        let record = try VouchBinary.object(result.stdout)
        #expect(record["status"] as? String == "rejected")
        #expect((record["error"] as? [String: Any])?["code"] as? String == "bad_signature")
        #expect(record["payload"] is NSNull)
    }

    @Test func expiredLeavesAreRejectedAtNow() throws {
        let old = VouchBinary.vector("apple-real/real/transaction-sandbox-1.jws")
        #expect(try VouchBinary.run(["verify", old]).status == 0)
        let result = try VouchBinary.run(["verify", "--at", "now", old])
        #expect(result.status == 1)
        #expect(result.stderr.contains("certificate_expired"))
        let fixed = try VouchBinary.run(["verify", "--at", "2022-09-01T00:00:00Z", old])
        #expect(fixed.status == 0, "\(fixed.stderr)")
    }

    @Test func claimOptionsAreChecked() throws {
        let wrong = try VouchBinary.run(["verify", "--bundle-id", "com.example.other", transaction])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("wrong_bundle_id"))
        let environment = try VouchBinary.run(["verify", "--environment", "sandbox", transaction])
        #expect(environment.stderr.contains("wrong_environment"))
    }

    @Test(.sharedVectors("apple-xcode"))
    func xcodeDataNeedsItsCertificate() throws {
        let sample = SharedVectors.url(SharedVectors.xcodeSamples[0].path).path
        let rejected = try VouchBinary.run(["verify", sample])
        #expect(rejected.status == 1)
        #expect(rejected.stderr.contains("xcode_not_trusted"))
        // The certificate the token carries, as a DER file.
        let certificate = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-xcode-\(UUID().uuidString).cer")
        try Data(try SharedVectors.xcodeCertificate()).write(to: certificate)
        defer { try? FileManager.default.removeItem(at: certificate) }
        let trusted = try VouchBinary.run(["verify", "--xcode-cert", certificate.path, sample])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(trusted.stdout.hasPrefix("VERIFIED transaction"))
    }

    @Test(.sharedVectors("apple-app-store-server-library"))
    func anotherRootReplacesTheEmbeddedOne() throws {
        let mock = SharedVectors.url("apple-app-store-server-library/mock_signed_data/renewalInfo").path
        let root = SharedVectors.url("apple-app-store-server-library/certs/root_ca.pem").path
        let verified = try VouchBinary.run([
            "verify", "--root", root, "--no-strict-x509", "--kind", "renewal-info", mock,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        let untrusted = try VouchBinary.run(["verify", "--kind", "renewal-info", mock])
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("untrusted_chain"))
    }

    @Test(arguments: [
        ["verify", "--bogus"], ["verify", "--kind", "receipt"], ["verify", "--at", "yesterday"],
        ["verify", "--app-apple-id", "abc"], ["verify", "a", "b"], ["verify", "--environment", "Prod"],
        ["frobnicate"], [],
    ])
    func usageErrorsExitWith64(arguments: [String]) throws {
        let result = try VouchBinary.run(arguments)
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr.contains("Usage: vouch"))
    }

    @Test func unreadableInputExitsWith66() throws {
        let result = try VouchBinary.run(["verify", "/nonexistent/token.jws"])
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix("Error: cannot read /nonexistent/token.jws"))
        let root = try VouchBinary.run(["verify", "--root", "/nonexistent/root.der", transaction])
        #expect(root.status == 66)
    }

    @Test(arguments: ["verify", "inspect"])
    func anInputTheCommandDoesNotReadIsNamedWithTheCommandThatDoes(command: String) throws {
        let token = try VouchBinary.text("apple-real/real/transaction-production-1.jws")
        let empty = try VouchBinary.run([command, "-"], input: Array(" \n\n".utf8))
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("malformed_token: the input is empty"))
        let dump = try VouchBinary.run([command, "-"], input: Array("\(token)\n\n\(token)\n\(token)\n".utf8))
        #expect(dump.status == 1)
        #expect(dump.stdout.isEmpty)
        #expect(dump.stderr.contains("malformed_token: the input holds 3 lines that are not blank"))
        #expect(dump.stderr.contains(command == "verify" ? "'vouch batch'" : "reads one token"))
        let receipt = try VouchBinary.run([command, "-"], input: Array(#"{"receipt-data":"MIIBxjCCAW2g"}"#.utf8))
        #expect(receipt.status == 1)
        #expect(
            receipt.stderr.contains(
                "malformed_token: the input holds a legacy app receipt: 'vouch receipt \(command)' reads it"))
    }

    @Test func jsonInputWithoutATokenIsRejected() throws {
        let result = try VouchBinary.run(["verify", "--json"], input: Array(#"{"other":1}"#.utf8))
        #expect(result.status == 1)
        #expect(result.stderr.contains("malformed_token"))
    }
}

struct HelpTests {
    @Test func helpAndVersionGoToStandardOutput() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try VouchBinary.run(arguments)
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("Usage: vouch <command>"))
        }
        for arguments in [["help", "verify"], ["verify", "--help"]] {
            let result = try VouchBinary.run(arguments)
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("Usage: vouch verify"))
        }
        let version = try VouchBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("vouch "))
    }
}

struct InspectCommandTests {
    @Test func inspectShowsHeaderCertificatesAndDatesMarkedUnverified() throws {
        let result = try VouchBinary.run([
            "inspect", VouchBinary.vector("apple-real/real/transaction-production-1.jws"),
        ])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("UNVERIFIED") == true)
        #expect(result.stdout.contains("alg: \"ES256\""))
        #expect(result.stdout.contains("certificate x5c[2]:"))
        #expect(result.stdout.contains("subject: /CN=Apple Root CA - G3"))
        #expect(result.stdout.contains("apple markers: 1.2.840.113635.100.6.11.1"))
        #expect(result.stdout.contains("key: EC P-256"))
        #expect(result.stdout.contains("sha256: 63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"))
        #expect(result.stdout.contains("signedDate: 1770982951313 (2026-02-13T11:42:31.313Z)"))
    }

    @Test(.sharedVectors("apple-xcode"))
    func inspectDecodesDataThatDoesNotVerify() throws {
        let result = try VouchBinary.run(["inspect", SharedVectors.url(SharedVectors.xcodeSamples[0].path).path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("kid: \"Apple_Xcode_Key\""))
        #expect(result.stdout.contains("purchaseDate: 1697679936049.7297 (2023-10-19T01:45:36.049Z)"))
    }

    @Test func inspectRejectsWhatIsNotAJWS() throws {
        let result = try VouchBinary.run(["inspect", "-"], input: Array("not a token".utf8))
        #expect(result.status == 1)
        #expect(result.stderr.contains("malformed_token"))
    }
}
