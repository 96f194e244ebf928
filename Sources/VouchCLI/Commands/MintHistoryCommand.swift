import Dispatch
import Foundation
import Vouch
import VouchMint

/// `vouch mint history`: coherent per-account histories, one token per line, account after
/// account (the ledger does not care about order).
struct MintHistoryCommand: Command {
    let path = ["mint", "history"]
    let summary = "Sign per-account histories for vouch entitlements and vouch refunds"
    let usage = "vouch mint history --ca DIR [--count N] [--seed S] [--date DATE] [options]"
    let discussion = """
        Writes N accounts' histories (default 1), one token per line, account after account.
        Each account lives a story of about four months ending at DATE, picked by the seed:
        renewing, upgrade, grace-period, expired, refund-reversed, family-sharing, consumables
        or trial. --story names the story every account lives, among those and two the seed
        never picks: multiseat (a team plan: seats bought, added, refunded by seat, given to
        members with transactions of their own, fewer renewing) and multiseat-claims (a team
        plan whose app hosts the invitations: fewer seats renew and the App Store releases seat
        claims). Purchases, renewals, notifications with their nested transaction and renewal
        info, refunds and their reversal, a family member's shared transaction and its
        revocation: data for vouch entitlements and vouch refunds. The same seed and DATE give
        the same payloads (ECDSA signatures differ per run). Tokens verify at their signed
        date, so the CA must be valid over those months, as one minted by 'vouch mint ca' with
        its defaults is: when it is not, nothing is minted and the dates that would work are
        named (exit 65).

        \(MintCommands.dateHelp)
        """
    var exitStatus: String { MintCommands.exitStatus }
    var options: [CommandOption] {
        [
            .value("--ca", "DIR", help: "The authority written by 'vouch mint ca'"),
            .value("--count", "N", help: "Mint the histories of N accounts (default 1)"),
            .value("--seed", "S", help: "A number or any text (default 1)"),
            .value("--date", "DATE", help: "Histories end at DATE (default: now)"),
            .value(
                "--story", "STORY",
                help: "Every account lives STORY, such as multiseat or\nmultiseat-claims (default: from the seed)"),
            .value("--environment", "ENV", help: "Production (default), Sandbox, Xcode or LocalTesting"),
            .value("--bundle-id", "ID", help: "The app's bundleId (default com.example.app)"),
            .value("--app-apple-id", "N", help: "The app's appAppleId (default 1234567890)"),
            .value("--out", short: "o", "FILE", help: "Write the tokens to FILE (- for stdout, the default)"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let directory = arguments.value("--ca") else { throw UsageError("mint history needs --ca DIR") }
        var count = 1
        if let text = arguments.value("--count") {
            guard let number = Int(text), number >= 1, number <= 10_000_000 else {
                throw UsageError("--count: \"\(text)\" is not a number from 1 to 10000000")
            }
            count = number
        }
        let date = try arguments.value("--date").map { try Spelling.date($0, option: "--date") } ?? console.now()
        var generator = MintHistoryGenerator(seed: arguments.value("--seed").map(MintGenerator.seed) ?? 1, date: date)
        if let text = arguments.value("--environment") {
            let known: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
            generator.environment = try Spelling.choice(text, option: "--environment", among: known, name: \.rawValue)
        }
        if let text = arguments.value("--story") {
            generator.story = try Spelling.choice(
                text, option: "--story", among: MintHistoryGenerator.stories + MintHistoryGenerator.storiesOnRequest,
                name: { $0 })
        }
        if let bundleId = arguments.value("--bundle-id") { generator.bundleId = bundleId }
        if let text = arguments.value("--app-apple-id") {
            guard let appAppleId = Int64(text) else {
                throw UsageError("--app-apple-id must be an integer; got '\(text)'")
            }
            generator.appAppleId = appAppleId
        }
        let histories = generator
        let authority = try MintCommands.authority(directory) { url throws(MintError) in
            try MintAuthority.load(from: url)
        }
        try Self.check(histories.signedDates, within: authority.signingValidity, directory: directory)
        let signer = try MintSigner(authority: authority)
        let out = try console.destination(arguments.value("--out"))

        // Accounts are independent: chunks are signed in parallel and written in order.
        try OrderedChunkWriter.write(count: count, chunkSize: 64, to: out) { range in
            var bytes: [UInt8] = []
            for index in range {
                for token in try histories.history(index).tokens(signer: signer) {
                    bytes += token.utf8
                    bytes.append(0x0A)
                }
            }
            return bytes
        }
        try out.close()
        return ExitCode.success
    }

    /// Histories signed outside the signing certificate's validity would all be rejected
    /// (`certificate_not_yet_valid` or `certificate_expired`): refuse to mint them, and say
    /// which dates would work. The leaf's first second does not count, as for other kinds.
    static func check(_ dates: ClosedRange<Date>, within validity: MintValidity?, directory: String) throws {
        guard let validity else { return }
        let first = validity.notBefore.addingTimeInterval(1)
        guard dates.lowerBound < first || dates.upperBound > validity.notAfter else { return }
        let length = dates.upperBound.timeIntervalSince(dates.lowerBound)
        let earliest = first.addingTimeInterval(length)
        var advice: String
        if earliest <= validity.notAfter {
            advice = "pick --date from \(MintDate.format(earliest)) to \(MintDate.format(validity.notAfter))"
        } else {
            advice = "its validity is shorter than a history"
        }
        advice +=
            ", or mint an authority valid over those dates ('vouch mint ca --not-before \(MintDate.format(dates.lowerBound))')"
        throw InvalidInputError(
            "the signing certificate in \(directory) is valid from \(MintDate.format(validity.notBefore)) to "
                + "\(MintDate.format(validity.notAfter)), but these histories are signed from "
                + "\(MintDate.format(dates.lowerBound)) to \(MintDate.format(dates.upperBound)), so every token would be "
                + "rejected: \(advice)")
    }
}
