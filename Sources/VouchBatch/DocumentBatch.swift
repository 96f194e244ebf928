internal import Vouch
internal import VouchReceipts

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

    /// Whether the `number`-th (1-based) file or document is this shard's.
    public func includes(_ number: Int) -> Bool {
        (number - 1) % count == index - 1
    }
}

extension BatchVerifier {
    /// What `vouch batch` does with documents beyond writing their records.
    public struct DocumentRunOptions: Sendable {
        /// How records are written.
        public var format = DocumentRecordFormat()
        /// Blank lines give no record.
        public var skipEmpty = false
        /// Only this share of the documents is verified and written.
        public var shard: Shard?

        /// Every document verified, blank lines included, by default.
        public init(format: DocumentRecordFormat = DocumentRecordFormat(), skipEmpty: Bool = false, shard: Shard? = nil)
        {
            self.format = format
            self.skipEmpty = skipEmpty
            self.shard = shard
        }
    }

    /// Verifies every token of every document `reader` finds and writes one JSON Lines
    /// record per token (and per rejected document), in input order.
    ///
    /// - Parameters:
    ///   - reader: the documents to verify.
    ///   - options: how records are written, whether blank lines give one, which shard to take.
    ///   - write: receives the records of a chunk of documents, newline-terminated.
    ///   - progress: called after each chunk with the counts so far.
    /// - Returns: the counts of the records written. Throws the reader's ``InputFailure``
    ///   after writing the records of everything read before it, or what `write` throws.
    public func verifyDocuments(
        from reader: DocumentReader, options: DocumentRunOptions = DocumentRunOptions(),
        write: ([UInt8]) throws -> Void, progress: (BatchSummary) -> Void = { _ in }
    ) throws -> BatchSummary {
        var summary = BatchSummary()
        let format = options.format
        // Each chunk carries the reader's byte count once it was read: the reader may be busy
        // on another thread while the sink runs.
        let pipeline = OrderedPipeline<
            (works: [DocumentWork], consumed: Int), (bytes: [UInt8], summary: BatchSummary, consumed: Int)
        >(jobs: jobs) {
            [self] chunk in
            let works = chunk.works
            var writer = JSONWriter(reservingCapacity: works.count * (format.payload == .none ? 128 : 1536))
            var counts = BatchSummary()
            // Every token of the chunk's documents in one call: tokens sharing a signer share
            // the signature work (the fixed-key path).
            var tokens: [ArraySlice<UInt8>] = []
            for work in works { work.appendTokens(to: &tokens) }
            let verdicts = verifier.verifyChunk(tokens, as: kind)
            var next = 0
            for work in works {
                work.verify(verdicts: verdicts, next: &next, receipts: receiptVerifier) { result in
                    if let receipt = result.receipt {
                        counts.count(receipt: receipt)
                    } else {
                        counts.count(result.result)
                    }
                    format.write(result, echo: work.context.echo, kind: kind, into: &writer)
                }
            }
            return (writer.bytes, counts, chunk.consumed)
        }
        try pipeline.run(
            next: {
                var works: [DocumentWork] = []
                var weight = 0
                while weight < LineReader.defaultChunkLines, let work = try reader.next() {
                    if options.skipEmpty, work.isBlank { continue }
                    if let shard = options.shard, !shard.includes(work.document) { continue }
                    weight += work.weight
                    works.append(work)
                }
                return works.isEmpty ? nil : (works, reader.bytesConsumed)
            },
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
}
