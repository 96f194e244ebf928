import Foundation
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
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("cannot read --stripe-secret-file \(path)")
        }
        let secrets = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !secrets.isEmpty else { throw InvalidInputError("--stripe-secret-file \(path) holds no secret") }
        return secrets
    }
}
