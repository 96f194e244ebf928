import Foundation

/// Exit codes (sysexits.h where one fits).
enum ExitCode {
    static let verified: Int32 = 0
    static let rejected: Int32 = 1
    static let usage: Int32 = 64
    static let unreadableInput: Int32 = 66
    static let writeError: Int32 = 74
}

/// A usage mistake: printed as `Error: …` with the command's usage, exit 64.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// An input that cannot be read: exit 66.
struct InputError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

enum CLI {
    static let version = "0.1.0"

    static let commands: [(name: String, summary: String, usage: String)] = [
        ("verify", "Verify one signed token and print its payload", VerifyCommand.usage),
        ("inspect", "Decode a token without trusting it (UNVERIFIED)", InspectCommand.usage),
        ("batch", "Verify every line of a dump, one JSON record per line", BatchCommand.usage),
        ("mint", "Make an Apple-shaped test PKI and signed test data", MintCommand.usage),
    ]

    static let usage = """
        Usage: vouch <command> [options]

        Verify App Store signed data (transactions, renewal info, server notifications,
        app transactions, retention-messaging requests) offline, against Apple's root.

        Commands:
        \(commands.map { "  \($0.name.padding(toLength: 10, withPad: " ", startingAt: 0))\($0.summary)" }.joined(separator: "\n"))
          help      Show help for a command

        Options:
          -h, --help     Show this help
          --version      Show the version

        Run 'vouch help <command>' for a command's options.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            Output.error(usage)
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help":
            Output.standard(usage)
            return 0
        case "--version":
            Output.standard("vouch \(version)")
            return 0
        case "help":
            return help(rest)
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            Output.error("Error: unknown command '\(first)'\n\n\(usage)")
            return ExitCode.usage
        }
        if rest.contains("--help") || rest.contains("-h") {
            Output.standard(command.usage)
            return 0
        }
        do {
            switch command.name {
            case "verify": return try VerifyCommand.run(rest)
            case "inspect": return try InspectCommand.run(rest)
            case "batch": return try BatchCommand.run(rest)
            case "mint": return MintCommand.run(rest)
            default: return ExitCode.usage
            }
        } catch let error as UsageError {
            Output.error("Error: \(error.message)\n\n\(command.usage)")
            return ExitCode.usage
        } catch let error as InputError {
            Output.error("Error: \(error.message)")
            return ExitCode.unreadableInput
        } catch {
            Output.error("Error: \(error)")
            return ExitCode.writeError
        }
    }

    private static func help(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            Output.standard(usage)
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Output.error("Error: unknown command '\(name)'\n\n\(usage)")
            return ExitCode.usage
        }
        Output.standard(command.usage)
        return 0
    }
}
