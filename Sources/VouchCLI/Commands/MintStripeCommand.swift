import Foundation
import Vouch
import VouchMint
import VouchStripe

/// `vouch mint stripe`: signed Stripe webhook deliveries, stored as `vouch stripe verify` reads them.
struct MintStripeCommand: Command {
    let path = ["mint", "stripe"]
    let summary = "Sign Stripe webhook deliveries of subscription stories"
    let usage = "vouch mint stripe --stripe-secret-file FILE [options]"
    let discussion = """
        Writes the events of N subscriptions (default 1) as stored deliveries, one JSON
        object per line, subscription after subscription, each signed with every secret of
        FILE (one v1 per secret, as Stripe signs while a secret is rolled; in test mode a v0
        of another scheme too):
          {"stripe-signature":"t=…,v1=…,v0=…","body":"<the body, indented as Stripe sends it>"}
        Each subscription lives a story current at DATE (its events before it), picked by
        the seed unless --story: renewing, payment-recovered, canceled-at-period-end (ended
        a few days before DATE), trial-paused or refunded (a renewal's charge refunded, set
        to cancel at its period end). Events: checkout.session.completed (client_reference_id
        and metadata holding the account id, a UUID), customer.subscription.created,
        .updated, .deleted, .paused, .resumed, invoice.paid, invoice.payment_failed and
        charge.refunded, with ids evt_…, sub_…, cus_…, ch_…, price_…, prod_… drawn from the
        seed (deliveries of two seeds combine in one ledger), rendered in API version 2025-03-31.basil (billing periods on
        the subscription items) or, with --api-version 2024-06-20, on the subscription. Each
        delivery is signed two seconds after its event, or at --signed-at.

        --tamper writes broken deliveries instead, of each subscription's first event, each
        followed by a tab and the code 'vouch stripe verify' must report; DEFECT is body,
        secret or timestamp (stripe_bad_signature), no-v1 (stripe_no_signature), header
        (stripe_malformed_header), not-json (stripe_bad_body_json), not-event
        (stripe_not_an_event), or all.

        \(MintCommands.dateHelp)
        """
    var exitStatus: String { MintCommands.exitStatus }

    var options: [CommandOption] {
        [
            StripeOptions.secretFile,
            .value("--count", "N", help: "Mint the events of N subscriptions (default 1)"),
            .value("--seed", "S", help: "A number or any text (default 1)"),
            .value("--date", "DATE", help: "Stories are current at DATE (default: now)"),
            .value(
                "--story", "STORY",
                help:
                    "renewing, payment-recovered, canceled-at-period-end,\ntrial-paused or refunded (default: from the seed)"
            ),
            .value("--api-version", "V", help: "2025-03-31.basil (default) or 2024-06-20"),
            .flag("--livemode", help: "Live-mode events (default: test mode)"),
            .value("--account-key", "KEY", help: "The metadata key of the account id (default account_id)"),
            .value("--signed-at", "DATE", help: "Sign every delivery at DATE, as a retry is"),
            .value("--tamper", "DEFECT", repeatable: true, help: "Write broken deliveries with their expected codes"),
            .value("--out", short: "o", "FILE", help: "Write to FILE (- for stdout, the default)"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let signer = try MintStripeSigner(secrets: try StripeOptions.secrets(arguments, command: "mint stripe"))
        var count = 1
        if let text = arguments.value("--count") {
            guard let number = Int(text), (1...10_000_000).contains(number) else {
                throw UsageError("--count: \"\(text)\" is not a number from 1 to 10000000")
            }
            count = number
        }
        let date = try arguments.value("--date").map { try Spelling.date($0, option: "--date") } ?? console.now()
        var generator = MintStripe(seed: arguments.value("--seed").map(MintGenerator.seed) ?? 1, date: date)
        if let text = arguments.value("--story") {
            generator.story = try Spelling.choice(
                text, option: "--story", among: MintStripe.Story.allCases, name: \.rawValue)
        }
        if let text = arguments.value("--api-version") {
            generator.apiVersion = try Spelling.choice(
                text, option: "--api-version", among: MintStripe.APIVersion.allCases, name: \.rawValue)
        }
        generator.livemode = arguments.flag("--livemode")
        if let key = arguments.value("--account-key") {
            guard !key.isEmpty else { throw UsageError("--account-key needs a metadata key") }
            generator.accountKey = key
        }
        let signedAt = try arguments.value("--signed-at").map {
            Int64(try Spelling.date($0, option: "--signed-at").timeIntervalSince1970.rounded(.down))
        }
        var defects: [MintStripeDefect] = []
        for name in arguments.values("--tamper").flatMap({ $0.split(separator: ",").map(String.init) }) {
            defects +=
                name == "all"
                ? MintStripeDefect.allCases
                : [try Spelling.choice(name, option: "--tamper", among: MintStripeDefect.allCases, name: \.rawValue)]
        }
        let out = try console.destination(arguments.value("--out"))
        let minted = generator
        let chosen = defects
        try OrderedChunkWriter.write(count: count, chunkSize: 64, to: out) { range in
            var bytes: [UInt8] = []
            for index in range {
                let subscription = minted.subscription(index)
                if chosen.isEmpty {
                    for event in subscription.events {
                        bytes += try signer.delivery(event, signedAt: signedAt).storedJSON
                        bytes.append(0x0A)
                    }
                } else {
                    for defect in chosen {
                        bytes += try signer.tampered(defect, subscription.events[0], signedAt: signedAt).storedJSON
                        bytes += Array("\t\(defect.expectedErrorCode)\n".utf8)
                    }
                }
            }
            return bytes
        }
        try out.close()
        return ExitCode.success
    }
}
