import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchBatch

/// One verifier shared by many threads, as the batch driver shares it: every thread sees the
/// results a single thread sees, while the chain cache fills, hits and evicts. Run under
/// ThreadSanitizer by `scripts/sanitize thread`.
struct ConcurrencyTests {
    /// Real tokens, plus forgeries whose headers differ by `kid` (each a new cache entry, each a
    /// bad signature): more distinct headers than the cache holds, so entries are evicted while
    /// other threads look them up.
    static func mixedTokens() throws -> [String] {
        let real = try TestVectors.realTokens().map(\.token)
        let forged = try (0..<40).map { index in
            try TokenParts.replacingHeader(of: real[index % real.count]) { $0["kid"] = .string("key-\(index)") }
        }
        return real + forged + ["not a token", "", String(repeating: "A", count: 70_000)]
    }

    static func outcome(_ result: Result<VerifiedPayload, VerificationError>) -> String {
        switch result {
        case .success(let verified): "\(verified.kind) \(JSONWriter.string(.object(verified.payload)).count)"
        case .failure(let error): error.code.rawValue
        }
    }

    @Test func oneVerifierSharedByEightThreadsGivesEachTheSingleThreadedResults() throws {
        let tokens = try Self.mixedTokens()
        let single = try Verifier(configuration: .acceptingAnyApp())
        let expected = tokens.map { token in
            Self.outcome(Result { () throws(VerificationError) in try single.verify(token) })
        }
        let shared = try Verifier(configuration: .acceptingAnyApp())
        let mismatches = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<(tokens.count * 3) {
                let index = (step * 7 + thread * 13) % tokens.count
                let outcome = Self.outcome(Result { () throws(VerificationError) in try shared.verify(tokens[index]) })
                if outcome != expected[index] {
                    mismatches.withLock {
                        $0.append("thread \(thread), token \(index): \(outcome), expected \(expected[index])")
                    }
                }
            }
        }
        #expect(mismatches.withLock { $0 } == [])
        #expect(expected.filter { $0 == "bad_signature" }.count == 40)
    }

    @Test func aBatchOnEightThreadsGivesEveryLineItsRecordInOrder() throws {
        let tokens = try Self.mixedTokens()
        let lines = Array(repeating: tokens, count: 4).flatMap { $0 }
        let input = Array(lines.joined(separator: "\n").utf8) + [0x0A]
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        let reader = try InputReader(source: MemorySource(input, step: 4093))
        var output: [UInt8] = []
        let summary = try BatchVerifier(verifier: verifier, jobs: 8).verify(
            from: reader, format: RecordFormat(payload: .none)
        ) {
            output += $0
        }
        #expect(summary.lines == lines.count)
        let records = try output.split(separator: 0x0A).map { try StrictJSON.parseObject($0) }
        #expect(records.map { $0["line"]?.int64Value } == (1...lines.count).map { Int64($0) })
        for (record, line) in zip(records, lines) {
            let expected = line.isEmpty ? "empty_line" : verifier.rejection(line)?.code.rawValue
            #expect(record["error"]?.objectValue?["code"]?.stringValue == expected)
        }
    }
}
