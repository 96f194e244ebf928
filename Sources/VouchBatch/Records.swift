public import Vouch
public import VouchReceipts
internal import VouchStripe

/// The one record format of Vouch's output: a JSON object per result, as `vouch batch` writes
/// one per line and `vouch verify --json` and `vouch receipt verify --json` print. Members
/// always come in this order, each only where it says something:
///
/// ```json
/// {"line":3,"document":3,"path":"signedTransactions[0]","echo":{"id":"a1"},"status":"verified","kind":"transaction","payload":{…}}
/// {"line":4,"status":"rejected","kind":null,"payload":null,"error":{"code":"bad_signature","reason":"…"}}
/// {"status":"verified","kind":"receipt","payload":{"receiptType":"Production",…,"inApp":[…]}}
/// {"line":7,"status":"verified","kind":"stripe_event","payload":{"id":"evt_…","object":"event",…}}
/// ```
///
/// A notification's payload has its nested tokens replaced by their verified payloads; for a
/// nested failure, `error` holds `nested`: `{"field":…,"code":…,"reason":…}`. A rejected
/// token's `kind` is the kind that was required, or `null`; a receipt's is always `receipt`, and
/// a Stripe delivery's `stripe_event` (its payload the event, one line, members in Stripe's
/// order) when a Stripe verifier took it.
public struct RecordFormat: Sendable {
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
    public var payload: VerificationRecord.PayloadSelection
    /// When `"line"` and `"document"` are written.
    public var numbers: Numbers
    /// Names of the echoed members (``InputOptions/echo``), in order: written as `"echo"`.
    public var echo: [String]
    /// The kind every token was required to be, written as a rejected token's `kind`.
    public var kind: PayloadKind?

    /// A format writing the whole payload and `"line"` in every record, by default.
    public init(
        payload: VerificationRecord.PayloadSelection = .full, numbers: Numbers = .always, echo: [String] = [],
        kind: PayloadKind? = nil
    ) {
        self.payload = payload
        self.numbers = numbers
        self.echo = echo
        self.kind = kind
    }

    /// Writes one record, newline-terminated.
    public func write(_ result: InputResult, into writer: inout JSONWriter) {
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
            let values = result.echo
            writer.write(
                object: JSONObject(
                    echo.enumerated().map { .init($1, values.indices.contains($0) ? values[$0] ?? .null : .null) }))
            writer.raw(",")
        }
        VerificationRecord.writeMembers(
            of: result.result, isReceipt: result.isReceipt, isStripeEvent: result.isStripeEvent, kind: kind,
            payload: payload, into: &writer)
        writer.raw("}\n")
    }

    /// One record's bytes, newline-terminated.
    public func record(_ result: InputResult) -> [UInt8] {
        var writer = JSONWriter()
        write(result, into: &writer)
        return writer.bytes
    }
}

/// The members of a record that say what verified: `status`, `kind`, `payload`, `error`.
public enum VerificationRecord {
    /// How much of a verified payload a record carries.
    public enum PayloadSelection: Sendable, Equatable {
        /// The whole payload, nested tokens expanded.
        case full
        /// No `payload` member.
        case none
        /// Only these members (a dotted path such as `data.bundleId` reaches into objects),
        /// each under its path as name, `null` when absent.
        case fields([String])
    }

    /// Writes a record's members without the surrounding braces, so callers can put their
    /// own (such as a line number) in front.
    package static func writeMembers(
        of result: Result<VerifiedInput, VerificationError>, isReceipt: Bool, isStripeEvent: Bool = false,
        kind requestedKind: PayloadKind?, payload selection: PayloadSelection = .full, into writer: inout JSONWriter
    ) {
        switch result {
        case .success(.payload(let verified)):
            writer.raw("\"status\":\"verified\",\"kind\":")
            writer.write(string: verified.kind.rawValue)
            switch selection {
            case .none:
                break
            case .full:
                writer.raw(",\"payload\":")
                // The signed bytes are the record's bytes when nothing is nested in them.
                if verified.nested.isEmpty, let bytes = verified.canonicalPayload {
                    writer.writeRaw(bytes)
                } else {
                    writer.write(object: verified.expandedPayload)
                }
            case .fields(let paths):
                writer.raw(",\"payload\":")
                writer.write(object: select(paths, from: verified.expandedPayload))
            }
        case .success(.receipt(let verified)):
            writer.raw("\"status\":\"verified\",\"kind\":\"receipt\"")
            switch selection {
            case .none: break
            case .full:
                writer.raw(",\"payload\":")
                verified.receipt.writeJSON(into: &writer)
            case .fields(let paths):
                writer.raw(",\"payload\":")
                writer.write(object: select(paths, from: verified.receipt.jsonObject))
            }
        case .success(.stripeEvent(let verified)):
            writer.raw("\"status\":\"verified\",\"kind\":\"stripe_event\"")
            switch selection {
            case .none: break
            case .full:
                writer.raw(",\"payload\":")
                writer.write(object: verified.event.json)
            case .fields(let paths):
                writer.raw(",\"payload\":")
                writer.write(object: select(paths, from: verified.event.json))
            }
        case .failure(let error):
            writer.raw("\"status\":\"rejected\",\"kind\":")
            if isReceipt {
                writer.raw("\"receipt\"")
            } else if isStripeEvent {
                writer.raw("\"stripe_event\"")
            } else if let requestedKind {
                writer.write(string: requestedKind.rawValue)
            } else {
                writer.raw("null")
            }
            if selection != .none { writer.raw(",\"payload\":null") }
            writer.raw(",\"error\":")
            writer.write(object: errorObject(error))
        }
    }

    /// One token's record as one JSON object (no line, no newline): what `vouch verify --json`
    /// prints for a bare token.
    public static func json(
        for result: Result<VerifiedPayload, VerificationError>, kind: PayloadKind? = nil,
        payload: PayloadSelection = .full
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writeMembers(of: result.map { .payload($0) }, isReceipt: false, kind: kind, payload: payload, into: &writer)
        writer.raw("}")
        return writer.bytes
    }

    /// One receipt's record as one JSON object (no line, no newline).
    public static func json(for result: Result<VerifiedReceipt, VerificationError>) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writeMembers(of: result.map { .receipt($0) }, isReceipt: true, kind: nil, into: &writer)
        writer.raw("}")
        return writer.bytes
    }

    /// The record's `error` object: `code`, `reason`, and `nested` for a nested token's failure.
    public static func errorObject(_ error: VerificationError) -> JSONObject {
        var object = JSONObject([.init("code", .string(error.code.rawValue)), .init("reason", .string(error.reason))])
        if let nested = error.nested {
            var inner = errorObject(nested.error)
            inner.members.insert(.init("field", .string(nested.field.path)), at: 0)
            object["nested"] = .object(inner)
        }
        return object
    }

    static func select(_ paths: [String], from payload: JSONObject) -> JSONObject {
        JSONObject(
            paths.map { path in
                var value: JSONValue? = .object(payload)
                for name in path.split(separator: ".", omittingEmptySubsequences: false) {
                    value = value?.objectValue?[String(name)]
                }
                return JSONObject.Member(path, value ?? .null)
            })
    }
}
