import Foundation
import Testing
import Vouch
import VouchSigning
import VouchTestSupport

/// `vouch mint iap-key`, `vouch sign …`, `vouch verify --signing-key` and `vouch inspect` of what
/// they make, through the built binary.
@Suite(.serialized) struct SignCommandTests {
    /// A key minted by `vouch mint iap-key` into a folder of this run.
    static let folder: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-sign-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        let result = try! VouchBinary.run(["mint", "iap-key", "--out", folder.path, "--key-id", "2X9R4HXF34"])
        precondition(result.status == 0, result.stderr)
        return folder
    }()
    static let key = folder.appendingPathComponent("SubscriptionKey_2X9R4HXF34.p8").path
    static let publicKey = folder.appendingPathComponent("SubscriptionKey_2X9R4HXF34.public.pem").path
    static let common = ["--key", key, "--key-id", "2X9R4HXF34", "--bundle-id", "com.example.app"]
    static let issuer = ["--issuer-id", "57246542-96fe-1a63-e053-0824d011072a"]
    static let fixed = ["--nonce", "1B9D6BCD-BBFD-4B2D-9B5D-AB8DFBBD4BED", "--timestamp", "1700000000123"]

    static func file(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static func sign(_ kind: String, _ arguments: [String], input: [UInt8]? = nil) throws -> VouchBinary.Result {
        try VouchBinary.run(["sign", kind] + arguments, input: input)
    }

    static let request =
        #"{"operation":"CREATE_ONE_TIME_CHARGE","requestInfo":{"requestReferenceId":"5b8c3b8e-1d2f-4c3a-9e4b-0a1b2c3d4e5f"},"currency":"USD","item":{"SKU":"coins.100","description":"100 coins","displayName":"Coins","price":990},"taxCode":"C003-00-1"}"#

    @Test func mintIAPKeyWritesAPrivateP8AndItsPublicKey() throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: Self.key)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: Self.publicKey)[.posixPermissions] as? Int == 0o644)
        let key = try SigningKey(contentsOf: URL(fileURLWithPath: Self.key))
        #expect(
            try SigningPublicKey(contentsOf: URL(fileURLWithPath: Self.publicKey)).pemRepresentation
                == key.publicKey.pemRepresentation)
        let again = try VouchBinary.run(["mint", "iap-key", "--out", Self.folder.path, "--key-id", "2X9R4HXF34"])
        #expect(again.status == 64)
        #expect(again.stderr.contains("exists; use --force"))
        let random = try VouchBinary.run([
            "mint", "iap-key", "--out", Self.folder.appendingPathComponent("random").path,
        ])
        #expect(random.status == 0)
        #expect(random.stdout.range(of: #"SubscriptionKey_[A-Z0-9]{10}\.p8\n"#, options: .regularExpression) != nil)
        #expect(try VouchBinary.run(["mint", "iap-key", "--out", "x", "--key-id", "a/b"]).status == 64)
    }

    @Test func aVersion1OfferPrintsTheSignatureOrEverythingWithJSON() throws {
        let plain = try Self.sign(
            "promotional-offer", Self.common + ["--product-id", "p", "--offer-id", "o"] + Self.fixed)
        #expect(plain.status == 0, "\(plain.stderr)")
        let signature = try #require(Base64.decodeStandard(plain.stdout.dropLast().utf8))
        let text = [
            "com.example.app", "2X9R4HXF34", "p", "o", "", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed", "1700000000123",
        ]
        .joined(separator: "\u{2063}")
        let key = try SigningKey(contentsOf: URL(fileURLWithPath: Self.key))
        #expect(key.publicKey.isValidSignature(signature, of: Array(text.utf8)))
        let json = try Self.sign(
            "promotional-offer",
            Self.common + ["--product-id", "p", "--offer-id", "o", "--app-account-token", "ABC", "--json"] + Self.fixed)
        let object = try VouchBinary.object(json.stdout)
        #expect(object["nonce"] as? String == "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed")
        #expect(object["timestamp"] as? Int == 1_700_000_000_123)
        #expect(object["appAccountToken"] as? String == "abc")
        #expect(object["keyId"] as? String == "2X9R4HXF34")
    }

    static let jwsKinds: [(kind: String, options: [String], audience: String)] = [
        (
            "promotional-offer-v2", ["--product-id", "p", "--offer-id", "o", "--transaction-id", "1"],
            "promotional-offer"
        ),
        (
            "introductory-offer-eligibility",
            ["--product-id", "p", "--allow-introductory-offer", "True", "--transaction-id", "1"],
            "introductory-offer-eligibility"
        ),
        ("advanced-commerce", ["--request", "REQUEST"], "advanced-commerce-api"),
        ("api-token", ["--expires-in", "3600"], "appstoreconnect-v1"),
    ]

    @Test(arguments: SignCommandTests.jwsKinds)
    func aJWSKindPrintsATokenThatVerifyAndInspectRead(kind: String, options: [String], audience: String) throws {
        let request = try Self.file("request.json", Self.request)
        let arguments =
            Self.common + Self.issuer + options.map { $0 == "REQUEST" ? request : $0 }
            + ["--timestamp", "1700000000123"]
        let signed = try Self.sign(kind, arguments)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stdout.split(separator: ".").count == 3)
        let token = try Self.file("\(kind).jws", signed.stdout)

        let verified = try VouchBinary.run([
            "verify", "--signing-key", Self.publicKey, "--at", "signed", "--json", token,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        let record = try VouchBinary.object(verified.stdout)
        #expect(record["status"] as? String == "verified")
        #expect(record["kind"] as? String == "key-signed")
        #expect((record["payload"] as? [String: Any])?["aud"] as? String == audience)
        #expect((record["payload"] as? [String: Any])?["iat"] as? Int == 1_700_000_000)

        let inspected = try VouchBinary.run(["inspect", token])
        #expect(inspected.status == 0)
        #expect(inspected.stdout.hasPrefix("UNVERIFIED: "))
        #expect(inspected.stdout.contains("claims (no x5c: signed with a key"))
        #expect(inspected.stdout.contains("iat: 1700000000 (2023-11-14T22:13:20.000Z)"))
        if kind == "advanced-commerce" {
            #expect(inspected.stdout.contains("    operation: \"CREATE_ONE_TIME_CHARGE\""))
        }

        let json = try Self.sign(kind, arguments + ["--json"])
        let object = try VouchBinary.object(json.stdout)
        #expect((object["header"] as? [String: Any])?["kid"] as? String == "2X9R4HXF34")
        #expect((object["claims"] as? [String: Any])?["aud"] as? String == audience)
        #expect((object["jws"] as? String)?.split(separator: ".").count == 3)
    }

    @Test func theKeyIsReadFromStandardInputAndNeverPrinted() throws {
        let pem = try String(contentsOfFile: Self.key, encoding: .utf8)
        let arguments = ["--key", "-", "--key-id", "K", "--bundle-id", "b"] + Self.issuer
        let result = try Self.sign("api-token", arguments + ["--json"], input: Array(pem.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        let body = pem.split(separator: "\n")[1]
        #expect(!result.stdout.contains(body) && !result.stderr.contains(body))
        let both = try Self.sign("advanced-commerce", arguments + ["--request", "-"], input: Array(pem.utf8))
        #expect(both.status == 64)
    }

    @Test func aKeyThatIsNotP256IsInvalidInput() throws {
        let cases: [(String, String)] = [
            (try Self.file("public.pem", String(contentsOfFile: Self.publicKey, encoding: .utf8)), "key_malformed"),
            (try Self.file("junk.txt", "not a key"), "key_malformed"),
            (try Self.file("encrypted.p8", TestKeyFiles.encryptedPKCS8), "key_encrypted"),
        ]
        for (path, code) in cases {
            let result = try Self.sign("api-token", ["--key", path, "--key-id", "K", "--bundle-id", "b"] + Self.issuer)
            #expect(result.status == 65, "\(path)")
            #expect(result.stderr.contains(code), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let verify = try VouchBinary.run(["verify", "--signing-key", cases[1].0, Self.publicKey])
        #expect(verify.status == 65)
    }

    @Test func anUnreadableKeyOrRequestIsExit66() throws {
        let missing = try Self.sign(
            "api-token", ["--key", "/nonexistent.p8", "--key-id", "K", "--bundle-id", "b"] + Self.issuer)
        #expect(missing.status == 66)
        let request = try Self.sign(
            "advanced-commerce", Self.common + Self.issuer + ["--request", "/nonexistent.json"])
        #expect(request.status == 66)
    }

    static let usageMistakes: [(kind: String, options: [String])] = [
        ("api-token", issuer + ["--expires-in", "3601"]), ("api-token", issuer + ["--expires-in", "0"]),
        ("promotional-offer", ["--product-id", "p"]),
        ("promotional-offer", ["--product-id", "p", "--offer-id", "o", "--nonce", "x"]),
        ("promotional-offer", ["--product-id", "p", "--offer-id", "o", "--timestamp", "-1"]),
        ("promotional-offer", ["--product-id", "", "--offer-id", "o"]),
        ("promotional-offer-v2", ["--product-id", "p", "--offer-id", "o"]),
        (
            "introductory-offer-eligibility",
            issuer + ["--product-id", "p", "--allow-introductory-offer", "maybe", "--transaction-id", "1"]
        ),
        ("promotional-offer", ["--product-id", "p", "--offer-id", "o", "--issuer-id", "i"]),
    ]

    @Test(arguments: SignCommandTests.usageMistakes)
    func aUsageMistakeIsExit64(kind: String, options: [String]) throws {
        let result = try Self.sign(kind, Self.common + options)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "))
        #expect(result.stdout.isEmpty)
    }

    @Test func aRequestBreakingApplesRulesIsInvalidInput() throws {
        let long = Self.request.replacingOccurrences(of: "\"Coins\"", with: "\"\(String(repeating: "C", count: 31))\"")
        for (text, reason) in [
            (long, "item.displayName is longer than 30 characters"), ("[]", "is not a JSON object"),
            (#"{"operation":"REFUND"}"#, "is not an in-app request"),
        ] {
            let result = try Self.sign(
                "advanced-commerce", Self.common + Self.issuer + ["--request", try Self.file("bad.json", text)])
            #expect(result.status == 65)
            #expect(result.stderr.contains(reason), "\(result.stderr)")
        }
    }

    @Test func verifySigningKeyRejectsAnotherKeyATamperedTokenAndAnExpiredOne() throws {
        let token = try Self.sign(
            "api-token", Self.common + Self.issuer + ["--expires-in", "60", "--timestamp", "1700000000000"]
        ).stdout
        let other = Self.folder.appendingPathComponent("other")
        _ = try VouchBinary.run(["mint", "iap-key", "--out", other.path, "--key-id", "OTHER"])
        let cases: [([String], String)] = [
            (
                [
                    "--signing-key", other.appendingPathComponent("SubscriptionKey_OTHER.public.pem").path, "--at",
                    "signed",
                ], "bad_signature"
            ),
            (["--signing-key", Self.publicKey], "token_expired"),
            (["--signing-key", Self.publicKey, "--at", "2023-11-14T22:13:00Z"], "token_not_yet_valid"),
            (["--signing-key", Self.key, "--at", "signed", "--bundle-id", "com.example.other"], "wrong_bundle_id"),
        ]
        for (options, code) in cases {
            let result = try VouchBinary.run(["verify", "--json"] + options + ["-"], input: Array(token.utf8))
            #expect(result.status == 1, "\(options)")
            let record = try VouchBinary.object(result.stdout)
            #expect((record["error"] as? [String: Any])?["code"] as? String == code, "\(options): \(result.stderr)")
            #expect(result.stderr.contains("rejected: \(code)"))
        }
        let ok = try VouchBinary.run(
            ["verify", "--signing-key", Self.key, "--at", "signed", "-"], input: Array(token.utf8))
        #expect(ok.status == 0)
        #expect(
            ok.stdout.hasPrefix("VERIFIED signed with the given key\n  claims checked at 2023-11-14T22:13:20.000Z\n"))
        #expect(ok.stdout.contains("  exp: 1700000060 (2023-11-14T22:14:20.000Z)"))
    }

    @Test func verifySigningKeyReadsTokensInDocumentsByPath() throws {
        let token = try Self.sign("api-token", Self.common + Self.issuer).stdout.dropLast()
        let body = #"{"signedPayload":"\#(token)","other":"x"}"#
        let result = try VouchBinary.run(
            ["verify", "--signing-key", Self.publicKey, "--json", "--field", "signedPayload", "-"],
            input: Array(body.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try VouchBinary.object(result.stdout)["status"] as? String == "verified")
    }

    @Test(arguments: ["--root", "--xcode-cert", "--kind", "--environment", "--app-apple-id"])
    func verifySigningKeyRefusesTheChainOptions(option: String) throws {
        let result = try VouchBinary.run(["verify", "--signing-key", Self.publicKey, option, "x", "-"], input: [])
        #expect(result.status == 64)
        #expect(result.stderr.contains("\(option) does not apply"))
    }
}
