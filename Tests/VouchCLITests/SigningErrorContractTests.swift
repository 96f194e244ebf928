import Foundation
import Testing
import VouchOpenSSL
import VouchSigning
import VouchTestSupport

/// The signing error contract: every reachable ``SigningError/Code`` is given by `vouch sign` for
/// the example input the signing table of `docs/errors.md` names, with the exit status the table
/// gives, and the table lists every code.
@Suite(.serialized) struct SigningErrorContractTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let code: String
        let status: Int32
        /// How the table of `docs/errors.md` describes the input.
        let input: String
        let arguments: [String]
        var testDescription: String { code }
    }

    static let folder: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-signing-contract-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    static func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    static func token(key: String) -> [String] {
        ["sign", "api-token", "--key", key, "--key-id", "K", "--issuer-id", "I", "--bundle-id", "b"]
    }

    static func examples() throws -> [Example] {
        let good = try PrivateKey.generate(.p256).privateKeyPEM()
        let common = ["--key", try file("good.p8", good), "--key-id", "K", "--bundle-id", "b"]
        let request =
            #"{"operation":"CREATE_ONE_TIME_CHARGE","requestInfo":{"requestReferenceId":"5b8c3b8e-1d2f-4c3a-9e4b-0a1b2c3d4e5f"},"currency":"USD","item":{"SKU":"s","description":"d","displayName":"\#(String(repeating: "n", count: 31))","price":1},"taxCode":"t"}"#
        return [
            Example(
                code: "key_unreadable", status: 66, input: "`vouch sign api-token --key` a file that does not exist",
                arguments: token(key: folder.appendingPathComponent("missing.p8").path)),
            Example(
                code: "key_malformed", status: 65, input: "a key file holding `not a key`",
                arguments: token(key: try file("junk.p8", Array("not a key".utf8)))),
            Example(
                code: "key_encrypted", status: 65, input: "an encrypted PKCS #8 P-256 key",
                arguments: token(key: try file("encrypted.p8", Array(TestKeyFiles.encryptedPKCS8.utf8)))),
            Example(
                code: "key_wrong_type", status: 65, input: "an RSA 2048 key",
                arguments: token(key: try file("rsa.pem", try PrivateKey.generateRSA(bits: 2048).privateKeyPEM()))),
            Example(
                code: "key_wrong_curve", status: 65, input: "a P-384 key",
                arguments: token(key: try file("p384.p8", try PrivateKey.generate(.p384).privateKeyPEM()))),
            Example(
                code: "invalid_parameter", status: 64, input: #"`vouch sign promotional-offer --product-id ""`"#,
                arguments: ["sign", "promotional-offer"] + common + ["--product-id", "", "--offer-id", "o"]),
            Example(
                code: "invalid_request", status: 65, input: "a request whose display name has 31 characters",
                arguments: ["sign", "advanced-commerce"] + common
                    + ["--issuer-id", "I", "--request", try file("request.json", Array(request.utf8))]),
        ]
    }

    static let all = Result { try examples() }

    @Test func everyCodeButOpenSSLFailureHasAnExample() throws {
        let codes = try Self.all.get().map(\.code)
        #expect(Set(codes) == Set(SigningError.Code.all.filter { $0 != .openSSLFailure }.map(\.rawValue)))
        #expect(codes.count == SigningError.Code.all.count - 1)
    }

    @Test func theCLIReportsEachCodeWithItsExitStatus() throws {
        for example in try Self.all.get() {
            let result = try VouchBinary.run(example.arguments)
            #expect(result.status == example.status, "\(example.code): \(result.stderr)")
            #expect(result.stderr.contains(example.code), "\(example.code): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func theErrorPageListsEveryCodeWithItsStatusAndExample() throws {
        let page = try String(
            contentsOf: VouchBinary.packageRoot.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        for example in try Self.all.get() {
            #expect(page.contains("| `\(example.code)` | \(example.status) |"), "\(example.code)")
            #expect(page.contains("| \(example.input) |"), "\(example.code)'s example")
        }
        #expect(page.contains("| `openssl_failure` | 70 |"))
    }
}
