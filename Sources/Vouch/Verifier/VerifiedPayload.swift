internal import VouchOpenSSL

/// A payload whose signature, chain and claims have been verified, of whichever kind it is.
///
/// `Verifier.verify(_:as:)` with a ``PayloadKind`` (or none) returns one when the kind is detected or given
/// at run time; ``Verified`` is the same with the kind known to the compiler.
public struct VerifiedPayload: Sendable {
    /// Everything, in one object: a result is passed and copied along a batch's whole way,
    /// and a copy of one reference is one retain where a copy of the typed model is dozens.
    private final class Storage: Sendable {
        let kind: PayloadKind
        let payload: JSONObject
        let decoded: DecodedPayload
        let validationTime: Timestamp
        let nested: [NestedPayload]
        let keyIdentifier: String?
        let leafCertificate: Certificate
        let canonicalPayload: [UInt8]?

        init(
            kind: PayloadKind, payload: JSONObject, decoded: DecodedPayload, validationTime: Timestamp,
            nested: [NestedPayload], keyIdentifier: String?, leafCertificate: Certificate, canonicalPayload: [UInt8]?
        ) {
            self.kind = kind
            self.payload = payload
            self.decoded = decoded
            self.validationTime = validationTime
            self.nested = nested
            self.keyIdentifier = keyIdentifier
            self.leafCertificate = leafCertificate
            self.canonicalPayload = canonicalPayload
        }
    }

    private let storage: Storage

    init(
        kind: PayloadKind, payload: JSONObject, decoded: DecodedPayload, validationTime: Timestamp,
        nested: [NestedPayload], keyIdentifier: String?, leafCertificate: Certificate, canonicalPayload: [UInt8]?
    ) {
        storage = Storage(
            kind: kind, payload: payload, decoded: decoded, validationTime: validationTime, nested: nested,
            keyIdentifier: keyIdentifier, leafCertificate: leafCertificate, canonicalPayload: canonicalPayload)
    }

    /// The kind of the payload: detected, or the one required.
    public var kind: PayloadKind { storage.kind }
    /// The payload exactly as signed (member order and number text kept).
    public var payload: JSONObject { storage.payload }
    /// The payload as its typed model.
    public var decoded: DecodedPayload { storage.decoded }
    /// The instant the certificate chain was validated at.
    public var validationTime: Timestamp { storage.validationTime }
    /// The environment the payload names in its signed data, which the verifier checked against
    /// its ``TrustConfiguration/environments`` (when it names any): the `environment` of a
    /// transaction, renewal info or retention-messaging request, of a notification's `data`,
    /// `summary`, `externalPurchaseToken` or `appData`, an app transaction's `receiptType`.
    /// `nil` when the payload names none.
    public var environment: AppStoreEnvironment? { ClaimPolicy.claims(of: storage.decoded).environment }
    /// For a notification: each nested token, verified.
    public var nested: [NestedPayload] { storage.nested }
    /// The header's `kid`, if any (Xcode data carries one).
    public var keyIdentifier: String? { storage.keyIdentifier }
    var leafCertificate: Certificate { storage.leafCertificate }
    /// The payload's signed bytes when they are exactly what ``JSONWriter`` writes for
    /// ``payload`` (no whitespace, no escape but the writer's): a record copies them instead of
    /// writing the object anew.
    package var canonicalPayload: [UInt8]? { storage.canonicalPayload }

    /// SHA-256 of the certificate that signed the token.
    public var signingCertificateSHA256: [UInt8] { leafCertificate.sha256 }

    /// The certificate that signed the token.
    public var signingCertificate: SigningCertificate {
        SigningCertificate(leafCertificate, keyIdentifier: keyIdentifier)
    }

    /// The verified token that was held in `field`, or `nil` when the notification has none
    /// there (or this is not a notification).
    public func nested(_ field: NestedTokenField) -> VerifiedPayload? {
        nested.first(where: { $0.field == field })?.payload
    }

    /// The payload as `type`, when it is of that kind.
    public func decoded<Payload: VerifiablePayload>(as type: Payload.Type) -> Verified<Payload>? {
        Verified(self)
    }

    /// The payload with each nested token replaced by its verified, decoded payload.
    public var expandedPayload: JSONObject {
        var expanded = payload
        for item in nested {
            guard var parent = expanded[item.field.parent]?.objectValue else { continue }
            parent[item.field.member] = .object(item.payload.expandedPayload)
            expanded[item.field.parent] = .object(parent)
        }
        return expanded
    }
}

/// A token found inside a notification, and its verified payload.
public struct NestedPayload: Sendable {
    /// Where the token was: `data.signedTransactionInfo`, `data.signedRenewalInfo` or
    /// `appData.signedAppTransactionInfo`.
    public let field: NestedTokenField
    /// The nested token's verified payload.
    public let payload: VerifiedPayload
}

/// A payload as its typed model.
public enum DecodedPayload: Sendable, Hashable {
    /// A transaction.
    case transaction(JWSTransactionDecodedPayload)
    /// Subscription renewal info.
    case renewalInfo(JWSRenewalInfoDecodedPayload)
    /// An App Store Server Notification V2.
    case notification(ResponseBodyV2DecodedPayload)
    /// An app transaction.
    case appTransaction(AppTransaction)
    /// A retention-messaging (realtime) request.
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
