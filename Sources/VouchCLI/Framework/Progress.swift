import Foundation

/// The progress line of every command that reads inputs (`batch`, `entitlements`, `refunds`,
/// `ledger add`, `stripe verify`): on stderr, redrawn in place at most twice a second, cleared
/// at the end. It says what was read so far in the command's words, how fast, and, when the
/// inputs' size is known (regular files), how much of it and the time left.
///
/// It is drawn only when ``ProgressLine/options`` decide so: `--progress` always,
/// `--no-progress` never, by default when stderr is a terminal that redraws a line
/// (``Console/errorIsTerminal``) and the run is not in continuous integration (`CI` set).
final class ProgressLine {
    /// `--progress` and `--no-progress`.
    static let options: [CommandOption] = [
        .flag("--progress", help: "Draw the progress line on stderr even when it is not a\nterminal or CI is set"),
        .flag("--no-progress", help: "Draw no progress line (default: drawn when stderr is a\nterminal, not in CI)"),
    ]

    /// Whether `arguments` and the console ask for a progress line.
    static func enabled(_ arguments: ParsedArguments, console: Console) throws(UsageError) -> Bool {
        switch (arguments.flag("--progress"), arguments.flag("--no-progress")) {
        case (true, true): throw UsageError("--progress and --no-progress exclude each other")
        case (true, false): return true
        case (false, true): return false
        case (false, false): return console.errorIsTerminal && !console.continuousIntegration
        }
    }

    private let console: Console
    private let enabled: Bool
    private let totalBytes: Int?
    private let start: Date
    private var lastDraw = Date.distantPast
    private var drawn = false

    /// A line for a run that began at `start`, reading `totalBytes` in all when known.
    init(console: Console, enabled: Bool, totalBytes: Int?, start: Date = Date()) {
        self.console = console
        self.enabled = enabled
        self.totalBytes = totalBytes
        self.start = start
    }

    /// A line for `arguments`' choice, over inputs opened as `Console.openInputs` opens them.
    convenience init(
        _ arguments: ParsedArguments, console: Console, inputs: [(name: String, descriptor: Int32, owned: Bool)]
    ) throws(UsageError) {
        self.init(
            console: console, enabled: try Self.enabled(arguments, console: console),
            totalBytes: Self.knownSize(of: inputs.map(\.descriptor)))
    }

    /// Redraws the line, at most twice a second: `done` is what was read so far in the
    /// command's words (`1,200 tokens (1,190 verified, 10 rejected)`), `count` the number the
    /// rate is of, `bytes` the input bytes consumed so far (compressed bytes for gzip).
    func update(_ done: @autoclosure () -> String, count: Int, bytes: Int) {
        guard enabled else { return }
        let now = Date()
        let elapsed = now.timeIntervalSince(start)
        guard now.timeIntervalSince(lastDraw) >= 0.5, elapsed > 0 else { return }
        lastDraw = now
        var text = "\r\(done()), " + Counted.number(Int((Double(count) / elapsed).rounded())) + "/s"
        if let totalBytes, totalBytes > 0 {
            let fraction = min(1, Double(bytes) / Double(totalBytes))
            text += String(format: ", %.1f%%", fraction * 100)
            if fraction > 0 { text += ", " + Self.duration(elapsed / fraction - elapsed) + " left" }
        }
        try? console.error.write(text + "\u{1B}[K")
        drawn = true
    }

    /// Draws `text` in the line's place now, whatever the last update's time: a step that
    /// has nothing to count as it goes (storing what was read).
    func show(_ text: String) {
        guard enabled else { return }
        try? console.error.write("\r\(text)\u{1B}[K")
        drawn = true
    }

    /// Writes a line of diagnostics: the progress line is cleared first and drawn again at
    /// the next update.
    func diagnose(_ text: String) {
        clear()
        console.diagnose(text)
    }

    /// Clears the line, if drawn.
    func clear() {
        guard drawn else { return }
        try? console.error.write("\r\u{1B}[K")
        drawn = false
        lastDraw = .distantPast
    }

    /// `42 s`, `3 min 20 s`, `2 h 5 min`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds).rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }

    /// The total size when every input is a regular file.
    static func knownSize(of descriptors: [Int32]) -> Int? {
        var total = 0
        for descriptor in descriptors {
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            total += Int(status.st_size)
        }
        return total
    }
}

/// Counts as people read them, in the words of what was counted: `1 account`, `2 accounts`,
/// `21 tokens`, `305 deliveries`.
enum Counted {
    /// `count` and the noun, singular for one: `1 account`, `0 accounts`, `3 deliveries`.
    static func phrase(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
    }

    /// A count with thousands separated by commas: `1,234,567`.
    static func number(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return (count < 0 ? "-" : "") + grouped
    }

    /// What a run's results were, each kind in its words: `21 tokens`, `20 tokens, 2
    /// receipts`, `305 deliveries`. A token is every result that is neither a receipt nor a
    /// Stripe delivery (a line that holds no token is counted as one, rejected).
    static func results(total: Int, receipts: Int, deliveries: Int) -> String {
        let tokens = total - receipts - deliveries
        var parts: [String] = []
        if tokens > 0 || (receipts == 0 && deliveries == 0) { parts.append(phrase(tokens, "token")) }
        if receipts > 0 { parts.append(phrase(receipts, "receipt")) }
        if deliveries > 0 { parts.append(phrase(deliveries, "delivery", "deliveries")) }
        return parts.joined(separator: ", ")
    }
}
