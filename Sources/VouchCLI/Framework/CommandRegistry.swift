import Foundation

/// The commands and groups of the tool (``vouch`` lists `vouch`'s), and the one place that
/// turns words into a command run and errors into exit statuses.
///
/// `vouch WORDS…` walks the groups by their words (`mint`, then `ca`), parses the rest with
/// the command's declared options and runs it. `vouch` and `vouch GROUP` alone print the
/// group's help on stderr with exit 64; `--help`, `-h` and `vouch help WORDS…` print help on
/// stdout with exit 0.
struct CommandRegistry: Sendable {
    let version: String
    let groups: [CommandGroup]
    let commands: [any Command]

    // MARK: Running

    /// Runs `words` (the arguments after `vouch`) and returns the exit status.
    func run(_ words: [String], console: Console) -> Int32 {
        let (group, command, rest) = resolve(words)
        do {
            if let command { return try run(command, rest, console: console) }
            return try run(group, rest, console: console)
        } catch let error as UsageError {
            let usage = command?.usage ?? group.usage
            let see = (["vouch"] + (command?.path ?? group.path) + ["--help"]).joined(separator: " ")
            console.diagnose("Error: \(explain(error, in: command))\nUsage: \(usage)\nSee '\(see)'.")
            return ExitCode.usage
        } catch {
            let (status, message) = Self.status(of: error)
            console.diagnose("Error: \(message)")
            return status
        }
    }

    /// What is said of a command that read options it does not declare.
    static func undeclared(_ names: [String], by command: any Command) -> String {
        "Error: internal error: 'vouch \(command.name)' read \(names.joined(separator: ", ")), which it does not declare"
    }

    /// The exit status and message of an error other than a usage error.
    static func status(of error: any Error) -> (Int32, String) {
        switch error {
        case let error as WriteError: return (ExitCode.writeError, error.message)
        case let error as InputError: return (ExitCode.unreadableInput, error.message)
        case let error as InvalidInputError: return (ExitCode.invalidInput, error.message)
        case let error as any ReportableError:
            switch error.report {
            case .exit(let status, let message): return (status, message)
            case .usage(let message): return (ExitCode.usage, message)
            }
        default: return (ExitCode.software, "\(error)")
        }
    }

    private func run(_ command: any Command, _ words: [String], console: Console) throws -> Int32 {
        switch try ArgumentParser.parse(words, options: command.options, positionals: command.positionals) {
        case .help:
            try console.output.write(help(for: command))
            return ExitCode.success
        case .arguments(let arguments):
            // Whatever the run ends in, a read of an option the command does not declare is a
            // programming error, reported as such rather than as the run's own outcome.
            defer {
                if !arguments.undeclaredReads.isEmpty {
                    console.diagnose(Self.undeclared(arguments.undeclaredReads, by: command))
                }
            }
            let status: Int32
            do {
                status = try command.run(arguments, console: console)
            } catch let error as any ReportableError {
                guard arguments.undeclaredReads.isEmpty else { return ExitCode.software }
                if case .usage(let message) = error.report { throw UsageError(message) }
                throw error
            } catch {
                guard arguments.undeclaredReads.isEmpty else { return ExitCode.software }
                throw error
            }
            return arguments.undeclaredReads.isEmpty ? status : ExitCode.software
        }
    }

    /// A group given no command: its help, on stdout when asked for, else on stderr as a usage
    /// mistake.
    private func run(_ group: CommandGroup, _ words: [String], console: Console) throws -> Int32 {
        guard let first = words.first else {
            try? console.error.write(help(for: group))
            return ExitCode.usage
        }
        switch first {
        case "-h", "--help":
            try console.output.write(help(for: group))
            return ExitCode.success
        case "--version" where group.path.isEmpty:
            try console.print("vouch \(version)")
            return ExitCode.success
        case "help" where group.path.isEmpty:
            return try runHelp(Array(words.dropFirst()), console: console)
        default:
            if first.hasPrefix("-") && first != "-" {
                let known = ["--help"] + (group.path.isEmpty ? ["--version"] : [])
                let nearest = Suggestion.nearest(to: first, among: known)
                throw UsageError("unknown option \(first)" + (nearest.map { "; did you mean \($0)?" } ?? ""))
            }
            throw UsageError(unknownChild(first, of: group))
        }
    }

    /// `vouch help [WORDS…]`.
    private func runHelp(_ words: [String], console: Console) throws -> Int32 {
        let (group, command, rest) = resolve(words)
        if let first = rest.first { throw UsageError(unknownChild(first, of: group)) }
        try console.output.write(command.map(help(for:)) ?? help(for: group))
        return ExitCode.success
    }

    /// The deepest group or command the leading words name, and the words after it.
    func resolve(_ words: [String]) -> (group: CommandGroup, command: (any Command)?, rest: [String]) {
        var group = groups.first { $0.path.isEmpty }!
        var index = 0
        while index < words.count {
            let path = group.path + [words[index]]
            if let command = commands.first(where: { $0.path == path }) {
                return (group, command, Array(words[(index + 1)...]))
            }
            guard let inner = groups.first(where: { $0.path == path }) else { break }
            group = inner
            index += 1
        }
        return (group, nil, Array(words[index...]))
    }

    // MARK: Messages

    private func children(of group: CommandGroup) -> [(name: String, summary: String)] {
        let depth = group.path.count + 1
        var seen = Set<String>()
        var result: [(String, String)] = []
        for command in commands
        where command.path.count >= depth && Array(command.path.prefix(group.path.count)) == group.path {
            let word = command.path[group.path.count]
            guard seen.insert(word).inserted else { continue }
            if let inner = groups.first(where: { $0.path == group.path + [word] }) {
                result.append((word, inner.summary))
            } else {
                result.append((word, command.summary))
            }
        }
        return result
    }

    private func unknownChild(_ word: String, of group: CommandGroup) -> String {
        let names = children(of: group).map(\.name)
        let nearest = Suggestion.nearest(to: word, among: names)
        return "unknown \(group.noun) \"\(word)\"" + (nearest.map { " (did you mean \($0)?)" } ?? "")
            + "; expected " + names.joined(separator: ", ")
    }

    /// An unknown option that a sibling command accepts is named as misplaced.
    private func explain(_ error: UsageError, in command: (any Command)?) -> String {
        guard let option = error.unknownOption, let command, command.path.count > 1 else { return error.message }
        let siblings = commands.filter {
            $0.path.count == command.path.count && $0.path.dropLast() == command.path.dropLast()
                && $0.options.contains { $0.name == option }
        }
        switch siblings.count {
        case 0: return error.message
        case 1, 2: return "\(option) applies to \(siblings.map(\.name).joined(separator: " and ")), not \(command.name)"
        default: return "\(option) does not apply to \(command.name)"
        }
    }

    /// `Examples:` and one indented line each, after a blank line; nothing without examples.
    static func examples(_ lines: [String]) -> String {
        lines.isEmpty ? "" : "\nExamples:\n" + lines.map { "  \($0)\n" }.joined()
    }

    func help(for group: CommandGroup) -> String {
        let list = children(of: group)
        let width = max(10, (list.map(\.name.count).max() ?? 0) + 2)
        var text = "Usage: \(group.usage)\n\n\(group.discussion)\n\nCommands:\n"
        for child in list {
            text += "  \(child.name.padding(toLength: width, withPad: " ", startingAt: 0))\(child.summary)\n"
        }
        if group.path.isEmpty {
            text += "  \("help".padding(toLength: width, withPad: " ", startingAt: 0))Show help for a command\n"
        }
        text += "\nOptions:\n  -h, --help     Show this help\n"
        if group.path.isEmpty { text += "  --version      Show the version\n" }
        text += "\n\(group.footer)\n"
        // The examples of the registry's group of that path (a group may be listed with its own).
        return text + Self.examples(groups.first { $0.path == group.path }?.examples ?? group.examples)
    }

    /// A command's `--help`: usage, discussion, the declared options, exit statuses.
    func help(for command: any Command) -> String {
        var text = "Usage: \(command.usage)\n\n\(command.discussion)\n\nOptions:\n"
        let rows =
            command.options.map { option -> (String, String) in
                var spelling = option.short.map { "-\($0), " } ?? ""
                spelling += option.name
                if let valueName = option.valueName { spelling += " \(valueName)" }
                return (spelling, option.help + (option.repeatable ? "; repeatable" : ""))
            } + [("-h, --help", "Show this help")]
        let width = 25
        for (spelling, help) in rows {
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
            if spelling.count + 2 < width {
                text += "  " + spelling.padding(toLength: width - 2, withPad: " ", startingAt: 0) + lines[0] + "\n"
            } else {
                text += "  \(spelling)\n" + String(repeating: " ", count: width) + lines[0] + "\n"
            }
            for line in lines.dropFirst() { text += String(repeating: " ", count: width) + line + "\n" }
        }
        text += "\nExit status: \(command.exitStatus)\n"
        return text + Self.examples(command.examples)
    }
}
