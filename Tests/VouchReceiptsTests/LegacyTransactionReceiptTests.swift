import Foundation
import Testing
import Vouch
import VouchReceipts
import VouchTestSupport

/// iOS 6 style transaction receipts: the ids read strictly, every malformation named.
@Suite struct LegacyTransactionReceiptTests {
    static let purchaseInfo = """
        {
        \t"original-transaction-id" = "1000000046178817";
        \t"transaction-id" = "1000000046178818";
        \t"product-id" = "com.example.coins";
        \t"bid" = "com.example.app";
        }
        """

    static func receipt(purchaseInfo: String = purchaseInfo, extra: String = "") -> [UInt8] {
        let encoded = String(decoding: Base64.encodeStandard(Array(purchaseInfo.utf8)), as: UTF8.self)
        return Array(
            """
            {
            \t"signature" = "AkV4YW1wbGU=";
            \t"purchase-info" = "\(encoded)";
            \t"environment" = "Sandbox";\(extra)
            }

            """.utf8)
    }

    static func code(_ bytes: [UInt8]) -> VerificationError.Code? {
        do {
            _ = try LegacyTransactionReceipt(plist: bytes)
            return nil
        } catch {
            #expect(!error.reason.isEmpty)
            return error.code
        }
    }

    @Test func readsTheIdsOfAPurchase() throws {
        let receipt = try LegacyTransactionReceipt(plist: Self.receipt())
        #expect(receipt.transactionId == "1000000046178818")
        #expect(receipt.originalTransactionId == "1000000046178817")
        #expect(receipt.productId == "com.example.coins")
        #expect(receipt.bundleId == "com.example.app")
        #expect(receipt.environment == "Sandbox")
        #expect(
            receipt.purchaseInfo.members.map(\.name) == [
                "original-transaction-id", "transaction-id", "product-id", "bid",
            ])
    }

    @Test func readsItsBase64AndAReceiptDataBody() throws {
        let text = Base64.encodeStandard(Self.receipt())
        #expect(try LegacyTransactionReceipt(base64: text).transactionId == "1000000046178818")
        let body = Array(#"{"receipt-data":""#.utf8) + text + Array(#""}"#.utf8)
        #expect(try LegacyTransactionReceipt(base64: body).transactionId == "1000000046178818")
    }

    @Test func readsEscapedQuotesAndBackslashes() throws {
        let receipt = try LegacyTransactionReceipt(
            plist: Self.receipt(purchaseInfo: #"{"transaction-id" = "7"; "product-id" = "a\"b\\c";}"#))
        #expect(receipt.productId == #"a"b\c"#)
    }

    @Test(arguments: [
        ("an app receipt's DER", [UInt8]([0x30, 0x82, 0x01, 0x00]), VerificationError.Code.receiptNotAReceipt),
        ("text", Array("hello".utf8), .receiptNotAReceipt),
        ("nothing", [], .receiptNotAReceipt),
    ])
    func somethingElseIsNotAReceipt(name: String, bytes: [UInt8], code: VerificationError.Code) {
        #expect(Self.code(bytes) == code, "\(name)")
    }

    static let malformed: [(name: String, bytes: [UInt8])] = [
        ("no purchase-info", Array(#"{"signature" = "AA==";}"#.utf8)),
        ("purchase-info not base64", Array(#"{"purchase-info" = "not base64";}"#.utf8)),
        ("purchase-info not canonical base64", Array(#"{"purchase-info" = "QR==";}"#.utf8)),
        ("no transaction-id", receipt(purchaseInfo: #"{"bid" = "b";}"#)),
        ("an empty transaction-id", receipt(purchaseInfo: #"{"transaction-id" = "";}"#)),
        ("a transaction-id with a space", receipt(purchaseInfo: #"{"transaction-id" = "1 2";}"#)),
        ("a member twice", receipt(extra: "\n\t\"environment\" = \"Production\";")),
        ("bytes after the brace", receipt() + Array("x".utf8)),
        ("an unquoted value", Array(#"{"purchase-info" = e30=;}"#.utf8)),
        ("a missing ';'", Array(#"{"purchase-info" = "e30=" }"#.utf8)),
        ("another escape", Array(#"{"a" = "\n";}"#.utf8)),
        ("not UTF-8", Array(#"{"a" = ""#.utf8) + [0xFF] + Array(#"";}"#.utf8)),
        ("a purchase-info that is no list", receipt(purchaseInfo: "transaction-id")),
    ]

    @Test(arguments: LegacyTransactionReceiptTests.malformed)
    func aMalformedReceiptIsNamed(name: String, bytes: [UInt8]) {
        #expect(Self.code(bytes) == .receiptMalformedPayload, "\(name)")
    }

    @Test func everyTruncationIsRefusedWithoutACrash() {
        let bytes = Self.receipt()
        for length in 0..<bytes.count - 1 {
            #expect(Self.code(Array(bytes.prefix(length))) != nil, "\(length) bytes")
        }
    }
}
