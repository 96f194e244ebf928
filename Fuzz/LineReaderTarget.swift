@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// A byte source over the fuzz input, handing out at most `step` bytes per read so that lines
/// straddle reads.
struct FuzzSource: ByteSource {
    let bytes: [UInt8]
    let step: Int
    var consumed = 0

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        let count = min(buffer.count, step, bytes.count - consumed)
        bytes[consumed..<consumed + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        consumed += count
        return count
    }
}

/// The batch line reader on arbitrary bytes, with a 64-byte line limit.
///
/// Property (plain input): one line per newline-terminated run of bytes, plus a last one without
/// newline; each is the run minus one trailing CR, or `tooLong` with the run's length when it
/// is over the limit; line numbers count up from 1. Gzip input (by its magic number) is read
/// to its end or to an `InputFailure`.
func fuzzLineReader(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let limit = 64
    let source = FuzzSource(bytes: bytes, step: 1 + bytes.count % 13)
    var lines: [(bytes: [UInt8]?, length: Int)] = []
    var expectedNumber = 1
    do {
        let reader = try LineReader.open(source, maximumLineLength: limit, chunkLines: 5)
        while let chunk = try reader.nextChunk() {
            require(chunk.firstLineNumber == expectedNumber, "line numbers")
            expectedNumber += chunk.lines.count
            for line in chunk.lines {
                switch line {
                case .text(let range): lines.append((Array(chunk.bytes[range]), range.count))
                case .tooLong(let length): lines.append((nil, length))
                }
            }
        }
    } catch {
        require(bytes.starts(with: [0x1F, 0x8B]), "plain input failed: \(error)")
        return
    }
    guard !bytes.starts(with: [0x1F, 0x8B]) else { return }
    var runs = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
    if runs.last?.isEmpty == true { runs.removeLast() }
    require(lines.count == runs.count, "\(lines.count) lines for \(runs.count) runs")
    for (line, run) in zip(lines, runs) {
        if run.count > limit {
            require(line.bytes == nil && line.length == run.count, "an over-long line")
        } else {
            let expected = run.last == 0x0D ? Array(run.dropLast()) : run
            require(line.bytes == expected, "a line's bytes")
        }
    }
}
