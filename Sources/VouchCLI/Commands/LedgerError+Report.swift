import VouchEntitlements

/// A store failure's exit status: a file that is not a Vouch store (or of a newer schema, or
/// damaged) 65, one that cannot be opened 66, one that cannot be written 74, SQLite's own
/// failure 70.
extension LedgerError: ReportableError {
    var report: ErrorReport {
        switch code {
        case .notAStore, .newerSchema, .corruptStore, .accountConflict, .invalidAccount:
            .exit(ExitCode.invalidInput, reason)
        case .cannotOpen: .exit(ExitCode.unreadableInput, reason)
        case .cannotWrite: .exit(ExitCode.writeError, reason)
        case .storeFailure: .exit(ExitCode.software, reason)
        }
    }
}
