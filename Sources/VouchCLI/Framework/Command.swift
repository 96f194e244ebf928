/// One `vouch` command: its name, its options and what it does with them.
///
/// A command declares everything the parser needs (``options``, ``positionals``) and the help
/// text is made from the same declarations, so an option cannot be accepted without being
/// documented. ``run(_:console:)`` receives the parsed words and writes only through the
/// console, which is what lets every command run in-process in a test.
///
/// To add a command, write a type conforming to `Command` and list an instance in
/// ``CommandRegistry/vouch``; a command below a group (`mint ca`) names the group in its
/// ``path``, and the group is declared in the registry too:
///
/// ```swift
/// struct RefundsCommand: Command {
///     let path = ["refunds"]
///     let summary = "List the refunds in a dump"
///     let usage = "vouch refunds [options] [FILE|-]"
///     let discussion = "Reads …"
///     let positionals = Positionals.oneInput
///     let exitStatus = "0 success, 64 usage error, 66 unreadable input, 74 output write error."
///     var options: [CommandOption] {
///         [.value("--since", "DATE", help: "Only refunds from DATE on")] + TrustOptions.options
///     }
///     func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
///         let since = try arguments.value("--since").map { try Spelling.date($0, option: "--since") }
///         try console.output.write("…\n")
///         return ExitCode.success
///     }
/// }
/// ```
///
/// An option is one ``CommandOption`` in ``options``: the parser accepts it, `--help` lists it.
protocol Command: Sendable {
    /// The words naming the command after `vouch`: `["verify"]`, `["mint", "ca"]`.
    var path: [String] { get }
    /// One line for the command list of `vouch --help` (or of its group's help).
    var summary: String { get }
    /// The usage line without `Usage: `, e.g. `vouch verify [options] [FILE|-]`.
    var usage: String { get }
    /// What the command does, printed by `--help` between the usage line and the options.
    var discussion: String { get }
    /// Every option the command accepts, in the order `--help` lists them.
    var options: [CommandOption] { get }
    /// How many positional words are accepted and what they are called.
    var positionals: Positionals { get }
    /// The exit statuses, printed by `--help` before the examples.
    var exitStatus: String { get }
    /// Two or three command lines `--help` ends with, each a real use of the command with
    /// options it declares.
    var examples: [String] { get }

    /// Runs the command. Throw ``UsageError`` for a usage mistake (exit 64), ``InputError``
    /// for an unreadable input (66), ``WriteError`` when output cannot be written (74).
    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32
}

extension Command {
    var name: String { path.joined(separator: " ") }
    var positionals: Positionals { .none }
    var examples: [String] { [] }
}

/// An option a command accepts: `--name`, maybe a one-letter alias, maybe a value.
struct CommandOption: Sendable, Hashable {
    /// The long spelling with its dashes: `--jobs`.
    let name: String
    /// A one-letter alias without the dash: `j` for `-j`.
    let short: Character?
    /// The placeholder of the value in help (`N`, `FILE`), or `nil` for a flag.
    let valueName: String?
    /// Whether giving it twice collects both values (otherwise the last one counts).
    let repeatable: Bool
    /// The help text; may hold several lines.
    let help: String

    /// An option that takes a value: `--jobs N`, `--jobs=N`, or `-j N` with a short alias.
    static func value(
        _ name: String, short: Character? = nil, _ valueName: String, repeatable: Bool = false, help: String
    ) -> CommandOption {
        CommandOption(name: name, short: short, valueName: valueName, repeatable: repeatable, help: help)
    }

    /// An option without a value.
    static func flag(_ name: String, short: Character? = nil, help: String) -> CommandOption {
        CommandOption(name: name, short: short, valueName: nil, repeatable: false, help: help)
    }

    var takesValue: Bool { valueName != nil }
}

/// The positional words a command accepts.
struct Positionals: Sendable, Hashable {
    /// At most this many; `nil` for any number.
    let maximum: Int?

    static let none = Positionals(maximum: 0)
    /// One optional input: a path, `-` or nothing for standard input.
    static let oneInput = Positionals(maximum: 1)
    static let any = Positionals(maximum: nil)
}

/// A set of commands named by a common first word (`vouch mint …`), or the root (`vouch …`).
struct CommandGroup: Sendable {
    /// `[]` for the root, `["mint"]` for `vouch mint`.
    let path: [String]
    let summary: String
    /// The usage line without `Usage: `.
    let usage: String
    let discussion: String
    /// What the next word names, for errors: "command", "kind".
    let noun: String
    /// Text after the list of commands.
    let footer: String
    /// Two or three command lines the group's help ends with.
    var examples: [String] = []

    var name: String { (["vouch"] + path).joined(separator: " ") }
}
