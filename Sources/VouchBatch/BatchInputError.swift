public import Vouch

/// Why a line of batch input holds no token to verify: the batch's own codes, beside the
/// verifier's `VerificationError.Code` list. A record reports them exactly as it reports a
/// verification error (`{"code":…,"reason":…}`).
public struct BatchInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier; the raw values are part of the CLI's JSON output and never change.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code as text, such as `empty_line`.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The line is empty (or only whitespace).
        public static let emptyLine = Code("empty_line")
        /// The line is longer than the limit; its bytes were skipped.
        public static let lineTooLong = Code("line_too_long")

        /// Every code, in documentation order.
        public static let all: [Code] = [.emptyLine, .lineTooLong]
    }

    /// What is wrong with the line, as a stable identifier.
    public let code: Code
    /// Why, for people.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: BatchInputError, rhs: BatchInputError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// Why one line of a batch was rejected: its line was not a token (``BatchInputError``), or
/// its token did not verify (`VerificationError`).
public enum LineRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line holds no token to verify.
    case input(BatchInputError)
    /// The line's token did not verify.
    case verification(VerificationError)

    /// The code as records and summaries write it.
    public var code: String {
        switch self {
        case .input(let error): error.code.rawValue
        case .verification(let error): error.code.rawValue
        }
    }

    /// Why, for people.
    public var reason: String {
        switch self {
        case .input(let error): error.reason
        case .verification(let error): error.reason
        }
    }

    public var description: String { "\(code): \(reason)" }
}
