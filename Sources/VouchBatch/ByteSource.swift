internal import CZlib
internal import Foundation
public import Vouch

/// An input that could not be read completely: a file that cannot be opened or read, a
/// truncated or corrupt gzip stream. The one error of the input layer; what was read before it
/// has been handed out.
///
/// Two failures are equal when their codes are. `description` is the reason alone: the command
/// line prints it after the input's name.
public struct InputFailure: CodedError {
    /// A stable identifier of one kind of input failure.
    public struct Code: ErrorCode {
        /// The code as text, such as `unreadable_input`.
        public let rawValue: String

        /// A file cannot be opened or read, or is a directory.
        public static let unreadableInput = Code(rawValue: "unreadable_input")
        /// A gzip stream ends inside a member.
        public static let truncatedGzip = Code(rawValue: "truncated_gzip")
        /// A gzip stream is not valid gzip (zlib's message in the reason).
        public static let corruptGzip = Code(rawValue: "corrupt_gzip")
        /// zlib could not start decompressing (it could not allocate its state).
        public static let gzipFailure = Code(rawValue: "gzip_failure")
    }

    /// What failed, as a stable identifier.
    public let code: Code
    /// What failed, for people: the file and the system's message, or zlib's.
    public let reason: String

    /// A failure of `code` described by `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// An ``Code/unreadableInput`` failure described by `description`.
    public init(_ description: String) { self.init(.unreadableInput, description) }

    /// `ErrorCategory.storage` for an input that cannot be read, `ErrorCategory.input` for
    /// gzip that is truncated or corrupt, `ErrorCategory.internal` when zlib cannot start.
    public var category: ErrorCategory {
        switch code {
        case .truncatedGzip, .corruptGzip: .input
        case .gzipFailure: .internal
        default: .storage
        }
    }

    /// The ``reason``.
    public var description: String { reason }
}

/// Where input bytes come from.
package protocol ByteSource {
    /// Reads up to `buffer.count` bytes; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int
    /// Input bytes consumed so far (compressed bytes for gzip), for progress.
    var consumed: Int { get }
}

/// Reads a file descriptor, closing it at the end when it owns it.
package final class FileDescriptorSource: ByteSource {
    let descriptor: Int32
    private let owned: Bool
    package private(set) var consumed = 0

    /// Reads `descriptor`; closes it when done only if `owned`.
    package init(descriptor: Int32, owned: Bool = false) {
        self.descriptor = descriptor
        self.owned = owned
    }

    /// Opens a file for reading: a file that cannot be opened, or a directory, is an
    /// ``InputFailure`` naming it.
    package convenience init(path: String) throws(InputFailure) {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw InputFailure(.unreadableInput, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        self.init(descriptor: descriptor, owned: true)
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw InputFailure(.unreadableInput, "cannot read \(path): it is a directory")
        }
    }

    deinit {
        if owned { close(descriptor) }
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 {
                consumed += count
                return count
            }
            if errno == EINTR { continue }
            throw InputFailure(.unreadableInput, String(cString: strerror(errno)))
        }
    }
}

/// Bytes in memory.
package struct MemorySource: ByteSource {
    let bytes: [UInt8]
    /// At most this many bytes per read (tests use small steps so that units straddle reads).
    let step: Int
    package private(set) var consumed = 0

    package init(_ bytes: [UInt8], step: Int = 1 << 18) {
        self.bytes = bytes
        self.step = max(1, step)
    }

    package mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        let count = min(buffer.count, step, bytes.count - consumed)
        bytes[consumed..<consumed + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        consumed += count
        return count
    }
}

/// Inflates gzip (one or more concatenated members) from another source. A stream that ends
/// inside a member fails with "the gzip stream is truncated", after every byte inflated before
/// the cut has been returned.
package final class GzipSource: ByteSource {
    private var base: any ByteSource
    private var stream = z_stream()
    private var input: UnsafeMutableRawBufferPointer
    private var finished = false
    private var sawData = false
    /// A corrupt stream met in a read that had inflated some bytes first: those go out, the
    /// next read throws this.
    private var failure: InputFailure?

    /// Whether `prefix` (the first bytes of an input) starts a gzip stream: the magic number 1F 8B.
    package static func isGzip(_ prefix: some Collection<UInt8>) -> Bool {
        prefix.starts(with: [0x1F, 0x8B])
    }

    /// - Parameter prefix: bytes already read from `base` (the sniff of the input's first bytes).
    package init(base: any ByteSource, prefix: [UInt8]) throws(InputFailure) {
        self.base = base
        input = .allocate(byteCount: 256 * 1024, alignment: 1)
        prefix.withUnsafeBytes { input.copyMemory(from: $0) }
        stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_in = uInt(prefix.count)
        // 15 + 16: a gzip wrapper, the largest window.
        guard vouch_inflateInit2(&stream, 15 + 16) == Z_OK else {
            input.deallocate()
            throw InputFailure(.gzipFailure, "cannot start gzip decompression")
        }
    }

    deinit {
        inflateEnd(&stream)
        input.deallocate()
    }

    package var consumed: Int { base.consumed }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        if let failure {
            self.failure = nil
            finished = true
            throw failure
        }
        guard !finished else { return 0 }
        stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.count)
        // Until this read has inflated something: output goes out as soon as there is some.
        while stream.avail_out == uInt(buffer.count) {
            if stream.avail_in == 0 {
                let count = try base.read(into: input)
                if count == 0 {
                    // The end of the input: only clean after a complete member.
                    if sawData {
                        throw InputFailure(.truncatedGzip, "the gzip stream is truncated")
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
                let error = InputFailure(.corruptGzip, "the gzip stream is corrupt: \(message)")
                // Inflated before the corruption was found: it goes out first.
                let produced = buffer.count - Int(stream.avail_out)
                guard produced > 0 else { throw error }
                failure = error
                return produced
            }
        }
        return buffer.count - Int(stream.avail_out)
    }
}
