import Foundation
import Vouch
import VouchBatch
import VouchMint
import VouchStripe

// Stripe deliveries verified per second against OpenSSL's own HMAC-SHA256 rate for the same
// signed text (`t.body`): a minted subscription event, its body padded through its metadata to
// each size, signed with one secret.
//
// - `StripeWebhookVerifier.verify` on one thread: the header read, one HMAC, the comparison,
//   the body parsed strictly into a `StripeEvent`;
// - `BatchVerifier` over stored deliveries (`InputReader`, the whole pipeline, records
//   written) on every thread;
// - `openssl speed -elapsed -mr -seconds 1 -bytes N -hmac sha256` and `-evp sha256`, one thread.

enum StripeBench {
    static let sizes = [1024, 4096, 16_384, 65_536]
    static let secret = "whsec_bench"

    /// A delivery whose body is about `size` bytes.
    static func delivery(size: Int) throws -> StripeDelivery {
        var generator = MintStripe(seed: 1, date: Date(timeIntervalSince1970: 1_756_684_800))
        generator.story = .renewing
        var event = generator.subscription(0).events[0]
        let signer = try MintStripeSigner(secrets: [secret])
        let base = try signer.delivery(event).body.count
        if size > base {
            var data = event.json["data"]!.objectValue!
            var object = data["object"]!.objectValue!
            var metadata = object["metadata"]!.objectValue!
            metadata["padding"] = .string(String(repeating: "x", count: size - base - 20))
            object["metadata"] = .object(metadata)
            data["object"] = .object(object)
            event.json["data"] = .object(data)
        }
        return try signer.delivery(event)
    }

    /// `openssl speed … -bytes N ALGORITHM` in operations per second, when the tool is installed.
    static func opensslRate(_ algorithm: String, bytes: Int) -> Double? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-bench-hmac-\(getpid())")
        defer { try? FileManager.default.removeItem(at: output) }
        let status = run(
            "openssl speed -elapsed -mr -seconds 1 -bytes \(bytes) \(algorithm) > \(shellQuote(output.path)) 2>/dev/null"
        ).status
        guard status == 0, let text = try? String(contentsOf: output, encoding: .utf8) else { return nil }
        // "+F:9:hmac(sha256):1572375000.00": bytes per second.
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("+F:") }),
            let perSecond = line.split(separator: ":").last.flatMap({ Double($0) })
        else { return nil }
        return perSecond / Double(bytes)
    }

    static func report(jobs: Int, scratch: URL) throws -> String {
        var rows: [String] = []
        var configuration = StripeWebhookVerifier.Configuration(secrets: [secret])
        configuration.tolerance = nil
        let verifier = try StripeWebhookVerifier(configuration: configuration)
        for size in sizes {
            let delivery = try delivery(size: size)
            let signed = delivery.body.count + String(delivery.signature.prefix { $0 != "," }).count - 1
            log("stripe: \(delivery.body.count)-byte bodies …")
            // One thread, the library call.
            var count = 0
            let start = now()
            while now() - start < 1.5 {
                for _ in 0..<64 { _ = try verifier.verify(delivery) }
                count += 64
            }
            let single = Double(count) / (now() - start)
            // Every thread, stored deliveries through the input layer, records written.
            let lines = max(2000, Int(single * 2))
            let file = scratch.appendingPathComponent("stripe-\(size).jsonl")
            let line = delivery.storedJSON + [0x0A]
            precondition(FileManager.default.createFile(atPath: file.path, contents: nil), "cannot create \(file.path)")
            let handle = try FileHandle(forWritingTo: file)
            for _ in 0..<lines { handle.write(Data(line)) }
            try handle.close()
            var batch = BatchVerifier(verifier: try Verifier(configuration: .acceptingAnyApp()), jobs: jobs)
            batch.stripeVerifier = verifier
            let batchStart = now()
            let summary = try batch.verify(
                from: try InputReader(path: file.path), options: .init(stripeDeliveriesOnly: true),
                format: RecordFormat(payload: .none), write: { _ in })
            let batchRate = Double(summary.verified) / (now() - batchStart)
            precondition(summary.verified == lines, "every delivery verifies")
            try? FileManager.default.removeItem(at: file)
            let hmac = opensslRate("-hmac sha256", bytes: signed)
            let sha = opensslRate("-evp sha256", bytes: signed)
            func cell(_ rate: Double?) -> String { rate.map { String(format: "%.0f", $0) } ?? "(no openssl)" }
            func ratio(_ rate: Double?) -> String { rate.map { String(format: "%.2f", single / $0) } ?? "" }
            rows.append(
                "| \(delivery.body.count) | \(cell(single)) | \(cell(batchRate)) | \(cell(hmac)) | \(ratio(hmac)) | \(cell(sha)) |"
            )
        }
        return """

            Stripe deliveries (a minted subscription event padded to each size, one secret), per second:

            | body bytes | `StripeWebhookVerifier.verify`, 1 thread | `BatchVerifier`, stored deliveries, \(jobs) threads | `openssl speed -hmac sha256`, same bytes, 1 thread | verify / HMAC | `openssl speed -evp sha256`, same bytes |
            |---:|---:|---:|---:|---:|---:|
            \(rows.joined(separator: "\n"))
            """
    }
}
