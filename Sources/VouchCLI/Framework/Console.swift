import Foundation

/// Where bytes go: standard output, standard error, a file, or memory in a test.
protocol OutputSink: Sendable {
    /// Writes every byte or throws; a command stops at the first failure.
    func write(_ bytes: [UInt8]) throws(WriteError)
}

extension OutputSink {
    func write(_ text: String) throws(WriteError) { try write(Array(text.utf8)) }
}

/// A file descriptor written with `write(2)`, retried on `EINTR` and short writes. With
/// SIGPIPE ignored (see `main.swift`), a closed pipe is `EPIPE` here, not a signal.
struct DescriptorSink: OutputSink {
    let descriptor: Int32
    /// How errors name it: "standard output" or the path.
    let name: String

    func write(_ bytes: [UInt8]) throws(WriteError) {
        let (failure, offset): (Int32?, Int) = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return (errno, offset)
                }
                offset += written
            }
            return (nil, offset)
        }
        if let failure { throw WriteError(destination: name, errno: failure, written: offset) }
    }
}

/// Bytes collected in memory, for running a command inside a test.
final class MemorySink: OutputSink, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [UInt8] = []

    init() {}

    func write(_ bytes: [UInt8]) throws(WriteError) {
        lock.lock()
        defer { lock.unlock() }
        stored += bytes
    }

    var bytes: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// Everything a command reads from and writes to outside its arguments: the three standard
/// streams and the clock. Commands touch nothing else of the process, so a test runs one
/// in-process with memory sinks, a file as standard input and a fixed clock.
struct Console: Sendable {
    var output: any OutputSink
    var error: any OutputSink
    /// The descriptor read for `-` (or no input): 0, or an open file in a test.
    var inputDescriptor: Int32
    /// Whether standard error is a terminal that can redraw a line (progress lines are drawn
    /// only then): not with `TERM=dumb`.
    var errorIsTerminal: Bool
    var now: @Sendable () -> Date
    /// Whether the run is in continuous integration (`CI` set, and not to `false` or `0`):
    /// no progress line is drawn there unless asked for.
    var continuousIntegration = false
    /// Whether standard input is a terminal: a command reading it says so on stderr first.
    var inputIsTerminal = false

    /// The process's own streams and clock.
    static var standard: Console {
        Console(
            output: DescriptorSink(descriptor: 1, name: "standard output"),
            error: DescriptorSink(descriptor: 2, name: "standard error"),
            inputDescriptor: 0,
            errorIsTerminal: isatty(2) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb",
            now: { Date() },
            continuousIntegration: ProcessInfo.processInfo.environment["CI"].map {
                !["", "0", "false"].contains($0.lowercased())
            } ?? false,
            inputIsTerminal: isatty(0) == 1)
    }

    /// Writes `text` and a newline to standard output.
    func print(_ text: String) throws(WriteError) {
        try output.write(text + "\n")
    }

    /// Writes `text` and a newline to standard error. A failure there has nowhere to be
    /// reported, so it is ignored.
    func diagnose(_ text: String) {
        try? error.write(text + "\n")
    }

    /// Where `--out PATH` writes: standard output for `-`, otherwise the file, created or
    /// truncated through `open(2)` as a shell's `>` would, so a symbolic link is written
    /// through rather than replaced.
    func destination(_ path: String?) throws(WriteError) -> OutputFile {
        guard let path, path != "-" else { return OutputFile(sink: output, descriptor: nil) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw WriteError(destination: path, errno: errno) }
        return OutputFile(sink: DescriptorSink(descriptor: descriptor, name: path), descriptor: descriptor)
    }

    /// Reads a whole input: a path, or the input descriptor for `nil` and `-`. At most `limit`
    /// bytes are kept; `complete` is false when there was more.
    func readInput(_ path: String?, limit: Int) throws(InputError) -> (bytes: [UInt8], complete: Bool) {
        let name = path.flatMap { $0 == "-" ? nil : $0 }
        let descriptor: Int32
        if let name {
            descriptor = open(name, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw InputError("cannot read \(name): \(String(cString: strerror(errno)))") }
        } else {
            descriptor = inputDescriptor
            hintTerminalInput()
        }
        defer { if name != nil { close(descriptor) } }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw InputError("cannot read \(name ?? "standard input"): it is a directory")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw InputError("cannot read \(name ?? "standard input"): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return (bytes, true) }
            bytes += chunk[..<count]
        }
        return (Array(bytes.prefix(limit)), false)
    }
}

/// An output opened for `--out`: standard output or a file to close when done.
struct OutputFile: Sendable {
    let sink: any OutputSink
    let descriptor: Int32?

    func write(_ bytes: [UInt8]) throws(WriteError) { try sink.write(bytes) }

    /// Closes a file, reporting a failure a delayed write surfaces only there.
    func close() throws(WriteError) {
        guard let descriptor else { return }
        if Foundation.close(descriptor) != 0 {
            throw WriteError(destination: (sink as? DescriptorSink)?.name ?? "output", errno: errno)
        }
    }
}

extension Console {
    /// Opens every input (`-` is standard input) before any is read, so an unreadable input or
    /// a directory stops the run before any output. The caller closes the `owned` descriptors;
    /// on failure those opened so far are closed here.
    func openInputs(_ paths: [String]) throws(InputError) -> [(name: String, descriptor: Int32, owned: Bool)] {
        var inputs: [(name: String, descriptor: Int32, owned: Bool)] = []
        do throws(InputError) {
            for path in paths {
                if path == "-" {
                    if !inputs.contains(where: { !$0.owned }) { hintTerminalInput() }
                    inputs.append(("standard input", inputDescriptor, false))
                    continue
                }
                var status = stat()
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw InputError("cannot read \(path): \(String(cString: strerror(errno)))")
                }
                inputs.append((path, descriptor, true))
                if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                    throw InputError("cannot read \(path): it is a directory")
                }
            }
        } catch {
            for input in inputs where input.owned { close(input.descriptor) }
            throw error
        }
        return inputs
    }

    /// Why the file at `path` cannot be read whole: the system's reason (`No such file or
    /// directory`, `Permission denied`), or `it is a directory`.
    static func whyUnreadable(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return "it is a directory" }
        var byte: UInt8 = 0
        if read(descriptor, &byte, 1) < 0 { return String(cString: strerror(errno)) }
        return "it could not be read"
    }

    /// What reading standard input from a terminal waits for, said once on stderr before
    /// reading: a person who typed no FILE learns why nothing happens.
    static let terminalInputHint =
        "vouch: reading standard input from the terminal: paste the input, then press Ctrl-D (or give a FILE)"

    private func hintTerminalInput() {
        if inputIsTerminal { diagnose(Self.terminalInputHint) }
    }
}
