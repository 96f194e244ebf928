internal import VouchOpenSSL

/// A payload model that `Verifier.verify(_:as:)` with a model type can return: one of the five
/// kinds of App Store signed data.
public protocol VerifiablePayload: SignedPayload {
    /// The kind a token must be to decode as this model.
    static var kind: PayloadKind { get }
    /// This model, when `decoded` holds it.
    init?(_ decoded: DecodedPayload)
}

extension JWSTransactionDecodedPayload: VerifiablePayload {
    public static var kind: PayloadKind { .transaction }
    public init?(_ decoded: DecodedPayload) {
        guard case .transaction(let value) = decoded else { return nil }
        self = value
    }
}

extension JWSRenewalInfoDecodedPayload: VerifiablePayload {
    public static var kind: PayloadKind { .renewalInfo }
    public init?(_ decoded: DecodedPayload) {
        guard case .renewalInfo(let value) = decoded else { return nil }
        self = value
    }
}

extension ResponseBodyV2DecodedPayload: VerifiablePayload {
    public static var kind: PayloadKind { .notification }
    public init?(_ decoded: DecodedPayload) {
        guard case .notification(let value) = decoded else { return nil }
        self = value
    }
}

extension AppTransaction: VerifiablePayload {
    public static var kind: PayloadKind { .appTransaction }
    public init?(_ decoded: DecodedPayload) {
        guard case .appTransaction(let value) = decoded else { return nil }
        self = value
    }
}

extension DecodedRealtimeRequestBody: VerifiablePayload {
    public static var kind: PayloadKind { .realtimeRequest }
    public init?(_ decoded: DecodedPayload) {
        guard case .realtimeRequest(let value) = decoded else { return nil }
        self = value
    }
}

/// A payload of a known kind whose signature, chain and claims have been verified: the typed
/// ``value`` beside the payload exactly as signed.
///
/// `Verifier.verify(_:as:)` with a model type returns one; a notification's verified nested tokens are
/// ``transaction``, ``renewalInfo`` and ``appTransaction``.
public struct Verified<Payload: VerifiablePayload>: Sendable {
    /// The payload as its typed model.
    public let value: Payload
    /// The same verification without the static type: kind, nested tokens, expanded payload.
    public let untyped: VerifiedPayload

    init?(_ untyped: VerifiedPayload) {
        guard let value = Payload(untyped.decoded) else { return nil }
        self.value = value
        self.untyped = untyped
    }

    /// The payload exactly as signed (member order and number text kept).
    public var payload: JSONObject { untyped.payload }
    /// The instant the certificate chain was validated at.
    public var validationTime: Timestamp { untyped.validationTime }
    /// The environment the payload names in its signed data, which the verifier checked against
    /// its ``TrustConfiguration/environments`` (see ``VerifiedPayload/environment``).
    public var environment: AppStoreEnvironment? { untyped.environment }
    /// The certificate whose key signed the token.
    public var signingCertificate: SigningCertificate { untyped.signingCertificate }
}

extension Verified where Payload == ResponseBodyV2DecodedPayload {
    /// The notification's `data.signedTransactionInfo`, verified with the same trust and
    /// agreeing with the notification's app and environment; `nil` when absent.
    public var transaction: Verified<JWSTransactionDecodedPayload>? {
        untyped.nested(.signedTransactionInfo).flatMap(Verified<JWSTransactionDecodedPayload>.init)
    }

    /// The notification's `data.signedRenewalInfo`, verified; `nil` when absent.
    public var renewalInfo: Verified<JWSRenewalInfoDecodedPayload>? {
        untyped.nested(.signedRenewalInfo).flatMap(Verified<JWSRenewalInfoDecodedPayload>.init)
    }

    /// The notification's `appData.signedAppTransactionInfo`, verified; `nil` when absent.
    public var appTransaction: Verified<AppTransaction>? {
        untyped.nested(.signedAppTransactionInfo).flatMap(Verified<AppTransaction>.init)
    }
}

/// A member of a notification that holds a token of its own.
public enum NestedTokenField: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `data.signedTransactionInfo`, a ``JWSTransactionDecodedPayload``.
    case signedTransactionInfo = "data.signedTransactionInfo"
    /// `data.signedRenewalInfo`, a ``JWSRenewalInfoDecodedPayload``.
    case signedRenewalInfo = "data.signedRenewalInfo"
    /// `appData.signedAppTransactionInfo`, an ``AppTransaction``.
    case signedAppTransactionInfo = "appData.signedAppTransactionInfo"

    /// The dotted path of the member in the notification payload (the `rawValue`).
    public var path: String { rawValue }
    /// The object holding the member (`data` or `appData`).
    public var parent: String { rawValue.prefix(while: { $0 != "." }).description }
    /// The member's name inside ``parent``.
    public var member: String { String(rawValue.drop(while: { $0 != "." }).dropFirst()) }
    /// The kind of the token the member holds.
    public var kind: PayloadKind {
        switch self {
        case .signedTransactionInfo: .transaction
        case .signedRenewalInfo: .renewalInfo
        case .signedAppTransactionInfo: .appTransaction
        }
    }

    public var description: String { rawValue }
}

/// The certificate that signed a verified token (the chain's leaf, or a trusted Xcode
/// certificate), and the header's key identifier.
public struct SigningCertificate: Sendable, Hashable {
    /// The certificate, DER.
    public let der: [UInt8]
    /// SHA-256 of ``der``.
    public let sha256: [UInt8]
    /// The subject, one line (`CN = …, O = …`).
    public let subject: String
    /// The issuer, one line.
    public let issuer: String
    /// The start of the certificate's validity (whole seconds).
    public let notBefore: Timestamp?
    /// The end of the certificate's validity (whole seconds).
    public let notAfter: Timestamp?
    /// The header's `kid`, if any (Xcode data carries one).
    public let keyIdentifier: String?

    init(_ certificate: Certificate, keyIdentifier: String?) {
        der = certificate.der
        sha256 = certificate.sha256
        subject = certificate.subject
        issuer = certificate.issuer
        notBefore = certificate.notBefore.map { Timestamp(seconds: $0) }
        notAfter = certificate.notAfter.map { Timestamp(seconds: $0) }
        self.keyIdentifier = keyIdentifier
    }
}
