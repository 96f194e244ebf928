import Foundation
import Testing
import Vouch
import VouchMint

@testable import VouchCLI

/// The one parser every command uses, and the usage-error shape the registry prints.
@Suite struct ArgumentParserTests {
    let options: [CommandOption] = [
        .value("--jobs", short: "j", "N", help: "threads"),
        .value("--root", "FILE", repeatable: true, help: "anchors"),
        .value("--field", "NAME", help: "member"),
        .flag("--json", help: "JSON"),
    ]

    func parse(_ words: [String], positionals: Positionals = .any) throws(UsageError) -> ParsedArguments {
        switch try ArgumentParser.parse(words, options: options, positionals: positionals) {
        case .arguments(let arguments): return arguments
        case .help: throw UsageError("help was asked for")
        }
    }

    @Test func repeatableOptionsKeepEveryValueInOrder() throws {
        let arguments = try parse(["--root", "a.der", "--json", "--root=b.pem", "--root", "c.der"])
        #expect(arguments.values("--root") == ["a.der", "b.pem", "c.der"])
        #expect(arguments.value("--root") == "c.der")
        #expect(arguments.flag("--json"))
    }

    @Test func anEqualsSignAttachesTheValue() throws {
        let arguments = try parse(["--field=signedPayload", "--jobs=4", "--field==x"])
        #expect(arguments.values("--field") == ["signedPayload", "=x"])
        #expect(arguments.value("--jobs") == "4")
    }

    @Test func aShortAliasTakesItsValueAfterASpaceOrAttached() throws {
        #expect(try parse(["-j", "3"]).value("--jobs") == "3")
        #expect(try parse(["-j7"]).value("--jobs") == "7")
        #expect(try parse(["-j", "3", "--jobs", "5"]).value("--jobs") == "5")
    }

    @Test func doubleDashEndsTheOptions() throws {
        let arguments = try parse(["--json", "--", "--root", "-j", "-", "--help"])
        #expect(arguments.positionals == ["--root", "-j", "-", "--help"])
        #expect(arguments.values("--root").isEmpty)
        #expect(arguments.flag("--json"))
    }

    @Test func aSingleDashIsStandardInput() throws {
        #expect(try parse(["-", "--json"]).positionals == ["-"])
    }

    @Test func helpAsAnOptionsValueIsAValue() throws {
        let arguments = try parse(["--field", "--help", "-j", "-h"])
        #expect(arguments.value("--field") == "--help")
        #expect(arguments.value("--jobs") == "-h")
    }

    @Test func helpInAnOptionsPlaceWinsOverOtherMistakes() throws {
        for words in [["--help"], ["-h"], ["--bogus", "--help"], ["--jobs", "2", "-h", "extra"]] {
            guard case .help = try ArgumentParser.parse(words, options: options, positionals: .none) else {
                Issue.record("\(words) did not ask for help")
                continue
            }
        }
    }

    @Test func mistakesAreUsageErrorsThatNameTheWord() {
        #expect(throws: UsageError("unknown option --bogus", unknownOption: "--bogus")) { try parse(["--bogus"]) }
        #expect(throws: UsageError("unknown option -x", unknownOption: "-x")) { try parse(["-x"]) }
        #expect(throws: UsageError("--jobs needs a value")) { try parse(["--jobs"]) }
        #expect(throws: UsageError("--json takes no value")) { try parse(["--json=yes"]) }
        #expect(throws: UsageError("unexpected argument \"b\"; expected at most 1 input")) {
            try parse(["a", "b"], positionals: .oneInput)
        }
        #expect(throws: UsageError("unexpected argument \"a\"")) { try parse(["a"], positionals: .none) }
    }

    // MARK: The registry

    /// Runs `vouch WORDS` in-process.
    func run(_ words: [String]) -> (status: Int32, output: String, errors: String) {
        let output = MemorySink()
        let errors = MemorySink()
        let console = Console(
            output: output, error: errors, inputDescriptor: -1, errorIsTerminal: false, now: { Date() })
        let status = CommandRegistry.vouch.run(words, console: console)
        return (status, output.text, errors.text)
    }

    @Test func anUnknownOptionExitsWith64WithTheErrorOneUsageLineAndWhereToReadMore() {
        let result = run(["batch", "--frobnicate", "-j", "2"])
        #expect(result.status == 64)
        #expect(result.output.isEmpty)
        #expect(
            result.errors == """
                Error: unknown option --frobnicate
                Usage: vouch batch [options] [FILE ...|-]
                See 'vouch batch --help'.

                """)
    }

    @Test func vouchAloneAndMintAlonePrintTheirHelpAsAUsageError() {
        let registry = CommandRegistry.vouch
        let root = run([])
        let mint = run(["mint"])
        #expect(root.status == 64 && mint.status == 64)
        #expect(root.output.isEmpty && mint.output.isEmpty)
        #expect(root.errors == registry.help(for: registry.groups[0]))
        #expect(mint.errors == registry.help(for: MintCommands.group))
    }

    @Test func helpCommandAndHelpOptionPrintTheSameTextOnStandardOutput() {
        for path in [["verify"], ["inspect"], ["batch"], ["mint"], ["mint", "ca"], ["mint", "notification"]] {
            let asked = run(["help"] + path)
            let option = run(path + ["--help"])
            #expect(asked.status == 0 && option.status == 0)
            #expect(asked.errors.isEmpty && option.errors.isEmpty)
            #expect(asked.output == option.output)
            #expect(asked.output.hasPrefix("Usage: vouch \(path.joined(separator: " "))"))
        }
        #expect(run(["help", "frobnicate"]).status == 64)
    }

    @Test func everyDeclaredOptionIsInItsCommandsHelp() {
        let registry = CommandRegistry.vouch
        for command in registry.commands {
            let help = registry.help(for: command)
            for option in command.options {
                #expect(help.contains(option.name), "\(command.name) --help does not list \(option.name)")
                if let short = option.short { #expect(help.contains("-\(short), \(option.name)")) }
            }
        }
    }

    @Test func kindAndEnvironmentIgnoreLetterCaseAlike() throws {
        #expect(
            try Spelling.choice("Renewal-Info", option: "--kind", among: ["renewal-info"], name: { $0 })
                == "renewal-info")
        #expect(try Spelling.choice("sandbox", option: "--environment", among: ["Sandbox"], name: { $0 }) == "Sandbox")
        #expect(throws: UsageError("--kind must be one of renewal-info; got 'renewal'")) {
            try Spelling.choice("renewal", option: "--kind", among: ["renewal-info"], name: { $0 })
        }
    }

    @Test func atAndDateAcceptTheSameForms() throws {
        let forms: [(String, Int64)] = [
            ("2025-03-01", 1_740_787_200_000), ("2025-03-01T12:30:00Z", 1_740_832_200_000),
            ("2025-03-01T12:30:00.250Z", 1_740_832_200_250), ("2025-03-01T14:30:00.25+02:00", 1_740_832_200_250),
        ]
        for (text, milliseconds) in forms {
            #expect(try TrustOptions.validationTime(text) == .fixed(Timestamp(milliseconds: milliseconds)))
            let date = try Spelling.date(text, option: "--date")
            #expect(Int64((date.timeIntervalSince1970 * 1000).rounded()) == milliseconds)
        }
        for text in ["yesterday", "2025-02-30", "2025-03-01T12:30:00", "2025-03-01 12:30:00Z"] {
            #expect(throws: UsageError.self) { try TrustOptions.validationTime(text) }
            #expect(throws: UsageError.self) { try Spelling.date(text, option: "--date") }
        }
    }

    /// The framework (parsing, help, the registry, the console) knows no domain: a command's
    /// errors reach it through ``ReportableError``.
    @Test func theFrameworkImportsNoDomainModule() throws {
        let folder = VouchBinary.packageRoot.appendingPathComponent("Sources/VouchCLI/Framework")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(files.contains("CommandRegistry.swift"))
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") }.map { $0.dropFirst(7) }
            #expect(Set(imports).isSubset(of: ["Foundation", "Dispatch"]), "\(file) imports \(imports)")
        }
    }

    @Test func aMintErrorIsReportedWithItsOwnExitStatus() {
        func status(_ code: MintError.Code) -> Int32 { CommandRegistry.status(of: MintError(code, "why")).0 }
        #expect(status(.invalidInput) == ExitCode.invalidInput)
        #expect(status(.unreadableInput) == ExitCode.unreadableInput)
        #expect(status(.writeFailed) == ExitCode.writeError)
        #expect(status(.openSSLFailure) == ExitCode.software)
        #expect(CommandRegistry.status(of: MintError(.invalidInput, "why")).1 == "why")
    }
}
