public import Vouch
package import VouchReceipts

/// How ``DocumentReader`` reads its input.
public struct DocumentOptions: Sendable {
    /// Where tokens are, as a path with `[]` wildcards (`data[].lastTransactions[].signedTransactionInfo`);
    /// a plain name is a top-level member. `nil` finds the App Store's signed members
    /// (`SignedInput.knownFields` at any depth, `signedTransactions[]`, and the strings of a
    /// top-level array).
    public var field: String?
    /// Top-level members copied into each record of their document.
    public var echo: [String]
    /// The longest bare line, and the longest string kept (a token is far smaller).
    public var maximumLineLength: Int
    /// Arrays and objects nested deeper than this reject the document (`json_too_deep`).
    public var maximumDepth: Int
    /// A document's bytes are held up to this size, so that it is checked strictly and its
    /// tokens are cross-checked with members that come after them; a larger document is
    /// streamed.
    public var documentBuffer: Int

    /// A captured member (`bundleId`, an `--echo` field) larger than this reads as `null`.
    static let maximumCapture = 4096

    /// The defaults read the App Store's shapes with the limits the README gives.
    public init(
        field: String? = nil, echo: [String] = [], maximumLineLength: Int = LineReader.defaultMaximumLineLength,
        maximumDepth: Int = 16, documentBuffer: Int = 16 * 1024 * 1024
    ) {
        self.field = field
        self.echo = echo
        self.maximumLineLength = maximumLineLength
        self.maximumDepth = maximumDepth
        self.documentBuffer = documentBuffer
    }
}

/// The members of an App Store Server API response its tokens are checked against, and the
/// members copied into records (`--echo`).
public struct DocumentContext: Sendable {
    static let names = ["bundleId", "appAppleId", "environment"]
    /// `bundleId`, `appAppleId`, `environment` of the top-level object, when present (empty
    /// until one is: most documents have none).
    var values: [JSONValue?] = []
    /// The values of ``DocumentOptions/echo``, in order.
    public var echo: [JSONValue?] = []

    init(echo: [JSONValue?] = []) {
        self.echo = echo
    }
}

/// One token found in a document, or why none could be taken where one should be.
public struct DocumentToken: Sendable {
    /// What was found where a token should be.
    public enum Content: Sendable {
        /// The token's bytes, unescaped.
        case token([UInt8])
        /// Why no token could be taken there (a member that is not a string, an over-long one).
        case failure(LineRejection)
    }

    /// The line where the token starts.
    public var line: Int
    /// The token's JSON path, such as `signedTransactions[3]`; `nil` for a bare line and for a
    /// line holding one object with one token, whose records read as they always have.
    public var path: String?
    /// The token, or why there is none.
    public var content: Content
    /// Whether the record names the document.
    public var showsDocument = false
    /// Whether the token is a legacy app receipt's base64 text, verified by a
    /// `ReceiptVerifier` (when the batch has one) rather than as a JWS.
    public var isReceipt = false
}

/// What one document gives to verify: its tokens, grouped by the object holding them, or the
/// reason the whole document is rejected.
public struct DocumentWork: Sendable {
    /// A document rejected as a whole.
    public struct Failure: Sendable {
        /// Every line of the rejected document gets a record.
        public var lines: ClosedRange<Int>
        /// Why.
        public var error: LineRejection

        init(lines: ClosedRange<Int>, error: VerificationError) {
            self.lines = lines
            self.error = .verification(error)
        }

        init(lines: ClosedRange<Int>, input error: BatchInputError) {
            self.lines = lines
            self.error = .input(error)
        }
    }

    /// The document's number (bare and blank lines are documents too).
    public var document: Int
    /// Tokens that are members of one object come together and are checked against each
    /// other (a `lastTransactions` item's transaction and renewal info).
    public var groups: [[DocumentToken]] = []
    /// The one token of a bare line or of a one-token line (kept out of `groups` to spare
    /// two allocations a line).
    public var single: DocumentToken?
    /// Set when the document is rejected as a whole: its tokens count for nothing.
    public var failure: Failure?
    /// The path a failure is about (a member that came too late), if any.
    var failurePath: String?
    /// The lines the document spans.
    var lines: ClosedRange<Int>?
    /// The document's bytes, to be parsed strictly before its tokens count.
    var strictCheck: [UInt8]?
    /// The response members its tokens are checked against, and the echoed members.
    public var context = DocumentContext()
    /// A blank line (`empty_line`), which `--skip-empty` drops.
    public var isBlank = false
    /// A line holding a bare token (or anything that is not JSON).
    public var isBareLine = false

    init(document: Int, failure: Failure? = nil) {
        self.document = document
        self.failure = failure
    }

    static let maximumLineRecords = 256

    /// Tokens in the document, for chunking.
    var weight: Int { single != nil ? 1 : max(1, groups.reduce(0) { $0 + $1.count }) }

    /// One verification result with where it came from.
    public struct Result: Sendable {
        /// The line where the token starts (the first line of a rejected document's line).
        public var line: Int
        /// The document's number.
        public var document: Int
        /// The token's JSON path, `nil` where the line says it all.
        public var path: String?
        /// Whether the record names the document.
        public var showsDocument: Bool
        /// The verified payload, or why not.
        public var result: Swift.Result<VerifiedPayload, LineRejection>
        /// For a receipt verified by the batch's `ReceiptVerifier`: the verified receipt, or
        /// why not; the record is the receipt's and ``result`` is not used.
        var receipt: Swift.Result<VerifiedReceipt, LineRejection>? = nil
    }

    /// Verifies every token and applies the document's cross-checks.
    public func verify(with verifier: Verifier, kind: PayloadKind?) -> [Result] {
        var results: [Result] = []
        verify(with: verifier, kind: kind) { results.append($0) }
        return results
    }

    /// Verifies every token and applies the document's cross-checks, handing each result to
    /// `deliver` in order.
    public func verify(with verifier: Verifier, kind: PayloadKind?, deliver: (Result) -> Void) {
        var tokens: [ArraySlice<UInt8>] = []
        appendTokens(to: &tokens)
        let verdicts = verifier.verifyChunk(tokens, as: kind)
        var next = 0
        verify(verdicts: verdicts, next: &next, deliver: deliver)
    }

    /// The tokens to verify, in the order ``verify(verdicts:next:deliver:)`` takes their
    /// verdicts: a batch gives the tokens of many documents to ``Verifier/verifyChunk(_:as:)``
    /// at once, so that tokens sharing a signer share the signature work.
    package func appendTokens(to tokens: inout [ArraySlice<UInt8>]) {
        guard failure == nil else { return }
        if let single {
            if !single.isReceipt, case .token(let bytes) = single.content, !bytes.isEmpty { tokens.append(bytes[...]) }
            return
        }
        for group in groups {
            for token in group {
                if !token.isReceipt, case .token(let bytes) = token.content, !bytes.isEmpty {
                    tokens.append(bytes[...])
                }
            }
        }
    }

    /// Applies the document's checks to the verdicts of its tokens, `verdicts[next...]` in the
    /// order ``appendTokens(to:)`` gave them, and advances `next` past them. Receipts are
    /// verified here with `receipts`; without it they are rejected.
    package func verify(
        verdicts: [Swift.Result<VerifiedPayload, VerificationError>], next: inout Int,
        receipts: ReceiptVerifier? = nil, deliver: (Result) -> Void
    ) {
        if let single {
            deliver(verify(single, verdicts: verdicts, next: &next, receipts: receipts))
            return
        }
        for result in verifyDocument(verdicts: verdicts, next: &next, receipts: receipts) { deliver(result) }
    }

    private func verify(
        _ token: DocumentToken, verdicts: [Swift.Result<VerifiedPayload, VerificationError>], next: inout Int,
        receipts: ReceiptVerifier?
    ) -> Result {
        if token.isReceipt { return verifyReceipt(token, with: receipts) }
        var verdict: Swift.Result<VerifiedPayload, VerificationError>? = nil
        if case .token(let bytes) = token.content, !bytes.isEmpty {
            verdict = verdicts[next]
            next += 1
        }
        let outcome = Swift.Result { () throws(LineRejection) -> VerifiedPayload in
            switch token.content {
            case .failure(let error): throw error
            case .token:
                guard let verdict else { throw .input(BatchInputError(.emptyLine, "the line is empty")) }
                do throws(VerificationError) {
                    let payload = try verdict.get()
                    try checkAgainstResponse(payload)
                    return payload
                } catch {
                    throw .verification(error)
                }
            }
        }
        return Result(
            line: token.line, document: document, path: token.path, showsDocument: token.showsDocument, result: outcome)
    }

    /// A receipt token's result: verified by `verifier`, or rejected when there is none.
    private func verifyReceipt(_ token: DocumentToken, with verifier: ReceiptVerifier?) -> Result {
        var result = Result(
            line: token.line, document: document, path: token.path, showsDocument: token.showsDocument,
            result: .failure(
                .verification(
                    VerificationError(
                        .malformedToken, "the input holds a legacy app receipt, and no receipt verifier was given"))))
        guard let verifier else {
            if case .failure(let error) = token.content { result.result = .failure(error) }
            return result
        }
        result.receipt = Swift.Result { () throws(LineRejection) -> VerifiedReceipt in
            switch token.content {
            case .failure(.verification(let error)) where error.code == .malformedToken || error.code == .tokenTooLarge:
                // Where a receipt should be: a member that is not a string, or too long a one.
                throw .verification(
                    VerificationError(
                        error.code == .malformedToken ? .receiptNotAReceipt : .receiptTooLarge, error.reason))
            case .failure(let error): throw error
            case .token(let bytes):
                do throws(VerificationError) {
                    return try verifier.verify(base64: bytes)
                } catch {
                    throw .verification(error)
                }
            }
        }
        return result
    }

    private func verifyDocument(
        verdicts: [Swift.Result<VerifiedPayload, VerificationError>], next: inout Int, receipts: ReceiptVerifier?
    ) -> [Result] {
        if failure == nil, let strictCheck {
            do {
                _ = try StrictJSON.parse(strictCheck, limits: .init(maximumDepth: 16))
            } catch {
                // The document does not count: pass over its tokens' verdicts.
                var skipped: [ArraySlice<UInt8>] = []
                appendTokens(to: &skipped)
                next += skipped.count
                let isArray = strictCheck.first == UInt8(ascii: "[")
                let rejection = VerificationError(
                    error.isNestingTooDeep ? .jsonTooDeep : .malformedToken,
                    "the input looks like JSON but is not \(isArray ? "strict JSON" : "a strict JSON object"): \(error)"
                )
                return rejected(lines ?? 0...0, .verification(rejection))
            }
        }
        if let failure {
            if let strictCheck, (try? StrictJSON.parse(strictCheck, limits: .init(maximumDepth: 16))) == nil {
                return strictRejection(strictCheck, lines: lines ?? failure.lines)
            }
            return rejected(failure.lines, failure.error)
        }
        var results: [Result] = []
        results.reserveCapacity(weight)
        for group in groups {
            var verified = group.map { verify($0, verdicts: verdicts, next: &next, receipts: receipts) }
            Self.checkPairs(&verified)
            results += verified
        }
        return results
    }

    private func strictRejection(_ bytes: [UInt8], lines: ClosedRange<Int>) -> [Result] {
        do {
            _ = try StrictJSON.parse(bytes, limits: .init(maximumDepth: 16))
            return []
        } catch {
            let isArray = bytes.first == UInt8(ascii: "[")
            return rejected(
                lines,
                .verification(
                    VerificationError(
                        error.isNestingTooDeep ? .jsonTooDeep : .malformedToken,
                        "the input looks like JSON but is not \(isArray ? "strict JSON" : "a strict JSON object"): \(error)"
                    )))
        }
    }

    /// Every line of a rejected document gets its record, as the lines of a dump always have;
    /// a document over ``maximumLineRecords`` lines gets one, for its first line.
    private func rejected(_ lines: ClosedRange<Int>, _ error: LineRejection) -> [Result] {
        var lines = lines
        var error = error
        if lines.count > Self.maximumLineRecords {
            let span = " (lines \(lines.lowerBound)–\(lines.upperBound))"
            switch error {
            case .verification(let inner): error = .verification(VerificationError(inner.code, inner.reason + span))
            case .input(let inner): error = .input(BatchInputError(inner.code, inner.reason + span))
            }
            lines = lines.lowerBound...lines.lowerBound
        }
        return lines.map {
            Result(
                line: $0, document: document, path: failurePath, showsDocument: failurePath != nil,
                result: .failure(error))
        }
    }

    /// A token that names its app or environment must agree with the response holding it.
    private func checkAgainstResponse(_ payload: VerifiedPayload) throws(VerificationError) {
        let codes: [VerificationError.Code] = [.wrongBundleId, .wrongAppAppleId, .wrongEnvironment]
        for (index, name) in DocumentContext.names.enumerated() where index < context.values.count {
            guard let expected = context.values[index] else { continue }
            guard let actual = payload.payload[name] ?? payload.payload["data"]?.objectValue?[name] else { continue }
            if actual != expected {
                throw VerificationError(
                    codes[index],
                    "the token's \(name) \(JSONWriter.string(actual)) differs from the response's \(JSONWriter.string(expected))"
                )
            }
        }
    }

    /// A transaction and a renewal info of one object must be of the same subscription and
    /// environment; both are rejected when they are not.
    static func checkPairs(_ results: inout [Result]) {
        guard results.count > 1 else { return }
        func index(of kind: PayloadKind) -> Int? {
            results.firstIndex { if case .success(let payload) = $0.result { payload.kind == kind } else { false } }
        }
        guard let transaction = index(of: .transaction), let renewal = index(of: .renewalInfo),
            case .success(let first) = results[transaction].result, case .success(let second) = results[renewal].result
        else { return }
        for name in ["originalTransactionId", "environment"] {
            let one = first.payload[name]
            let other = second.payload[name]
            guard one != other else { continue }
            let describe = { (value: JSONValue?) in value.map { JSONWriter.string($0) } ?? "absent" }
            results[transaction].result = .failure(
                .verification(
                    VerificationError(
                        .pairMismatch,
                        "its \(name) \(describe(one)) differs from \(describe(other)) in \(results[renewal].path ?? "the renewal info")"
                    )))
            results[renewal].result = .failure(
                .verification(
                    VerificationError(
                        .pairMismatch,
                        "its \(name) \(describe(other)) differs from \(describe(one)) in \(results[transaction].path ?? "the transaction")"
                    )))
            return
        }
    }
}

/// A path with `[]` wildcards, as `--field` takes it.
struct FieldPattern: Sendable {
    enum Segment: Equatable {
        case member(String)
        case element
    }

    let text: String
    let segments: [Segment]

    init(_ text: String) {
        self.text = text
        var segments: [Segment] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            var name = Substring(part)
            var elements = 0
            while name.hasSuffix("[]") {
                name = name.dropLast(2)
                elements += 1
            }
            if !name.isEmpty { segments.append(.member(String(name))) }
            segments += Array(repeating: .element, count: elements)
        }
        self.segments = segments
    }

    func matches(_ path: [Segment]) -> Bool { path == segments }
}

/// Writes the JSON records of ``DocumentWork/Result``s.
public struct DocumentRecordFormat: Sendable {
    /// When records carry `"line"` and `"document"`.
    public enum Numbers: Sendable {
        /// `"line"` always, `"document"` where it is new information (`vouch batch`).
        case always
        /// Both, only where the record comes from a document's path (`vouch verify`).
        case whereNew
        /// Neither (`--no-line-number`).
        case never
    }

    /// How much of each verified payload to write.
    public var payload: VerificationRecord.PayloadSelection = .full
    /// When `"line"` and `"document"` are written.
    public var numbers = Numbers.always
    /// Names of the members copied by `--echo`, in order.
    public var echo: [String] = []

    /// A format writing the whole payload and `"line"` in every record, by default.
    public init(payload: VerificationRecord.PayloadSelection = .full, numbers: Numbers = .always, echo: [String] = []) {
        self.payload = payload
        self.numbers = numbers
        self.echo = echo
    }

    /// Writes one record: `{"line":…,"document":…,"path":…,"echo":{…},"status":…,"kind":…,"payload":…,"error":…}`,
    /// the source members only where they say something the line does not.
    public func write(
        _ result: DocumentWork.Result, echo values: [JSONValue?], kind: PayloadKind?, into writer: inout JSONWriter
    ) {
        writer.raw("{")
        if numbers == .always || numbers == .whereNew && result.showsDocument {
            writer.raw("\"line\":")
            writer.write(integer: result.line)
            writer.raw(",")
            if result.showsDocument {
                writer.raw("\"document\":")
                writer.write(integer: result.document)
                writer.raw(",")
            }
        }
        if let path = result.path {
            writer.raw("\"path\":")
            writer.write(string: path)
            writer.raw(",")
        }
        if !echo.isEmpty {
            writer.raw("\"echo\":")
            writer.write(
                object: JSONObject(
                    echo.enumerated().map { .init($1, values.indices.contains($0) ? values[$0] ?? .null : .null) }))
            writer.raw(",")
        }
        if let receipt = result.receipt {
            ReceiptRecord.writeMembers(of: receipt, payload: payload, into: &writer)
        } else {
            VerificationRecord.writeMembers(of: result.result, kind: kind, payload: payload, into: &writer)
        }
        writer.raw("}\n")
    }
}
