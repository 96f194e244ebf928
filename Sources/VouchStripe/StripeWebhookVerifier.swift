public import Foundation
public import Vouch
internal import VouchOpenSSL

/// Verifies Stripe webhook deliveries offline: the `Stripe-Signature` header over the exact raw
/// body, with the endpoint's signing secrets, and the body as a Stripe event.
///
/// A delivery verifies when one `v1` signature of its header is the HMAC-SHA256 of
/// `t ‖ "." ‖ body` with one of ``Configuration/secrets`` (several while a secret is rolled),
/// compared in constant time; other schemes (`v0`) are ignored. Then, as Stripe's libraries do,
/// its timestamp `t` must not be older than ``Configuration/tolerance`` at the validation
/// instant (a later `t` is accepted), and only then is the body read: a strict JSON object
/// that is a Stripe event, whose object (a subscription, a Checkout session, an invoice, a
/// charge) has Stripe's type in every member Vouch reads (`stripe_bad_object`). A server verifying a live webhook keeps the defaults, 300 seconds
/// against the current time; stored deliveries (a dump, a queue) are best checked with no
/// tolerance, since Stripe retries a delivery for days with a new timestamp each time.
///
/// Verification is synchronous and `Sendable`: one verifier serves every thread.
public struct StripeWebhookVerifier: Sendable {
    /// The endpoint's secrets and how deliveries are judged.
    public struct Configuration: Sendable {
        /// The endpoint signing secrets (`whsec_…`, used as they are, as Stripe's libraries
        /// use them), tried in order. At least one, none empty.
        public var secrets: [String]
        /// How old a delivery's timestamp may be at the validation instant, in seconds; `nil`
        /// checks no age. ``defaultTolerance`` by default.
        public var tolerance: TimeInterval? = defaultTolerance
        /// The instant the tolerance is checked at when a call names none: `.now` (the default)
        /// reads the clock once per call; `.fixed(instant)` is an instant (when a stored delivery
        /// was received); `.signedDate` is the delivery's own signing time, so that any age
        /// passes.
        public var validationTime: ValidationTime = .now
        /// Bodies larger than this are refused (`stripe_body_too_large`): 1 MiB by default.
        public var maximumBodySize = 1 << 20
        /// Arrays and objects of the body nested deeper than this refuse it (`json_too_deep`).
        public var maximumDepth = 64

        /// Stripe's libraries' default tolerance: five minutes.
        public static let defaultTolerance: TimeInterval = 300

        /// A configuration with these secrets and the defaults for a live webhook.
        public init(secrets: [String]) {
            self.secrets = secrets
        }
    }

    /// What the verifier was made from.
    public let configuration: Configuration
    /// One keyed MAC per secret, in order (an OpenSSL failure to key one is reported when a
    /// delivery needs it).
    private let keys: [Result<HMACSHA256, OpenSSLError>]

    /// A verifier with `configuration`.
    ///
    /// - Throws: `ConfigurationError` `no_stripe_secrets` without a secret,
    ///   `empty_stripe_secret` for an empty one, `invalid_tolerance` for a negative tolerance.
    public init(configuration: Configuration) throws(ConfigurationError) {
        guard !configuration.secrets.isEmpty else {
            throw ConfigurationError(.noStripeSecrets, "give at least one endpoint signing secret (whsec_…)")
        }
        if let index = configuration.secrets.firstIndex(where: \.isEmpty) {
            throw ConfigurationError(.emptyStripeSecret, "Stripe secret \(index + 1) is empty")
        }
        if let tolerance = configuration.tolerance, !(tolerance >= 0) {
            throw ConfigurationError(.invalidTolerance, "the tolerance is \(tolerance) seconds; it must be 0 or more")
        }
        self.configuration = configuration
        keys = configuration.secrets.map { secret in
            Result { () throws(OpenSSLError) in try HMACSHA256(key: Array(secret.utf8)) }
        }
    }

    /// A verifier of live webhooks signed with one of `secrets`: 300 seconds of tolerance
    /// against the current time.
    public init(secrets: [String]) throws(ConfigurationError) {
        try self.init(configuration: Configuration(secrets: secrets))
    }

    /// Verifies a webhook: `body` exactly as received (never parsed and re-encoded) and its
    /// `Stripe-Signature` header, with the tolerance checked at `time` (the configuration's
    /// ``Configuration/validationTime`` when `nil`).
    public func verify(body: some Collection<UInt8>, signature: String, at time: ValidationTime? = nil)
        throws(VerificationError) -> VerifiedStripeEvent
    {
        try verify(StripeDelivery(signature: signature, body: Array(body)), at: time)
    }

    /// Verifies a delivery (a received webhook, or one stored as it came), with the tolerance
    /// checked at `time` (the configuration's ``Configuration/validationTime`` when `nil`): a
    /// server that verifies deliveries as they were received names each one's instant here.
    public func verify(_ delivery: StripeDelivery, at time: ValidationTime? = nil) throws(VerificationError)
        -> VerifiedStripeEvent
    {
        let body = delivery.body
        guard body.count <= configuration.maximumBodySize else {
            throw VerificationError(
                .stripeBodyTooLarge,
                "the body is \(body.count) bytes; the limit is \(configuration.maximumBodySize)")
        }
        let header = try StripeSignatureHeader(delivery.signature.utf8)
        let secret = try matchingSecret(header, body: body)
        if let tolerance = configuration.tolerance {
            let now: Timestamp =
                switch time ?? configuration.validationTime {
                case .now: Timestamp(Date())
                case .fixed(let instant): instant
                case .signedDate: Timestamp(milliseconds: header.timestamp * 1000)
                }
            let age = Double(now.milliseconds) / 1000 - Double(header.timestamp)
            if age > tolerance {
                throw VerificationError(
                    .stripeTimestampOutOfTolerance,
                    "the delivery was signed at \(Self.iso8601(header.timestamp)), \(Int64(age.rounded(.down))) seconds before \(CivilTime(milliseconds: now.milliseconds).iso8601(fraction: false)); the tolerance is \(Self.seconds(tolerance)) seconds"
                )
            }
        }
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(body, limits: .init(maximumDepth: configuration.maximumDepth))
        } catch {
            throw VerificationError(
                error.isNestingTooDeep ? .jsonTooDeep : .stripeBadBodyJSON,
                "the signed body is not a strict JSON object: \(error)")
        }
        return VerifiedStripeEvent(
            event: try StripeEvent(object), signedAt: Timestamp(milliseconds: header.timestamp * 1000),
            secretIndex: secret)
    }

    /// The index of the first secret one of whose signatures matches.
    private func matchingSecret(_ header: StripeSignatureHeader, body: [UInt8]) throws(VerificationError) -> Int {
        for (index, key) in keys.enumerated() {
            let expected: [UInt8]?
            switch key {
            case .failure(let error):
                throw VerificationError(.internalError, "could not key HMAC-SHA256 with secret \(index + 1): \(error)")
            case .success(let key):
                expected = body.withUnsafeBytes {
                    StripeSignatureHeader.signature(timestampText: header.timestampText, body: $0, key: key)
                }
            }
            guard let expected else {
                throw VerificationError(.internalError, "OpenSSL could not compute HMAC-SHA256")
            }
            for signature in header.signatures {
                let equal = expected.withUnsafeBytes { expected in
                    signature.withUnsafeBytes { HMACSHA256.constantTimeEqual(expected, $0) }
                }
                if equal { return index }
            }
        }
        let count = configuration.secrets.count
        throw VerificationError(
            .stripeBadSignature,
            "no v1 signature of the \(header.signatures.count) in the header matches the body with "
                + (count == 1 ? "the secret" : "any of the \(count) secrets"))
    }

    static func iso8601(_ seconds: Int64) -> String { CivilTime(milliseconds: seconds * 1000).iso8601(fraction: false) }

    private static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
