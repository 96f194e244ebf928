import Foundation
import Testing
import VouchMint
import VouchTestSupport

@testable import Vouch
@testable import VouchBatch

/// App Store Server API response bodies and other JSON documents: every token found, by path,
/// cross-checked, in bounded memory.
struct DocumentTests {
    let verifier = try! Verifier(configuration: .acceptingAnyApp())

    /// A transaction and the renewal info of the same subscription, signed together by Apple.
    static let transaction = try! TestVectors.text("apple-real/real/transaction-sandbox-13.jws")
    static let renewal = try! TestVectors.text("apple-real/real/renewalInfo-sandbox-9.jws")
    /// A later transaction of the same subscription.
    static let renewed = try! TestVectors.text("apple-real/real/transaction-sandbox-14.jws")
    /// A transaction of another app's subscription.
    static let otherTransaction = try! TestVectors.text("apple-real/real/transaction-sandbox-1.jws")
    static let bundleId = "com.loki-project.loki-messenger"

    struct Record {
        let line: Int
        let document: Int
        let path: String?
        let showsDocument: Bool
        let code: String?
        let kind: String?
    }

    func read(
        _ text: String, options: InputOptions = InputOptions(), verifier: Verifier? = nil, step: Int = 1 << 16
    )
        throws -> [Record]
    {
        let reader = try InputReader(source: MemorySource(Array(text.utf8), step: step), options: options)
        var records: [Record] = []
        while let work = try reader.next() {
            for result in work.verify(with: verifier ?? self.verifier, kind: nil) {
                let code: String?
                let kind: String?
                switch result.result {
                case .success(let verified): (code, kind) = (nil, verified.kind)
                case .failure(let error): (code, kind) = (error.code.rawValue, nil)
                }
                records.append(
                    Record(
                        line: result.line, document: result.document, path: result.path,
                        showsDocument: result.showsDocument,
                        code: code, kind: kind))
            }
        }
        return records
    }

    static func tampered(_ token: String) -> String {
        var characters = Array(token)
        let index = characters.count - 10
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }

    static func statuses(transaction: String = transaction, renewal: String = renewal, bundleId: String = bundleId)
        -> String
    {
        """
        {"environment":"Sandbox","bundleId":"\(bundleId)","data":[{"subscriptionGroupIdentifier":"21440045","lastTransactions":[{"originalTransactionId":"2000001024993299","status":1,"signedTransactionInfo":"\(transaction)","signedRenewalInfo":"\(renewal)"}]}]}
        """
    }

    static func history(_ tokens: [String], pretty: Bool = false) -> String {
        let body: JSONValue = .object(
            JSONObject([
                .init("revision", "abc"), .init("bundleId", .string(bundleId)), .init("environment", "Sandbox"),
                .init("hasMore", .bool(false)), .init("signedTransactions", .array(tokens.map { .string($0) })),
            ]))
        let text = JSONWriter.string(body)
        guard pretty else { return text }
        let data = try! JSONSerialization.data(
            withJSONObject: JSONSerialization.jsonObject(with: Data(text.utf8)), options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Through the batch pipeline

    /// A mixed dump spanning several chunks: bare tokens, one-token lines, pretty-printed and
    /// concatenated pages, blank lines, a broken document over two lines, a document followed
    /// by other data on its line, a tampered token.
    static func mixedDump(repeats: Int) -> String {
        let page = history([transaction, renewed], pretty: true)
        var text = ""
        for round in 0..<repeats {
            text += transaction + "\n"
            text += #"{"signedTransactionInfo":"\#(renewed)"}"# + "\n"
            text += "\n"
            text += page + page + "\n"
            text += statuses() + "\n"
            if round % 3 == 0 { text += #"{"signedTransactions":["\#(transaction)","# + "\n" + "oops\n" }
            if round % 4 == 1 { text += #"{"signedPayload":"x"} trailing"# + "\n" }
            text += tampered(otherTransaction) + "\n"
        }
        return text
    }

    /// The records one sequential reader gives, verified document by document.
    func sequentialRecords(_ text: String, step: Int) throws -> [UInt8] {
        let reader = try InputReader(source: MemorySource(Array(text.utf8), step: step))
        let format = RecordFormat()
        var writer = JSONWriter()
        while let work = try reader.next() {
            for result in work.verify(with: verifier, kind: nil) {
                format.write(result, into: &writer)
            }
        }
        return writer.bytes
    }

    /// The workers take turns at one reader: whatever the number of workers, the records are
    /// byte for byte those of one reader read from start to end.
    @Test(arguments: [1, 2, 5])
    func theBatchPipelineWritesWhatOneSequentialReaderGives(jobs: Int) throws {
        let text = Self.mixedDump(repeats: 60)
        let expected = try sequentialRecords(text, step: 997)
        let reader = try InputReader(source: MemorySource(Array(text.utf8), step: 997))
        var output: [UInt8] = []
        var chunks = 0
        let summary = try BatchVerifier(verifier: verifier, jobs: jobs).verify(from: reader, format: RecordFormat()) {
            output += $0
            chunks += 1
        }
        #expect(chunks > 2, "the dump must span several chunks")
        #expect(output.count == expected.count)
        #expect(output == expected)
        let lines = output.split(separator: 0x0A)
        #expect(summary.verified + summary.rejected == lines.count)
        #expect(summary.verified > 0 && summary.rejected > 0)
    }

    // MARK: Response shapes

    @Test func aTransactionHistoryPageVerifiesEveryTokenWithItsPath() throws {
        let records = try read(Self.history([Self.transaction, Self.renewed, Self.transaction]) + "\n")
        #expect(records.map(\.path) == ["signedTransactions[0]", "signedTransactions[1]", "signedTransactions[2]"])
        #expect(
            records.allSatisfy {
                $0.code == nil && $0.kind == "transaction" && $0.line == 1 && $0.document == 1 && $0.showsDocument
            })
    }

    @Test func prettyPrintedConcatenatedPagesGiveEachTokenItsLineAndDocument() throws {
        let page = Self.history([Self.transaction, Self.renewed], pretty: true)
        let records = try read(page + "\n" + page + page + "\n", step: 7)
        #expect(records.count == 6)
        #expect(records.allSatisfy { $0.code == nil })
        #expect(records.map(\.document) == [1, 1, 2, 2, 3, 3])
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.firstIndex { $0.contains(Self.transaction) }) + 1
        #expect(records[0].line == first)
        #expect(records[1].line == first + 1)
        #expect(records[2].line == lines.count + first)
        // The third page starts on the line where the second ends.
        #expect(records[4].line == 2 * lines.count - 1 + first)
    }

    @Test func subscriptionStatusesVerifyTransactionAndRenewalInfoOfEachItem() throws {
        let records = try read(Self.statuses())
        #expect(
            records.map(\.path) == [
                "data[0].lastTransactions[0].signedTransactionInfo", "data[0].lastTransactions[0].signedRenewalInfo",
            ])
        #expect(records.map(\.kind) == ["transaction", "renewal-info"])
    }

    @Test func aTamperedRenewalInfoIsRejectedWithItsPathBesideItsTransaction() throws {
        let records = try read(Self.statuses(renewal: Self.tampered(Self.renewal)))
        #expect(records.map(\.code) == [nil, "bad_signature"])
        #expect(records[1].path == "data[0].lastTransactions[0].signedRenewalInfo")
    }

    @Test func aTransactionAndRenewalInfoOfDifferentSubscriptionsAreBothRejected() throws {
        let records = try read(Self.statuses(transaction: Self.otherTransaction, bundleId: "br.com.goldies.app"))
        #expect(records.map(\.code) == ["pair_mismatch", "pair_mismatch"])
    }

    @Test func aTokenWhoseBundleIdDiffersFromTheResponsesIsRejected() throws {
        let records = try read(Self.statuses(bundleId: "com.example.other"))
        // The renewal info names no bundleId; the transaction does.
        #expect(records.map(\.code) == ["wrong_bundle_id", nil])
    }

    @Test func theResponsesMembersCountWhereverTheyComeInTheDocument() throws {
        let body = #"{"signedTransactions":["\#(Self.transaction)"],"environment":"Production"}"#
        #expect(try read(body).map(\.code) == ["wrong_environment"])
    }

    @Test func notificationHistoryVerifiesEachSignedPayload() throws {
        let notification = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")
        let body =
            #"{"notificationHistory":[{"signedPayload":"\#(notification)"},{"signedPayload":"\#(notification)"}],"hasMore":false,"paginationToken":"x"}"#
        let records = try read(body)
        #expect(
            records.map(\.path) == ["notificationHistory[0].signedPayload", "notificationHistory[1].signedPayload"])
        #expect(records.allSatisfy { $0.kind == "notification" })
    }

    @Test func anObjectWithTwoSignedMembersHasBothVerifiedNoneSkipped() throws {
        let records = try read(#"{"signedTransactionInfo":"\#(Self.transaction)","signedRenewalInfo":"garbage"}"#)
        #expect(records.map(\.code) == [nil, "malformed_token"])
        #expect(records.map(\.path) == ["signedTransactionInfo", "signedRenewalInfo"])
    }

    @Test func arraysOfTokensAndOfObjectsAreRead() throws {
        let tokens = try read(#"["\#(Self.transaction)","\#(Self.renewal)"]"#)
        #expect(tokens.map(\.path) == ["[0]", "[1]"])
        #expect(tokens.allSatisfy { $0.code == nil })
        let objects = try read(
            #"[{"signedPayload":"\#(Self.transaction)"},{"signedTransactionInfo":"\#(Self.otherTransaction)"}]"#)
        #expect(objects.map(\.path) == ["[0].signedPayload", "[1].signedTransactionInfo"])
        #expect(objects.allSatisfy { $0.code == nil })
    }

    @Test func aFieldPathWithWildcardsPicksTokensOfAnyShape() throws {
        let body =
            #"{"items":[{"jws":"\#(Self.transaction)","note":"x"},{"jws":"\#(Self.renewal)"}],"signedPayload":"ignored"}"#
        let records = try read(body, options: InputOptions(field: "items[].jws"))
        #expect(records.map(\.path) == ["items[0].jws", "items[1].jws"])
        #expect(records.allSatisfy { $0.code == nil })
    }

    @Test func aLineHoldingOneObjectWithOneTokenKeepsTheRecordShapeOfALine() throws {
        let records = try read(#"{"signedPayload":"\#(Self.transaction)"}"# + "\n" + Self.transaction + "\n")
        #expect(records.map(\.path) == [nil, nil])
        #expect(records.map(\.showsDocument) == [false, false])
        #expect(records.map(\.line) == [1, 2])
        #expect(records.map(\.document) == [1, 2])
    }

    // MARK: Minted

    static let signer = try! MintSigner(authority: MintAuthority.load(from: TestVectors.url("minted/ca")))

    static func mintedVerifier() throws -> Verifier {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try TestVectors.bytes("minted/ca/root.der")]
        return try Verifier(configuration: configuration)
    }

    static func minted(_ kind: MintKind, _ changes: [String: JSONValue]) throws -> String {
        var payload = try MintGenerator(seed: 3, date: Date(timeIntervalSince1970: 1_748_779_200)).payload(
            kind, index: 0, signer: signer)
        for (name, value) in changes { payload[name] = value }
        return try signer.sign(payload: payload)
    }

    @Test func mintedPairsAgreeOrAreRejectedForTheirEnvironment() throws {
        let verifier = try Self.mintedVerifier()
        let transaction = try Self.minted(
            .transaction, ["originalTransactionId": "42", "environment": "Sandbox", "bundleId": "com.example.app"])
        let renewal = try Self.minted(.renewalInfo, ["originalTransactionId": "42", "environment": "Sandbox"])
        let production = try Self.minted(.renewalInfo, ["originalTransactionId": "42", "environment": "Production"])
        let body = { (renewal: String) in
            #"{"bundleId":"com.example.app","data":[{"lastTransactions":[{"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"}]}]}"#
        }
        #expect(try read(body(renewal), verifier: verifier).map(\.code) == [nil, nil])
        #expect(try read(body(production), verifier: verifier).map(\.code) == ["pair_mismatch", "pair_mismatch"])
    }

    @Test func mintedResponsesOfEveryShapeVerifyWithTheirPaths() throws {
        let verifier = try Self.mintedVerifier()
        let app = ["bundleId": JSONValue.string("com.example.app"), "environment": "Production"]
        let transactions = try (0..<3).map { _ in try Self.minted(.transaction, app) }
        let history =
            #"{"revision":"r","bundleId":"com.example.app","environment":"Production","hasMore":false,"signedTransactions":[\#(transactions.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        #expect(try read(history, verifier: verifier).map(\.code) == [nil, nil, nil])
        let notification = try Self.minted(.notification, [:])
        let notifications = #"{"notificationHistory":[{"signedPayload":"\#(notification)"}],"hasMore":false}"#
        #expect(try read(notifications, verifier: verifier).map(\.kind) == ["notification"])
        // The same history, its response naming another app: every transaction is rejected.
        let other = history.replacingOccurrences(
            of: #""bundleId":"com.example.app""#, with: #""bundleId":"com.example.other""#)
        #expect(
            try read(other, verifier: verifier).map(\.code) == [
                "wrong_bundle_id", "wrong_bundle_id", "wrong_bundle_id",
            ])
    }

    // MARK: Hostile documents

    @Test func somethingNeitherJSONNorATokenIsOneRejectedRecordPerLine() throws {
        let records = try read("{\"signedPayload\": \n  \"\(Self.transaction)\",\n  oops\n}\n\(Self.transaction)\n")
        #expect(
            records.map(\.code) == ["malformed_token", "malformed_token", "malformed_token", "malformed_token", nil])
        #expect(records.map(\.line) == [1, 2, 3, 4, 5])
    }

    @Test func aDocumentNestedTooDeepIsOneRecordOfItsOwn() throws {
        let deep = #"{"a":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        let records = try read(deep + "\n" + Self.transaction)
        #expect(records.map(\.code) == ["json_too_deep", nil])
    }

    @Test func aHugeStringIsStreamedAndATooLargeTokenRejected() throws {
        let huge = String(repeating: "A", count: 3 << 20)
        let options = InputOptions(documentBuffer: 64 * 1024)
        let records = try read(
            #"{"note":"\#(huge)","signedTransactions":["\#(Self.transaction)","\#(huge)"]}"#, options: options,
            step: 4093)
        #expect(records.map(\.code) == [nil, "token_too_large"])
        #expect(records.map(\.path) == ["signedTransactions[0]", "signedTransactions[1]"])
    }

    @Test func aStreamedDocumentNamingItsBundleIdAfterItsTokensSaysSo() throws {
        let tokens = Array(repeating: Self.transaction, count: 30)
        let body =
            #"{"signedTransactions":[\#(tokens.map { "\"\($0)\"" }.joined(separator: ","))],"bundleId":"\#(Self.bundleId)"}"#
        let streamed = try read(body, options: InputOptions(documentBuffer: 16 * 1024))
        #expect(streamed.count == 31)
        #expect(streamed.prefix(30).allSatisfy { $0.code == nil })
        #expect(streamed.last?.code == "document_too_large")
        #expect(streamed.last?.path == "bundleId")
        // Within the buffer the same document is cross-checked as a whole.
        let held = try read(body)
        #expect(held.count == 30)
        #expect(held.allSatisfy { $0.code == nil })
    }

    /// An object's own members and the tokens nested in it, in a document over several lines.
    static func membersAroundAnArray(pairing renewal: String = renewal) -> String {
        #"{"signedTransactionInfo":"\#(transaction)","signedTransactions":["\#(renewed)","\#(otherTransaction)"],"#
            + "\n" + #""signedRenewalInfo":"\#(renewal)"}"#
    }

    @Test func aDocumentsRecordsComeInItsOrderThoughAnObjectsMembersAreCheckedTogether() throws {
        let records = try read(Self.membersAroundAnArray())
        #expect(
            records.map(\.path) == [
                "signedTransactionInfo", "signedTransactions[0]", "signedTransactions[1]", "signedRenewalInfo",
            ])
        #expect(records.map(\.line) == [1, 1, 1, 2])
        #expect(records.map(\.code) == [nil, nil, nil, nil])
        // The transaction and the renewal info around the array are still one pair.
        let other = Self.membersAroundAnArray().replacingOccurrences(
            of: #"{"signedTransactionInfo":"\#(Self.transaction)""#,
            with: #"{"signedTransactionInfo":"\#(Self.otherTransaction)""#)
        #expect(try read(other).map(\.code) == ["pair_mismatch", nil, nil, "pair_mismatch"])
    }

    @Test(arguments: [1, 7, 4093])
    func aStreamedDocumentsRecordsComeInItsOrder(step: Int) throws {
        let options = InputOptions(documentBuffer: 4 * 1024)
        let body = Self.membersAroundAnArray()
        let records = try read(body, options: options, step: step)
        #expect(
            records.map(\.path) == [
                "signedTransactionInfo", "signedTransactions[0]", "signedTransactions[1]", "signedRenewalInfo",
            ])
        #expect(records.map(\.line) == [1, 1, 1, 2])
        #expect(records.map(\.code) == [nil, nil, nil, nil])
    }

    @Test func aDocumentOutgrowingTheBufferAfterSomeTokensKeepsItsOrder() throws {
        // The buffer fills after the object's first member and a nested token were found.
        let buffer = Self.transaction.utf8.count + Self.renewed.utf8.count + 1_000
        let note = String(repeating: "n", count: 2 * buffer)
        let body =
            #"{"signedTransactionInfo":"\#(Self.transaction)","signedTransactions":["\#(Self.renewed)"],"#
            + "\n" + #""note":"\#(note)","signedRenewalInfo":"\#(Self.renewal)"}"#
        let records = try read(body, options: InputOptions(documentBuffer: buffer), step: 997)
        #expect(records.map(\.path) == ["signedTransactionInfo", "signedTransactions[0]", "signedRenewalInfo"])
        #expect(records.map(\.line) == [1, 1, 2])
        #expect(records.map(\.code) == [nil, nil, nil])
    }

    @Test func aDocumentOutgrowingTheBufferInsideANestedObjectKeepsItsOrder() throws {
        // The buffer fills while an outer object and the object nested in it each hold a member.
        let buffer = Self.transaction.utf8.count + Self.renewed.utf8.count + 1_000
        let note = String(repeating: "n", count: 2 * buffer)
        let body =
            #"{"signedTransactionInfo":"\#(Self.transaction)","items":[{"signedTransactionInfo":"\#(Self.renewed)","#
            + "\n" + #""note":"\#(note)"}],"signedRenewalInfo":"\#(Self.renewal)"}"#
        for step in [1, 997] {
            let records = try read(body, options: InputOptions(documentBuffer: buffer), step: step)
            #expect(
                records.map(\.path) == ["signedTransactionInfo", "items[0].signedTransactionInfo", "signedRenewalInfo"])
            #expect(records.map(\.line) == [1, 1, 2])
            #expect(records.map(\.code) == [nil, nil, nil])
        }
    }

    @Test func duplicateMembersRejectTheWholeDocument() throws {
        let body = #"{"signedPayload":"\#(Self.transaction)","signedPayload":"\#(Self.otherTransaction)"}"#
        #expect(try read(body).map(\.code) == ["malformed_token"])
    }

    @Test func aBrokenDocumentOverManyLinesGetsOneRecordNotOnePerLine() throws {
        let records = try read("[\n" + String(repeating: "\n", count: 1000) + "x\n")
        #expect(records.map(\.code) == ["malformed_token", "malformed_token"])
        #expect(records.map(\.line) == [1, 1002])
    }
}
