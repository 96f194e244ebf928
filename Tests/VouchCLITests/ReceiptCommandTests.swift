import Foundation
import Testing
import Vouch
import VouchTestSupport

/// `vouch receipt verify|inspect`, receipt lines in `vouch batch` and `vouch mint receipt`,
/// through the built binary. Real receipts are read from the shared test vectors' `receipts/`.
@Suite(.serialized) struct ReceiptCommandTests {
    static func path(_ name: String) -> String { SharedVectors.url("receipts/\(name)").path }
    static func bytes(_ name: String) throws -> [UInt8] { try SharedVectors.bytes("receipts/\(name)") }
    static func base64(_ name: String) throws -> String {
        String(decoding: Base64.encodeStandard(try bytes(name)), as: UTF8.self)
    }

    static let mindnode = "real/production-2023-08-28-com.ideasoncanvas.mindnode.macos.der"
    static let xcode = "real/xcode-2023-10-19-com.example.naturelab.backyardbirds.example.der"

    @Test(.sharedVectors("receipts")) func verifyPrintsTheReceiptAndExitsZero() throws {
        let result = try VouchBinary.run(["receipt", "verify", Self.path(Self.mindnode)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("VERIFIED receipt\n  chain validated at 2023-08-28T10:24:05.000Z\n"))
        #expect(result.stdout.contains("bundleId: \"com.ideasoncanvas.mindnode.macos\""))
        #expect(result.stdout.contains("productId: \"com.ideasoncanvas.mindnode.macos.subscription.yearly\""))
    }

    /// The text shows the purchases, product types by name, and counts the raw attributes that
    /// `--json` prints.
    @Test(.sharedVectors("receipts")) func verifyTextShowsThePurchasesAndLeavesRawAttributesToJSON() throws {
        let receipt = Self.path("real/production-2023-07-05-com.readdle.ReaddleDocsIPad.der")
        let result = try VouchBinary.run(["receipt", "verify", receipt])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("value: \""))
        #expect(!result.stdout.contains("otherAttributes:\n"))
        #expect(result.stdout.split(separator: "\n").count == 51)
        #expect(result.stdout.components(separatedBy: "productType: 3 (Auto-Renewable Subscription)\n").count == 4)
        #expect(
            result.stdout.hasSuffix(
                "\n  otherAttributes: 12 of the receipt, 24 of its purchases, raw (--json shows them)\n"))
        let json = try VouchBinary.run(["receipt", "verify", "--json", receipt])
        #expect(json.stdout.components(separatedBy: #""otherAttributes""#).count == 5)
        #expect(json.stdout.contains(#""productType":3"#))
    }

    @Test(.sharedVectors("receipts")) func base64AndJSONBodiesOnStandardInputGiveTheSameRecord() throws {
        let text = try Self.base64(Self.mindnode)
        let fromFile = try VouchBinary.run(["receipt", "verify", "--json", Self.path(Self.mindnode)])
        let fromBase64 = try VouchBinary.run(["receipt", "verify", "--json", "-"], input: Array(text.utf8))
        let fromJSON = try VouchBinary.run(
            ["receipt", "verify", "--json"], input: Array("{\"receipt-data\":\"\(text)\"}".utf8))
        let fromField = try VouchBinary.run(
            ["receipt", "verify", "--json", "--field", "r"], input: Array("{\"r\":\"\(text)\"}".utf8))
        #expect(fromFile.status == 0)
        #expect(
            fromFile.stdout.hasPrefix(#"{"status":"verified","kind":"receipt","payload":{"receiptType":"Production","#))
        #expect(fromBase64.stdout == fromFile.stdout)
        #expect(fromJSON.stdout == fromFile.stdout)
        #expect(fromField.stdout == fromFile.stdout)
    }

    /// The base64 text wrapped as `base64` (76 columns) and PEM writers (64) leave it, the
    /// file gzipped, the body in an array: one reader, one record.
    @Test(.sharedVectors("receipts")) func wrappedGzippedAndArrayInputsGiveTheSameRecord() throws {
        let fromFile = try VouchBinary.run(["receipt", "verify", "--json", Self.path(Self.mindnode)])
        #expect(fromFile.status == 0)
        let text = Array(try Self.base64(Self.mindnode).utf8)
        for width in [64, 76] {
            let wrapped =
                stride(from: 0, to: text.count, by: width).map { text[$0..<min($0 + width, text.count)] }
                .joined(separator: [0x0A]) + [0x0A]
            let result = try VouchBinary.run(["receipt", "verify", "--json", "-"], input: Array(wrapped))
            #expect(result.stdout == fromFile.stdout, "wrapped at \(width): \(result.stderr)")
        }
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c '\(Self.path(Self.mindnode))'"]
        let output = Pipe()
        gzip.standardOutput = output
        try gzip.run()
        let compressed = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
        gzip.waitUntilExit()
        let fromGzip = try VouchBinary.run(["receipt", "verify", "--json", "-"], input: compressed)
        #expect(fromGzip.stdout == fromFile.stdout, "\(fromGzip.stderr)")
        let fromArray = try VouchBinary.run(
            ["receipt", "verify", "--json", "--field", "items[].r"],
            input: Array("{\"items\":[{\"r\":\"\(String(decoding: text, as: UTF8.self))\"}]}".utf8))
        #expect(fromArray.stdout == fromFile.stdout, "\(fromArray.stderr)")
        // A token is not a receipt, and two receipts are not one.
        let token = try VouchBinary.text("apple-real/real/transaction-production-1.jws")
        let signed = try VouchBinary.run(
            ["receipt", "verify", "--json", "-"], input: Array("{\"signedPayload\":\"\(token)\"}".utf8))
        #expect(signed.status == 1)
        #expect(signed.stderr.contains("receipt_not_a_receipt: the input holds no receipt, only signed tokens"))
        let two = String(decoding: text, as: UTF8.self) + "\n" + String(decoding: text, as: UTF8.self) + "\n"
        let dump = try VouchBinary.run(["receipt", "verify", "-"], input: Array(two.utf8))
        #expect(dump.status == 1)
        #expect(dump.stderr.contains("receipt_not_a_receipt: the input holds 2 lines that are not blank"))
    }

    @Test(.sharedVectors("receipts")) func theVerifyReceiptFormatHasTheOldResponseShape() throws {
        let result = try VouchBinary.run(["receipt", "verify", "--format", "verify-receipt", Self.path(Self.mindnode)])
        #expect(result.status == 0)
        let response = try VouchBinary.object(result.stdout)
        #expect(response["status"] as? Int == 0)
        #expect(response["environment"] as? String == "Production")
        let receipt = try #require(response["receipt"] as? [String: Any])
        #expect(receipt["bundle_id"] as? String == "com.ideasoncanvas.mindnode.macos")
        #expect(receipt["receipt_creation_date"] as? String == "2023-08-28 10:24:05 Etc/GMT")
        #expect(receipt["receipt_creation_date_ms"] as? String == "1693218245000")
        #expect(receipt["receipt_creation_date_pst"] as? String == "2023-08-28 03:24:05 America/Los_Angeles")
        let inApp = try #require(receipt["in_app"] as? [[String: Any]])
        #expect(inApp.count == 3)
        #expect(
            inApp.allSatisfy { ($0["transaction_id"] as? String)?.isEmpty == false && $0["quantity"] as? String == "1" }
        )
        #expect(
            result.stdout.hasPrefix(#"{"status":0,"environment":"Production","receipt":{"receipt_type":"Production","#))
    }

    @Test(.sharedVectors("receipts")) func xcodeReceiptsNeedTheStoreKitCertificate() throws {
        let refused = try VouchBinary.run(["receipt", "verify", "--json", Self.path(Self.xcode)])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains(#""code":"xcode_not_trusted""#))
        let accepted = try VouchBinary.run([
            "receipt", "verify", "--xcode-cert", Self.path("StoreKitTestCertificate.cer"), Self.path(Self.xcode),
        ])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stdout.hasPrefix("VERIFIED receipt (Xcode StoreKit testing)"))
    }

    @Test(.sharedVectors("receipts")) func severalEnvironmentsAcceptEachReceiptAgainstItsType() throws {
        let sandbox = Self.path("real/sandbox-2016-07-23-com.zhihu.test.der")
        for receipt in [Self.path(Self.mindnode), sandbox] {
            let result = try VouchBinary.run(["receipt", "verify", "--environment", "Production,Sandbox", receipt])
            #expect(result.status == 0, "\(receipt): \(result.stderr)")
        }
        let refused = try VouchBinary.run(["receipt", "verify", "--environment", "Production,Xcode", sandbox])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                "wrong_environment: the receipt's type is ProductionSandbox (Sandbox), expected Production or Xcode"))
        let unknown = try VouchBinary.run(["receipt", "verify", "--environment", "Production,LocalTesting", sandbox])
        #expect(unknown.status == 64)
    }

    @Test(.sharedVectors("receipts")) func theDeviceCheckAndValidationTimeOptionsApply() throws {
        let file = Self.path("real/sandbox-2025-12-26-dev.bonzer.weeka.app.der")
        let known = try VouchBinary.run([
            "receipt", "verify", "--device-id", "956328D9-CC6A-47F4-BE40-6953FB0AB6C7", file,
        ])
        #expect(known.status == 0, "\(known.stderr)")
        let other = try VouchBinary.run([
            "receipt", "verify", "--device-id", "00000000-0000-0000-0000-000000000000", file,
        ])
        #expect(other.status == 1)
        #expect(other.stderr.contains("receipt_device_hash_mismatch"))
        let now = try VouchBinary.run(["receipt", "verify", "--at", "now", file])
        #expect(now.stderr.contains("certificate_expired"))
        let fixed = try VouchBinary.run(["receipt", "verify", "--at", "2026-01-01T00:00:00Z", file])
        #expect(fixed.status == 0)
        let bundle = try VouchBinary.run(["receipt", "verify", "--bundle-id", "com.example.other", file])
        #expect(bundle.stderr.contains("wrong_bundle_id"))
    }

    @Test(.sharedVectors("receipts")) func inspectDecodesWithoutTrustAndSaysSo() throws {
        let result = try VouchBinary.run(["receipt", "inspect", Self.path(Self.xcode)])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("UNVERIFIED: decoded without checking the signature, the chain or any claim\n"))
        #expect(result.stdout.contains("BER (indefinite lengths)"))
        #expect(result.stdout.contains("subject: /CN=StoreKit"))
        let plist = try VouchBinary.run(["receipt", "inspect", Self.path("negative/ios6-transaction-receipt.plist")])
        #expect(plist.status == 1)
        #expect(plist.stderr.contains("receipt_not_a_receipt"))
    }

    @Test func usageMistakesExitWith64() throws {
        for arguments in [
            ["receipt", "verify", "--at", "signed"], ["receipt", "verify", "--format", "xml"],
            ["receipt", "verify", "--device-id", "not-a-uuid"], ["receipt", "verify", "--kind", "transaction"],
        ] {
            let result = try VouchBinary.run(arguments, input: [])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: "))
            #expect(result.stderr.contains("Usage: vouch receipt verify"))
        }
        for arguments in [["receipt"], ["receipt", "check"]] {
            let result = try VouchBinary.run(arguments, input: [])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("Usage: vouch receipt verify|inspect"))
        }
        let help = try VouchBinary.run(["help", "receipt", "verify"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--format FORMAT"))
        let group = try VouchBinary.run(["help", "receipt"])
        #expect(group.stdout.contains("inspect          Decode a receipt without trusting it (UNVERIFIED)"))
        #expect(group.stdout.contains("transaction-ids  Print the transaction ids of a receipt"))
    }

    @Test(.sharedVectors("receipts")) func batchVerifiesReceiptLinesBesideTokens() throws {
        let token = try VouchBinary.text("apple-real/real/transaction-production-1.jws")
        let sandbox = try Self.base64("real/sandbox-2016-07-23-com.zhihu.test.der")
        let lines = [
            try Self.base64(Self.mindnode), "{\"receipt-data\":\"\(sandbox)\",\"password\":\"secret\"}", token,
            try Self.base64("negative/mut-mindnodemac-2023-signature-last-byte-flipped.der"),
            #"{"latest_receipt":7}"#,
        ]
        let result = try VouchBinary.run(
            ["batch", "--payload", "bundleId", "-"], input: Array((lines.joined(separator: "\n") + "\n").utf8))
        #expect(result.status == 1)
        let records = result.stdout.split(separator: "\n").map(String.init)
        try #require(records.count == 5)
        #expect(
            records[0]
                == #"{"line":1,"status":"verified","kind":"receipt","payload":{"bundleId":"com.ideasoncanvas.mindnode.macos"}}"#
        )
        #expect(
            records[1] == #"{"line":2,"status":"verified","kind":"receipt","payload":{"bundleId":"com.zhihu.test"}}"#)
        #expect(records[2].hasPrefix(#"{"line":3,"status":"verified","kind":"transaction","#))
        #expect(
            records[3].hasPrefix(
                #"{"line":4,"status":"rejected","kind":"receipt","payload":null,"error":{"code":"bad_signature""#))
        #expect(
            records[4].hasPrefix(
                #"{"line":5,"status":"rejected","kind":"receipt","payload":null,"error":{"code":"receipt_not_a_receipt""#
            ))
        #expect(result.stderr.contains("verified by kind: receipt 2, transaction 1"))
    }

    @Test(.sharedVectors("receipts")) func batchChecksReceiptsAgainstTheAppAndEnvironmentItIsGiven() throws {
        let input = Array(
            (try [Self.base64(Self.mindnode), Self.base64("real/sandbox-2016-07-23-com.zhihu.test.der")]
                .joined(separator: "\n") + "\n").utf8)
        let production = try VouchBinary.run(
            ["batch", "--payload", "none", "--environment", "Production"], input: input)
        #expect(production.status == 1)
        #expect(
            production.stdout.split(separator: "\n").map(String.init) == [
                #"{"line":1,"status":"verified","kind":"receipt"}"#,
                #"{"line":2,"status":"rejected","kind":"receipt","error":{"code":"wrong_environment","reason":"the receipt's type is ProductionSandbox (Sandbox), expected Production"}}"#,
            ])
        let bundle = try VouchBinary.run(
            ["batch", "--payload", "none", "--bundle-id", "com.zhihu.test", "--rejections-ok"], input: input)
        #expect(bundle.status == 0)
        #expect(bundle.stdout.split(separator: "\n").first?.contains(#""code":"wrong_bundle_id""#) == true)
        #expect(bundle.stdout.split(separator: "\n").last == #"{"line":2,"status":"verified","kind":"receipt"}"#)
        let now = try VouchBinary.run(["batch", "--payload", "none", "--at", "now", "--rejections-ok"], input: input)
        #expect(now.stderr.contains("rejected by code: certificate_expired 2"))
    }

    @Test func batchFindsReceiptsInJSONDocumentsAndTrustsOnlyTheReceiptRoot() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-receipt-batch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = try VouchBinary.run(["mint", "receipt-ca", "--out", directory.path, "--not-before", "2024-01-01"])
        #expect(ca.status == 0, "\(ca.stderr)")
        let root = directory.appendingPathComponent("root.der").path
        var receipts: [String] = []
        for seed in 1...3 {
            let minted = try VouchBinary.run([
                "mint", "receipt", "--ca", directory.path, "--base64", "--seed", "\(seed)", "--in-app", "\(seed)",
                "--date", "2025-02-01T00:00:00Z",
            ])
            #expect(minted.status == 0, "\(minted.stderr)")
            receipts.append(minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // A pretty-printed request body, then a one-line array of receipts.
        let input = """
            {
              "receipt-data": "\(receipts[0])",
              "exclude-old-transactions": true
            }
            ["\(receipts[1])","\(receipts[2])"]

            """
        let result = try VouchBinary.run(
            ["batch", "--payload", "none", "--receipt-root", root, "-"], input: Array(input.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.split(separator: "\n").map(String.init) == [
                #"{"line":2,"document":1,"path":"receipt-data","status":"verified","kind":"receipt"}"#,
                #"{"line":5,"document":2,"path":"[0]","status":"verified","kind":"receipt"}"#,
                #"{"line":5,"document":2,"path":"[1]","status":"verified","kind":"receipt"}"#,
            ])
        // The token root is not the receipt root: without --receipt-root, Apple Inc. Root only.
        let untrusted = try VouchBinary.run(
            ["batch", "--payload", "none", "--root", root, "-"], input: Array(input.utf8))
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("rejected by code: untrusted_chain 3"))
        let help = try VouchBinary.run(["batch", "--help"])
        #expect(help.stdout.contains("--receipt-root FILE"))
    }

    @Test func mintReceiptCountWritesADumpThatBatchVerifies() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-receipt-count-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = try VouchBinary.run(["mint", "receipt-ca", "--out", directory.path, "--not-before", "2024-01-01"])
        #expect(ca.status == 0, "\(ca.stderr)")
        let dump = try VouchBinary.run([
            "mint", "receipt", "--ca", directory.path, "--count", "12", "--seed", "5", "--date", "2025-02-01",
        ])
        #expect(dump.status == 0, "\(dump.stderr)")
        let lines = dump.stdout.split(separator: "\n")
        #expect(lines.count == 12)
        #expect(Set(lines).count == 12)
        let batch = try VouchBinary.run(
            [
                "batch", "--payload", "none", "--receipt-root", directory.appendingPathComponent("root.der").path,
                "--summary-json", "-",
            ], input: Array(dump.stdout.utf8))
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(batch.stdout.contains(#""kinds":{"receipt":12}"#))
        let both = try VouchBinary.run(["mint", "receipt", "--ca", directory.path, "--count", "2", "--tamper", "md5"])
        #expect(both.status == 64)
        let zero = try VouchBinary.run(["mint", "receipt", "--ca", directory.path, "--count", "0"])
        #expect(zero.status == 64)
    }

    @Test func mintedReceiptsVerifyWithTheMintedRootAndTheirTampersFailAsLabelled() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-receipt-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = try VouchBinary.run(["mint", "receipt-ca", "--out", directory.path, "--not-before", "2024-01-01"])
        #expect(ca.status == 0, "\(ca.stderr)")
        let root = directory.appendingPathComponent("root.der").path
        let minted = try VouchBinary.run([
            "mint", "receipt", "--ca", directory.path, "--in-app", "4", "--date", "2025-02-01T00:00:00Z", "--digest",
            "sha1", "--base64",
            "--set", "bundleId=com.example.app",
        ])
        #expect(minted.status == 0, "\(minted.stderr)")
        let verified = try VouchBinary.run(
            ["receipt", "verify", "--json", "--root", root, "--bundle-id", "com.example.app"],
            input: Array(minted.stdout.utf8))
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout.contains(#""bundleId":"com.example.app""#))
        let tampered = try VouchBinary.run([
            "mint", "receipt", "--ca", directory.path, "--date", "2025-02-01T00:00:00Z", "--tamper", "all",
        ])
        let lines = tampered.stdout.split(separator: "\n")
        #expect(lines.count == 11)
        for line in lines {
            let parts = line.split(separator: "\t").map(String.init)
            let result = try VouchBinary.run(
                ["receipt", "verify", "--json", "--root", root], input: Array(parts[0].utf8))
            #expect(result.stdout.contains("\"code\":\"\(parts[1])\""), "\(parts[1]): \(result.stdout)")
        }
    }
}
