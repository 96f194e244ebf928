internal import Foundation
public import Vouch
public import VouchReceipts

/// Verifies many tokens on several threads, delivering results in input order.
///
/// Work is split in chunks; each thread reads a chunk (the threads take turns at the input)
/// and verifies it with the shared `Verifier` (whose chain cache makes every token after the
/// first of a chain cost one P-256 check), so a chunk's bytes are read, copied and verified on
/// one core. The calling thread is one of the `jobs` threads: it verifies chunks too, and
/// receives the results of every chunk, in order, between chunks of its own. At most a few
/// chunks per thread are in flight, so memory does not grow with the input.
public struct BatchVerifier: Sendable {
    /// The verifier every token goes through.
    public let verifier: Verifier
    /// Threads verifying at once.
    public var jobs: Int
    /// The kind every token must be, or `nil` to detect each.
    public var kind: PayloadKind?
    /// For JSON lines: the member holding the token, or `nil` to try
    /// `SignedInput.knownFields`.
    public var field: String?

    /// Verifies the legacy app receipts of the input (a line of base64 `receipt-data`, or a
    /// JSON object holding one), detected per line; `nil` (the default) verifies none: they are
    /// rejected as `malformed_token`.
    public var receiptVerifier: ReceiptVerifier?

    /// A batch verifier of tokens with `verifier`.
    ///
    /// - Parameters:
    ///   - verifier: the verifier every token goes through.
    ///   - jobs: threads to use; `nil` for one per active processor.
    ///   - kind: the kind every token must be, or `nil` to detect each.
    ///   - field: for JSON lines, the member holding the token, or `nil` to try
    ///     `SignedInput.knownFields`.
    ///   - receiptVerifier: verifies the receipts of the input, or `nil` for none
    ///     (``verifyLines(from:format:write:progress:)`` and ``verifyDocuments(from:options:write:progress:)``).
    public init(
        verifier: Verifier, jobs: Int? = nil, kind: PayloadKind? = nil, field: String? = nil,
        receiptVerifier: ReceiptVerifier? = nil
    ) {
        self.verifier = verifier
        self.receiptVerifier = receiptVerifier
        self.jobs = max(1, jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        self.kind = kind
        self.field = field
    }

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

    /// What each JSON Lines record holds.
    public struct RecordFormat: Sendable {
        /// How much of each verified payload to write.
        public var payload: VerificationRecord.PayloadSelection = .full
        /// Write `"line":N` first in each record.
        public var lineNumbers = true
        /// The number of the first line read (for a part of a larger dump).
        public var firstLine = 1

        /// A record format with `payload`, `lineNumbers` and `firstLine`.
        public init(payload: VerificationRecord.PayloadSelection = .full, lineNumbers: Bool = true, firstLine: Int = 1)
        {
            self.payload = payload
            self.lineNumbers = lineNumbers
            self.firstLine = firstLine
        }
    }

    /// Verifies each line of `reader` and writes one JSON Lines record per line, in order:
    /// `{"line":N,"status":…,"kind":…,"payload":…,"error":…}`. Blank lines and over-long
    /// lines get a rejected record of their own.
    ///
    /// - Parameters:
    ///   - reader: the lines to verify.
    ///   - format: what each record holds.
    ///   - write: receives the records of a chunk of lines, newline-terminated.
    ///   - progress: called after each chunk with the counts so far.
    /// - Returns: what was seen. Throws the reader's ``InputFailure`` after writing the records
    ///   of every line read before it, or what `write` throws.
    public func verifyLines(
        from reader: LineReader, format: RecordFormat = RecordFormat(),
        write: ([UInt8]) throws -> Void, progress: (BatchSummary) -> Void = { _ in }
    ) throws -> BatchSummary {
        var summary = BatchSummary()
        let pipeline = OrderedPipeline<LineChunk, (bytes: [UInt8], summary: BatchSummary)>(jobs: jobs) { [self] chunk in
            verify(chunk, format: format)
        }
        try pipeline.run(
            next: { try reader.nextChunk() },
            sink: { output in
                summary.add(output.summary)
                try write(output.bytes)
                progress(summary)
            })
        return summary
    }

    /// Verifies one chunk of lines into its records.
    func verify(_ chunk: LineChunk, format: RecordFormat) -> (bytes: [UInt8], summary: BatchSummary) {
        var writer = JSONWriter(reservingCapacity: chunk.lines.count * (format.payload == .none ? 128 : 1536))
        var summary = BatchSummary()
        summary.bytesConsumed = chunk.inputBytes
        // Receipt lines first; the JWS lines of the chunk then go to the verifier together.
        let receipts = chunk.lines.map { verifyReceipt($0, in: chunk.bytes) }
        for (offset, result) in results(of: chunk, skipping: receipts.map { $0 != nil }).enumerated() {
            writer.raw("{")
            if format.lineNumbers {
                writer.raw("\"line\":")
                writer.write(integer: format.firstLine - 1 + chunk.firstLineNumber + offset)
                writer.raw(",")
            }
            if let receipt = receipts[offset] {
                let receipt = receipt.mapError(LineRejection.verification)
                summary.count(receipt: receipt)
                ReceiptRecord.writeMembers(of: receipt, payload: format.payload, into: &writer)
            } else {
                summary.count(result)
                VerificationRecord.writeMembers(of: result, kind: kind, payload: format.payload, into: &writer)
            }
            writer.raw("}\n")
        }
        return (writer.bytes, summary)
    }

    /// What ``results(of:skipping:)`` gives a line handled elsewhere.
    private static let handledElsewhere: Result<VerifiedPayload, LineRejection> = .failure(
        .input(BatchInputError(.emptyLine, "handled as a receipt")))

    /// The result of each line of `chunk`; the tokens go to ``Verifier/verifyChunk(_:as:)``
    /// together, so those sharing a signer share the signature work.
    /// - Parameter skipping: lines handled elsewhere (receipts); their results are empty-line
    ///   placeholders the caller does not use.
    func results(of chunk: LineChunk, skipping: [Bool]? = nil) -> [Result<VerifiedPayload, LineRejection>] {
        var results: [Result<VerifiedPayload, LineRejection>?] = Array(repeating: nil, count: chunk.lines.count)
        var tokens: [ArraySlice<UInt8>] = []
        var positions: [Int] = []
        for (offset, line) in chunk.lines.enumerated() {
            if skipping?[offset] == true {
                results[offset] = Self.handledElsewhere
                continue
            }
            switch line {
            case .tooLong(let length):
                results[offset] = .failure(
                    .input(
                        BatchInputError(
                            .lineTooLong,
                            "the line is \(length) bytes; the limit is \(LineReader.defaultMaximumLineLength)")))
            case .text(let range):
                do throws(VerificationError) {
                    let token = try SignedInput.token(in: chunk.bytes[range], field: field)
                    if token.isEmpty {
                        results[offset] = .failure(.input(BatchInputError(.emptyLine, "the line is empty")))
                    } else {
                        tokens.append(token)
                        positions.append(offset)
                    }
                } catch {
                    results[offset] = .failure(.verification(error))
                }
            }
        }
        for (offset, result) in zip(positions, verifier.verifyChunk(tokens, as: kind)) {
            results[offset] = result.mapError { .verification($0) }
        }
        return results.map { $0! }
    }
}
