import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchBatch
@testable import VouchMint
@testable import VouchMintPKI
@testable import VouchReceipts

/// Legacy app receipts in a batch: base64 lines and JSON members, beside tokens, in order, with
/// records of kind `receipt`.
@Suite struct ReceiptBatchTests {
    static let created = Date(timeIntervalSince1970: 1_700_000_000)
    static let validity = MintValidity(
        notBefore: Date(timeIntervalSince1970: 1_600_000_000), notAfter: Date(timeIntervalSince1970: 1_800_000_000))
    static let authority = try! MintReceiptAuthority.generate(.init(validity: validity))
    static let signer = MintReceiptSigner(authority: authority)

    static func receipt(_ seed: Int) throws -> String {
        let content = MintReceiptContent.sample(receiptCreationDate: created, inAppCount: 1 + seed % 3, seed: seed)
        return String(decoding: Base64.encodeStandard(try signer.sign(content, digest: .sha256)), as: UTF8.self)
    }

    static func receiptVerifier() throws -> ReceiptVerifier {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        return try ReceiptVerifier(configuration: configuration)
    }

    /// The records of `input` through the batch's record writer, parsed.
    static func documentRecords(_ input: String, receipts: ReceiptVerifier?, jobs: Int = 2) throws -> [JSONObject] {
        let batch = BatchVerifier(
            verifier: try Verifier(configuration: .acceptingAnyApp()), jobs: jobs, receiptVerifier: receipts)
        let reader = try InputReader(source: MemorySource(Array(input.utf8), step: 1000))
        var output: [UInt8] = []
        let summary = try batch.verify(from: reader, format: RecordFormat(payload: .fields(["bundleId"]))) {
            output += $0
        }
        let records = try output.split(separator: 0x0A).map { try StrictJSON.parseObject($0) }
        #expect(summary.lines == records.count)
        return records
    }

    @Test func receiptsAndTokensGetTheirRecordsInInputOrder() throws {
        let token = try TestVectors.text("apple-real/real/transaction-production-1.jws")
        var lines: [String] = []
        var expected: [String] = []
        for seed in 0..<40 {
            if seed % 4 == 3 {
                lines.append(token)
                expected.append("transaction")
            } else if seed % 4 == 1 {
                lines.append(#"{"receipt-data":"\#(try Self.receipt(seed))"}"#)
                expected.append("receipt")
            } else {
                lines.append(try Self.receipt(seed))
                expected.append("receipt")
            }
        }
        let records = try Self.documentRecords(lines.joined(separator: "\n") + "\n", receipts: Self.receiptVerifier())
        #expect(records.map { $0["line"]?.int64Value } == (1...40).map { Int64($0) })
        #expect(records.map { $0["kind"]?.stringValue } == expected)
        #expect(records.allSatisfy { $0["status"]?.stringValue == "verified" })
        #expect(
            records[0]["payload"]?.objectValue?["bundleId"]?.stringValue
                == MintReceiptContent.sample(
                    receiptCreationDate: Self.created, inAppCount: 1
                ).bundleId)
    }

    @Test func aTamperedReceiptFailsAloneWithItsCode() throws {
        var bytes = try Self.signer.sign(
            MintReceiptContent.sample(receiptCreationDate: Self.created, inAppCount: 1), digest: .sha256)
        bytes[bytes.count - 1] ^= 1
        let tampered = String(decoding: Base64.encodeStandard(bytes), as: UTF8.self)
        let input = [try Self.receipt(1), tampered, try Self.receipt(2)].joined(separator: "\n") + "\n"
        let records = try Self.documentRecords(input, receipts: Self.receiptVerifier())
        #expect(records.map { $0["status"]?.stringValue } == ["verified", "rejected", "verified"])
        #expect(records[1]["kind"]?.stringValue == "receipt")
        #expect(records[1]["error"]?.objectValue?["code"]?.stringValue == "bad_signature")
    }

    @Test func withoutAReceiptVerifierReceiptsAreRejectedAndSaySo() throws {
        let input = [try Self.receipt(1), #"{"latest_receipt":"\#(try Self.receipt(2))"}"#].joined(separator: "\n")
        let records = try Self.documentRecords(input, receipts: nil)
        #expect(records.count == 2)
        for record in records {
            #expect(record["status"]?.stringValue == "rejected")
            #expect(record["kind"] == .null)
            let error = record["error"]?.objectValue
            #expect(error?["code"]?.stringValue == "malformed_token")
            #expect(error?["reason"]?.stringValue?.contains("no receipt verifier") == true)
        }
    }

    @Test func aReceiptMemberThatIsNotAStringIsNotAReceipt() throws {
        let records = try Self.documentRecords(#"{"receipt-data":[1]}"# + "\n", receipts: Self.receiptVerifier())
        #expect(records.count == 1)
        #expect(records[0]["kind"]?.stringValue == "receipt")
        #expect(records[0]["error"]?.objectValue?["code"]?.stringValue == "receipt_not_a_receipt")
    }

    @Test func aReceiptInAJWSMemberIsNotTakenForAReceipt() throws {
        // Only receipt-data and latest_receipt (or text outside the JWS members) hold receipts.
        let input = #"{"signedTransactionInfo":"\#(try Self.receipt(1))"}"# + "\n"
        let records = try Self.documentRecords(input, receipts: Self.receiptVerifier())
        #expect(records.count == 1)
        #expect(records[0]["kind"] == .null)
        #expect(records[0]["error"]?.objectValue?["code"]?.stringValue == "malformed_token")
    }

    @Test func typedResultsHoldTheVerifiedReceiptsBesideTheTokens() throws {
        let token = try TestVectors.text("apple-real/real/transaction-production-1.jws")
        let input = Array(([try Self.receipt(1), token, try Self.receipt(2)].joined(separator: "\n") + "\n").utf8)
        let batch = BatchVerifier(
            verifier: try Verifier(configuration: .acceptingAnyApp()), jobs: 2,
            receiptVerifier: try Self.receiptVerifier())
        var results: [InputResult] = []
        let summary = try batch.verify(from: try InputReader(source: MemorySource(input))) { results.append($0) }
        #expect(summary.kinds == ["receipt": 2, "transaction": 1])
        #expect(results.map(\.line) == [1, 2, 3])
        #expect(results.map { $0.receipt != nil } == [true, false, true])
        #expect(results[1].payload?.kind == .transaction)
        #expect(results[0].receipt?.receipt.bundleId == results[2].receipt?.receipt.bundleId)
    }
}
