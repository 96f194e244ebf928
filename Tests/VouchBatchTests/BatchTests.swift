import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchBatch

struct BatchTests {
    let verifier = try! Verifier(configuration: .acceptingAnyApp())

    func records(
        _ input: [UInt8], jobs: Int = 2, maximumLineLength: Int = InputOptions.defaultMaximumLineLength,
        step: Int = 1 << 16
    )
        throws -> [JSONObject]
    {
        let reader = try InputReader(
            source: MemorySource(input, step: step), options: InputOptions(maximumLineLength: maximumLineLength))
        var output: [UInt8] = []
        _ = try BatchVerifier(verifier: verifier, jobs: jobs).verify(
            from: reader, format: RecordFormat(payload: .none)
        ) {
            output += $0
        }
        return try output.split(separator: 0x0A).map { try StrictJSON.parseObject($0) }
    }

    @Test func resultsComeInInputOrderWithEveryTokenVerified() throws {
        let tokens = try TestVectors.realTokens().map(\.token)
        let many = Array(repeating: tokens, count: 5).flatMap { $0 }
        let results = BatchVerifier(verifier: verifier, jobs: 3).verifyAll(many)
        #expect(results.count == many.count)
        for (token, result) in zip(many, results) {
            let verified = try result.get()
            #expect(verified.kind == (try verifier.verify(token)).kind)
            #expect(verified.payload == (try verifier.verify(token)).payload)
        }
    }

    @Test func everyLineGetsOneRecordWhateverItHolds() throws {
        let token = try TestVectors.text("apple-real/real/transaction-production-1.jws")
        var input: [UInt8] = []
        input += Array(token.utf8) + [0x0A]  // 1 verified
        input += [0x0A]  // 2 empty
        input += Array(token.utf8) + [0x0D, 0x0A]  // 3 CRLF: verified
        input += Array("{\"signedTransactionInfo\":\"\(token)\"}\n".utf8)  // 4 JSON: verified
        input += [0x00, 0x00, 0x0A]  // 5 NUL bytes
        input += [0xFF, 0xFE, 0x80, 0x0A]  // 6 invalid UTF-8
        input += Array(repeating: UInt8(ascii: "A"), count: 9000) + [0x0A]  // 7 too long (limit 8192)
        input += Array("   \t\n".utf8)  // 8 whitespace only
        input += Array(token.utf8)  // 9 no final newline
        let records = try records(input, maximumLineLength: 8192, step: 333)
        #expect(records.map { $0["line"]?.int64Value } == (1...9).map { Int64($0) })
        let statuses = records.map { $0["status"]?.stringValue ?? "" }
        #expect(
            statuses == [
                "verified", "rejected", "verified", "verified", "rejected", "rejected", "rejected", "rejected",
                "verified",
            ])
        let codes = records.map { $0["error"]?.objectValue?["code"]?.stringValue }
        #expect(codes[1] == "empty_line")
        #expect(codes[4] == "malformed_token")
        #expect(codes[5] == "malformed_token")
        #expect(codes[6] == "line_too_long")
        #expect(codes[7] == "empty_line")
    }

    @Test func aLineWithoutNewlineFarOverTheLimitIsOneRecord() throws {
        let input = Array(repeating: UInt8(ascii: "x"), count: 3 << 20)
        let records = try records(input, maximumLineLength: 1 << 16)
        #expect(records.count == 1)
        #expect(records[0]["error"]?.objectValue?["code"] == "line_too_long")
        #expect(records[0]["error"]?.objectValue?["reason"]?.stringValue?.contains("3145728 bytes") == true)
    }

    @Test func gzipInputIsReadTransparently() throws {
        let tokens = try TestVectors.realTokens().map(\.token)
        let text = Array(tokens.joined(separator: "\n").utf8) + [0x0A]
        let compressed = try gzip(text)
        #expect(compressed.prefix(2) == [0x1F, 0x8B])
        let records = try records(compressed + compressed)  // two concatenated members
        #expect(records.count == 2 * tokens.count)
        #expect(records.allSatisfy { $0["status"] == "verified" })
    }

    @Test(arguments: [1, 2, 3, 5, 8, 13])
    func aTruncatedGzipStreamYieldsEveryCompleteLineBeforeTheCutThenFails(fourteenths: Int) throws {
        let tokens = try TestVectors.realTokens().map(\.token)
        let text = Array(tokens.joined(separator: "\n").utf8) + [0x0A]
        let compressed = try gzip(text)
        let cut = Array(compressed.prefix(compressed.count * fourteenths / 14))
        // What the cut stream holds, as gzip itself inflates it: its complete lines count.
        let complete = try shell("gzip -dc 2>/dev/null; true", input: cut).count { $0 == 0x0A }
        let reader = try InputReader(source: MemorySource(cut, step: 997))
        var lines: [Int] = []
        var failure: InputFailure? = nil
        do {
            _ = try BatchVerifier(verifier: verifier, jobs: 2).verify(from: reader) { lines.append($0.line) }
        } catch let error as InputFailure {
            failure = error
        }
        #expect(failure?.description == "the gzip stream is truncated")
        #expect(lines == Array(0..<complete).map { $0 + 1 })
    }

    func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        try shell("gzip -c", input: bytes)
    }

    /// What `command` writes to standard output given `bytes` on standard input.
    func shell(_ command: String, input bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The input is small enough for the pipe buffer plus gzip's own reading.
        let writer = input.fileHandleForWriting
        let data = Data(bytes)
        let thread = Thread {
            try? writer.write(contentsOf: data)
            try? writer.close()
        }
        thread.start()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return [UInt8](result)
    }

    @Test func payloadSelectionPicksDottedFields() throws {
        let token = try TestVectors.text("apple-real/real/notification-sandbox-21.jws")
        let verified = try verifier.verify(token)
        let json = VerificationRecord.json(
            for: .success(verified),
            payload: .fields(["notificationType", "data.bundleId", "data.signedTransactionInfo.price", "nope"]))
        let record = try StrictJSON.parseObject(json)
        let payload = try #require(record["payload"]?.objectValue)
        #expect(
            payload.members.map(\.name) == [
                "notificationType", "data.bundleId", "data.signedTransactionInfo.price", "nope",
            ])
        #expect(payload["notificationType"] == "DID_RENEW")
        #expect(payload["data.bundleId"] == "com.loki-project.loki-messenger")
        #expect(payload["data.signedTransactionInfo.price"] == .number("1990"))
        #expect(payload["nope"] == JSONValue.null)
    }

    @Test func aBatchLineOfOneMiBIsVerifiedAndOneByteMoreIsTooLong() throws {
        let token = try TestVectors.text("apple-real/real/transaction-production-1.jws")
        let limit = InputOptions.defaultMaximumLineLength
        #expect(limit == 1 << 20)
        let padded = Array(repeating: UInt8(ascii: " "), count: limit - token.utf8.count) + Array(token.utf8)
        let input = padded + [0x0A] + [UInt8(ascii: " ")] + padded + [0x0A]
        let reader = try InputReader(source: MemorySource(input))
        var output: [UInt8] = []
        let summary = try BatchVerifier(verifier: verifier, jobs: 1).verify(
            from: reader, format: RecordFormat(payload: .none)
        ) {
            output += $0
        }
        #expect(summary.lines == 2)
        #expect(summary.verified == 1)
        #expect(summary.errors == ["line_too_long": 1])
        let records = try output.split(separator: 0x0A).map { try StrictJSON.parseObject($0) }
        #expect(records[1]["error"]?.objectValue?["reason"]?.stringValue?.contains("\(limit + 1) bytes") == true)
    }
}
