/// A small option parser: `--name value`, `--name=value`, flags, and positional words.
/// `-` is a positional word (standard input); `--` ends the options.
struct Arguments {
    private(set) var options: [(name: String, value: String?)] = []
    private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - valued: option names that take a value.
    ///   - flags: option names that take none.
    init(_ words: [String], valued: Set<String>, flags: Set<String>) throws(UsageError) {
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("--") {
                if !optionsEnded, word.hasPrefix("-"), word != "-" {
                    throw UsageError("unknown option '\(word)'")
                }
                positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            var name = word, inlineValue: String? = nil
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options.append((name, inlineValue))
                } else {
                    guard index < words.count else { throw UsageError("\(name) needs a value") }
                    options.append((name, words[index]))
                    index += 1
                }
            } else if flags.contains(name) {
                guard inlineValue == nil else { throw UsageError("\(name) takes no value") }
                options.append((name, nil))
            } else {
                throw UsageError("unknown option '\(name)'")
            }
        }
    }

    /// The last value given for `name`.
    func value(_ name: String) -> String? {
        options.last(where: { $0.name == name })?.value
    }

    /// Every value given for a repeatable option, in order.
    func values(_ name: String) -> [String] {
        options.filter { $0.name == name }.compactMap(\.value)
    }

    func flag(_ name: String) -> Bool {
        options.contains { $0.name == name }
    }

    /// At most one positional: the input path, `-` or nothing for standard input.
    func singleInput() throws(UsageError) -> String? {
        guard positionals.count <= 1 else {
            throw UsageError("expected at most one input, got \(positionals.count)")
        }
        return positionals.first
    }
}
