public import Vouch

extension BatchVerifier {
    /// Verifies each line of `reader` on ``jobs`` threads and hands each line's result to
    /// `deliver` in input order, on the calling thread: what a consumer of the verified
    /// payloads (rather than of JSON records) reads a dump with. Blank and over-long lines are
    /// rejected results (``LineRejection``), as in ``verifyLines(from:format:write:progress:)``.
    ///
    /// - Parameters:
    ///   - reader: the lines to verify.
    ///   - deliver: receives the 1-based line number within `reader` and the result.
    /// - Returns: the counts. Throws the reader's ``InputFailure`` after delivering every line
    ///   read before it, or what `deliver` throws.
    public func verifyLines(
        from reader: LineReader, deliver: (Int, Result<VerifiedPayload, LineRejection>) throws -> Void
    ) throws -> BatchSummary {
        var summary = BatchSummary()
        let pipeline = OrderedPipeline<LineChunk, (first: Int, results: [Result<VerifiedPayload, LineRejection>])>(
            jobs: jobs
        ) {
            [self] chunk in
            (chunk.firstLineNumber, results(of: chunk))
        }
        try pipeline.run(
            next: { try reader.nextChunk() },
            sink: { output in
                for (offset, result) in output.results.enumerated() {
                    summary.count(result)
                    try deliver(output.first + offset, result)
                }
            })
        return summary
    }
}
