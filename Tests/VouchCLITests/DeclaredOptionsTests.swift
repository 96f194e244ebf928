import Foundation
import Testing

@testable import VouchCLI

/// Every command reads only the options it declares: the registry reports a read of any other
/// as an internal error (exit 70). Here every command runs in-process twice, with no option and
/// with every option it declares, and must read none it does not declare.
@Suite(.serialized) struct DeclaredOptionsTests {
    /// A scratch folder with what option values point at: a CA, a receipt CA, a catalog, a payload.
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-options-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try! Data(#"{"tiers":[{"name":"pro","rank":1,"products":["p"]}]}"#.utf8).write(
            to: url.appendingPathComponent("tiers.json"))
        try! Data(#"{"transactionId":"1"}"#.utf8).write(to: url.appendingPathComponent("payload.json"))
        try! Data("whsec_options\n".utf8).write(to: url.appendingPathComponent("stripe-secrets"))
        return url
    }()

    static func run(_ registry: CommandRegistry, _ words: [String]) -> (status: Int32, errors: String) {
        let errors = MemorySink()
        let input = open("/dev/null", O_RDONLY)
        defer { close(input) }
        let console = Console(
            output: MemorySink(), error: errors, inputDescriptor: input, errorIsTerminal: false, now: { Date() })
        return (registry.run(words, console: console), errors.text)
    }

    /// A value each option takes, by name (and, where commands give one name two meanings, by
    /// the placeholder of its value).
    static func sample(_ option: CommandOption, of command: any Command, run: Int) -> String? {
        let receipts = command.path.contains { $0.hasPrefix("receipt") }
        switch (option.name, option.valueName) {
        case ("--out", _):
            return folder.appendingPathComponent("out-\(command.path.joined(separator: "-"))-\(run)").path
        case ("--ca", _): return folder.appendingPathComponent(receipts ? "receipt-ca" : "ca").path
        case ("--root", _), ("--receipt-root", _):
            return folder.appendingPathComponent(receipts ? "receipt-ca/root.der" : "ca/root.der").path
        case ("--xcode-cert", _): return folder.appendingPathComponent("ca/root.der").path
        case ("--tiers", _): return folder.appendingPathComponent("tiers.json").path
        case ("--db", _): return folder.appendingPathComponent("ledger.sqlite").path
        case ("--payload", "FILE"): return folder.appendingPathComponent("payload.json").path
        case ("--transaction", _): return folder.appendingPathComponent("payload.json").path
        case ("--revoked", _): return "5"
        case ("--payload", _): return "none"
        case ("--summary-json", _): return folder.appendingPathComponent("summary-\(run).json").path
        case ("--at", _), ("--date", _), ("--since", _), ("--chain-at", _), ("--not-before", _),
            ("--leaf-not-before", _), ("--from", _), ("--to", _):
            return "2025-06-01"
        case ("--not-after", _), ("--leaf-not-after", _): return "2045-01-01"
        case ("--kind", _): return "transaction"
        case ("--environment", _): return "Sandbox"
        case ("--bundle-id", _): return "com.example.app"
        case ("--device-id", _): return "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"
        case ("--shard", _): return "1/1"
        case ("--format", _): return "json"
        case ("--digest", _): return "sha256"
        case ("--document-buffer", _): return "16M"
        case ("--tamper", _): return "all"
        case ("--set", _): return "bundleId=com.example.app"
        case ("--unset", _), ("--echo", _), ("--field", _), ("--account", _): return "bundleId"
        case ("--leaf-bits", _): return "2048"
        case ("--signing-key", _), ("--key", _), ("--request", _):
            return folder.appendingPathComponent("payload.json").path
        case ("--key-id", _), ("--issuer-id", _), ("--product-id", _), ("--offer-id", _), ("--transaction-id", _):
            return "x1"
        case ("--app-account-token", _), ("--nonce", _): return "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"
        case ("--allow-introductory-offer", _): return "true"
        case ("--expires-in", _), ("--timestamp", _), ("--busy-timeout", _): return "60"
        case ("--memory-map", _): return "16"
        case ("--stripe-secret-file", _): return folder.appendingPathComponent("stripe-secrets").path
        case ("--tolerance", _): return "300"
        case ("--listen", _): return "127.0.0.1:0"
        case ("--max-body", _): return "1024"
        case ("--timeout", _): return "5"
        case ("--log-format", _): return "text"
        case ("--api-token-file", _): return folder.appendingPathComponent("stripe-secrets").path
        case ("--stripe-account-key", _): return "account_id"
        case ("--signed-at", _): return "2025-06-01"
        case ("--story", _): return "renewing"
        case ("--api-version", _): return "2024-06-20"
        case ("--account-key", _): return "account_id"
        case (_, "N"), (_, "S"), (_, "V"): return "1"
        default: return nil
        }
    }

    @Test func everyCommandReadsOnlyTheOptionsItDeclares() throws {
        let registry = CommandRegistry.vouch
        #expect(Self.run(registry, ["mint", "ca", "--out", Self.folder.appendingPathComponent("ca").path]).status == 0)
        #expect(
            Self.run(registry, ["mint", "receipt-ca", "--out", Self.folder.appendingPathComponent("receipt-ca").path])
                .status == 0)
        for command in registry.commands {
            for run in 0..<2 {
                var words = command.path
                // The server is only checked, never left serving.
                if command.path == ["serve"], run == 0 {
                    words += [
                        "--check-config", "--listen", "127.0.0.1:0", "--db",
                        Self.folder.appendingPathComponent("ledger.sqlite").path,
                    ]
                }
                if run == 1 {
                    for option in command.options {
                        guard option.takesValue else {
                            words.append(option.name)
                            continue
                        }
                        let value = try #require(
                            Self.sample(option, of: command, run: run),
                            "no sample value for \(option.name) \(option.valueName ?? "") of vouch \(command.name)")
                        words += [option.name, value]
                    }
                }
                let result = Self.run(registry, words)
                #expect(result.status != ExitCode.software, "vouch \(words.joined(separator: " ")): \(result.errors)")
                #expect(!result.errors.contains("which it does not declare"), "\(result.errors)")
            }
        }
    }

    /// A command that reads an option it does not declare.
    struct Careless: Command {
        let path = ["careless"]
        let summary = "Reads what it does not declare"
        let usage = "vouch careless"
        let discussion = ""
        let exitStatus = "0"
        var options: [CommandOption] { [.flag("--declared", help: "declared")] }

        func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
            _ = arguments.flag("--declared")
            _ = arguments.value("--undeclared")
            return ExitCode.success
        }
    }

    @Test func readingAnUndeclaredOptionIsAnInternalErrorNamingIt() {
        let registry = CommandRegistry(version: "0", groups: CommandRegistry.vouch.groups, commands: [Careless()])
        let result = Self.run(registry, ["careless", "--declared"])
        #expect(result.status == ExitCode.software)
        #expect(
            result.errors == "Error: internal error: 'vouch careless' read --undeclared, which it does not declare\n")
    }
}
