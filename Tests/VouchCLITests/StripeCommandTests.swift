import Foundation
import Testing
import Vouch
import VouchMint
import VouchStripe

/// `vouch mint stripe` and `vouch stripe verify` run as a user runs them: secrets from a file,
/// records on stdout, the summary and mistakes on stderr, gzip, the tolerance.
@Suite(.serialized) struct StripeCommandTests {
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-stripe-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try! Data("  whsec_first  \n\nwhsec_second\n".utf8).write(to: url.appendingPathComponent("secrets"))
        try! Data("whsec_second\n".utf8).write(to: url.appendingPathComponent("second"))
        try! Data("whsec_wrong\n".utf8).write(to: url.appendingPathComponent("wrong"))
        try! Data("\n  \n".utf8).write(to: url.appendingPathComponent("empty"))
        return url
    }()

    static func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static func mint(_ arguments: [String] = []) throws -> [UInt8] {
        let result = try VouchBinary.run(
            ["mint", "stripe", "--stripe-secret-file", path("secrets"), "--date", "2025-09-01", "--count", "3"]
                + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return Array(result.stdout.utf8)
    }

    static func verify(_ input: [UInt8], secrets: String = "secrets", _ arguments: [String] = []) throws
        -> VouchBinary.Result
    {
        try VouchBinary.run(
            ["stripe", "verify", "--stripe-secret-file", path(secrets), "--payload", "type"] + arguments + ["-"],
            input: input)
    }

    static func codes(_ stdout: String) throws -> [String] {
        try stdout.split(separator: "\n").map { line in
            let record = try VouchBinary.object(String(line))
            return ((record["error"] as? [String: Any])?["code"] as? String) ?? (record["status"] as? String ?? "")
        }
    }

    @Test func mintedDeliveriesVerifyWithEitherSecretAndNotWithAnother() throws {
        let deliveries = try Self.mint()
        let lines = deliveries.split(separator: 0x0A).count
        #expect(lines >= 15)
        for secrets in ["secrets", "second"] {
            let result = try Self.verify(deliveries, secrets: secrets)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Self.codes(result.stdout) == Array(repeating: "verified", count: lines))
            #expect(result.stderr.contains("1 input, \(lines) deliveries: \(lines) verified, 0 rejected"))
        }
        let wrong = try Self.verify(deliveries, secrets: "wrong")
        #expect(wrong.status == 1)
        #expect(try Self.codes(wrong.stdout) == Array(repeating: "stripe_bad_signature", count: lines))
        #expect(wrong.stderr.contains("rejected by code: stripe_bad_signature \(lines)"))
        #expect(try Self.verify(deliveries, secrets: "wrong", ["--rejections-ok"]).status == 0)
    }

    @Test func aMissingOrEmptySecretFileIsNamed() throws {
        let missing = try VouchBinary.run(
            ["stripe", "verify", "--stripe-secret-file", Self.path("absent"), "-"], input: [])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("cannot read --stripe-secret-file"))
        let empty = try VouchBinary.run(
            ["stripe", "verify", "--stripe-secret-file", Self.path("empty"), "-"], input: [])
        #expect(empty.status == 65)
        #expect(empty.stderr.contains("holds no secret"))
        let none = try VouchBinary.run(["stripe", "verify", "-"], input: [])
        #expect(none.status == 64)
        #expect(none.stderr.contains("--stripe-secret-file"))
        let mint = try VouchBinary.run(["mint", "stripe"])
        #expect(mint.status == 64)
    }

    @Test func tamperedDeliveriesAreRejectedWithTheirCodes() throws {
        let output = String(decoding: try Self.mint(["--tamper", "all", "--count", "1"]), as: UTF8.self)
        let rows = output.split(separator: "\n").map { $0.split(separator: "\t") }
        #expect(rows.count == MintStripeDefect.allCases.count)
        let input = Array(rows.map { String($0[0]) + "\n" }.joined().utf8)
        let result = try Self.verify(input)
        #expect(result.status == 1)
        #expect(try Self.codes(result.stdout) == rows.map { String($0[1]) })
    }

    @Test func gzipAndPrettyPrintedDeliveriesAreRead() throws {
        let deliveries = try Self.mint(["--count", "1"])
        let file = Self.path("deliveries.jsonl")
        try Data(deliveries).write(to: URL(fileURLWithPath: file))
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-kf", file]
        try gzip.run()
        gzip.waitUntilExit()
        let result = try VouchBinary.run(
            ["stripe", "verify", "--stripe-secret-file", Self.path("secrets"), "--payload", "none", file + ".gz"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == deliveries.split(separator: 0x0A).count)
        // One delivery spread over lines, the headers form.
        let first = try StrictJSON.parseObject(deliveries.split(separator: 0x0A)[0])
        var pretty = JSONWriter()
        pretty.write(
            .object(["headers": ["Stripe-Signature": first["stripe-signature"]!], "body": first["body"]!]), indent: 2)
        let spread = try Self.verify(pretty.bytes + [0x0A])
        #expect(spread.status == 0, "\(spread.stderr)")
        #expect(try Self.codes(spread.stdout) == ["verified"])
    }

    @Test func theToleranceAppliesOnlyWhenAskedAtTheInstantGiven() throws {
        let deliveries = try Self.mint(["--count", "1", "--signed-at", "2025-09-01T00:00:00Z"])
        let count = deliveries.split(separator: 0x0A).count
        #expect(try Self.verify(deliveries).status == 0)
        let within = try Self.verify(deliveries, ["--tolerance", "300", "--at", "2025-09-01T00:05:00Z"])
        #expect(within.status == 0, "\(within.stderr)")
        let late = try Self.verify(deliveries, ["--tolerance", "300", "--at", "2025-09-01T00:05:01Z"])
        #expect(try Self.codes(late.stdout) == Array(repeating: "stripe_timestamp_out_of_tolerance", count: count))
        // Against now, months later.
        let now = try Self.verify(deliveries, ["--tolerance", "300"])
        #expect(try Self.codes(now.stdout) == Array(repeating: "stripe_timestamp_out_of_tolerance", count: count))
        #expect(try Self.verify(deliveries, ["--at", "2025-09-01"]).status == 64)
        #expect(try Self.verify(deliveries, ["--tolerance", "-1"]).status == 64)
        #expect(try Self.verify(deliveries, ["--tolerance", "soon"]).status == 64)
    }

    @Test func otherCommandsNameADeliveryAsStripes() throws {
        let delivery = Array(try Self.mint(["--count", "1"]).split(separator: 0x0A)[0]) + [0x0A]
        let verify = try VouchBinary.run(["verify", "--json", "-"], input: delivery)
        #expect(verify.status == 1)
        #expect(
            verify.stderr
                == "vouch: rejected: malformed_token: the input holds 1 Stripe webhook delivery:"
                + " 'vouch stripe verify --stripe-secret-file FILE' verifies it\n")
        #expect(verify.stdout.contains("the input holds a Stripe webhook delivery: 'vouch stripe verify' reads it"))
        let batch = try VouchBinary.run(["batch", "--payload", "none", "-"], input: delivery)
        #expect(try Self.codes(batch.stdout) == ["malformed_token"])
        #expect(batch.stdout.contains(#""kind":null"#))
        let inspect = try VouchBinary.run(["inspect", "-"], input: delivery)
        #expect(inspect.status == 1)
        #expect(inspect.stderr.contains("'vouch stripe verify' reads it"))
    }

    /// `vouch verify` on a file of deliveries says so once, with their count, not once each.
    @Test func verifyOnManyDeliveriesPointsToStripeVerifyOnce() throws {
        let deliveries = try Self.mint()
        let count = deliveries.split(separator: 0x0A).count
        let verify = try VouchBinary.run(["verify", "-"], input: deliveries)
        #expect(verify.status == 1)
        #expect(
            verify.stderr
                == "vouch: rejected: malformed_token: the input holds \(count) Stripe webhook deliveries:"
                + " 'vouch stripe verify --stripe-secret-file FILE' verifies them\n")
        #expect(verify.stdout.isEmpty)
    }

    /// A ledger command given deliveries but no secret names the option, once.
    @Test func deliveriesWithoutASecretNameTheOptionOnce() throws {
        let deliveries = try Self.mint()
        let count = deliveries.split(separator: 0x0A).count
        let result = try VouchBinary.run(["entitlements", "--at", "2025-09-01", "-"], input: deliveries)
        #expect(result.status == 1)
        #expect(
            result.stderr.hasPrefix(
                "vouch entitlements: \(count) Stripe webhook deliveries rejected, not used: give --stripe-secret-file"
                    + " FILE (the endpoint's signing secrets) to verify them\n"), "\(result.stderr)")
        #expect(result.stderr.contains("rejected by code: malformed_token \(count)"))
    }

    /// A secret file that cannot be read is named with the reason.
    @Test func anUnreadableSecretFileSaysWhy() throws {
        for command in [["stripe", "verify", "-"], ["entitlements", "-"], ["mint", "stripe"]] {
            let result = try VouchBinary.run(command + ["--stripe-secret-file", "/nonexistent/secrets"])
            #expect(result.status == 66)
            #expect(
                result.stderr
                    == "Error: cannot read --stripe-secret-file /nonexistent/secrets: No such file or directory\n",
                "\(command)")
        }
        let directory = try VouchBinary.run(["stripe", "verify", "--stripe-secret-file", "/tmp", "-"])
        #expect(directory.stderr == "Error: cannot read --stripe-secret-file /tmp: it is a directory\n")
        let tiers = try VouchBinary.run(["entitlements", "--tiers", "/nonexistent/tiers.json", "-"])
        #expect(tiers.status == 66)
        #expect(tiers.stderr == "Error: cannot read --tiers /nonexistent/tiers.json: No such file or directory\n")
    }
}
