public import Vouch

/// The JSON record of one verification, as `vouch verify --json` prints it and `vouch batch`
/// prints per line (with `"line"` first). Members always come in this order:
///
/// ```json
/// {"status":"verified","kind":"transaction","payload":{…}}
/// {"status":"rejected","kind":null,"payload":null,"error":{"code":"bad_signature","reason":"…"}}
/// ```
///
/// A notification's payload has its nested tokens replaced by their verified payloads. For a
/// nested failure, `error` holds `nested`: `{"field":…,"code":…,"reason":…}`.
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

    /// Writes the record's members without the surrounding braces, so callers can put their
    /// own (such as a line number) in front.
    package static func writeMembers(
        of result: Result<VerifiedPayload, VerificationError>, kind requestedKind: PayloadKind?,
        payload selection: PayloadSelection = .full, into writer: inout JSONWriter
    ) {
        writeMembers(
            of: result.mapError(LineRejection.verification), kind: requestedKind, payload: selection, into: &writer)
    }

    /// A batch line's record members: as ``writeMembers(of:kind:payload:into:)``, with the
    /// batch's own input errors reported the same way.
    package static func writeMembers(
        of result: Result<VerifiedPayload, LineRejection>, kind requestedKind: PayloadKind?,
        payload selection: PayloadSelection = .full, into writer: inout JSONWriter
    ) {
        switch result {
        case .success(let verified):
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
        case .failure(let error):
            writer.raw("\"status\":\"rejected\",\"kind\":")
            if let requestedKind { writer.write(string: requestedKind.rawValue) } else { writer.raw("null") }
            if selection != .none { writer.raw(",\"payload\":null") }
            writer.raw(",\"error\":")
            write(error: error, into: &writer)
        }
    }

    /// Writes a record's `error` object.
    package static func write(error: LineRejection, into writer: inout JSONWriter) {
        switch error {
        case .verification(let error):
            writer.write(object: errorObject(error))
        case .input(let error):
            writer.write(
                object: JSONObject([
                    .init("code", .string(error.code.rawValue)), .init("reason", .string(error.reason)),
                ]))
        }
    }

    /// The whole record as one JSON object.
    public static func json(
        for result: Result<VerifiedPayload, VerificationError>, kind: PayloadKind? = nil,
        payload: PayloadSelection = .full
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writeMembers(of: result, kind: kind, payload: payload, into: &writer)
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
