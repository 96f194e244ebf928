internal import CZlib
internal import Foundation

/// A run of consecutive input lines, held in one buffer.
package struct LineChunk: Sendable {
    package enum Line: Sendable {
        /// The line's bytes in ``LineChunk/bytes`` (newline and a trailing CR removed).
        case text(Range<Int>)
        /// A line longer than the reader's limit; its bytes were skipped, not kept.
        case tooLong(length: Int)
    }

    /// The 1-based number of the first line.
    package let firstLineNumber: Int
    package let bytes: [UInt8]
    package let lines: [Line]
    /// Input bytes consumed (compressed bytes for gzip) since the previous chunk, for progress.
    package let inputBytes: Int
}

/// Where input bytes come from.
package protocol ByteSource {
    /// Reads up to `buffer.count` bytes; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int
    /// Input bytes consumed so far (compressed bytes for gzip), for progress.
    var consumed: Int { get }
}

/// An input that could not be read completely.
public struct InputFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// A failure described by `description`.
    public init(_ description: String) { self.description = description }
}

/// Reads a file descriptor.
package struct FileDescriptorSource: ByteSource {
    let descriptor: Int32
    package private(set) var consumed = 0

    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    package mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 {
                consumed += count
                return count
            }
            if errno == EINTR { continue }
            throw InputFailure(String(cString: strerror(errno)))
        }
    }
}

/// Inflates gzip (one or more concatenated members) from another source.
package final class GzipSource: ByteSource {
    private var base: any ByteSource
    private var stream = z_stream()
    private var input: UnsafeMutableRawBufferPointer
    private var finished = false
    private var sawData = false

    /// Reads up to two bytes of `base`: a stream starting with the gzip magic number (1F 8B)
    /// comes back inflated, with nothing left over; any other comes back as it is, with the
    /// bytes already read as `prefix`.
    package static func sniffing(_ base: any ByteSource) throws(InputFailure) -> (
        source: any ByteSource, prefix: [UInt8]
    ) {
        var base = base
        let sniff = UnsafeMutableRawBufferPointer.allocate(byteCount: 2, alignment: 1)
        defer { sniff.deallocate() }
        var count = 0
        while count < 2 {
            let read = try base.read(into: UnsafeMutableRawBufferPointer(rebasing: sniff[count...]))
            if read == 0 { break }
            count += read
        }
        let prefix = Array(sniff[..<count])
        if prefix == [0x1F, 0x8B] { return (try GzipSource(base: base, prefix: prefix), []) }
        return (base, prefix)
    }

    /// - Parameter prefix: bytes already read from `base` (the magic-number sniff).
    package init(base: any ByteSource, prefix: [UInt8]) throws(InputFailure) {
        self.base = base
        input = .allocate(byteCount: 256 * 1024, alignment: 1)
        prefix.withUnsafeBytes { input.copyMemory(from: $0) }
        stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_in = uInt(prefix.count)
        // 15 + 16: a gzip wrapper, the largest window.
        guard vouch_inflateInit2(&stream, 15 + 16) == Z_OK else {
            input.deallocate()
            throw InputFailure("cannot start gzip decompression")
        }
    }

    deinit {
        inflateEnd(&stream)
        input.deallocate()
    }

    package var consumed: Int { base.consumed }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        guard !finished else { return 0 }
        stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.count)
        while stream.avail_out == uInt(buffer.count) {
            if stream.avail_in == 0 {
                let count = try base.read(into: input)
                if count == 0 {
                    // The end of the input: only clean after a complete member.
                    if sawData {
                        throw InputFailure("the gzip stream is truncated")
                    }
                    finished = true
                    return 0
                }
                stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(count)
            }
            sawData = true
            let status = inflate(&stream, Z_NO_FLUSH)
            switch status {
            case Z_OK, Z_BUF_ERROR:
                continue
            case Z_STREAM_END:
                // Another member may follow.
                sawData = false
                inflateReset(&stream)
                let produced = buffer.count - Int(stream.avail_out)
                if produced > 0 { return produced }
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw InputFailure("the gzip stream is corrupt: \(message)")
            }
        }
        return buffer.count - Int(stream.avail_out)
    }
}

/// Splits a byte source into chunks of lines, never holding more than `maximumLineLength`
/// bytes of one line: longer lines are skipped to their end and reported as too long. Memory
/// stays bounded whatever the input (a gigabyte without a newline included).
public final class LineReader {
    /// The default limit of one line: 1 MiB.
    public static let defaultMaximumLineLength = 1024 * 1024

    private var source: any ByteSource
    private let maximumLineLength: Int
    private let chunkLines: Int
    private let chunkBytes: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var position = 0
    private var atEnd = false
    private var pendingFailure: InputFailure?
    private var nextLineNumber = 1
    private var consumedBefore = 0
    /// The bytes of the last chunk: the next one reserves as much (and a little more) at
    /// once, rather than growing by doubling and copying the chunk five times over.
    private var lastChunkBytes = 0

    /// Reads from an open file descriptor (not closed here), inflating the input when it
    /// starts with the gzip magic number (1F 8B).
    public static func open(
        descriptor: Int32, maximumLineLength: Int = defaultMaximumLineLength
    ) throws(InputFailure) -> LineReader {
        try open(FileDescriptorSource(descriptor: descriptor), maximumLineLength: maximumLineLength)
    }

    /// Lines (or documents, for `DocumentReader` runs) per chunk of work: few enough that the
    /// bytes a worker has just copied are still in its core's cache when it verifies them (with
    /// 256 receipt lines, 1.5 MB, they were not, and a dump of receipts ran 10 % slower on 2
    /// threads).
    package static let defaultChunkLines = 64

    /// Opens a source, inflating it when it starts with the gzip magic number (1F 8B). A chunk
    /// holds at most `chunkLines` lines and 512 KiB (or one longer line).
    package static func open(
        _ base: any ByteSource, maximumLineLength: Int = defaultMaximumLineLength,
        chunkLines: Int = defaultChunkLines
    ) throws(InputFailure) -> LineReader {
        let (source, prefix) = try GzipSource.sniffing(base)
        return LineReader(source: source, maximumLineLength: maximumLineLength, chunkLines: chunkLines, prefix: prefix)
    }

    init(
        source: any ByteSource, maximumLineLength: Int, chunkLines: Int, chunkBytes: Int = 512 * 1024,
        prefix: [UInt8]
    ) {
        self.source = source
        self.maximumLineLength = maximumLineLength
        self.chunkLines = chunkLines
        self.chunkBytes = chunkBytes
        buffer = .allocate(byteCount: 256 * 1024, alignment: 1)
        prefix.withUnsafeBytes { buffer.copyMemory(from: $0) }
        filled = prefix.count
    }

    deinit {
        buffer.deallocate()
    }

    /// The next chunk, or `nil` at the end. When the source fails, the lines read before the
    /// failure (a last partial line included) come first; the failure is thrown by the call
    /// after them.
    package func nextChunk() throws(InputFailure) -> LineChunk? {
        if let failure = pendingFailure {
            pendingFailure = nil
            throw failure
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(64 * 1024, min(lastChunkBytes + lastChunkBytes / 8, chunkBytes + 64 * 1024)))
        var lines: [LineChunk.Line] = []
        lines.reserveCapacity(chunkLines)
        let first = nextLineNumber
        while lines.count < chunkLines, bytes.count < chunkBytes {
            guard let line = nextLine(appendingTo: &bytes) else { break }
            lines.append(line)
            nextLineNumber += 1
        }
        if lines.isEmpty, let failure = pendingFailure {
            pendingFailure = nil
            throw failure
        }
        guard !lines.isEmpty else { return nil }
        lastChunkBytes = bytes.count
        // What the source has delivered, less what still waits in the read buffer (whose
        // bytes are inflated ones for gzip, so not comparable there).
        let consumed = source is GzipSource ? source.consumed : source.consumed - (filled - position)
        defer { consumedBefore = consumed }
        return LineChunk(firstLineNumber: first, bytes: bytes, lines: lines, inputBytes: consumed - consumedBefore)
    }

    /// Appends one line to `output`; `nil` at the end of input.
    private func nextLine(appendingTo output: inout [UInt8]) -> LineChunk.Line? {
        let start = output.count
        var length = 0
        var tooLong = false
        while true {
            if position == filled {
                guard refill() else {
                    if length == 0 && !tooLong { return nil }
                    return finish(&output, start: start, length: length, tooLong: tooLong)
                }
            }
            let base = buffer.baseAddress!
            let newline = memchr(base + position, 0x0A, filled - position)
            let end = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? filled
            length += end - position
            if !tooLong {
                if length > maximumLineLength {
                    tooLong = true
                    output.removeSubrange(start...)
                } else {
                    output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position..<end]))
                }
            }
            position = newline == nil ? end : end + 1
            if newline != nil {
                return finish(&output, start: start, length: length, tooLong: tooLong)
            }
        }
    }

    private func finish(_ output: inout [UInt8], start: Int, length: Int, tooLong: Bool) -> LineChunk.Line {
        if tooLong { return .tooLong(length: length) }
        var end = output.count
        if end > start, output[end - 1] == 0x0D { end -= 1 }
        output.removeSubrange(end...)
        return .text(start..<end)
    }

    private func refill() -> Bool {
        guard !atEnd else { return false }
        do {
            filled = try source.read(into: buffer)
        } catch {
            pendingFailure = error
            filled = 0
        }
        position = 0
        if filled == 0 { atEnd = true }
        return filled > 0
    }
}
