/// The JSON record of one verification, as `vouch verify --json` prints it and `vouch batch`
/// prints per line. Members always come in this order:
///
/// ```json
/// {"status":"verified","kind":"transaction","payload":{…}}
/// {"status":"rejected","kind":null,"payload":null,"error":{"code":"bad_signature","reason":"…"}}
/// ```
///
/// A notification's payload has its nested tokens replaced by their verified payloads. For a
/// nested failure, `error` holds `nested`: `{"field":…,"code":…,"reason":…}`.
public enum VerificationRecord {
    /// Writes the record's members (without the surrounding braces, so callers can add their
    /// own, such as a line number, in front).
    public static func writeMembers(
        of result: Result<VerifiedPayload, VerificationError>, kind requestedKind: PayloadKind?, into writer: inout JSONWriter
    ) {
        switch result {
        case .success(let verified):
            writer.raw("\"status\":\"verified\",\"kind\":")
            writer.write(string: verified.kind.rawValue)
            writer.raw(",\"payload\":")
            writer.write(object: verified.expandedPayload)
        case .failure(let error):
            writer.raw("\"status\":\"rejected\",\"kind\":")
            if let requestedKind { writer.write(string: requestedKind.rawValue) } else { writer.raw("null") }
            writer.raw(",\"payload\":null,\"error\":")
            writer.write(object: errorObject(error))
        }
    }

    /// The whole record as one JSON object.
    public static func json(for result: Result<VerifiedPayload, VerificationError>, kind: PayloadKind? = nil) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writeMembers(of: result, kind: kind, into: &writer)
        writer.raw("}")
        return writer.bytes
    }

    public static func errorObject(_ error: VerificationError) -> JSONObject {
        var object = JSONObject([.init("code", .string(error.code.rawValue)), .init("reason", .string(error.reason))])
        if let nested = error.nested {
            var inner = errorObject(nested.error)
            inner.members.insert(.init("field", .string(nested.field)), at: 0)
            object["nested"] = .object(inner)
        }
        return object
    }
}
