public import Vouch
public import VouchReceipts
public import VouchStripe

/// How an ``InputReader`` reads its input.
public struct InputOptions: Sendable {
    /// Where tokens are, as a path with `[]` wildcards (`data[].lastTransactions[].signedTransactionInfo`);
    /// a plain name is a top-level member. `nil` finds the App Store's signed members
    /// (`SignedInput.knownFields` at any depth, `signedTransactions[]`, the strings of a
    /// top-level array) and a receipt's (`ReceiptInput.knownFields`, at the top level).
    public var field: String?
    /// Top-level members copied into each result of their document (``InputResult/echo``).
    public var echo: [String]
    /// The longest bare line, and the longest string kept (a token is far smaller).
    public var maximumLineLength: Int
    /// Arrays and objects nested deeper than this reject the document (`json_too_deep`).
    public var maximumDepth: Int
    /// A document's bytes are held up to this size, so that it is checked strictly and its
    /// tokens are cross-checked with members that come after them; a larger document is
    /// streamed. A receipt file is held up to this size too.
    public var documentBuffer: Int

    /// The most bytes read of one input (inflated bytes for gzip), or `nil` for no limit (the
    /// default: a dump or an export streams through at any size). Past it, reading stops and
    /// the input ends with a unit rejected as a whole, `token_too_large`
    /// (``InputUnit/exceedsInputLimit``): what reads one input, a request body or a command's
    /// one token, ends on an endless one.
    public var maximumInputSize: Int?

    /// The default limit of one line: 1 MiB.
    public static let defaultMaximumLineLength = 1024 * 1024

    /// A captured member (`bundleId`, an echoed field) larger than this reads as `null`.
    static let maximumCapture = 4096

    /// The defaults read the App Store's shapes with the limits the documentation gives: lines
    /// and strings up to 1 MiB, nesting up to 16, documents held up to 16 MiB.
    public init(
        field: String? = nil, echo: [String] = [], maximumLineLength: Int = defaultMaximumLineLength,
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
/// members copied into results (``InputOptions/echo``).
public struct InputContext: Sendable {
    static let names = ["bundleId", "appAppleId", "environment"]
    /// `bundleId`, `appAppleId`, `environment` of the top-level object, when present (empty
    /// until one is: most documents have none).
    var values: [JSONValue?] = []
    /// The values of ``InputOptions/echo``, in order.
    public var echo: [JSONValue?] = []

    init(echo: [JSONValue?] = []) {
        self.echo = echo
    }
}

/// One token or receipt found in the input, or why none could be taken where one should be.
public struct InputToken: Sendable {
    /// What was found where a token should be.
    public enum Content: Sendable {
        /// The token's bytes, unescaped.
        case token([UInt8])
        /// Why no token could be taken there (a member that is not a string, an over-long one).
        case failure(VerificationError)
    }

    /// What the bytes are, and so what verifies them.
    public enum Form: Sendable, Equatable {
        /// A compact JWS, verified by a `Verifier`.
        case jws
        /// A legacy app receipt's standard base64 text (`receipt-data`), verified by a
        /// `ReceiptVerifier`.
        case receipt
        /// A receipt file given whole (DER or BER, or an old-style plist that the receipt
        /// verifier names), verified by a `ReceiptVerifier` as it is.
        case receiptFile
        /// A stored Stripe webhook delivery (``InputUnit/delivery``), verified by a
        /// `StripeWebhookVerifier`.
        case stripeDelivery
    }

    /// The line where the token starts.
    public var line: Int
    /// The token's JSON path, such as `signedTransactions[3]`; `nil` for a bare line and for a
    /// line holding one object with one token, whose results read as a line's.
    public var path: String?
    /// The token, or why there is none.
    public var content: Content
    /// Whether the result names the document.
    public var showsDocument = false
    /// What the bytes are.
    public var form = Form.jws
    /// Where the token comes in its document (0, 1, 2…): results go out in this order,
    /// whatever object groups the tokens.
    var order = 0
}

/// What one unit of input (a line, a JSON document, a receipt file) gives to verify: its
/// tokens, grouped by the object holding them, or the reason the whole unit is rejected.
public struct InputUnit: Sendable {
    /// A unit rejected as a whole.
    public struct Failure: Sendable {
        /// Every line of the rejected unit gets a result.
        public var lines: ClosedRange<Int>
        /// Why.
        public var error: VerificationError
    }

    /// The unit's number (bare and blank lines are documents too).
    public var document: Int
    /// Tokens that are members of one object come together and are checked against each
    /// other (a `lastTransactions` item's transaction and renewal info). Their results come
    /// in the order of the document, not of the groups.
    public var groups: [[InputToken]] = []
    /// The one token of a bare line or of a one-token line (kept out of `groups` to spare
    /// two allocations a line).
    public var single: InputToken?
    /// Set when the unit is rejected as a whole: its tokens count for nothing.
    public var failure: Failure?
    /// The path a failure is about (a member that came too late), if any.
    var failurePath: String?
    /// The lines the document spans.
    var lines: ClosedRange<Int>?
    /// The document's bytes, to be parsed strictly before its tokens count.
    var strictCheck: [UInt8]?
    /// The response members its tokens are checked against, and the echoed members.
    public var context = InputContext()
    /// A blank line (`empty_line`), which a batch may skip.
    public var isBlank = false
    /// A line holding a bare token (or anything that is not JSON), or a receipt file.
    public var isBareLine = false
    /// The unit that ends an input over ``InputOptions/maximumInputSize``: reading stopped
    /// there, and the input is refused as too large (its ``failure``, `token_too_large`).
    public var exceedsInputLimit = false
    /// A stored Stripe webhook delivery (a JSON object with a `Stripe-Signature` member, or
    /// one in `headers`, beside its `body`), or why it cannot be read as one: then the unit
    /// holds nothing else to verify.
    public var delivery: Result<StripeDelivery, VerificationError>?

    init(document: Int, failure: Failure? = nil) {
        self.document = document
        self.failure = failure
    }

    static let maximumLineRecords = 256

    /// The unit as a reader of Stripe deliveries sees one that is none: rejected as a whole, at
    /// its first line, `stripe_not_a_delivery`.
    package func notADelivery() -> InputUnit {
        let what: String
        if let failure {
            what = failure.error.reason
        } else if isBareLine {
            what = single?.form == .receiptFile ? "the input is a receipt file" : "the line is not a JSON object"
        } else {
            what = "the JSON document holds App Store data"
        }
        let line = failure?.lines.lowerBound ?? lines?.lowerBound ?? single?.line ?? groups.first?.first?.line ?? 0
        var unit = InputUnit(
            document: document,
            failure: .init(
                lines: line...line,
                error: VerificationError(
                    .stripeNotADelivery,
                    "not a stored Stripe delivery ({\"stripe-signature\":…,\"body\":…}): \(what)")))
        unit.context = context
        return unit
    }

    /// Tokens in the unit, for chunking.
    var weight: Int { single != nil ? 1 : max(1, groups.reduce(0) { $0 + $1.count }) }

    /// Verifies every token and receipt of the unit and applies the document's cross-checks.
    ///
    /// - Parameters:
    ///   - verifier: verifies the tokens.
    ///   - kind: the kind every token must be, or `nil` to detect each.
    ///   - receipts: verifies the receipts; without one, a receipt is rejected (`malformed_token`).
    ///   - stripe: verifies a Stripe delivery; without one, it is rejected (`malformed_token`).
    public func verify(
        with verifier: Verifier, kind: PayloadKind? = nil, receipts: ReceiptVerifier? = nil,
        stripe: StripeWebhookVerifier? = nil
    )
        -> [InputResult]
    {
        var tokens: [ArraySlice<UInt8>] = []
        appendTokens(to: &tokens)
        let verdicts = verifier.verifyChunk(tokens, as: kind)
        var next = 0
        var results: [InputResult] = []
        verify(verdicts: verdicts, next: &next, receipts: receipts, stripe: stripe) { results.append($0) }
        return results
    }

    /// The tokens to verify, in the order ``verify(verdicts:next:receipts:deliver:)`` takes
    /// their verdicts: a batch gives the tokens of many units to ``Verifier/verifyChunk(_:as:)``
    /// at once, so that tokens sharing a signer share the signature work.
    package func appendTokens(to tokens: inout [ArraySlice<UInt8>]) {
        guard failure == nil, delivery == nil else { return }
        if let single {
            if single.form == .jws, case .token(let bytes) = single.content, !bytes.isEmpty {
                tokens.append(bytes[...])
            }
            return
        }
        for group in groups {
            for token in group {
                if token.form == .jws, case .token(let bytes) = token.content, !bytes.isEmpty {
                    tokens.append(bytes[...])
                }
            }
        }
    }

    /// Applies the document's checks to the verdicts of its tokens, `verdicts[next...]` in the
    /// order ``appendTokens(to:)`` gave them, and advances `next` past them. Receipts are
    /// verified here with `receipts`, a Stripe delivery with `stripe`; without them they are
    /// rejected.
    package func verify(
        verdicts: [Result<VerifiedPayload, VerificationError>], next: inout Int, receipts: ReceiptVerifier? = nil,
        stripe: StripeWebhookVerifier? = nil, deliver: (InputResult) -> Void
    ) {
        if let delivery {
            deliver(verify(delivery, with: stripe))
            return
        }
        if let single {
            deliver(verify(single, verdicts: verdicts, next: &next, receipts: receipts))
            return
        }
        for result in verifyDocument(verdicts: verdicts, next: &next, receipts: receipts) { deliver(result) }
    }

    private func result(
        for token: InputToken, _ outcome: Result<VerifiedInput, VerificationError>, isReceipt: Bool = false
    ) -> InputResult {
        InputResult(
            line: token.line, document: document, path: token.path, showsDocument: token.showsDocument,
            form: token.form, isReceipt: isReceipt, echo: context.echo, result: outcome)
    }

    private func verify(
        _ token: InputToken, verdicts: [Result<VerifiedPayload, VerificationError>], next: inout Int,
        receipts: ReceiptVerifier?
    ) -> InputResult {
        if token.form != .jws {
            return result(for: token, verifyReceipt(token, with: receipts), isReceipt: receipts != nil)
        }
        var verdict: Result<VerifiedPayload, VerificationError>? = nil
        if case .token(let bytes) = token.content, !bytes.isEmpty {
            verdict = verdicts[next]
            next += 1
        }
        let outcome = Result { () throws(VerificationError) -> VerifiedInput in
            switch token.content {
            case .failure(let error): throw error
            case .token:
                guard let verdict else { throw VerificationError(.emptyLine, "the line is empty") }
                let payload = try verdict.get()
                try checkAgainstResponse(payload)
                return .payload(payload)
            }
        }
        return result(for: token, outcome)
    }

    /// A receipt's outcome: verified by `verifier`, or rejected when there is none.
    private func verifyReceipt(_ token: InputToken, with verifier: ReceiptVerifier?) -> Result<
        VerifiedInput, VerificationError
    > {
        guard let verifier else {
            if case .failure(let error) = token.content { return .failure(error) }
            return .failure(
                VerificationError(
                    .malformedToken, "the input holds a legacy app receipt, and no receipt verifier was given"))
        }
        return Result { () throws(VerificationError) -> VerifiedInput in
            switch token.content {
            case .failure(let error) where error.code == .malformedToken || error.code == .tokenTooLarge:
                // Where a receipt should be: a member that is not a string, or too long a one.
                throw VerificationError(
                    error.code == .malformedToken ? .receiptNotAReceipt : .receiptTooLarge, error.reason)
            case .failure(let error): throw error
            case .token(let bytes):
                return .receipt(
                    try token.form == .receiptFile ? verifier.verify(bytes) : verifier.verify(base64: bytes))
            }
        }
    }

    /// A delivery's outcome: the stored document checked strictly, then verified by `verifier`,
    /// or rejected when there is none.
    private func verify(_ delivery: Result<StripeDelivery, VerificationError>, with verifier: StripeWebhookVerifier?)
        -> InputResult
    {
        let outcome = Result { () throws(VerificationError) -> VerifiedInput in
            if let strictCheck {
                do {
                    _ = try StrictJSON.parse(strictCheck, limits: .init(maximumDepth: 16))
                } catch {
                    throw VerificationError(
                        .stripeMalformedDelivery, "the stored delivery is not a strict JSON object: \(error)")
                }
            }
            let delivery = try delivery.get()
            guard let verifier else {
                throw VerificationError(
                    .malformedToken, "the input holds a Stripe webhook delivery, and no Stripe verifier was given")
            }
            return .stripeEvent(try verifier.verify(delivery))
        }
        var result = InputResult(
            line: lines?.lowerBound ?? 0, document: document, path: nil, showsDocument: false, form: .stripeDelivery,
            isReceipt: false, echo: context.echo, result: outcome)
        result.isStripeEvent = verifier != nil
        return result
    }

    private func verifyDocument(
        verdicts: [Result<VerifiedPayload, VerificationError>], next: inout Int, receipts: ReceiptVerifier?
    ) -> [InputResult] {
        if failure == nil, let strictCheck {
            do {
                _ = try StrictJSON.parse(strictCheck, limits: .init(maximumDepth: 16))
            } catch {
                // The document does not count: pass over its tokens' verdicts.
                var skipped: [ArraySlice<UInt8>] = []
                appendTokens(to: &skipped)
                next += skipped.count
                return rejected(lines ?? 0...0, Self.notStrict(strictCheck, error))
            }
        }
        if let failure {
            if let strictCheck {
                do {
                    _ = try StrictJSON.parse(strictCheck, limits: .init(maximumDepth: 16))
                } catch {
                    return rejected(lines ?? failure.lines, Self.notStrict(strictCheck, error))
                }
            }
            return rejected(failure.lines, failure.error)
        }
        var results: [(order: Int, result: InputResult)] = []
        results.reserveCapacity(weight)
        for group in groups {
            var verified = group.map { verify($0, verdicts: verdicts, next: &next, receipts: receipts) }
            Self.checkPairs(&verified)
            results += zip(group, verified).map { ($0.order, $1) }
        }
        // An object's own tokens are grouped when it ends, after the tokens nested in it.
        return results.sorted { $0.order < $1.order }.map(\.result)
    }

    /// Why a document the strict parser refuses is rejected.
    private static func notStrict(_ bytes: [UInt8], _ error: StrictJSON.ParseError) -> VerificationError {
        let isArray = bytes.first == UInt8(ascii: "[")
        return VerificationError(
            error.isNestingTooDeep ? .jsonTooDeep : .malformedToken,
            "the input looks like JSON but is not \(isArray ? "strict JSON" : "a strict JSON object"): \(error)")
    }

    /// Every line of a rejected document gets its result, as the lines of a dump always have;
    /// a document over ``maximumLineRecords`` lines gets one, for its first line.
    private func rejected(_ lines: ClosedRange<Int>, _ error: VerificationError) -> [InputResult] {
        var lines = lines
        var error = error
        if lines.count > Self.maximumLineRecords {
            error = VerificationError(error.code, error.reason + " (lines \(lines.lowerBound)–\(lines.upperBound))")
            lines = lines.lowerBound...lines.lowerBound
        }
        return lines.map {
            InputResult(
                line: $0, document: document, path: failurePath, showsDocument: failurePath != nil, form: .jws,
                isReceipt: false, echo: context.echo, result: .failure(error))
        }
    }

    /// A token that names its app or environment must agree with the response holding it.
    private func checkAgainstResponse(_ payload: VerifiedPayload) throws(VerificationError) {
        let codes: [VerificationError.Code] = [.wrongBundleId, .wrongAppAppleId, .wrongEnvironment]
        for (index, name) in InputContext.names.enumerated() where index < context.values.count {
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
    static func checkPairs(_ results: inout [InputResult]) {
        guard results.count > 1 else { return }
        func index(of kind: PayloadKind) -> Int? {
            results.firstIndex { $0.payload?.kind == kind }
        }
        guard let transaction = index(of: .transaction), let renewal = index(of: .renewalInfo),
            let first = results[transaction].payload, let second = results[renewal].payload
        else { return }
        for name in ["originalTransactionId", "environment"] {
            let one = first.payload[name]
            let other = second.payload[name]
            guard one != other else { continue }
            let describe = { (value: JSONValue?) in value.map { JSONWriter.string($0) } ?? "absent" }
            results[transaction].result = .failure(
                VerificationError(
                    .pairMismatch,
                    "its \(name) \(describe(one)) differs from \(describe(other)) in \(results[renewal].path ?? "the renewal info")"
                ))
            results[renewal].result = .failure(
                VerificationError(
                    .pairMismatch,
                    "its \(name) \(describe(other)) differs from \(describe(one)) in \(results[transaction].path ?? "the transaction")"
                ))
            return
        }
    }
}

/// What verified: a token's payload, or a legacy app receipt.
public enum VerifiedInput: Sendable {
    /// A token's verified payload.
    case payload(VerifiedPayload)
    /// A verified legacy app receipt.
    case receipt(VerifiedReceipt)
    /// A Stripe event whose delivery verified.
    case stripeEvent(VerifiedStripeEvent)

    /// The kind as records and summaries name it: the payload's kind (`transaction`, …),
    /// `receipt` or `stripe_event`.
    public var kind: String {
        switch self {
        case .payload(let payload): payload.kind.rawValue
        case .receipt: "receipt"
        case .stripeEvent: Self.stripeEventKind
        }
    }

    /// The kind of a Stripe delivery's record, verified or not.
    public static let stripeEventKind = "stripe_event"
}

/// One result of an input, with where it came from.
public struct InputResult: Sendable {
    /// The line where the token starts (for a rejected document, each of its lines in turn).
    public var line: Int
    /// The unit's number in the input.
    public var document: Int
    /// The token's JSON path, `nil` where the line says it all.
    public var path: String?
    /// Whether the record names the document.
    public var showsDocument: Bool
    /// What the input here is: a token, or a receipt (then `isReceipt` tells whether a receipt
    /// verifier took it).
    public var form: InputToken.Form
    /// Whether a receipt verifier took the input here (a legacy app receipt), verified or not:
    /// its record's `kind` is `receipt` either way.
    public var isReceipt: Bool
    /// The values of ``InputOptions/echo`` in the document holding the token, in order.
    public var echo: [JSONValue?]
    /// What verified, or why not.
    public var result: Result<VerifiedInput, VerificationError>
    /// Whether a Stripe verifier took the delivery here, verified or not: its record's `kind`
    /// is `stripe_event` either way.
    public var isStripeEvent = false

    /// The token's verified payload, when it is one that verified.
    public var payload: VerifiedPayload? {
        if case .success(.payload(let payload)) = result { payload } else { nil }
    }

    /// The verified receipt, when it is one that verified.
    public var receipt: VerifiedReceipt? {
        if case .success(.receipt(let receipt)) = result { receipt } else { nil }
    }

    /// The verified Stripe event, when it is a delivery that verified.
    public var stripeEvent: VerifiedStripeEvent? {
        if case .success(.stripeEvent(let event)) = result { event } else { nil }
    }
}

/// A path with `[]` wildcards, as ``InputOptions/field`` takes it.
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
