import Foundation
import Vouch
import VouchStripe

/// How the Stripe commands read their secrets: from a file, one per line, never from the
/// command line (where other users of the machine and shell histories see them).
enum StripeOptions {
    static let secretFile = CommandOption.value(
        "--stripe-secret-file", "FILE",
        help: "The endpoint signing secrets (whsec_…), one per line; blank\nlines and surrounding blanks are ignored")

    /// The secrets of `--stripe-secret-file`: unreadable is exit 66, none in it exit 65.
    static func secrets(_ arguments: ParsedArguments, command: String) throws -> [String] {
        guard let path = arguments.value("--stripe-secret-file") else {
            throw UsageError("\(command) needs --stripe-secret-file FILE (secrets are never given on the command line)")
        }
        return try lines(of: path, option: "--stripe-secret-file", holding: "secret")
    }

    /// The secrets of a file of them (`--stripe-secret-file`, `--api-token-file`): one per
    /// line, blank lines and surrounding blanks ignored. Unreadable is exit 66; none in it, or
    /// one with a blank inside, exit 65.
    static func lines(of path: String, option: String, holding what: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("cannot read \(option) \(path): \(Console.whyUnreadable(path))")
        }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw InvalidInputError("\(option) \(path) holds no \(what)") }
        if let line = lines.firstIndex(where: { $0.contains(where: \.isWhitespace) }) {
            throw InvalidInputError("\(option) \(path): \(what) \(line + 1) holds a blank")
        }
        return lines
    }

    /// `--tolerance`: how old a delivery's signature may be; none by default for stored deliveries.
    static let tolerance = CommandOption.value(
        "--tolerance", "SECONDS|none", help: "Reject deliveries signed more than SECONDS before --at\n(default none)")

    /// `--stripe-account-key` of the commands that read Stripe events into a ledger.
    static let accountKey = CommandOption.value(
        "--stripe-account-key", "KEY",
        help: "The Stripe metadata key holding the account id (default\naccount_id)")

    /// `none`, or a whole number of seconds.
    static func tolerance(_ text: String) throws(UsageError) -> TimeInterval? {
        if text == "none" { return nil }
        guard let seconds = Int(text), seconds >= 0 else {
            throw UsageError("--tolerance must be a whole number of seconds or none; got '\(text)'")
        }
        return TimeInterval(seconds)
    }

    /// The verifier of `--stripe-secret-file` (required) and `--tolerance`, checked at `instant`.
    static func verifier(_ arguments: ParsedArguments, command: String, at instant: Date) throws
        -> StripeWebhookVerifier
    {
        var configuration = StripeWebhookVerifier.Configuration(secrets: try secrets(arguments, command: command))
        configuration.tolerance = try tolerance(arguments.value("--tolerance") ?? "none")
        if configuration.tolerance != nil { configuration.validationTime = .fixed(instant) }
        return try TrustOptions.make { () throws(ConfigurationError) in
            try StripeWebhookVerifier(configuration: configuration)
        }
    }
}
