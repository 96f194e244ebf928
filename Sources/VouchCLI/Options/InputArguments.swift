import Foundation
import Vouch
import VouchBatch

/// How every command that reads signed data reads its inputs: the one ``InputReader``, with
/// the same `--field` paths and document limits for `verify`, `inspect`, `batch`,
/// `entitlements`, `refunds` and `receipt`.
struct InputArguments {
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

    /// The options of a command that reads no App Store tokens (`stripe verify`): the
    /// document limit, without `--field`.
    static let documentOptions = options.filter { $0.name != "--field" }

    var options = InputOptions()

    /// Reads the reader options from `arguments`; `--field` only when `readsTokens`.
    init(_ arguments: ParsedArguments, readsTokens: Bool = true) throws(UsageError) {
        if readsTokens, let field = arguments.value("--field") {
            guard !field.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                throw UsageError(
                    "--field must be a member name or a path such as data[].lastTransactions[].signedRenewalInfo; got '\(field)'"
                )
            }
            options.field = field
        }
        if let text = arguments.value("--document-buffer") {
            guard let size = Self.size(text), size >= 1024 else {
                throw UsageError("--document-buffer must be a size of at least 1K, such as 16M or 1G; got '\(text)'")
            }
            options.documentBuffer = size
        }
    }

    /// `--jobs N` of every command that verifies on several threads.
    static let jobs = CommandOption.value("--jobs", short: "j", "N", help: "Verify on N threads (default: all cores)")

    /// The `--jobs` of `arguments`, or `nil` for all cores.
    static func jobs(_ arguments: ParsedArguments) throws(UsageError) -> Int? {
        guard let text = arguments.value("--jobs") else { return nil }
        guard let jobs = Int(text), (1...1024).contains(jobs) else {
            throw UsageError("--jobs must be a whole number from 1 to 1024; got '\(text)'")
        }
        return jobs
    }

    /// `4096`, `64K`, `16M`, `1G`.
    static func size(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.last, let unit = units[Character(last.uppercased())] {
            return Int(text.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        }
        return Int(text)
    }

    /// A reader of one opened input, numbering from `firstLine` and `firstDocument`. A failure
    /// to read its first bytes is an ``InputError`` (exit 66) naming the input.
    func reader(
        _ input: (name: String, descriptor: Int32, owned: Bool), firstLine: Int = 1, firstDocument: Int = 1
    ) throws(InputError) -> InputReader {
        do {
            return try InputReader(
                fileHandle: FileHandle(fileDescriptor: input.descriptor, closeOnDealloc: false), options: options,
                firstLine: firstLine, firstDocument: firstDocument)
        } catch {
            throw InputError("cannot read \(input.name): \(error)")
        }
    }
}

/// The units of one input of a command that reads a single input (`verify`, `inspect`,
/// `receipt verify`, `receipt inspect`, `receipt transaction-ids`), read as they are needed:
/// what the input holds decides what the command does with it. At most ``inputLimit`` bytes
/// are read: a larger input ends with a unit rejected as too large
/// (``InputUnit/exceedsInputLimit``), and an endless one (`/dev/zero`, `yes |`) ends there too.
struct SingleInput {
    let name: String
    private let reader: InputReader
    private var ahead: [InputUnit] = []

    /// The most bytes of one input read (after gzip): a bare token's line (1 MiB) or a
    /// receipt's base64 text (2 MiB) with room for a JSON body around it.
    static let inputLimit = 2 * 1024 * 1024

    /// Opens `path` (`-` or `nil`: standard input) through `arguments`' reader options.
    init(_ path: String?, arguments: InputArguments, console: Console) throws(InputError) {
        let input = try console.openInputs([path ?? "-"])[0]
        name = input.name
        var arguments = arguments
        arguments.options.maximumInputSize = Self.inputLimit
        reader = try arguments.reader(input)
    }

    /// The next unit that is not a blank line, or `nil` at the end. A read failure is an
    /// ``InputError`` (exit 66) naming the input.
    mutating func next() throws(InputError) -> InputUnit? {
        if !ahead.isEmpty { return ahead.removeFirst() }
        do {
            while let unit = try reader.next() {
                if !unit.isBlank { return unit }
            }
            return nil
        } catch {
            throw InputError("cannot read \(name): \(error)")
        }
    }

    /// The next unit that is not a blank line, left to be returned by ``next()``.
    mutating func peek() throws(InputError) -> InputUnit? {
        if let unit = ahead.first { return unit }
        guard let unit = try next() else { return nil }
        ahead.append(unit)
        return unit
    }

    /// How an input begins, for a command that reads one token or one receipt, or documents.
    enum Start {
        /// The first unit: the input's only bare line, or a document or receipt file (then
        /// every unit after it is for the command too).
        case unit(InputUnit)
        /// Nothing but blank lines.
        case empty
        /// Several units, the first a bare line: a dump, which `vouch batch` reads (all of it
        /// read to count them).
        case several(Int)
    }

    /// Reads the input's first unit and tells how the input begins. Several lines over the
    /// size limit start with the unit that refuses them.
    mutating func start() throws(InputError) -> Start {
        guard let first = try next() else { return .empty }
        guard first.isBareLine, first.single?.form != .receiptFile, try peek() != nil else { return .unit(first) }
        var units = 1
        while let unit = try next() {
            if unit.exceedsInputLimit { return .unit(unit) }
            units += 1
        }
        return .several(units)
    }
}
