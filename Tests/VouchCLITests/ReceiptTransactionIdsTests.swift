import Foundation
import Testing
import Vouch
import VouchMint
import VouchReceipts

/// `vouch receipt transaction-ids`: the ids of a verified app receipt, and with `--unverified`
/// of an app receipt decoded or an iOS 6 transaction receipt, through the built binary.
@Suite(.serialized) struct ReceiptTransactionIdsTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)
    static let folder: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-ids-\(getpid())")
        let authority = try! MintReceiptAuthority.generate(
            .init(
                validity: MintValidity(
                    notBefore: date.addingTimeInterval(-86_400 * 365), notAfter: date.addingTimeInterval(86_400 * 365)))
        )
        _ = try! authority.write(to: folder)
        let receipt = try! MintReceiptSigner(authority: authority).sign(
            MintReceiptContent.sample(receiptCreationDate: date, inAppCount: 2))
        try! Data(receipt).write(to: folder.appendingPathComponent("receipt.der"))
        return folder
    }()
    static let root = folder.appendingPathComponent("root.der").path
    static let receipt = folder.appendingPathComponent("receipt.der").path

    static let purchaseInfo =
        "{\n\t\"original-transaction-id\" = \"1000000046178817\";\n\t\"transaction-id\" = \"1000000046178818\";\n\t\"product-id\" = \"com.example.coins\";\n}"
    static let transactionReceipt = Array(
        "{\n\t\"signature\" = \"AkV4YW1wbGU=\";\n\t\"purchase-info\" = \"\(String(decoding: Base64.encodeStandard(Array(purchaseInfo.utf8)), as: UTF8.self))\";\n\t\"environment\" = \"Sandbox\";\n}\n"
            .utf8)

    static func ids(of receipt: [UInt8]) throws -> [[String]] {
        let purchases = try ReceiptInspection(receipt: receipt).receipt.get().inApp
        return purchases.map { [$0.transactionId ?? "-", $0.originalTransactionId ?? "-", $0.productId ?? "-"] }
    }

    @Test func aVerifiedAppReceiptGivesEveryInAppPurchasesIds() throws {
        let expected = try Self.ids(of: Array(try Data(contentsOf: URL(fileURLWithPath: Self.receipt))))
        #expect(expected.count == 2)
        let result = try VouchBinary.run(["receipt", "transaction-ids", "--root", Self.root, Self.receipt])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "VERIFIED app receipt: 2 in-app purchases")
        #expect(lines.dropFirst().map { $0.split(separator: "\t").map(String.init) } == expected)
        let json = try VouchBinary.run(["receipt", "transaction-ids", "--root", Self.root, "--json", Self.receipt])
        let record = try VouchBinary.object(json.stdout)
        #expect(record["status"] as? String == "verified")
        #expect(((record["transactions"] as? [[String: Any]])?.first)?["transactionId"] as? String == expected[0][0])
    }

    @Test func anAppReceiptThatDoesNotVerifyIsRejectedButReadsUnverified() throws {
        let rejected = try VouchBinary.run(["receipt", "transaction-ids", Self.receipt])
        #expect(rejected.status == 1)
        #expect(rejected.stderr.contains("untrusted_chain"))
        #expect(rejected.stdout.isEmpty)
        let unverified = try VouchBinary.run(["receipt", "transaction-ids", "--unverified", "--json", Self.receipt])
        #expect(unverified.status == 0)
        let record = try VouchBinary.object(unverified.stdout)
        #expect(record["status"] as? String == "unverified")
        #expect((record["transactions"] as? [Any])?.count == 2)
    }

    @Test func aTransactionReceiptIsReadOnlyUnverifiedInEveryInputForm() throws {
        let base64 = Base64.encodeStandard(Self.transactionReceipt)
        let inputs: [[UInt8]] = [
            Self.transactionReceipt, base64 + [0x0A], Array(#"{"receipt-data":""#.utf8) + base64 + Array(#""}"#.utf8),
        ]
        for input in inputs {
            let result = try VouchBinary.run(["receipt", "transaction-ids", "--unverified", "-"], input: input)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("UNVERIFIED: an iOS 6 style transaction receipt"))
            #expect(result.stdout.hasSuffix("\n1000000046178818\t1000000046178817\tcom.example.coins\n"))
            let json = try VouchBinary.run(["receipt", "transaction-ids", "--unverified", "--json", "-"], input: input)
            #expect(
                json.stdout
                    == #"{"status":"unverified","kind":"transaction-receipt","transactions":[{"transactionId":"1000000046178818","originalTransactionId":"1000000046178817","productId":"com.example.coins"}]}"#
                    + "\n")
        }
        let verified = try VouchBinary.run(["receipt", "transaction-ids", "-"], input: base64)
        #expect(verified.status == 1)
        #expect(verified.stderr.contains("receipt_not_a_receipt"))
        #expect(verified.stderr.contains("--unverified reads its transaction id"))
    }

    @Test func aMalformedTransactionReceiptSaysWhy() throws {
        let broken = Array(#"{"signature" = "AA=="; "purchase-info" = "not base64";}"#.utf8)
        let result = try VouchBinary.run(["receipt", "transaction-ids", "--unverified", "--json", "-"], input: broken)
        #expect(result.status == 1)
        let record = try VouchBinary.object(result.stdout)
        #expect(record["status"] as? String == "rejected")
        #expect((record["error"] as? [String: Any])?["code"] as? String == "receipt_malformed_payload")
        #expect(result.stderr.contains("purchase-info is not canonical"))
    }

    @Test func unverifiedTakesNoVerificationOption() throws {
        let result = try VouchBinary.run([
            "receipt", "transaction-ids", "--unverified", "--root", Self.root, Self.receipt,
        ])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--root does not apply"))
    }
}
