internal import Foundation
public import Vouch
public import VouchReceipts
public import VouchStripe

/// Verifies many tokens and receipts on several threads, delivering results in input order.
///
/// Work is split in chunks; each thread reads a chunk (the threads take turns at the input)
/// and verifies it with the shared `Verifier` (whose chain cache makes every token after the
/// first of a chain cost one P-256 check), so a chunk's bytes are read, copied and verified on
/// one core. The calling thread is one of the `jobs` threads: it verifies chunks too, and
/// receives the results of every chunk, in order, between chunks of its own. At most a few
/// chunks per thread are in flight, so memory does not grow with the input.
///
/// Two kinds of input, two shapes of output each:
/// - tokens already in memory: ``verify(_:chunkSize:deliver:)`` and ``verifyAll(_:)``;
/// - an ``InputReader`` (files, pipes, gzip, App Store Server API responses, receipts):
///   ``verify(from:options:deliver:progress:)`` hands over each typed ``InputResult``, and
///   ``verify(from:options:format:write:progress:)`` writes records (``RecordFormat``), as
///   `vouch batch` does.
public struct BatchVerifier: Sendable {
    /// The verifier every token goes through.
    public let verifier: Verifier
    /// Threads verifying at once.
    public var jobs: Int
    /// The kind every token must be, or `nil` to detect each.
    public var kind: PayloadKind?
    /// Verifies the legacy app receipts of an input (``InputToken/Form``); `nil` (the default)
    /// verifies none: they are rejected as `malformed_token`.
    public var receiptVerifier: ReceiptVerifier?
    /// Verifies the Stripe webhook deliveries of an input (``InputUnit/delivery``); `nil` (the
    /// default) verifies none: they are rejected as `malformed_token`.
    public var stripeVerifier: StripeWebhookVerifier?

    /// A batch verifier of tokens with `verifier`.
    ///
    /// - Parameters:
    ///   - verifier: the verifier every token goes through.
    ///   - jobs: threads to use; `nil` for one per active processor.
    ///   - kind: the kind every token must be, or `nil` to detect each.
    ///   - receiptVerifier: verifies the receipts of an input, or `nil` for none.
    public init(
        verifier: Verifier, jobs: Int? = nil, kind: PayloadKind? = nil, receiptVerifier: ReceiptVerifier? = nil
    ) {
        self.verifier = verifier
        self.receiptVerifier = receiptVerifier
        self.jobs = max(1, jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        self.kind = kind
    }

    // MARK: Tokens in memory

    /// Verifies `tokens` and calls `deliver` with each one's position and result, in order, on
    /// the calling thread. The sequence is iterated on the `jobs` threads (the calling thread
    /// and `jobs - 1` others), one at a time (each takes the next chunk and verifies it), so an
    /// iterator that must stay on one thread does not belong here.
    public func verify<Tokens: Sequence>(
        _ tokens: Tokens, chunkSize: Int = 64,
        deliver: (Int, Result<VerifiedPayload, VerificationError>) throws -> Void
    ) throws where Tokens.Element == String {
        var iterator = tokens.makeIterator()
        var position = 0
        let pipeline = OrderedPipeline<[String], [Result<VerifiedPayload, VerificationError>]>(jobs: jobs) {
            [self] chunk in
            verifier.verifyChunk(strings: chunk, as: kind)
        }
        try pipeline.run(
            next: {
                var chunk: [String] = []
                chunk.reserveCapacity(chunkSize)
                while chunk.count < chunkSize, let token = iterator.next() { chunk.append(token) }
                return chunk.isEmpty ? nil : chunk
            },
            sink: { results in
                for result in results {
                    try deliver(position, result)
                    position += 1
                }
            })
    }

    /// Verifies every token; results in input order.
    ///
    /// Every result is kept until the call returns (about 3.5 KB for a transaction): for a large
    /// input, ``verify(_:chunkSize:deliver:)`` hands each one over as it comes.
    public func verifyAll(_ tokens: [String]) -> [Result<VerifiedPayload, VerificationError>] {
        var results: [Result<VerifiedPayload, VerificationError>] = []
        results.reserveCapacity(tokens.count)
        // `deliver` cannot throw here, so neither can the run.
        try? verify(tokens) { _, result in results.append(result) }
        return results
    }

    // MARK: Input

    /// Which units of an input are verified.
    public struct RunOptions: Sendable {
        /// Blank lines give no result.
        public var skipEmpty: Bool
        /// Only this share of the units is verified.
        public var shard: Shard?
        /// Only Stripe webhook deliveries are verified: every other unit (blank lines aside) is
        /// one rejected result, `stripe_not_a_delivery`, and no token reaches the verifier.
        public var stripeDeliveriesOnly = false

        /// Every unit verified, blank lines included, by default.
        public init(skipEmpty: Bool = false, shard: Shard? = nil, stripeDeliveriesOnly: Bool = false) {
            self.skipEmpty = skipEmpty
            self.shard = shard
            self.stripeDeliveriesOnly = stripeDeliveriesOnly
        }
    }

    /// Verifies every token and receipt `reader` finds and hands each result to `deliver` in
    /// input order, on the calling thread: what a consumer of the verified payloads (a ledger,
    /// a server's import) reads a dump with. Every unit gets its results: a line that holds no
    /// token is a rejected result of its own (`empty_line`, `line_too_long`, `malformed_token`).
    ///
    /// `progress` is called after each chunk's results with the counts so far (a progress line).
    ///
    /// - Returns: the counts of the results delivered. Throws the reader's ``InputFailure``
    ///   after delivering the results of everything read before it, or what `deliver` throws.
    public func verify(
        from reader: InputReader, options: RunOptions = RunOptions(), deliver: (InputResult) throws -> Void,
        progress: (BatchSummary) -> Void = { _ in }
    ) throws -> BatchSummary {
        var summary = BatchSummary()
        let pipeline = OrderedPipeline<InputChunk, (results: [InputResult], consumed: Int)>(jobs: jobs) {
            [self] chunk in
            var results: [InputResult] = []
            results.reserveCapacity(chunk.units.count)
            verify(chunk) { results.append($0) }
            return (results, chunk.consumed)
        }
        try pipeline.run(
            next: chunks(of: reader, options: options),
            sink: { output in
                for result in output.results {
                    summary.count(result)
                    try deliver(result)
                }
                summary.bytesConsumed = output.consumed
                progress(summary)
            })
        summary.bytesConsumed = reader.bytesConsumed
        return summary
    }

    /// Verifies every token and receipt `reader` finds and writes one record per result
    /// (``RecordFormat``), in input order, as `vouch batch` does.
    ///
    /// - Parameters:
    ///   - reader: the input.
    ///   - options: whether blank lines give a record, which shard to take.
    ///   - format: how records are written.
    ///   - write: receives the records of a chunk of units, newline-terminated.
    ///   - progress: called after each chunk with the counts so far.
    /// - Returns: the counts of the records written. Throws the reader's ``InputFailure``
    ///   after writing the records of everything read before it, or what `write` throws.
    public func verify(
        from reader: InputReader, options: RunOptions = RunOptions(), format: RecordFormat,
        write: ([UInt8]) throws -> Void, progress: (BatchSummary) -> Void = { _ in }
    ) throws -> BatchSummary {
        var summary = BatchSummary()
        var format = format
        if format.kind == nil { format.kind = kind }
        let pipeline = OrderedPipeline<InputChunk, (bytes: [UInt8], summary: BatchSummary, consumed: Int)>(
            jobs: jobs
        ) {
            [self, format] chunk in
            var writer = JSONWriter(reservingCapacity: chunk.units.count * (format.payload == .none ? 128 : 1536))
            var counts = BatchSummary()
            verify(chunk) { result in
                counts.count(result)
                format.write(result, into: &writer)
            }
            return (writer.bytes, counts, chunk.consumed)
        }
        try pipeline.run(
            next: chunks(of: reader, options: options),
            sink: { output in
                try write(output.bytes)
                // Counted once written, so that a closed output leaves true counts.
                summary.add(output.summary)
                summary.bytesConsumed = output.consumed
                progress(summary)
            })
        summary.bytesConsumed = reader.bytesConsumed
        return summary
    }

    /// Units read together and verified by one thread, with the reader's byte count once they
    /// were read (the reader may be busy on another thread while the sink runs).
    struct InputChunk: Sendable {
        var units: [InputUnit]
        var consumed: Int
    }

    /// The source of a run's chunks: up to ``chunkWeight`` tokens' worth of units each. When the
    /// reader fails, the units read before the failure still make a chunk; the failure is thrown
    /// by the call after it.
    private func chunks(of reader: InputReader, options: RunOptions) -> () throws -> InputChunk? {
        var failure: (any Error)? = nil
        return {
            if let error = failure {
                failure = nil
                throw error
            }
            var units: [InputUnit] = []
            var weight = 0
            do {
                while weight < Self.chunkWeight, var unit = try reader.next() {
                    if options.skipEmpty, unit.isBlank { continue }
                    if let shard = options.shard, !shard.includes(unit.document) { continue }
                    if options.stripeDeliveriesOnly, unit.delivery == nil, !unit.isBlank { unit = unit.notADelivery() }
                    weight += unit.weight
                    units.append(unit)
                }
            } catch {
                guard !units.isEmpty else { throw error }
                failure = error
            }
            return units.isEmpty ? nil : InputChunk(units: units, consumed: reader.bytesConsumed)
        }
    }

    /// Tokens per chunk of work: few enough that the bytes a thread has just copied are still in
    /// its core's cache when it verifies them (a chunk of receipts is some hundreds of kilobytes).
    static let chunkWeight = 64

    /// Verifies one chunk: every token of its units in one call, so that tokens sharing a
    /// signer share the signature work (the fixed-key path); then each unit's checks, in order.
    private func verify(_ chunk: InputChunk, deliver: (InputResult) -> Void) {
        var tokens: [ArraySlice<UInt8>] = []
        for unit in chunk.units { unit.appendTokens(to: &tokens) }
        let verdicts = verifier.verifyChunk(tokens, as: kind)
        var next = 0
        for unit in chunk.units {
            unit.verify(
                verdicts: verdicts, next: &next, receipts: receiptVerifier, stripe: stripeVerifier, deliver: deliver)
        }
    }
}

/// One share of an input: the `index`-th (1-based) of `count`, as `--shard I/N` names it.
public struct Shard: Sendable, Equatable {
    /// Which share, from 1.
    public let index: Int
    /// How many shares.
    public let count: Int

    /// Parses `I/N` with 1 ≤ I ≤ N.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
            (1...count).contains(index)
        else {
            return nil
        }
        self.index = index
        self.count = count
    }

    /// Whether the `number`-th (1-based) file or unit is this shard's.
    public func includes(_ number: Int) -> Bool {
        (number - 1) % count == index - 1
    }
}
