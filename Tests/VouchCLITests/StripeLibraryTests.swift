import Foundation
import Testing
import Vouch

/// Vouch's verdicts on Stripe deliveries against Stripe's own Python library
/// (`stripe.Webhook.construct_event`, installed by `scripts/stripe-python` into a virtual
/// environment under .build/): every delivery Vouch accepts, Stripe's library accepts with the
/// same secret and tolerance, and every tampered one Vouch refuses, it refuses for the same
/// reason. A library that cannot be installed fails the test.
@Suite(.serialized) struct StripeLibraryTests {
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-stripe-py-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in [
            ("both", "whsec_old\nwhsec_new\n"), ("old", "whsec_old\n"), ("new", "whsec_new\n"),
            ("other", "whsec_other\n"),
        ] {
            try! Data(text.utf8).write(to: url.appendingPathComponent(name))
        }
        return url
    }()

    /// What Stripe's library says for each Vouch code.
    static let messages = [
        "stripe_bad_signature": "No signatures found matching the expected signature for payload",
        "stripe_no_signature": "No signatures found with expected scheme v1",
        "stripe_malformed_header": "Unable to extract timestamp and signatures from header",
        "stripe_timestamp_out_of_tolerance": "Timestamp outside the tolerance zone",
    ]

    struct Case {
        var delivery: String
        var secret: String
        var tolerance: Int?
        /// Vouch's verdict: `verified` or the code.
        var vouch: String
    }

    static func lines(_ arguments: [String]) throws -> [String] {
        let result = try VouchBinary.run(
            ["mint", "stripe", "--stripe-secret-file", folder.appendingPathComponent("both").path] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    /// Vouch's verdicts on `deliveries` with the secret `secret` (a file name) and `tolerance`.
    static func cases(_ deliveries: [String], secret: String, tolerance: Int? = nil) throws -> [Case] {
        let result = try VouchBinary.run(
            [
                "stripe", "verify", "--payload", "none", "--stripe-secret-file",
                folder.appendingPathComponent(secret).path,
            ]
                + (tolerance.map { ["--tolerance", String($0)] } ?? []) + ["-"],
            input: Array(deliveries.map { $0 + "\n" }.joined().utf8))
        let verdicts = try result.stdout.split(separator: "\n").map { line in
            let record = try VouchBinary.object(String(line))
            return ((record["error"] as? [String: Any])?["code"] as? String) ?? (record["status"] as? String ?? "")
        }
        try #require(verdicts.count == deliveries.count, "\(result.stderr)")
        return zip(deliveries, verdicts).map {
            Case(delivery: $0, secret: "whsec_" + secret, tolerance: tolerance, vouch: $1)
        }
    }

    @Test func stripesLibraryAgreesWithEveryVerdict() throws {
        let now = Int64(Date().timeIntervalSince1970)
        func instant(_ seconds: Int64) -> String {
            CivilTime(milliseconds: seconds * 1000).iso8601(fraction: false)
        }
        var cases: [Case] = []
        // Stored deliveries of every story and shape, signed with two secrets: either one alone
        // verifies (several v1, one right), test mode's v0 ignored; another secret does not.
        for api in ["2025-03-31.basil", "2024-06-20"] {
            for livemode in [[], ["--livemode"]] {
                let minted = try Self.lines(["--count", "4", "--api-version", api, "--seed", api] + livemode)
                cases += try Self.cases(minted, secret: "new") + Self.cases(minted, secret: "old")
                cases += try Self.cases(Array(minted.prefix(3)), secret: "other")
            }
        }
        // Signed just now: within five minutes; signed an hour ago: outside them.
        cases += try Self.cases(
            Self.lines(["--count", "2", "--signed-at", instant(now - 5)]), secret: "new", tolerance: 300)
        cases += try Self.cases(
            Self.lines(["--count", "2", "--signed-at", instant(now - 3600)]), secret: "new", tolerance: 300)
        // Tampered: a body byte, another secret, the timestamp, no v1, a malformed header.
        cases += try Self.cases(
            Self.lines(["--count", "2", "--tamper", "body,secret,timestamp,no-v1,header"]), secret: "new")

        let verdicts = Dictionary(grouping: cases, by: \.vouch).mapValues(\.count)
        #expect(verdicts["verified", default: 0] >= 40)
        for code in Self.messages.keys { #expect(verdicts[code, default: 0] > 0, "no case of \(code)") }

        let file = Self.folder.appendingPathComponent("cases.jsonl")
        let lines = cases.map { item in
            #"{"delivery":\#(item.delivery),"secret":"\#(item.secret)","tolerance":\#(item.tolerance.map(String.init) ?? "null")}"#
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        let process = Process()
        process.executableURL = VouchBinary.packageRoot.appendingPathComponent("scripts/stripe-python")
        process.arguments = [file.path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "scripts/stripe-python failed: \(stderr)")
        let answers = stdout.split(separator: "\n").map(String.init)
        try #require(answers.count == cases.count, "\(stderr)")
        for (item, answer) in zip(cases, answers) {
            if item.vouch == "verified" {
                #expect(
                    answer == "accepted",
                    "Stripe's library refused what Vouch accepted: \(answer) \(item.delivery.prefix(120))")
            } else {
                let message = try #require(Self.messages[item.vouch], "\(item.vouch)")
                #expect(
                    answer.hasPrefix("refused: " + message), "Vouch said \(item.vouch), Stripe's library: \(answer)")
            }
        }
    }
}
