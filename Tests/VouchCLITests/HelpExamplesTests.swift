import Foundation
import Testing

@testable import VouchCLI

/// Every help page ends with two or three examples, each a command line naming real options
/// (checked as ``DocumentedCommandLineTests`` checks the documentation's); a command's own
/// examples run that command.
@Suite struct HelpExamplesTests {
    typealias D = DocumentedCommandLineTests

    /// The examples at the end of `help`: the lines after `Examples:`, which ends the page.
    static func examples(in help: String) -> [String]? {
        guard let range = help.range(of: "\nExamples:\n", options: .backwards) else { return nil }
        return help[range.upperBound...].split(separator: "\n").map {
            $0.hasPrefix("  ") ? String($0.dropFirst(2)) : "not indented: \($0)"
        }
    }

    @Test func everyCommandsHelpEndsWithTwoOrThreeValidExamplesOfIt() throws {
        let registry = CommandRegistry.vouch
        for command in registry.commands {
            let help = registry.help(for: command)
            let examples = try #require(Self.examples(in: help), "vouch \(command.name) --help has no examples")
            #expect((2...3).contains(examples.count), "vouch \(command.name)")
            for example in examples {
                let lines = D.vouchArguments(in: example)
                #expect(!lines.isEmpty, "\(example)")
                for words in lines {
                    #expect(D.problem(with: words) == nil, "\(example): \(D.problem(with: words) ?? "")")
                }
                // The first command line runs the command the page is of.
                let words = try #require(lines.first)
                #expect(registry.resolve(words).command?.path == command.path, "\(example)")
            }
        }
    }

    @Test func everyGroupsHelpEndsWithValidExamples() throws {
        let registry = CommandRegistry.vouch
        for group in registry.groups {
            let examples = try #require(Self.examples(in: registry.help(for: group)), "\(group.name) --help")
            #expect((2...3).contains(examples.count), "\(group.name)")
            for example in examples {
                for words in D.vouchArguments(in: example) {
                    #expect(D.problem(with: words) == nil, "\(example): \(D.problem(with: words) ?? "")")
                }
            }
        }
    }

    @Test func theExamplesArePrintedLastByTheBinary() throws {
        let help = try VouchBinary.run(["refunds", "--help"])
        #expect(help.status == 0)
        #expect(
            help.stdout.hasSuffix(
                """

                Examples:
                  vouch refunds --since 2026-01-01 notifications.jsonl
                  vouch refunds --db ledger.sqlite --json --summary-json refunds-summary.json

                """))
        let top = try VouchBinary.run(["--help"])
        #expect(top.stdout.contains(" Verify the signed tokens of one input (a token, a body, a response)\n"))
        #expect(top.stdout.contains(" Keep verified App Store and Stripe data in a ledger file (SQLite)\n"))
        #expect(!top.stdout.contains("one signed token"))
        #expect(top.stdout.hasSuffix("  vouch entitlements --at now --tiers tiers.json notifications.jsonl\n"))
    }
}
