import Vouch
import VouchBatch

/// The options that say how `vouch verify` and `vouch batch` read documents.
struct DocumentArguments {
    static let options: [CommandOption] = [
        .value(
            "--field", "PATH",
            help:
                "In JSON input, the tokens are at this member, or at this path\nwith [] wildcards (data[].lastTransactions[].signedRenewalInfo)"
        ),
        .value(
            "--document-buffer", "SIZE",
            help: "Hold a JSON document up to SIZE (default 16M) to check it\nwhole; a larger one is streamed"),
    ]

    var options = DocumentOptions()
    var shard: Shard?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        if let field = arguments.value("--field") {
            guard !field.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                throw UsageError(
                    "--field must be a member name or a path such as data[].lastTransactions[].signedRenewalInfo; got '\(field)'"
                )
            }
            options.field = field
        }
        options.echo = arguments.values("--echo")
        if let empty = options.echo.first(where: \.isEmpty) {
            throw UsageError("--echo needs a member name; got '\(empty)'")
        }
        if let text = arguments.value("--document-buffer") {
            guard let size = Self.size(text), size >= 1024 else {
                throw UsageError("--document-buffer must be a size of at least 1K, such as 16M or 1G; got '\(text)'")
            }
            options.documentBuffer = size
        }
        if let text = arguments.value("--shard") {
            guard let shard = Shard(text) else {
                throw UsageError("--shard must be I/N with 1 ≤ I ≤ N, such as 2/8; got '\(text)'")
            }
            self.shard = shard
        }
    }

    /// `4096`, `64K`, `16M`, `1G`.
    static func size(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.last, let unit = units[Character(last.uppercased())] {
            return Int(text.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        }
        return Int(text)
    }
}
