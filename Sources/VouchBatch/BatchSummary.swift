internal import Vouch

/// Counts of a batch run.
public struct BatchSummary: Sendable, Equatable {
    /// Results (records): one per token or receipt, one per line that holds none.
    public internal(set) var lines = 0
    /// Results that verified.
    public internal(set) var verified = 0
    /// Results that were rejected (blank and over-long lines included).
    public internal(set) var rejected = 0
    /// Verified results by kind (`transaction`, …, `receipt`).
    public internal(set) var kinds: [String: Int] = [:]
    /// Rejected results by error code.
    public internal(set) var errors: [String: Int] = [:]
    /// Input bytes consumed (compressed bytes for gzip).
    public internal(set) var bytesConsumed = 0
    /// Results of legacy app receipts (``InputToken/Form/receipt``, ``InputToken/Form/receiptFile``),
    /// verified or not.
    public internal(set) var receipts = 0
    /// Results of stored Stripe deliveries (``InputToken/Form/stripeDelivery``), verified or not.
    public internal(set) var deliveries = 0

    /// A summary with every count at zero.
    public init() {}

    mutating func count(_ result: InputResult) {
        lines += 1
        if result.form == .stripeDelivery {
            deliveries += 1
        } else if result.form != .jws {
            receipts += 1
        }
        switch result.result {
        case .success(let input):
            verified += 1
            kinds[input.kind, default: 0] += 1
        case .failure(let error):
            rejected += 1
            errors[error.code.rawValue, default: 0] += 1
        }
    }

    /// Adds another run's counts (for example of the next file) to these.
    public mutating func add(_ other: BatchSummary) {
        lines += other.lines
        bytesConsumed += other.bytesConsumed
        receipts += other.receipts
        deliveries += other.deliveries
        verified += other.verified
        rejected += other.rejected
        kinds.merge(other.kinds, uniquingKeysWith: +)
        errors.merge(other.errors, uniquingKeysWith: +)
    }
}
