import Foundation

#if canImport(Glibc)
    import Glibc
    /// write(2), named apart from the `write` below.
    private let systemWrite = Glibc.write
    /// read(2), named apart from the `read` below.
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    /// write(2), named apart from the `write` below.
    private let systemWrite = Darwin.write
    /// read(2), named apart from the `read` below.
    private let systemRead = Darwin.read
#endif

/// Whole-file reads and writes with the errors minting reports.
enum MintFiles {
    /// The bytes of `url`; a failure names the file and the system's reason (`No such file or
    /// directory`, `Permission denied`, `Is a directory`).
    static func read(_ url: URL) throws(MintError) -> [UInt8] {
        func failure() -> MintError {
            MintError(.unreadableInput, "cannot read \(url.path): \(String(cString: strerror(errno)))")
        }
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure() }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure()
            }
            bytes += buffer[0..<count]
        }
    }

    /// Creates `directory` and its parents, if needed.
    static func createDirectory(_ directory: URL) throws(MintError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw MintError(.writeFailed, "cannot create \(directory.path): \(error.localizedDescription)")
        }
    }

    /// Writes `bytes` to `url` with permission bits `mode`, set when the file is created so a
    /// private key is never readable by others, and enforced again on an existing file.
    static func write(_ bytes: [UInt8], to url: URL, mode: mode_t) throws(MintError) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw MintError(.writeFailed, "cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, mode) == 0 else {
            throw MintError(.writeFailed, "cannot set the mode of \(url.path): \(String(cString: strerror(errno)))")
        }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                throw MintError(.writeFailed, "cannot write \(url.path): \(String(cString: strerror(errno)))")
            }
            offset += count
        }
    }
}
