import Foundation
import Vouch
import VouchBatch

/// `vouch verify` on a JSON document (an App Store Server API response, a webhook body, an
/// array, several documents in a row): every token, streamed in bounded memory.
enum VerifyDocuments {
    /// Reads the input's first bytes: a bare token is returned whole (up to `limit`), a
    /// document comes back as a reader that streams the rest.
    enum Input {
        case token(bytes: [UInt8], complete: Bool)
        case documents(DocumentReader)
    }

    static func open(_ path: String?, limit: Int, options: DocumentOptions, console: Console) throws(InputError)
        -> Input
    {
        let path = path == "-" ? nil : path
        let name = path ?? "standard input"
        var descriptor = console.inputDescriptor
        if let path {
            descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw InputError("cannot read \(path): \(String(cString: strerror(errno)))") }
            var status = stat()
            if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                close(descriptor)
                throw InputError("cannot read \(path): it is a directory")
            }
        }
        var source = FileDescriptorSource(descriptor: descriptor)
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        do {
            while bytes.count <= limit {
                let count = try source.read(into: chunk)
                if count == 0 { break }
                bytes.append(contentsOf: chunk[..<count])
                if let first = bytes.first(where: { !$0.isASCIIWhitespaceByte }),
                    first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
                {
                    return .documents(DocumentReader(ReplaySource(prefix: bytes, base: source), options: options))
                }
            }
        } catch {
            throw InputError("cannot read \(name): \(error)")
        }
        if path != nil { close(descriptor) }
        return .token(bytes: Array(bytes.prefix(limit)), complete: bytes.count <= limit)
    }

    /// Verifies and prints every token; the exit status is 0 only when all verified.
    static func run(
        _ reader: DocumentReader, verifier: Verifier, kind: PayloadKind?, json: Bool, console: Console
    ) throws -> Int32 {
        var allVerified = true
        let format = DocumentRecordFormat(numbers: .whereNew)
        do {
            while let work = try reader.next() {
                // Blank lines between documents hold no token.
                if work.isBlank { continue }
                for result in work.verify(with: verifier, kind: kind) {
                    if json {
                        var writer = JSONWriter()
                        format.write(result, echo: [], kind: kind, into: &writer)
                        try console.output.write(writer.bytes)
                    }
                    let place = result.path.map { "\($0) (line \(result.line)): " } ?? ""
                    switch result.result {
                    case .success(let verified):
                        if !json { try console.output.write(place + VerifyCommand.describe(verified)) }
                    case .failure(let error):
                        allVerified = false
                        console.diagnose("vouch: rejected: \(place)\(error.code): \(error.reason)")
                    }
                }
            }
        } catch let error as InputFailure {
            throw InputError("cannot read the input: \(error)")
        }
        return allVerified ? ExitCode.success : ExitCode.rejected
    }
}

/// Bytes already read, then the rest of a source.
struct ReplaySource: ByteSource {
    var prefix: [UInt8]
    var offset = 0
    var base: FileDescriptorSource

    init(prefix: [UInt8], base: FileDescriptorSource) {
        self.prefix = prefix
        self.base = base
    }

    var consumed: Int { base.consumed }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
        guard offset == prefix.count else {
            let count = min(buffer.count, prefix.count - offset)
            prefix.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
            }
            offset += count
            return count
        }
        return try base.read(into: buffer)
    }
}

extension UInt8 {
    var isASCIIWhitespaceByte: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}
