import Foundation

/// The words after a command's name, sorted into options and positional words.
///
/// A command reads only the options it declares: reading any other name is a programming error,
/// which the accessors record (and answer as if the option were absent) and the registry reports
/// once the command has run: exit 70, naming the options. Every command run, in tests too, is
/// checked so.
struct ParsedArguments: Sendable {
    /// Values by long option name, in the order given.
    private var valuesByName: [String: [String]] = [:]
    private var flagsGiven: Set<String> = []
    /// Every valued option in the order given, for options whose relative order matters.
    private var sequence: [(name: String, value: String)] = []
    /// The positional words, in order (`-` among them for standard input).
    private(set) var positionals: [String] = []
    /// The long names of the options the command declares.
    private let declared: Set<String>
    /// The names read that the command does not declare.
    private let undeclared = UndeclaredReads()

    init(declaring options: [CommandOption]) {
        declared = Set(options.map(\.name))
    }

    /// The value of `name` (its last one when given twice), or `nil` when absent.
    func value(_ name: String) -> String? {
        check(name)
        return valuesByName[name]?.last
    }

    /// Every value of a repeatable option, in order.
    func values(_ name: String) -> [String] {
        check(name)
        return valuesByName[name] ?? []
    }

    /// The values of any of `names`, in the order given across them (`--set` and `--unset`).
    func occurrences(of names: Set<String>) -> [(name: String, value: String)] {
        for name in names { check(name) }
        return sequence.filter { names.contains($0.name) }
    }

    /// Whether the flag `name` was given.
    func flag(_ name: String) -> Bool {
        check(name)
        return flagsGiven.contains(name)
    }

    /// Whether `name`, flag or valued, was given.
    func contains(_ name: String) -> Bool {
        check(name)
        return flagsGiven.contains(name) || valuesByName[name] != nil
    }

    /// The options read so far that the command does not declare, sorted.
    var undeclaredReads: [String] { undeclared.names }

    private func check(_ name: String) {
        if !declared.contains(name) { undeclared.record(name) }
    }

    /// The single input of a command with ``Positionals/oneInput``: a path, `-`, or `nil`.
    var input: String? { positionals.first }

    fileprivate mutating func add(_ option: CommandOption, value: String?) {
        if let value {
            valuesByName[option.name, default: []].append(value)
            sequence.append((option.name, value))
        } else {
            flagsGiven.insert(option.name)
        }
    }

    fileprivate mutating func addPositional(_ word: String) { positionals.append(word) }
}

/// The names of undeclared options a command read, shared by the copies of its arguments.
private final class UndeclaredReads: @unchecked Sendable {
    private let lock = NSLock()
    private var read: Set<String> = []

    func record(_ name: String) {
        lock.lock()
        read.insert(name)
        lock.unlock()
    }

    var names: [String] {
        lock.lock()
        defer { lock.unlock() }
        return read.sorted()
    }
}

/// The one argument parser of `vouch`, in swift-argument-parser's manners:
/// - `--name value` and `--name=value`; a one-letter alias as `-j 4` or `-j4`;
/// - an option that takes a value takes the next word whatever it looks like, so
///   `--field --help` reads the member named `--help`;
/// - `--` ends the options: every later word is positional, `-x` included;
/// - `-` alone is a positional word (standard input);
/// - `-h` and `--help` in an option's place ask for help, and win over any other mistake.
enum ArgumentParser {
    enum Outcome {
        case arguments(ParsedArguments)
        case help
    }

    static func parse(
        _ words: [String], options: [CommandOption], positionals: Positionals
    ) throws(UsageError) -> Outcome {
        var parsed = ParsedArguments(declaring: options)
        var firstError: UsageError? = nil
        var index = 0
        var optionsEnded = false
        func fail(_ error: UsageError) {
            if firstError == nil { firstError = error }
        }
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                if let maximum = positionals.maximum, parsed.positionals.count >= maximum {
                    fail(
                        UsageError(
                            maximum == 0
                                ? "unexpected argument \"\(word)\""
                                : "unexpected argument \"\(word)\"; expected at most \(maximum) input"))
                }
                parsed.addPositional(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            if word == "--help" || word == "-h" { return .help }

            // Which option, and a value attached to the word itself.
            let option: CommandOption?
            var attached: String? = nil
            let spelled: String
            if word.hasPrefix("--") {
                if let equals = word.firstIndex(of: "=") {
                    spelled = String(word[..<equals])
                    attached = String(word[word.index(after: equals)...])
                } else {
                    spelled = word
                }
                option = options.first { $0.name == spelled }
            } else {
                let letter = word[word.index(after: word.startIndex)]
                spelled = "-\(letter)"
                option = options.first { $0.short == letter }
                let rest = word.dropFirst(2)
                if !rest.isEmpty { attached = String(rest) }
                if let option, !option.takesValue, attached != nil {
                    fail(UsageError("unknown option \(word)", unknownOption: word))
                    continue
                }
            }
            guard let option else {
                let nearest = word.hasPrefix("--") ? Suggestion.nearest(to: spelled, among: options.map(\.name)) : nil
                fail(
                    UsageError(
                        "unknown option \(spelled)" + (nearest.map { "; did you mean \($0)?" } ?? ""),
                        unknownOption: spelled))
                continue
            }
            if option.takesValue {
                if let attached {
                    parsed.add(option, value: attached)
                } else if index < words.count {
                    parsed.add(option, value: words[index])
                    index += 1
                } else {
                    fail(UsageError("\(spelled) needs a value"))
                }
            } else if attached != nil {
                fail(UsageError("\(spelled) takes no value"))
            } else {
                parsed.add(option, value: nil)
            }
        }
        if let firstError { throw firstError }
        return .arguments(parsed)
    }
}

/// The known word nearest a mistyped one, for "did you mean …?".
enum Suggestion {
    /// The candidate nearest `word`: one it begins, or that begins it, or within two edits
    /// (and at most half its letters); the nearest first, then the first listed. `nil` when
    /// none is near.
    static func nearest(to word: String, among candidates: [String]) -> String? {
        let bare = word.drop { $0 == "-" }
        var best: (distance: Int, candidate: String)? = nil
        for candidate in candidates where candidate != word {
            let name = candidate.drop { $0 == "-" }
            let distance: Int
            if bare.count >= 3, name.hasPrefix(bare) || bare.hasPrefix(name) {
                distance = 0
            } else {
                distance = editDistance(Array(bare), Array(name))
                guard distance <= 2, distance * 2 <= bare.count else { continue }
            }
            if best.map({ distance < $0.distance }) ?? true { best = (distance, candidate) }
        }
        return best?.candidate
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
