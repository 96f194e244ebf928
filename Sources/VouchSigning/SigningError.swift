internal import Foundation
public import Vouch

/// Why a key could not be used or a signature could not be made: a stable ``Code`` for
/// programs and a ``reason`` for people.
///
/// Signing failures are not verdicts on data, so they are not `VerificationError`s. Two
/// errors are equal when their codes are equal; the reason carries the detail (the file, the
/// curve, the parameter or request member, OpenSSL's own message), never key material.
public struct SigningError: CodedError {
    /// A stable identifier of one kind of failure. The raw values are part of the CLI's output
    /// and never change.
    public struct Code: RawRepresentable, ErrorCode {
        /// The code as text, such as `key_wrong_curve`.
        public let rawValue: String

        /// The code with this text.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The key file could not be read.
        public static let keyUnreadable = Code(rawValue: "key_unreadable")
        /// The text holds no PEM key that can be read (not PEM, a certificate, a damaged key).
        public static let keyMalformed = Code(rawValue: "key_malformed")
        /// The key is encrypted; App Store Connect's keys are not, and no passphrase is asked for.
        public static let keyEncrypted = Code(rawValue: "key_encrypted")
        /// The key is not an EC key (an RSA key, for instance).
        public static let keyWrongType = Code(rawValue: "key_wrong_type")
        /// The key is an EC key on another curve than P-256, which ES256 needs.
        public static let keyWrongCurve = Code(rawValue: "key_wrong_curve")
        /// A parameter breaks a rule of the signature it goes into (an empty identifier, a
        /// negative timestamp, a token lifetime over an hour).
        public static let invalidParameter = Code(rawValue: "invalid_parameter")
        /// An Advanced Commerce request breaks one of Apple's field rules, or its JSON is not a
        /// request.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// OpenSSL refused an operation that should not fail.
        public static let openSSLFailure = Code(rawValue: "openssl_failure")

        /// Every code, in documentation order.
        public static let all: [Code] = [
            .keyUnreadable, .keyMalformed, .keyEncrypted, .keyWrongType, .keyWrongCurve, .invalidParameter,
            .invalidRequest, .openSSLFailure,
        ]
    }

    /// What failed, as a stable identifier.
    public let code: Code
    /// Why, for people.
    public let reason: String

    /// An error with `code` and `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `ErrorCategory.storage` for a key file that cannot be read, `ErrorCategory.configuration`
    /// for a key that cannot be used, `ErrorCategory.input` for a parameter or request that
    /// breaks a rule, `ErrorCategory.internal` for OpenSSL's failure and any other code.
    public var category: ErrorCategory {
        switch code {
        case .keyUnreadable: .storage
        case .keyMalformed, .keyEncrypted, .keyWrongType, .keyWrongCurve: .configuration
        case .invalidParameter, .invalidRequest: .input
        default: .internal
        }
    }
}
