import VouchMint

/// A mint failure's exit status: a bad override or an unsupported request is a usage mistake,
/// an input that cannot be read 66, one that is not what minting needs 65, a failed write 74,
/// OpenSSL's own failure 70.
extension MintError: ReportableError {
    var report: ErrorReport {
        switch code {
        case .invalidOverride, .unsupported: .usage(reason)
        case .invalidInput: .exit(ExitCode.invalidInput, reason)
        case .unreadableInput: .exit(ExitCode.unreadableInput, reason)
        case .writeFailed: .exit(ExitCode.writeError, reason)
        default: .exit(ExitCode.software, reason)
        }
    }
}
