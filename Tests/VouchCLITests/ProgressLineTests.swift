import Foundation
import Testing

/// The one progress line of the commands that read inputs: drawn on a terminal (a pseudo-
/// terminal made by script(1)) and cleared before the summary, never on a file or a pipe nor
/// in CI unless `--progress` asks, never with `--no-progress`.
@Suite struct ProgressLineTests {
    typealias L = LedgerCommandTests

    /// Runs `vouch ARGUMENTS` with stderr on a pseudo-terminal (stdout to /dev/null); returns
    /// what the terminal showed. `CI` is unset unless `environment` sets it.
    static func onTerminal(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
        // script(1) runs the binary ($0) with the arguments as given, however they are spelled.
        let unset = environment["CI"] == nil ? "unset CI; " : ""
        return try VouchBinary.shell(
            unset + #"script -qec "$(printf '%q ' "$0" "$@") > /dev/null" /dev/null < /dev/null"#,
            environment: ["TERM": "xterm"].merging(environment) { $1 }, arguments
        ).output
    }

    static let erase = "\u{1B}[K"

    /// A drawn line of a regular file: what was read, the rate, the percent and time left.
    static func line(_ noun: String) -> String {
        "\r[0-9]+ \(noun) \\([0-9]+ verified, 0 rejected\\), [0-9,]+/s, [0-9]+\\.[0-9]%, [0-9]+ s left\u{1B}\\[K"
    }

    /// Whether every line drawn is cleared before anything else is written: with each drawn
    /// line and the clearing after it taken out, no control sequence is left.
    /// `ledger add` draws `NAME: storing what verified…` while it stores an input.
    static func cleared(_ text: String, _ drawn: String) -> Bool {
        let rest = text.replacingOccurrences(
            of: "(" + drawn + "|" + storing + ")+\r\u{1B}\\[K", with: "", options: .regularExpression)
        return text.contains(Self.erase) && !rest.contains("\u{1B}")
    }

    static let storing = "\r[^\r\u{1B}]+: storing what verified…\u{1B}\\[K"

    @Test func ledgerAddSaysItIsStoringEachInput() throws {
        let tokens = try L.file(L.tokens, name: "progress-storing.jsonl")
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-progress-\(UUID().uuidString)")
        let shown = try Self.onTerminal(["ledger", "add", "--db", db.path, "--root", L.root, tokens, tokens])
        #expect(
            shown.components(separatedBy: "progress-storing.jsonl: storing what verified…\u{1B}[K\r\u{1B}[K").count == 3
        )
        #expect(Self.cleared(shown, Self.line("tokens")), "\(shown)")
    }

    /// The inputs of each command, with what its progress line counts.
    static func commands() throws -> [(arguments: [String], drawn: String, summary: String)] {
        let tokens = try L.file(L.tokens, name: "progress-tokens.jsonl")
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-progress-\(UUID().uuidString)")
        let deliveries = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-progress-\(UUID().uuidString).jsonl")
        try Data(try StripeCommandTests.mint()).write(to: deliveries)
        let count = L.tokens.count
        let delivered = try String(contentsOf: deliveries, encoding: .utf8).split(separator: "\n").count
        return [
            (
                ["batch", "--root", L.root, "--payload", "none", tokens], Self.line("tokens"),
                "vouch batch: 1 input, \(count) tokens: \(count) verified, 0 rejected"
            ),
            (
                ["entitlements", "--root", L.root, tokens], Self.line("tokens"),
                "vouch entitlements: 1 input, \(count) tokens: \(count) verified, 0 rejected"
            ),
            (
                ["refunds", "--root", L.root, tokens], Self.line("tokens"),
                "vouch refunds: 1 input, \(count) tokens: \(count) verified, 0 rejected"
            ),
            (
                ["ledger", "add", "--db", db.path, "--root", L.root, tokens, tokens],
                Self.line("tokens"),
                "vouch ledger add: 2 inputs, \(2 * count) tokens: \(2 * count) verified, 0 rejected"
            ),
            (
                ["stripe", "verify", "--stripe-secret-file", StripeCommandTests.path("secrets"), deliveries.path],
                Self.line("deliveries"),
                "vouch stripe verify: 1 input, \(delivered) deliveries: \(delivered) verified, 0 rejected"
            ),
        ]
    }

    @Test func everyCommandThatReadsInputsDrawsTheLineOnATerminalAndClearsItBeforeItsSummary() throws {
        for command in try Self.commands() {
            let shown = try Self.onTerminal(command.arguments)
            // Percent and time left: the size of a file is known.
            #expect(
                shown.range(of: command.drawn, options: .regularExpression) != nil, "\(command.arguments): \(shown)")
            #expect(shown.contains(command.summary), "\(shown)")
            #expect(Self.cleared(shown, command.drawn), "\(shown)")
        }
    }

    @Test func noLineIsDrawnWithNoProgressNorInCINorOnAFileUnlessProgressAsks() throws {
        for command in try Self.commands() {
            let off = try Self.onTerminal(command.arguments + ["--no-progress"])
            #expect(off.contains(command.summary), "\(off)")
            #expect(!off.contains(Self.erase), "\(command.arguments): \(off)")
            let ci = try Self.onTerminal(command.arguments, environment: ["CI": "true"])
            #expect(ci.contains(command.summary), "\(ci)")
            #expect(!ci.contains(Self.erase), "\(command.arguments): \(ci)")
            #expect(
                try Self.onTerminal(command.arguments + ["--progress"], environment: ["CI": "true"]).range(
                    of: command.drawn, options: .regularExpression) != nil)
            // Standard error is a file here.
            let file = try VouchBinary.run(command.arguments)
            #expect(file.stderr.contains(command.summary), "\(file.stderr)")
            #expect(!file.stderr.contains(Self.erase))
            let asked = try VouchBinary.run(command.arguments + ["--progress"])
            #expect(asked.stderr.range(of: "^" + command.drawn, options: .regularExpression) != nil, "\(asked.stderr)")
            #expect(asked.stderr.contains(command.summary), "\(asked.stderr)")
            #expect(Self.cleared(asked.stderr, command.drawn), "\(asked.stderr)")
        }
    }

    @Test func progressAndNoProgressTogetherAreAUsageError() throws {
        let result = try VouchBinary.run(["entitlements", "--progress", "--no-progress", "-"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: --progress and --no-progress exclude each other\n"))
    }

    @Test func countsAreSingularForOne() throws {
        let one = try L.file([L.tokens[0]], name: "progress-one.jsonl")
        let result = try VouchBinary.run(["entitlements", "--root", L.root, "--at", "2026-02-15", one])
        #expect(result.stderr.hasPrefix("vouch entitlements: 1 input, 1 token: 1 verified, 0 rejected in "))
        #expect(result.stderr.contains("; 1 chain, 1 transaction\n"), "\(result.stderr)")
        #expect(result.stderr.contains("\n  1 account at 2026-02-15T00:00:00.000Z"), "\(result.stderr)")
    }
}
