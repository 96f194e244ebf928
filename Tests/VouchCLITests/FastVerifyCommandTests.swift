import Foundation
import Testing

/// `vouch batch --no-fast-verify`: the generic path only, with the records of the default.
struct FastVerifyCommandTests {
    @Test func noFastVerifyWritesTheSameRecordsAsTheDefaultPastTheThreshold() throws {
        // One leaf key well past the 1,000 tokens that switch the default to its table, with
        // tampered tokens among the good ones.
        let good = try VouchBinary.text("minted/transaction.txt").split(separator: "\n").map(String.init)
        let tampered = try VouchBinary.text("minted/tampered.tsv").split(separator: "\n").map {
            String($0.split(separator: "\t")[0])
        }
        var lines: [String] = []
        for round in 0..<300 {
            lines += good
            lines.append(tampered[round % tampered.count])
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-fast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("lines.jwsl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)

        let root = VouchBinary.vector("minted/ca/root.der")
        let fast = try VouchBinary.run(["batch", "--jobs", "2", "--root", root, file.path])
        let generic = try VouchBinary.run(["batch", "--jobs", "2", "--no-fast-verify", "--root", root, file.path])
        #expect(fast.status == 1)
        #expect(generic.status == 1)
        #expect(fast.stdout == generic.stdout)
        let records = fast.stdout.split(separator: "\n")
        #expect(records.count == lines.count)
        #expect(records.filter { $0.contains("\"status\":\"verified\"") }.count == 300 * good.count)
    }

    @Test func noFastVerifyIsListedInBatchHelp() throws {
        let help = try VouchBinary.run(["batch", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--no-fast-verify"))
    }
}
