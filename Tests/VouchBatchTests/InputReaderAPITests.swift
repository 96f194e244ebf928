import Foundation
import Testing
import Vouch
import VouchBatch
import VouchTestSupport

/// What a server reaches through the public API alone (no `@testable`): an App Store Server API
/// response, a webhook body or an export read from memory, a file or a file handle.
struct InputReaderAPITests {
    let verifier = try! Verifier(configuration: .acceptingAnyApp())

    static func historyPage() throws -> String {
        let first = try TestVectors.text("apple-real/real/transaction-sandbox-13.jws")
        let second = try TestVectors.text("apple-real/real/transaction-sandbox-14.jws")
        return """
            {
              "revision": "1",
              "bundleId": "com.loki-project.loki-messenger",
              "environment": "Sandbox",
              "signedTransactions": [
                "\(first)",
                "\(second)"
              ]
            }

            """
    }

    func results(_ reader: InputReader) throws -> [InputResult] {
        var results: [InputResult] = []
        _ = try BatchVerifier(verifier: verifier, jobs: 2).verify(from: reader) { results.append($0) }
        return results
    }

    @Test func aResponseBodyInMemoryGivesEachTokenWithItsPath() throws {
        let results = try results(try InputReader(bytes: Array(try Self.historyPage().utf8)))
        #expect(results.map(\.path) == ["signedTransactions[0]", "signedTransactions[1]"])
        #expect(results.map(\.line) == [6, 7])
        #expect(results.allSatisfy { $0.payload?.kind == .transaction })
        #expect(
            results.map { $0.payload?.payload["bundleId"] }
                == Array(repeating: "com.loki-project.loki-messenger", count: 2))
    }

    @Test func aFileAndAFileHandleReadAsTheBytesDo() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-input-\(UUID().uuidString).json")
        try Data(try Self.historyPage().utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let fromBytes = try results(try InputReader(bytes: Array(try Self.historyPage().utf8)))
        let fromPath = try results(try InputReader(path: url.path))
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let fromHandle = try results(try InputReader(fileHandle: handle))
        for other in [fromPath, fromHandle] {
            #expect(other.map(\.path) == fromBytes.map(\.path))
            #expect(other.map { $0.payload?.payload } == fromBytes.map { $0.payload?.payload })
        }
    }

    @Test func aMissingFileOrADirectoryIsAnInputFailureNamingIt() throws {
        #expect {
            try InputReader(path: "/nonexistent/export.json")
        } throws: { error in
            (error as? InputFailure)?.description == "cannot read /nonexistent/export.json: No such file or directory"
        }
        #expect {
            try InputReader(path: FileManager.default.temporaryDirectory.path)
        } throws: { error in
            (error as? InputFailure)?.description.hasSuffix(": it is a directory") == true
        }
    }

    @Test func aResponseNamingAnotherAppRejectsItsTokens() throws {
        let page = try Self.historyPage().replacingOccurrences(
            of: "com.loki-project.loki-messenger", with: "com.example.other")
        let results = try results(try InputReader(bytes: Array(page.utf8)))
        #expect(results.count == 2)
        for result in results {
            guard case .failure(let error) = result.result else {
                Issue.record("a token of another app's response verified")
                continue
            }
            #expect(error.code == .wrongBundleId)
        }
    }
}
