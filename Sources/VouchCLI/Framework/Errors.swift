import Foundation

/// Exit statuses (sysexits.h where one fits), the same for every command.
enum ExitCode {
    static let success: Int32 = 0
    static let rejected: Int32 = 1
    static let usage: Int32 = 64
    static let invalidInput: Int32 = 65
    static let unreadableInput: Int32 = 66
    /// A service the command provides cannot start (an address that cannot be listened on).
    static let unavailable: Int32 = 69
    static let software: Int32 = 70
    static let writeError: Int32 = 74
}

/// A usage mistake: `Error: …`, the command's usage line and where to read more, exit 64.
struct UsageError: Error, Equatable {
    let message: String
    /// The option word that no command here knows, so the registry can say where it belongs.
    let unknownOption: String?

    init(_ message: String, unknownOption: String? = nil) {
        self.message = message
        self.unknownOption = unknownOption
    }
}

/// An input that cannot be read: exit 66.
struct InputError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// An input that was read but is not what it must be (a JSON payload, a key): exit 65.
struct InvalidInputError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// An error of the domain the commands work in, as the registry reports it. The framework
/// knows no domain error; each one a command may throw conforms beside the commands.
protocol ReportableError: Error {
    var report: ErrorReport { get }
}

/// How the registry reports an error: as a usage mistake (exit 64, with the command's usage)
/// or with its own exit status.
enum ErrorReport {
    case usage(String)
    case exit(Int32, String)
}

/// Output that cannot be written (a closed pipe, a full disk): one line, exit 74.
struct WriteError: Error {
    /// What was being written: "standard output", a path.
    let destination: String
    let errno: Int32
    /// How many bytes of the failed write did reach the destination.
    var written = 0

    var message: String { "cannot write \(destination): \(String(cString: strerror(errno)))" }
}
