internal import Foundation
public import Vouch

/// Why the ledger or its store refused something: a stable ``Code`` for programs and a
/// ``reason`` for people.
///
/// Two errors are equal when their codes are equal; the reason carries the detail (the chain and
/// both accounts, the file and SQLite's own message).
public struct LedgerError: CodedError {
    /// A stable identifier of one kind of refusal. The raw values never change.
    public enum Code: String, ErrorCode, CaseIterable {
        /// A caller named an account for a transaction chain that already belongs to another
        /// one (by the `appAccountToken` Apple signed, or by an earlier caller), or for a payload
        /// that carries another account's `appAccountToken`. Nothing of the call was added.
        case accountConflict = "account_conflict"
        /// The account a caller named for App Store data is not a UUID: App Store data names
        /// accounts by `appAccountToken`, which is one. Nothing of the call was added.
        case invalidAccount = "invalid_account"
        /// The file is not a Vouch store: not SQLite, or SQLite of another application.
        case notAStore = "not_a_store"
        /// The file is a Vouch store of a newer schema than this version knows; it is left as it is.
        case newerSchema = "newer_schema"
        /// The file is a Vouch store whose content SQLite or the store cannot read: truncated,
        /// overwritten, or holding a record that does not decode.
        case corruptStore = "corrupt_store"
        /// The file cannot be opened: it does not exist (and was not to be created), or it may
        /// not be read.
        case cannotOpen = "cannot_open"
        /// The store cannot be written: a read-only file or directory, a full disk, another
        /// writer holding the lock for longer than the wait.
        case cannotWrite = "cannot_write"
        /// SQLite failed in a way that says nothing about the file (out of memory, an
        /// interrupted call): trying again may succeed.
        case storeFailure = "store_failure"
    }

    /// What was refused, as a stable identifier.
    public let code: Code
    /// What was refused, for people.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `ErrorCategory.input` for ``Code/accountConflict`` and ``Code/invalidAccount`` (verdicts
    /// on the data),
    /// `ErrorCategory.internal` for ``Code/storeFailure``, `ErrorCategory.storage` for the
    /// other codes (the file).
    public var category: ErrorCategory {
        switch code {
        case .accountConflict, .invalidAccount: .input
        case .storeFailure: .internal
        case .notAStore, .newerSchema, .corruptStore, .cannotOpen, .cannotWrite: .storage
        }
    }
}

extension LedgerError: WebhookError {
    /// `WebhookStatus.refused` (400) for ``Code/accountConflict`` and ``Code/invalidAccount``,
    /// a verdict on the data (the purchase is another account's, or named for no account);
    /// `WebhookStatus.failed` (500) for every other code: the store could not be opened, read
    /// or written, so the notification was not kept and the App Store's retry may succeed once
    /// the file is fixed.
    public var webhookStatus: Int {
        code == .accountConflict || code == .invalidAccount ? WebhookStatus.refused : WebhookStatus.failed
    }
}
