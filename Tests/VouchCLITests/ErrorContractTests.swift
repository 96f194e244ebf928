import Foundation
import Testing
import Vouch
import VouchBatch
import VouchOpenSSL
import VouchReceipts
import VouchSigning
import VouchStripe
import VouchTestSupport

@testable import VouchMint
@testable import VouchMintPKI

/// The error contract: every ``VerificationError/Code`` is
/// reachable from the command line, and `vouch verify --json` (`vouch batch` for the line codes,
/// `vouch receipt verify --json` for the receipt codes) reports exactly that code for the example
/// input the error table of `docs/errors.md` names.
@Suite(.serialized) struct ErrorContractTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let code: String
        /// How the table of `docs/errors.md` describes the input.
        let input: String
        let arguments: [String]
        let stdin: [UInt8]
        /// For input giving several records: the path of the one with the code.
        var path: String? = nil

        var testDescription: String { code }
    }

    static let realToken = try! VouchBinary.text("apple-real/real/transaction-production-1.jws")
    static let mintedRoot = VouchBinary.vector("minted/ca/root.der")

    static func base64(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: Base64.encodeStandard(bytes), as: UTF8.self)
    }

    /// The real token with its header JSON text replaced (payload and signature unchanged).
    static func withHeaderText(_ text: String) -> [UInt8] {
        let parts = TokenParts.segments(realToken)
        return Array(([TokenParts.encode(Array(text.utf8))] + parts[1...]).joined(separator: ".").utf8)
    }

    /// The real token with its header object changed.
    static func withHeader(_ change: (inout JSONObject) -> Void) -> [UInt8] {
        var header = try! StrictJSON.parseObject(Base64.decodeURL(TokenParts.segments(realToken)[0].utf8)!)
        change(&header)
        return withHeaderText(JSONWriter.string(.object(header)))
    }

    /// The real token's x5c, changed.
    static func withChain(_ change: (inout [JSONValue]) -> Void) -> [UInt8] {
        withHeader { header in
            var chain = header["x5c"]!.arrayValue!
            change(&chain)
            header["x5c"] = .array(chain)
        }
    }

    static func withSignature(_ signature: String) -> [UInt8] {
        let parts = TokenParts.segments(realToken)
        return Array((parts[0] + "." + parts[1] + "." + signature).utf8)
    }

    static let mintedSigner = try! MintSigner(
        authority: MintAuthority.load(from: VouchBinary.packageRoot.appendingPathComponent("TestVectors/minted/ca")))

    /// A token over the minted chain whose leaf is issued now, by the minted intermediate, with
    /// these extensions on a key of `curve`. The signature is 64 zero bytes: the leaf is checked
    /// before the signature is.
    static func tokenWithMintedLeaf(extensions: [CertificateProfile.Extension], curve: Curve) throws -> [UInt8] {
        let base = mintedSigner.authority
        let key = try PrivateKey.generate(curve)
        let validity = try #require(base.signingValidity)
        let leaf = try Certificate.issue(
            CertificateProfile(
                subject: [("CN", "Vouch contract test leaf"), ("O", "Vouch Mint (test only)")],
                notBefore: validity.notBefore, notAfter: validity.notAfter, serialNumber: nil, extensions: extensions,
                digest: .sha384),
            subjectKey: key, issuer: base.certificates[1], issuerKey: try #require(base.keys[1]))
        let chain = try [leaf.der] + base.certificateChain().dropFirst()
        let header = JSONObject([.init("alg", "ES256"), .init("x5c", .array(chain.map { .string(base64($0)) }))])
        let payload = try MintGenerator(seed: 1, date: validity.notBefore.addingTimeInterval(86_400 * 365))
            .payload(.transaction, index: 0, signer: mintedSigner)
        return Array(
            [
                TokenParts.encode(JSONWriter.encode(.object(header))),
                TokenParts.encode(JSONWriter.encode(.object(payload))),
                TokenParts.encode([UInt8](repeating: 0, count: 64)),
            ].joined(separator: ".").utf8)
    }

    static func mintedLine(_ file: String) throws -> [UInt8] {
        Array(try VouchBinary.text("minted/\(file)").split(separator: "\n")[0].utf8)
    }

    /// A receipt PKI minted for this run, its files in a temporary directory.
    static let receiptCA: (authority: MintReceiptAuthority, root: String) = {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let authority = try! MintReceiptAuthority.generate(
            .init(
                validity: MintValidity(
                    notBefore: date.addingTimeInterval(-86_400 * 365), notAfter: date.addingTimeInterval(86_400 * 365)))
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-contract-receipt-ca-\(getpid())")
        _ = try! authority.write(to: directory)
        return (authority, directory.appendingPathComponent("root.der").path)
    }()

    static func mintedReceipt(_ defect: MintReceiptDefect? = nil) throws -> [UInt8] {
        let signer = MintReceiptSigner(authority: receiptCA.authority)
        let content = MintReceiptContent.sample(
            receiptCreationDate: Date(timeIntervalSince1970: 1_700_000_000), inAppCount: 2)
        let bytes = try defect.map { try signer.sign(content, defect: $0) } ?? signer.sign(content)
        return Base64.encodeStandard(bytes)
    }

    /// An API token of a key minted for this run, made at 2023-11-14T22:13:20Z to last 20
    /// minutes, and the key's file for `--signing-key`.
    static let keySigned: (token: [UInt8], key: String) = {
        let pem = try! MintInAppPurchaseKey.generate().privateKeyPEM()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-contract-key-\(getpid()).p8")
        try! pem.write(to: file, atomically: true, encoding: .utf8)
        let token = try! AppStoreServerAPITokenCreator(
            signingKey: SigningKey(pem: pem), keyId: "K", issuerId: "I", bundleId: "com.example.app"
        ).createToken(issuedAt: Timestamp(milliseconds: 1_700_000_000_000))
        return (Array(token.token.utf8), file.path)
    }()

    static func receiptExamples() throws -> [Example] {
        let root = ["--root", receiptCA.root]
        return [
            Example(
                code: "receipt_not_a_receipt", input: "`vouch receipt verify` given `not a receipt`",
                arguments: ["receipt", "verify"],
                stdin: Array("not a receipt".utf8)),
            Example(
                code: "receipt_too_large", input: "`vouch receipt verify` given 2 MiB + 1 byte of `A`",
                arguments: ["receipt", "verify"],
                stdin: [UInt8](repeating: UInt8(ascii: "A"), count: 2 * 1024 * 1024 + 1)),
            Example(
                code: "receipt_malformed_container", input: "a minted receipt followed by two zero bytes",
                arguments: ["receipt", "verify"] + root, stdin: try mintedReceipt(.trailing)),
            Example(
                code: "receipt_unsupported_algorithm", input: "a minted receipt naming MD5 as its digest",
                arguments: ["receipt", "verify"] + root, stdin: try mintedReceipt(.md5)),
            Example(
                code: "receipt_signer_not_found", input: "a minted receipt without its certificates",
                arguments: ["receipt", "verify"] + root, stdin: try mintedReceipt(.noCertificates)),
            Example(
                code: "receipt_malformed_payload", input: "a minted receipt whose signed content is an XML plist",
                arguments: ["receipt", "verify"] + root, stdin: try mintedReceipt(.notAttributes)),
            Example(
                code: "receipt_duplicate_attribute", input: "a minted receipt with attribute 2 (bundle id) twice",
                arguments: ["receipt", "verify"] + root, stdin: try mintedReceipt(.duplicateAttribute)),
            Example(
                code: "receipt_wrong_app_version", input: "a minted receipt (version `1`) with `--app-version 2`",
                arguments: ["receipt", "verify", "--app-version", "2"] + root, stdin: try mintedReceipt()),
            Example(
                code: "receipt_device_hash_mismatch", input: "a minted receipt with `--device-id` of another device",
                arguments: ["receipt", "verify", "--device-id", "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"] + root,
                stdin: try mintedReceipt()),
        ]
    }

    /// A Stripe secret file written for the run.
    static let stripeSecretFile: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-contract-stripe-\(getpid())")
            .path
        try! Data("whsec_contract\n".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }()

    static func stripeDelivery(_ defect: MintStripeDefect? = nil, signedAt: Int64? = nil) throws -> [UInt8] {
        let event = MintStripe(seed: 1, date: Date(timeIntervalSince1970: 1_756_684_800)).subscription(0).events[0]
        let signer = try MintStripeSigner(secrets: ["whsec_contract"])
        let delivery = try defect.map { try signer.tampered($0, event) } ?? signer.delivery(event, signedAt: signedAt)
        return delivery.storedJSON + [0x0A]
    }

    /// A minted subscription event whose object's `customer` is the number 7, signed as it is.
    static func stripeDeliveryWithANumberCustomer() throws -> [UInt8] {
        let event = MintStripe(seed: 1, date: Date(timeIntervalSince1970: 1_756_684_800)).subscription(0).events[0]
        var json = event.json
        var data = json["data"]?.objectValue ?? [:]
        var object = data["object"]?.objectValue ?? [:]
        object["customer"] = 7
        data["object"] = .object(object)
        json["data"] = .object(data)
        let signer = try MintStripeSigner(secrets: ["whsec_contract"])
        return try signer.delivery(event: json, created: event.created).storedJSON + [0x0A]
    }

    static func stripeExamples() throws -> [Example] {
        let verify = ["stripe", "verify", "--stripe-secret-file", stripeSecretFile]
        return [
            Example(
                code: "stripe_not_a_delivery", input: "`vouch stripe verify` given `not a delivery`", arguments: verify,
                stdin: Array("not a delivery\n".utf8)),
            Example(
                code: "stripe_malformed_delivery", input: "a stored delivery whose body is a JSON object",
                arguments: verify, stdin: Array(#"{"stripe-signature":"t=1,v1=00","body":{"id":"evt_1"}}"#.utf8)),
            Example(
                code: "stripe_body_too_large", input: "a stored delivery whose body is 1 MiB + 1 byte",
                arguments: verify,
                stdin: Array(#"{"stripe-signature":"t=1,v1=00","body":""#.utf8)
                    + [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) + 1) + Array(#""}"#.utf8)),
            Example(
                code: "stripe_malformed_header", input: "a minted delivery whose timestamp is followed by `s`",
                arguments: verify, stdin: try stripeDelivery(.header)),
            Example(
                code: "stripe_no_signature", input: "a minted delivery whose header holds only a `v0` signature",
                arguments: verify, stdin: try stripeDelivery(.noV1)),
            Example(
                code: "stripe_bad_signature", input: "a minted delivery with one body byte changed", arguments: verify,
                stdin: try stripeDelivery(.body)),
            Example(
                code: "stripe_timestamp_out_of_tolerance",
                input: "a minted delivery signed an hour before `--at`, with `--tolerance 300`",
                arguments: verify + ["--tolerance", "300", "--at", "2025-09-01T00:00:00Z"],
                stdin: try stripeDelivery(signedAt: 1_756_684_800 - 3600)),
            Example(
                code: "stripe_bad_body_json", input: "a minted delivery whose signed body is not JSON",
                arguments: verify,
                stdin: try stripeDelivery(.notJSON)),
            Example(
                code: "stripe_not_an_event",
                input: "a minted delivery whose signed body is a subscription, not an event",
                arguments: verify, stdin: try stripeDelivery(.notEvent)),
            Example(
                code: "stripe_bad_object", input: "a minted subscription event whose `customer` is a number",
                arguments: verify, stdin: try stripeDeliveryWithANumberCustomer()),
        ]
    }

    static func examples() throws -> [String: Example] {
        let parts = TokenParts.segments(realToken)
        let signature = Base64.decodeURL(parts[2].utf8)!
        var flipped = Array(parts[2])
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        let markerExtension = CertificateProfile.Extension(name: "1.2.840.113635.100.6.11.1", value: "DER:05:00")
        var notification = try MintGenerator(seed: 1, date: Date(timeIntervalSince1970: 1_748_779_200))
            .payload(.notification, index: 0, signer: mintedSigner)
        var data = try #require(notification["data"]?.objectValue)
        data["signedTransactionInfo"] = "not a token"
        notification["data"] = .object(data)

        let list: [Example] = [
            Example(
                code: "token_too_large", input: "65,537 bytes of `A`", arguments: [],
                stdin: [UInt8](repeating: UInt8(ascii: "A"), count: 64 * 1024 + 1)),
            Example(code: "malformed_token", input: "`not a token`", arguments: [], stdin: Array("not a token".utf8)),
            Example(
                code: "bad_base64url", input: "a real token with `==` after its signature", arguments: [],
                stdin: withSignature(parts[2] + "==")),
            Example(
                code: "bad_header_json", input: #"a header `{"alg":"ES256","alg":"ES256"}`"#, arguments: [],
                stdin: withHeaderText(#"{"alg":"ES256","alg":"ES256"}"#)),
            Example(
                code: "json_too_deep", input: #"a header `{"alg":"ES256","x":[[[[[]]]]]}` (limit 4 levels)"#,
                arguments: [], stdin: withHeaderText(#"{"alg":"ES256","x":[[[[[]]]]]}"#)),
            Example(
                code: "unsupported_algorithm", input: #"a real token whose header says `"alg":"none"`"#, arguments: [],
                stdin: withHeader { $0["alg"] = "none" }),
            Example(
                code: "crit_present", input: #"a real token whose header adds `"crit":["exp"]`"#, arguments: [],
                stdin: withHeader { $0["crit"] = .array(["exp"]) }),
            Example(
                code: "missing_x5c", input: "a real token without `x5c`", arguments: [],
                stdin: withHeader { $0["x5c"] = nil }),
            Example(
                code: "wrong_chain_length", input: "a real token with `x5c[2]` removed", arguments: [],
                stdin: withChain { $0.removeLast() }),
            Example(
                code: "bad_certificate_encoding", input: "a real token whose `x5c[1]` has a byte after the certificate",
                arguments: [],
                stdin: withChain { $0[1] = .string(base64(Base64.decodeStandard($0[1].stringValue!.utf8)! + [0])) }),
            Example(
                code: "certificate_too_large", input: "a real token whose `x5c[0]` is 5,000 bytes", arguments: [],
                stdin: withChain { $0[0] = .string(base64([UInt8](repeating: 0x30, count: 5000))) }),
            Example(
                code: "untrusted_chain", input: "a minted token (TestVectors/minted) checked against Apple's root",
                arguments: [], stdin: try Self.mintedLine("transaction.txt")),
            Example(
                code: "unsupported_certificate_version",
                input: "a real token whose `x5c[0]` is an X.509 v1 certificate (TestVectors/minted/x509-v1-leaf.der)",
                arguments: [],
                stdin: withChain {
                    $0[0] = .string(
                        base64(
                            Array(
                                try! Data(
                                    contentsOf: URL(fileURLWithPath: VouchBinary.vector("minted/x509-v1-leaf.der"))))))
                }),
            Example(
                code: "certificate_expired", input: "a minted token whose leaf expired before its signed date",
                arguments: ["--root", VouchBinary.vector("minted/ca-expired-leaf/root.der")],
                stdin: try Self.mintedLine("expired-leaf-transaction.txt")),
            Example(
                code: "certificate_not_yet_valid", input: "a minted token whose leaf is valid only from 2040",
                arguments: ["--root", VouchBinary.vector("minted/ca-not-yet-valid-leaf/root.der")],
                stdin: try Self.mintedLine("not-yet-valid-leaf-transaction.txt")),
            Example(
                code: "missing_marker_oid", input: "a minted token whose leaf lacks 1.2.840.113635.100.6.11.1",
                arguments: ["--root", VouchBinary.vector("minted/ca-no-leaf-oid/root.der")],
                stdin: try Self.mintedLine("no-leaf-oid-transaction.txt")),
            Example(
                code: "wrong_key_type", input: "a minted chain whose leaf key is P-384",
                arguments: ["--root", mintedRoot],
                stdin: try Self.tokenWithMintedLeaf(
                    extensions: [
                        .init(name: "basicConstraints", value: "critical,CA:FALSE"),
                        .init(name: "keyUsage", value: "critical,digitalSignature"), markerExtension,
                    ],
                    curve: .p384)),
            Example(
                code: "leaf_is_ca", input: "a real token whose `x5c[0]` is its `x5c[2]` (Apple's root)", arguments: [],
                stdin: withChain { $0[0] = $0[2] }),
            Example(
                code: "bad_signature_length", input: "a real token with a 63-byte signature", arguments: [],
                stdin: withSignature(TokenParts.encode(signature.prefix(63)))),
            Example(
                code: "bad_signature", input: "a real token with one signature character changed", arguments: [],
                stdin: withSignature(String(flipped))),
            Example(
                code: "bad_payload_json", input: "`[1]` signed by the minted leaf", arguments: ["--root", mintedRoot],
                stdin: Array(try mintedSigner.sign(payloadBytes: Array("[1]".utf8)).utf8)),
            Example(
                code: "unknown_kind", input: "`{}` signed by the minted leaf", arguments: ["--root", mintedRoot],
                stdin: Array(try mintedSigner.sign(payloadBytes: Array("{}".utf8)).utf8)),
            Example(
                code: "wrong_kind", input: "a real transaction with `--kind notification`",
                arguments: ["--kind", "notification"], stdin: Array(realToken.utf8)),
            Example(
                code: "wrong_bundle_id", input: "a real transaction with `--bundle-id com.example.other`",
                arguments: ["--bundle-id", "com.example.other"], stdin: Array(realToken.utf8)),
            Example(
                code: "wrong_app_apple_id", input: "a real Production app transaction with `--app-apple-id 1`",
                arguments: ["--app-apple-id", "1"],
                stdin: Array(try VouchBinary.text("apple-real/real/appTransaction-production-1.jws").utf8)),
            Example(
                code: "wrong_environment", input: "a real Production transaction with `--environment sandbox`",
                arguments: ["--environment", "sandbox"], stdin: Array(realToken.utf8)),
            Example(
                code: "nested_token_invalid",
                input: "a minted notification whose `data.signedTransactionInfo` is `not a token`",
                arguments: ["--root", mintedRoot], stdin: Array(try mintedSigner.sign(payload: notification).utf8)),
            Example(
                code: "xcode_not_trusted",
                input: "a minted Xcode transaction (TestVectors/minted/xcode-transaction.txt)",
                arguments: [],
                stdin: Array(try VouchBinary.text("minted/xcode-transaction.txt").split(separator: "\n")[0].utf8)),
            Example(
                code: "empty_line", input: "`vouch batch` given an empty line", arguments: ["batch"], stdin: [0x0A]),
            Example(
                code: "line_too_long", input: "`vouch batch` given a line of 1 MiB + 1 byte", arguments: ["batch"],
                stdin: [UInt8](repeating: UInt8(ascii: "A"), count: (1 << 20) + 1) + [0x0A]),
            Example(
                code: "pair_mismatch",
                input:
                    "a subscription status item pairing a real transaction with the real renewal info of another subscription",
                arguments: ["batch"],
                stdin: Array(
                    #"{"data":[{"lastTransactions":[{"signedTransactionInfo":"\#(try VouchBinary.text("apple-real/real/transaction-sandbox-1.jws"))","signedRenewalInfo":"\#(try VouchBinary.text("apple-real/real/renewalInfo-sandbox-9.jws"))"}]}]}"#
                        .utf8),
                path: "data[0].lastTransactions[0].signedRenewalInfo"),
            Example(
                code: "document_too_large",
                input:
                    "`vouch batch --document-buffer 1K` given a transaction history whose `bundleId` follows its tokens",
                arguments: ["batch", "--document-buffer", "1K"],
                stdin: Array(#"{"signedTransactions":["\#(realToken)"],"bundleId":"com.locket.Locket"}"#.utf8),
                path: "bundleId"),
        ]
        let keySignedExamples = [
            Example(
                code: "token_expired", input: "a minted key's API token of 2023 with `--signing-key`",
                arguments: ["--signing-key", keySigned.key], stdin: keySigned.token),
            Example(
                code: "token_not_yet_valid",
                input: "a minted key's API token of 2023 with `--signing-key` and `--at 2023-01-01`",
                arguments: ["--signing-key", keySigned.key, "--at", "2023-01-01"], stdin: keySigned.token),
        ]
        return Dictionary(
            uniqueKeysWithValues: (list + (try receiptExamples()) + keySignedExamples + (try stripeExamples())).map {
                ($0.code, $0)
            })
    }

    static let all = Result { try examples() }

    /// `internal_error` means OpenSSL could not allocate or set up a check: no input reaches it
    /// from the command line (`VerifierAPITests` covers it through the library).
    static let reachable = every.filter { $0 != .internalError }

    /// Every verification code: the core's, the receipts' and Stripe's.
    static let every =
        VerificationError.Code.all + VerificationError.Code.receiptCodes
        + VerificationError.Code.stripeCodes

    /// Every reachable code.
    static let codes = reachable.map(\.rawValue)

    @Test func everyCodeHasAnExample() throws {
        let examples = try Self.all.get()
        #expect(Set(examples.keys) == Set(Self.codes))
        #expect(examples.count == Self.codes.count)
        #expect(Self.every.count == Self.reachable.count + 1)
    }

    @Test(arguments: ErrorContractTests.codes)
    func theCLIReportsExactlyThisCode(code: String) throws {
        let example = try #require(try Self.all.get()[code], "no example for \(code)")
        let arguments: [String]
        switch example.arguments.first {
        case "batch": arguments = example.arguments + ["--payload", "none", "-"]
        case "receipt": arguments = example.arguments + ["--json", "-"]
        case "stripe": arguments = example.arguments + ["--payload", "none", "-"]
        default: arguments = ["verify", "--json"] + example.arguments + ["-"]
        }
        let result = try VouchBinary.run(arguments, input: example.stdin)
        #expect(result.status == 1, "\(result.stderr)")
        var lines = result.stdout.split(separator: "\n")
        if let path = example.path {
            lines = lines.filter { $0.contains(#""path":"\#(path)""#) }
        }
        try #require(lines.count == 1, "\(result.stdout)")
        let record = try VouchBinary.object(String(lines[0]))
        #expect(record["status"] as? String == "rejected")
        let error = try #require(record["error"] as? [String: Any])
        #expect(error["code"] as? String == code, "\(error["reason"] ?? "")")
        #expect((error["reason"] as? String)?.isEmpty == false)
        #expect(result.stderr.contains(code))
    }

    @Test func aNestedFailureCarriesTheNestedCode() throws {
        let example = try #require(try Self.all.get()["nested_token_invalid"])
        let result = try VouchBinary.run(["verify", "--json"] + example.arguments + ["-"], input: example.stdin)
        let record = try VouchBinary.object(result.stdout)
        let nested = try #require((record["error"] as? [String: Any])?["nested"] as? [String: Any])
        #expect(nested["field"] as? String == "data.signedTransactionInfo")
        #expect(nested["code"] as? String == "malformed_token")
    }

    /// basicConstraints `CA:TRUE` with a keyUsage lacking keyCertSign: OpenSSL's `X509_check_ca`
    /// alone says "not a CA" (x509-limbo's webpki::ee-basicconstraints-ca).
    @Test func aLeafSayingCAWithoutCertificateSigningIsRefused() throws {
        let token = try Self.tokenWithMintedLeaf(
            extensions: [
                .init(name: "basicConstraints", value: "critical,CA:TRUE"),
                .init(name: "keyUsage", value: "critical,digitalSignature"),
                .init(name: "1.2.840.113635.100.6.11.1", value: "DER:05:00"),
            ],
            curve: .p256)
        let result = try VouchBinary.run(["verify", "--json", "--root", Self.mintedRoot, "-"], input: token)
        let record = try VouchBinary.object(result.stdout)
        #expect((record["error"] as? [String: Any])?["code"] as? String == "leaf_is_ca")
    }

    /// `vouch verify` reads at most 1 MiB of a bare token; more is too large as a whole.
    @Test func anInputOverOneMiBIsTooLarge() throws {
        let bare = [UInt8](repeating: UInt8(ascii: "A"), count: (1 << 20) + 1)
        let result = try VouchBinary.run(["verify", "--json", "-"], input: bare)
        #expect(result.status == 1)
        let record = try VouchBinary.object(result.stdout)
        #expect((record["error"] as? [String: Any])?["code"] as? String == "token_too_large")
        #expect(
            ((record["error"] as? [String: Any])?["reason"] as? String)?.contains("larger than 1048576 bytes") == true)
    }

    /// A JSON body is streamed (a response can be gigabytes); a token in it over 1 MiB is too
    /// large without being held, and one under that is left to the token limit.
    @Test func aTokenInAJSONBodyOverOneMiBIsTooLarge() throws {
        for (size, reason) in [((1 << 20) + 1, "larger than 1048576 bytes"), (1 << 20, "the limit is 65536")] {
            let body =
                Array(#"{"signedPayload":""#.utf8) + [UInt8](repeating: UInt8(ascii: "A"), count: size)
                + Array(#""}"#.utf8)
            let result = try VouchBinary.run(["verify", "--json", "-"], input: body)
            #expect(result.status == 1)
            let record = try VouchBinary.object(result.stdout)
            #expect((record["error"] as? [String: Any])?["code"] as? String == "token_too_large")
            #expect(((record["error"] as? [String: Any])?["reason"] as? String)?.contains(reason) == true)
        }
    }

    /// The error table of `docs/errors.md` lists every code with the example input used here.
    @Test func theReadmeTableListsEveryCodeWithItsExample() throws {
        let readme = try String(
            contentsOf: VouchBinary.packageRoot.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        for example in try Self.all.get().values {
            // The batch input's own codes are input errors; a verifier code has its category.
            let verifierCode = Self.every.first { $0.rawValue == example.code }
            let category =
                example.code == "nested_token_invalid"
                ? "the nested error's"
                : verifierCode.map { "\(VerificationError($0, "").category)" } ?? "input"
            #expect(
                readme.contains("| `\(example.code)` | \(category) |"),
                "\(example.code) is not in the table of docs/errors.md with its category")
            #expect(readme.contains("| \(example.input) |"), "docs/errors.md does not give \(example.code)'s example")
        }
        #expect(readme.contains("| `internal_error` | internal |"))
    }
}
