import Foundation

#if canImport(Glibc)
    import Glibc
    /// write(2), named apart from the `write` below.
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    import Darwin
    /// write(2), named apart from the `write` below.
    private let systemWrite = Darwin.write
#endif

/// Whole-file reads and writes with the errors minting reports.
enum MintFiles {
    static func read(_ url: URL) throws(MintError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: url))
        } catch {
            throw MintError(.unreadableInput, "cannot read \(url.path): \(error.localizedDescription)")
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
