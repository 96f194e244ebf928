internal import Foundation
public import Vouch
internal import VouchOpenSSL

/// Why minting failed: a stable code for programs and a reason for people.
///
/// Two errors are equal when their codes are equal; the reason carries the detail (the file,
/// the field, OpenSSL's own message).
public struct MintError: CodedError {
    /// A stable, extensible error code.
    public struct Code: RawRepresentable, ErrorCode {
        public var rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// A file or directory could not be read.
        public static let unreadableInput = Code(rawValue: "unreadable_input")
        /// A file was read but its content is not what minting needs (a certificate, a key, JSON).
        public static let invalidInput = Code(rawValue: "invalid_input")
        /// A `FIELD=VALUE` override is malformed.
        public static let invalidOverride = Code(rawValue: "invalid_override")
        /// The request cannot be honoured (for example a notification in Xcode style).
        public static let unsupported = Code(rawValue: "unsupported")
        /// A file or directory could not be written.
        public static let writeFailed = Code(rawValue: "write_failed")
        /// OpenSSL refused an operation that should not fail.
        public static let openSSLFailure = Code(rawValue: "openssl_failure")
    }

    /// What failed, as a stable identifier.
    public var code: Code
    /// What failed, for people: the file, the field, OpenSSL's message.
    public var reason: String

    /// An error with `code` and `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `ErrorCategory.storage` for a file that cannot be read or written,
    /// `ErrorCategory.internal` for OpenSSL's failure, `ErrorCategory.input` for the other
    /// codes (what was asked for is not what minting can use).
    public var category: ErrorCategory {
        switch code {
        case .unreadableInput, .writeFailed: .storage
        case .openSSLFailure: .internal
        default: .input
        }
    }
}

extension MintError {
    /// An ``MintError/Code/openSSLFailure`` naming the failed step, with OpenSSL's reasons.
    init(_ failure: OpenSSLError) {
        self.init(.openSSLFailure, failure.description)
    }

    /// Runs an OpenSSL step, reporting its failure as ``MintError/Code/openSSLFailure``.
    static func openSSL<Result>(_ body: () throws(OpenSSLError) -> Result) throws(MintError) -> Result {
        do {
            return try body()
        } catch {
            throw MintError(error)
        }
    }
}
