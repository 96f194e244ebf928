import Foundation
import Testing

@testable import VouchCLI

/// Hints for a person at a terminal: a command waiting on the terminal's standard input says
/// so; an unknown option or command names the nearest known one.
@Suite struct UsageHintTests {
    /// Runs `vouch ARGUMENTS` with standard input on a pseudo-terminal made by script(1), which
    /// is sent Ctrl-D (end of input); returns what the terminal showed.
    static func onTerminal(_ arguments: String) throws -> (status: Int32, output: String) {
        try VouchBinary.shell("printf '\\004' | timeout 20 script -qec \"'$0' \(arguments)\" /dev/null")
    }

    static let hint =
        "vouch: reading standard input from the terminal: paste the input, then press Ctrl-D (or give a FILE)\r\n"

    @Test(arguments: ["verify", "inspect", "batch --no-progress", "entitlements --no-progress", "verify -"])
    func aCommandReadingTheTerminalSaysHowToEndTheInput(command: String) throws {
        let result = try Self.onTerminal(command)
        #expect(result.output.hasPrefix(Self.hint), "\(result.output)")
        #expect(result.output.components(separatedBy: "reading standard input").count == 2)
    }

    @Test func noHintWhenStandardInputIsAFileOrAFileIsGiven() throws {
        let piped = try VouchBinary.run(["verify"], input: [])
        #expect(!piped.stderr.contains("reading standard input"))
        let file = try Self.onTerminal("inspect TestVectors/minted/transaction.txt")
        #expect(!file.output.contains("reading standard input"), "\(file.output)")
    }

    @Test func anUnknownOptionOrCommandNamesTheNearestKnownOne() throws {
        let cases: [([String], String)] = [
            (["batch", "--job", "2"], "Error: unknown option --job; did you mean --jobs?\n"),
            (["entitlements", "--tier", "x"], "Error: unknown option --tier; did you mean --tiers?\n"),
            (["refunds", "--jsno"], "Error: unknown option --jsno; did you mean --json?\n"),
            (["--verison"], "Error: unknown option --verison; did you mean --version?\n"),
            (
                ["verfy"],
                "Error: unknown command \"verfy\" (did you mean verify?); expected verify, inspect, batch,"
                    + " entitlements, refunds, report, serve, ledger, receipt, mint, sign, stripe\n"
            ),
            (["batch", "--zzz"], "Error: unknown option --zzz\n"),
        ]
        for (arguments, message) in cases {
            let result = try VouchBinary.run(arguments)
            #expect(result.status == 64)
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
        }
    }

    @Test func theNearestIsAPrefixOrWithinTwoEdits() {
        let names = ["--jobs", "--json", "--tiers", "--at"]
        #expect(Suggestion.nearest(to: "--job", among: names) == "--jobs")
        #expect(Suggestion.nearest(to: "--jsn", among: names) == "--json")
        #expect(Suggestion.nearest(to: "--tier", among: names) == "--tiers")
        #expect(Suggestion.nearest(to: "--x", among: names) == nil)
        #expect(Suggestion.nearest(to: "--kind", among: names) == nil)
        #expect(Suggestion.editDistance(Array("kitten"), Array("sitting")) == 3)
    }
}
