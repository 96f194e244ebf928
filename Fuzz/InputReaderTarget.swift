internal import VouchStripe

@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// A byte source over the fuzz input, handing out at most `step` bytes per read so that units
/// straddle reads, and failing once `failAfter` bytes have gone out (when set).
struct FuzzSource: ByteSource {
    let bytes: [UInt8]
    let step: Int
    var failAfter: Int? = nil
    var consumed = 0

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        var end = bytes.count
        if let failAfter {
            if consumed >= failAfter { throw InputFailure("injected failure") }
            end = min(end, failAfter)
        }
        let count = min(buffer.count, step, end - consumed)
        bytes[consumed..<consumed + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        consumed += count
        return count
    }
}

/// What a unit gave, comparable across runs.
private struct UnitSignature: Equatable {
    struct Token: Equatable {
        var line: Int
        var path: String?
        var form: InputToken.Form
        var bytes: [UInt8]?
        var code: String?
    }

    var document: Int
    var isBlank: Bool
    var isBareLine: Bool
    var failure: String?
    var tokens: [Token]
    /// A stored Stripe delivery's header and body, or its code.
    var delivery: String?

    init(_ unit: InputUnit) {
        document = unit.document
        isBlank = unit.isBlank
        isBareLine = unit.isBareLine
        failure = unit.failure.map { "\($0.lines) \($0.error.code)" }
        delivery = unit.delivery.map { delivery in
            switch delivery {
            case .success(let stored): "\(stored.signature) \(stored.body)"
            case .failure(let error): error.code.rawValue
            }
        }
        // In the order their results go out.
        tokens = (unit.single.map { [$0] } ?? unit.groups.flatMap { $0 }.sorted { $0.order < $1.order }).map { token in
            switch token.content {
            case .token(let bytes): Token(line: token.line, path: token.path, form: token.form, bytes: bytes)
            case .failure(let error):
                Token(line: token.line, path: token.path, form: token.form, code: error.code.rawValue)
            }
        }
    }
}

/// Reads every unit of `source`; whether it ended in a failure.
private func units(_ source: FuzzSource, options: InputOptions) -> (units: [UnitSignature], failed: Bool) {
    var read: [UnitSignature] = []
    do {
        let reader = try InputReader(source: source, options: options)
        while let unit = try reader.next() { read.append(UnitSignature(unit)) }
        require(try reader.next() == nil, "a reader at its end stays there")
    } catch {
        return (read, true)
    }
    return (read, false)
}

/// The one input reader on arbitrary bytes (documents, lines, receipts' base64, receipt files,
/// Stripe deliveries, gzip), with small limits so that every limit is reached.
///
/// Properties: units are numbered 1, 2, 3… in order (the units of a streamed document share its
/// number) and their tokens' lines never go back;
/// plain input reads to its end without failure; and when the input fails part-way (an
/// injected read failure after some bytes), the units handed out before the failure are
/// exactly the first units of the whole input's: every unit completed before the failure comes
/// out unchanged, nothing of the cut one.
func fuzzInputReader(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let options = InputOptions(maximumLineLength: 64, maximumDepth: 6, documentBuffer: 256)
    let step = 1 + bytes.count % 13
    let whole = units(FuzzSource(bytes: bytes, step: step), options: options)
    let isGzip = bytes.starts(with: [0x1F, 0x8B])
    require(isGzip || !whole.failed, "plain input failed")
    var lastLine = 0
    var lastDocument = 0
    for unit in whole.units {
        // A streamed document comes in several units of one number.
        require(
            unit.document == lastDocument + 1 || unit.document == lastDocument && !unit.isBareLine,
            "unit \(unit.document) after \(lastDocument)")
        lastDocument = unit.document
        for token in unit.tokens {
            require(token.line >= lastLine, "token lines go back: \(token.line) after \(lastLine)")
            lastLine = token.line
        }
    }
    guard !bytes.isEmpty else { return }
    var cut = FuzzSource(bytes: bytes, step: step)
    cut.failAfter = bytes.count * Int(bytes[0]) / 256
    let partial = units(cut, options: options)
    require(partial.failed, "an injected failure is reported")
    require(partial.units.count <= whole.units.count, "more units before a failure than in the whole input")
    require(Array(whole.units.prefix(partial.units.count)) == partial.units, "units before a failure differ")
}
