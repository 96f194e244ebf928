import Foundation
import Testing
import VouchTestSupport

@testable import VouchCLI

/// Every `vouch …` command line in a fenced code block of `README.md` and `docs/` names a command
/// of ``CommandRegistry/vouch`` and gives it only options that command declares, so the
/// documentation cannot show a command or an option the tool does not have.
///
/// A command line is found wherever a shell runs `vouch`: at the start of a line, after `|`,
/// `&&`, `;` or `&`, inside `$(…)`, or as an argument of another command (`swift run -c release
/// vouch …`, `parallel vouch …`). A failure names the file and line of the command line.
@Suite struct DocumentedCommandLineTests {
    /// One `vouch` command line of a documentation file.
    struct Invocation: Equatable, CustomStringConvertible {
        /// The 1-based line of the file it starts on.
        let line: Int
        /// The words after `vouch`, quotes removed.
        let words: [String]

        var description: String { (["vouch"] + words).joined(separator: " ") }
    }

    /// The documentation whose command lines are checked: the README and every page of `docs/`.
    static func documentationFiles() throws -> [URL] {
        let docs = packageRoot.appendingPathComponent("docs")
        let pages = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
        return [packageRoot.appendingPathComponent("README.md")]
            + pages.sorted().map { docs.appendingPathComponent($0) }
    }

    // MARK: Finding command lines

    /// Fenced blocks whose lines are shell: unlabelled ones (usage lines) and shell ones.
    static let shellLanguages: Set<String> = ["", "sh", "bash", "shell", "console", "zsh"]

    /// The lines of the shell code blocks of `markdown`, a line ending in `\` joined with the
    /// next, each with the 1-based number of the line it starts on.
    static func shellLines(in markdown: String) -> [(line: Int, text: String)] {
        var result: [(line: Int, text: String)] = []
        var fence: (marker: String, isShell: Bool)? = nil
        var pending: (line: Int, text: String)? = nil
        for (offset, raw) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if trimmed.hasPrefix(open.marker) && trimmed.allSatisfy({ $0 == open.marker.first }) {
                    if let last = pending { result.append(last) }
                    pending = nil
                    fence = nil
                    continue
                }
                guard open.isShell else { continue }
                var text = line
                if text.hasPrefix("$ ") { text.removeFirst(2) }
                let continued = text.hasSuffix("\\")
                if continued { text.removeLast() }
                if let started = pending {
                    pending = (started.line, started.text + " " + text)
                } else {
                    pending = (offset + 1, text)
                }
                if !continued, let complete = pending {
                    result.append(complete)
                    pending = nil
                }
            } else if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                let marker = String(trimmed.prefix { $0 == trimmed.first })
                let language =
                    trimmed.dropFirst(marker.count).trimmingCharacters(in: .whitespaces)
                    .split(separator: " ").first.map(String.init) ?? ""
                fence = (marker, shellLanguages.contains(language.lowercased()))
            }
        }
        return result
    }

    /// The simple commands of a shell line, as words: split at `|`, `||`, `&&`, `;`, `&`, `(`
    /// and `)` outside quotes, the text of every `$(…)` and `` `…` `` read as commands of their
    /// own after the line's. Quotes are removed, a redirection's target is left out, and a `#`
    /// that starts a word starts a comment.
    static func simpleCommands(of line: String) -> [[String]] {
        let (outer, inner) = substitutions(in: line)
        return words(of: outer) + inner.flatMap(simpleCommands(of:))
    }

    /// `line` with each `$(…)` and `` `…` `` (outside single quotes) replaced by one word, and
    /// their texts; `$((…))`, arithmetic, is replaced by one word too.
    static func substitutions(in line: String) -> (outer: String, inner: [String]) {
        let characters = Array(line)
        var outer = ""
        var inner: [String] = []
        var inSingleQuotes = false
        var index = 0
        /// The index of the parenthesis closing the one just before `start`.
        func closing(from start: Int) -> Int {
            var depth = 1
            var position = start
            while position < characters.count {
                if characters[position] == "(" { depth += 1 }
                if characters[position] == ")" {
                    depth -= 1
                    if depth == 0 { return position }
                }
                position += 1
            }
            return characters.count
        }
        while index < characters.count {
            let character = characters[index]
            let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
            if character == "'" { inSingleQuotes.toggle() }
            if !inSingleQuotes && character == "$" && next == "(" {
                let isArithmetic = index + 2 < characters.count && characters[index + 2] == "("
                let end = closing(from: index + 2)
                if isArithmetic {
                    outer += "ARITHMETIC"
                } else {
                    inner.append(String(characters[(index + 2)..<end]))
                    outer += "SUBSTITUTED"
                }
                index = end + 1
                continue
            }
            if !inSingleQuotes && character == "`" {
                var end = index + 1
                while end < characters.count && characters[end] != "`" { end += 1 }
                inner.append(String(characters[(index + 1)..<end]))
                outer += "SUBSTITUTED"
                index = end + 1
                continue
            }
            outer.append(character)
            index += 1
        }
        return (outer, inner)
    }

    /// The simple commands of a line without substitutions, as words.
    static func words(of line: String) -> [[String]] {
        let characters = Array(line)
        var commands: [[String]] = [[]]
        var word = ""
        var inWord = false
        var redirectTarget = false
        var quote: Character? = nil
        func endWord() {
            guard inWord else { return }
            if redirectTarget {
                redirectTarget = false
            } else {
                commands[commands.count - 1].append(word)
            }
            word = ""
            inWord = false
        }
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
            index += 1
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\" && open == "\"", let next {
                    word.append(next)
                    index += 1
                } else {
                    word.append(character)
                }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                inWord = true
            case "\\":
                if let next {
                    word.append(next)
                    inWord = true
                    index += 1
                }
            case " ", "\t":
                endWord()
            case "#" where !inWord:
                index = characters.count
            case "<", ">":
                // A digit before it is a descriptor (`2>`), `>&2` and `2>&1` name no file.
                if inWord && word.allSatisfy(\.isNumber) {
                    word = ""
                    inWord = false
                }
                endWord()
                if next == "&" {
                    index += 1
                    while index < characters.count && characters[index].isNumber { index += 1 }
                } else if next != ">" {
                    redirectTarget = true
                }
            case "|", "&", ";", "(", ")":
                endWord()
                redirectTarget = false
                if !commands[commands.count - 1].isEmpty { commands.append([]) }
            default:
                word.append(character)
                inWord = true
            }
        }
        endWord()
        return commands.filter { !$0.isEmpty }
    }

    /// The words after `vouch` of each simple command of `line` that runs `vouch`: one whose first
    /// word (after `NAME=value` assignments) is `vouch` or a path to it, or that has `vouch` as a
    /// word of its own (`swift run -c release vouch verify …`, `parallel vouch batch …`).
    static func vouchArguments(in line: String) -> [[String]] {
        simpleCommands(of: line).compactMap { words in
            let command = words.drop { $0.range(of: #"^[A-Za-z_][A-Za-z0-9_]*="#, options: .regularExpression) != nil }
            if let first = command.first, first == "vouch" || first.hasSuffix("/vouch") {
                return Array(command.dropFirst())
            }
            guard let position = command.firstIndex(of: "vouch") else { return nil }
            return Array(command[(position + 1)...])
        }
    }

    /// Every `vouch` command line of the shell code blocks of `markdown`.
    static func invocations(in markdown: String) -> [Invocation] {
        shellLines(in: markdown).flatMap { line in
            vouchArguments(in: line.text).map { Invocation(line: line.line, words: $0) }
        }
    }

    // MARK: Checking one

    /// What is wrong with `vouch WORDS…`, or `nil`: the words must name a command (or a group
    /// alone, `help` and a command, `--help`, `--version`), and every option given must be one
    /// the command declares. An option's value is skipped; a usage line's brackets
    /// (`[--at WHEN]`) are read through.
    static func problem(with words: [String], registry: CommandRegistry = .vouch) -> String? {
        guard let first = words.first else { return nil }
        if ["--help", "-h", "--version"].contains(first) { return nil }
        if first == "help" {
            let named = words.dropFirst().filter { !$0.hasPrefix("[") }
            let (group, _, rest) = registry.resolve(Array(named))
            guard let unknown = rest.first else { return nil }
            return "`\((["vouch"] + group.path + [unknown]).joined(separator: " "))` is no command"
        }
        let (group, found, rest) = registry.resolve(words)
        guard let command = found else {
            if rest.isEmpty || rest.first == "--help" || rest.first == "-h" { return nil }
            return "`\((["vouch"] + group.path + [rest[0]]).joined(separator: " "))` is no command"
        }
        var index = 0
        while index < rest.count {
            var word = rest[index]
            index += 1
            while let first = word.first, "[(".contains(first) { word.removeFirst() }
            while let last = word.last, "]),.…".contains(last) { word.removeLast() }
            if word == "--" { break }
            guard word.hasPrefix("-"), word.count > 1, word != "--help", word != "-h" else { continue }
            if word.hasPrefix("--") {
                let name = String(word.prefix { $0 != "=" })
                guard let option = command.options.first(where: { $0.name == name }) else {
                    return "`vouch \(command.name)` declares no option \(name)"
                }
                if option.takesValue && !word.contains("=") { index += 1 }
            } else {
                let letter = word[word.index(after: word.startIndex)]
                guard letter.isLetter else { continue }
                guard let option = command.options.first(where: { $0.short == letter }) else {
                    return "`vouch \(command.name)` declares no option -\(letter)"
                }
                if option.takesValue && word.count == 2 { index += 1 }
            }
        }
        return nil
    }

    // MARK: The documentation

    @Test func everyDocumentedCommandLineNamesACommandAndOnlyOptionsItDeclares() throws {
        var checked = 0
        for file in try Self.documentationFiles() {
            let name = String(file.path.dropFirst(packageRoot.path.count + 1))
            for invocation in Self.invocations(in: try String(contentsOf: file, encoding: .utf8)) {
                checked += 1
                if let problem = Self.problem(with: invocation.words) {
                    Issue.record(
                        "\(name):\(invocation.line): \(problem): \(invocation)",
                        sourceLocation: SourceLocation(
                            fileID: "vouch/\(name)", filePath: file.path, line: invocation.line, column: 1))
                }
            }
        }
        // The pages hold some seventy command lines: a scan that finds far fewer is broken.
        #expect(checked >= 60, "only \(checked) command lines found in README.md and docs/")
    }

    @Test func everyCommandAppearsInADocumentedCommandLine() throws {
        var shown = Set<String>()
        for file in try Self.documentationFiles() {
            for invocation in Self.invocations(in: try String(contentsOf: file, encoding: .utf8)) {
                if let command = CommandRegistry.vouch.resolve(invocation.words).command { shown.insert(command.name) }
            }
        }
        for command in CommandRegistry.vouch.commands {
            #expect(shown.contains(command.name), "no command line in README.md or docs/ runs vouch \(command.name)")
        }
    }

    // MARK: The checker itself

    @Test(arguments: [
        ("vouch verfy token.jws", "`vouch verfy` is no command"),
        ("vouch mint tokens --ca testca", "`vouch mint tokens` is no command"),
        ("vouch help frobnicate", "`vouch frobnicate` is no command"),
        ("vouch batch --jbos 2 dump.jsonl", "`vouch batch` declares no option --jbos"),
        ("vouch verify --jobs 2 token.jws", "`vouch verify` declares no option --jobs"),
        ("vouch refunds --at 2026-01-01 dump.jwsl", "`vouch refunds` declares no option --at"),
        ("vouch receipt inspect --json receipt.der", "`vouch receipt inspect` declares no option --json"),
        ("vouch mint ca -j 2 --out testca", "`vouch mint ca` declares no option -j"),
        (
            "vouch entitlements [--at WHEN] [--frobnicate] [FILE ...|-]",
            "`vouch entitlements` declares no option --frobnicate"
        ),
        ("vouch batch --summary-json=- --bogus=1", "`vouch batch` declares no option --bogus"),
    ])
    func aWrongCommandLineIsNamedWithWhatIsWrong(line: String, problem: String) throws {
        let words = try #require(Self.vouchArguments(in: line).first)
        #expect(Self.problem(with: words) == problem)
    }

    @Test(arguments: [
        "vouch verify --bundle-id com.example.app --environment Production --json history.json",
        "vouch batch -j 4 --payload none --echo id --echo user --shard 2/8 -",
        "vouch verify --field --help body.json",
        "vouch batch --first-line $((10#$n * 1000000 + 1)) $p > $p.out",
        "vouch entitlements [--at WHEN] [--tiers FILE] [--account ID]... [--json] [options] [FILE ...|-]",
        "vouch mint ca --out testca --not-before=2025-01-01 -- --not-an-option",
        "vouch receipt verify --format verify-receipt request.json",
        "vouch mint", "vouch mint --help", "vouch help mint history", "vouch --version", "vouch",
    ])
    func aRightCommandLineHasNoProblem(line: String) throws {
        let words = try #require(Self.vouchArguments(in: line).first)
        #expect(Self.problem(with: words) == nil)
    }

    @Test func commandLinesAreFoundWhereverAShellRunsVouch() {
        #expect(
            Self.vouchArguments(
                in: #"jq -c . in.json | vouch batch --bogus && echo "$(vouch verify --json x)" ; ok=1 vouch help"#)
                == [["batch", "--bogus"], ["help"], ["verify", "--json", "x"]])
        #expect(
            Self.vouchArguments(in: "swift run -c release vouch verify --root r.der t.jws") == [
                ["verify", "--root", "r.der", "t.jws"]
            ])
        #expect(Self.vouchArguments(in: ".build/release/vouch inspect `cat t`") == [["inspect", "SUBSTITUTED"]])
        #expect(
            Self.vouchArguments(in: "parallel --pipe -k vouch batch --no-line-number < dump.jsonl") == [
                ["batch", "--no-line-number"]
            ])
        #expect(Self.vouchArguments(in: "spark-submit --files \"$(scripts/build-static)\" verify_dump.py").isEmpty)
        #expect(Self.vouchArguments(in: "swift run -c release vouch-bench --lines 20000").isEmpty)
        #expect(Self.vouchArguments(in: "scripts/build-static     # prints .build/static/release/vouch").isEmpty)
        #expect(Self.vouchArguments(in: "vouch batch 'dumps/*.gz' 2>&1 > out.jsonl") == [["batch", "dumps/*.gz"]])
        #expect(
            Self.vouchArguments(in: "vouch batch --first-line $((10#$n * 1000000 + 1)) $p > $p.out & done")
                == [["batch", "--first-line", "ARITHMETIC", "$p"]])
    }

    @Test func aBadCommandLineIsFoundOnTheLineItStartsOn() {
        let markdown = """
            # A page

            ```sh
            # a comment that names vouch batch --nothing
            vouch verify --json token.jws
            vouch mint notification --ca testca --set bundleId=com.example.app \\
                --sett notificationType=REFUND > refund.jws
            ```

            ```json
            {"vouch": "batch --frobnicate"}
            ```

            ```
            vouch batch [options] [FILE ...|-]
            ```
            """
        let invocations = Self.invocations(in: markdown)
        #expect(invocations.map(\.line) == [5, 6, 15])
        #expect(
            invocations.map { Self.problem(with: $0.words) } == [
                nil, "`vouch mint notification` declares no option --sett", nil,
            ])
    }
}
