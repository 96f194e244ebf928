public import Foundation

/// The shape of every error Vouch's modules throw: a stable ``code`` for programs, a
/// ``category`` that says what kind of failure it is, and a ``reason`` for people.
///
/// Two errors of one type are equal when their codes are equal, and hash by their code: the
/// reason carries the detail (the file, the member, the expected and actual values, OpenSSL's
/// or SQLite's message), which is for people and may change between versions. The code's
/// ``ErrorCode/rawValue`` is the stable text, such as `wrong_bundle_id`: it is what programs
/// compare and what the command line prints, and it never changes.
///
/// The extension gives every conforming type its equality, its hashing, a `description` of
/// `code: reason` and an `errorDescription` (for `localizedDescription`) of the reason. A type
/// may declare its own `description` where its text is already a contract (an input layer
/// error whose text the command line prints after the file name, for instance).
public protocol CodedError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The type of the stable identifiers of this error's failures.
    associatedtype Code: ErrorCode
    /// The type that names the kinds of failure: ``ErrorCategory`` unless the error has finer
    /// kinds of its own (``VerificationError/Category`` names the step of verification).
    associatedtype Category: Sendable, Hashable, CustomStringConvertible

    /// What failed, as a stable identifier.
    var code: Code { get }
    /// What kind of failure it is.
    var category: Category { get }
    /// Why, for people.
    var reason: String { get }
}

extension CodedError {
    /// `code: reason`.
    public var description: String { "\(code): \(reason)" }

    /// The reason, for `localizedDescription`.
    public var errorDescription: String? { reason }

    /// Two errors are equal when their codes are: the reason is detail for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, as equality compares it only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// A stable identifier of one kind of failure: its ``rawValue`` is the text programs compare
/// and the command line prints, such as `wrong_bundle_id`, and never changes.
public protocol ErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// The code as text, lower-case words joined by `_`.
    var rawValue: String { get }
}

extension ErrorCode {
    /// The raw value: `input`, `configuration`, `storage` or `internal`.
    public var description: String { rawValue }
}

/// What kind of failure a ``CodedError`` is, for errors whose kinds are not finer than these.
///
/// A program can decide by the category alone whether to fix the input, the set-up or a file,
/// or to try again.
public enum ErrorCategory: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The data handed in is not what it must be: malformed, of the wrong type, or in conflict
    /// with what is already held. A verdict on the data: the same data fails again.
    case input
    /// A mistake in the set-up (a verifier's configuration, a catalog, a key), found before any
    /// data was looked at.
    case configuration
    /// A file, stream or store could not be opened, read or written, or its content is damaged
    /// or of a newer version: the data may be fine, and the same call may succeed once the file
    /// is fixed.
    case storage
    /// Vouch or a library under it (OpenSSL, zlib, SQLite) could not run a step, for want of
    /// memory for instance: no verdict on anything; trying again may succeed.
    case `internal`

    /// The raw value: `input`, `configuration`, `storage` or `internal`.
    public var description: String { rawValue }
}
