/// A payload whose signature, chain and claims have been verified.
public struct VerifiedPayload: Sendable {
    public let kind: PayloadKind
    /// The payload exactly as signed (member order and number text kept).
    public let payload: JSONObject
    /// The payload as its typed model.
    public let decoded: DecodedPayload
    /// The instant the chain was validated at, in milliseconds since 1970.
    public let validationTime: Int64
    /// For a notification: each nested token, verified.
    public let nested: [NestedPayload]
    /// The header's `kid`, if any (Xcode data carries one).
    public let keyIdentifier: String?
    let leafCertificate: Certificate

    /// SHA-256 of the certificate that signed the token.
    public var signingCertificateSHA256: [UInt8] { leafCertificate.sha256 }

    /// The payload with each nested token replaced by its verified, decoded payload.
    public var expandedPayload: JSONObject {
        var expanded = payload
        for item in nested {
            let path = item.field.split(separator: ".").map(String.init)
            guard path.count == 2, var parent = expanded[path[0]]?.objectValue else { continue }
            parent[path[1]] = .object(item.payload.expandedPayload)
            expanded[path[0]] = .object(parent)
        }
        return expanded
    }
}

/// A token found inside a notification, and its verified payload.
public struct NestedPayload: Sendable {
    /// Where the token was: `data.signedTransactionInfo`, `data.signedRenewalInfo` or
    /// `appData.signedAppTransactionInfo`.
    public let field: String
    public let payload: VerifiedPayload
}

/// A payload as its typed model.
public enum DecodedPayload: Sendable, Hashable {
    case transaction(JWSTransactionDecodedPayload)
    case renewalInfo(JWSRenewalInfoDecodedPayload)
    case notification(ResponseBodyV2DecodedPayload)
    case appTransaction(AppTransaction)
    case realtimeRequest(DecodedRealtimeRequestBody)

    /// Decodes `json` as `kind`; a known field of the wrong type is
    /// ``VerificationError/Code/badPayloadJSON``.
    public init(kind: PayloadKind, json: JSONObject) throws(VerificationError) {
        do {
            switch kind {
            case .transaction: self = .transaction(try JWSTransactionDecodedPayload(json: json))
            case .renewalInfo: self = .renewalInfo(try JWSRenewalInfoDecodedPayload(json: json))
            case .notification: self = .notification(try ResponseBodyV2DecodedPayload(json: json))
            case .appTransaction: self = .appTransaction(try AppTransaction(json: json))
            case .realtimeRequest: self = .realtimeRequest(try DecodedRealtimeRequestBody(json: json))
            }
        } catch {
            throw VerificationError(.badPayloadJSON, "\(kind) payload: \(error)")
        }
    }
}
