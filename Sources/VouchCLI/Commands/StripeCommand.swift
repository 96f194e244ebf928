import Foundation
import Vouch
import VouchBatch
import VouchStripe

/// `vouch stripe verify`: stored Stripe webhook deliveries verified offline.
enum StripeCommands {
    static let group = CommandGroup(
        path: ["stripe"], summary: "Verify stored Stripe webhook deliveries offline",
        usage: "vouch stripe verify [options] [FILE ...|-]",
        discussion: """
            Stripe webhook deliveries, stored as they came: each one's Stripe-Signature header
            checked over its exact raw body with the endpoint's signing secrets, and its body read
            as a Stripe event.
            """,
        noun: "command",
        footer: "Run 'vouch stripe verify --help' for the options.",
        examples: [
            "vouch stripe verify --stripe-secret-file secrets.txt deliveries.jsonl",
            "vouch entitlements --stripe-secret-file secrets.txt deliveries.jsonl",
        ])

    static let all: [any Command] = [StripeVerifyCommand()]
}

/// `vouch stripe verify`.
struct StripeVerifyCommand: Command {
    let path = ["stripe", "verify"]
    let summary = "Verify stored Stripe deliveries, one JSON record per delivery"
    let usage = "vouch stripe verify --stripe-secret-file FILE [options] [FILE ...|-]"
    let discussion = """
        Verifies every stored Stripe webhook delivery of the inputs (files in order, or
        standard input for '-' or no FILE; gzip read transparently) and prints one JSON
        record per delivery, in input order, on stdout:
          {"line":N,"status":"verified"|"rejected","kind":"stripe_event","payload":{event}
           [,"error":{"code":…,"reason":…}]}
        A delivery is a JSON object, one per line or pretty-printed, holding the raw body as
        received and the Stripe-Signature header:
          {"stripe-signature":"t=…,v1=…","body":"{\\n  \\"id\\": \\"evt_…\\", …}"}
          {"headers":{"Stripe-Signature":"t=…,v1=…",…},"body":"…"}
        It verifies when one v1 signature is the HMAC-SHA256 of "t.body" with one of the
        secrets (other schemes such as v0 are ignored) and the body is a Stripe event.
        Anything else in the input is rejected as stripe_not_a_delivery; blank lines get an
        empty_line record unless --skip-empty.

        No timestamp tolerance applies unless --tolerance is given: Stripe retries a
        delivery for days, signing it anew each time, so a stored one is rightly old.
        With --tolerance SECONDS, a delivery signed more than SECONDS before --at (default:
        now) is rejected (stripe_timestamp_out_of_tolerance), as Stripe's libraries do for
        a live webhook.

        A summary (deliveries read, counts by status and error code) goes to stderr at the
        end; while running, a progress line too when stderr is a terminal and CI is not set
        (--progress and --no-progress decide).
        """
    let positionals = Positionals.any
    let exitStatus = """
        0 every delivery verified (or --rejections-ok), 1 any rejected, 64 usage error,
        65 no secret in the secret file, 66 unreadable input or secret file, 74 output write error.
        """
    let examples = [
        "vouch stripe verify --stripe-secret-file secrets.txt deliveries.jsonl",
        "vouch stripe verify --stripe-secret-file secrets.txt --tolerance 300 --payload type,data.object.id -",
    ]

    var options: [CommandOption] {
        [
            StripeOptions.secretFile,
            StripeOptions.tolerance,
            .value("--at", "DATE", help: "The instant --tolerance is checked at (default: now)"),
            .value(
                "--payload", "WHAT",
                help: "full (default), none, or FIELD,FIELD… of the event (dotted\npaths such as data.object.id)"),
            InputArguments.jobs,
            .flag("--no-line-number", help: "Leave \"line\" out of each record"),
            .flag("--skip-empty", help: "Give blank lines no record"),
            .flag("--rejections-ok", help: "Exit 0 when deliveries are rejected (usage and I/O errors\nstill fail)"),
        ] + ProgressLine.options + InputArguments.documentOptions
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        var instant = console.now()
        if let text = arguments.value("--at") {
            guard arguments.value("--tolerance") != nil else {
                throw UsageError("--at is the instant --tolerance is checked at: give --tolerance too")
            }
            instant = try Spelling.date(text, option: "--at")
        }
        let stripe = try StripeOptions.verifier(arguments, command: "stripe verify", at: instant)
        var documents = try InputArguments(arguments, readsTokens: false)
        documents.options.maximumLineLength = stripe.configuration.maximumBodySize
        // Tokens never reach this verifier: every unit that is not a delivery is rejected first.
        var batch = BatchVerifier(
            verifier: try TrustOptions.make { () throws(ConfigurationError) in
                try Verifier(configuration: .acceptingAnyApp())
            })
        batch.stripeVerifier = stripe
        if let jobs = try InputArguments.jobs(arguments) { batch.jobs = jobs }
        let format = RecordFormat(
            payload: try BatchCommand.payloadSelection(arguments.value("--payload") ?? "full"),
            numbers: arguments.flag("--no-line-number") ? .never : .always)
        let run = BatchVerifier.RunOptions(skipEmpty: arguments.flag("--skip-empty"), stripeDeliveriesOnly: true)

        let paths = arguments.positionals.isEmpty ? ["-"] : arguments.positionals
        let inputs = try console.openInputs(paths)
        defer { for input in inputs where input.owned { close(input.descriptor) } }
        let start = Date()
        let progress = try ProgressLine(arguments, console: console, inputs: inputs)
        var summary = BatchSummary()
        var firstLine = 1
        var firstDocument = 1
        for input in inputs {
            let reader = try documents.reader(input, firstLine: firstLine, firstDocument: firstDocument)
            defer {
                firstLine += reader.linesRead
                firstDocument += reader.documentsRead
            }
            do {
                let before = summary
                summary.add(
                    try batch.verify(
                        from: reader, options: run, format: format, write: { try console.output.write($0) },
                        progress: { current in
                            var sofar = before
                            sofar.add(current)
                            progress.update(
                                Counted.phrase(sofar.lines, "delivery", "deliveries")
                                    + " (\(sofar.verified) verified, \(sofar.rejected) rejected)",
                                count: sofar.lines, bytes: sofar.bytesConsumed)
                        }))
            } catch let error as InputFailure {
                progress.clear()
                throw InputError("cannot read \(input.name): \(error)")
            }
        }
        progress.clear()
        console.diagnose(Self.describe(summary, inputs: inputs.count, elapsed: Date().timeIntervalSince(start)))
        return summary.rejected == 0 || arguments.flag("--rejections-ok") ? ExitCode.success : ExitCode.rejected
    }

    /// `vouch stripe verify: 1 input, 305 deliveries: 300 verified, 5 rejected in 0.20 s`: every
    /// record is a delivery's, a line that is none included (rejected, stripe_not_a_delivery).
    static func describe(_ summary: BatchSummary, inputs: Int, elapsed: TimeInterval) -> String {
        var text =
            "vouch stripe verify: " + Counted.phrase(inputs, "input") + ", "
            + Counted.phrase(summary.lines, "delivery", "deliveries")
            + ": \(summary.verified) verified, \(summary.rejected) rejected in " + String(format: "%.2f s", elapsed)
        if !summary.errors.isEmpty {
            text +=
                "\n  rejected by code: "
                + summary.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        return text
    }
}
