internal import Foundation
internal import Vouch

/// A stored record that cannot be read back.
struct RecordFormatError: CodedError {
    struct Code: ErrorCode {
        let rawValue: String
        /// The record is not JSON, or not a record of a kind and form this version writes.
        static let unreadableRecord = Code(rawValue: "unreadable_record")
    }

    let reason: String
    /// ``Code/unreadableRecord``.
    var code: Code { .unreadableRecord }
    /// `ErrorCategory.storage`: the store's content is damaged.
    var category: ErrorCategory { .storage }
}
