internal import Foundation

/// Why a ``Verifier`` (or a `ReceiptVerifier`) could not be made from its configuration: a
/// mistake in the set-up, never a verdict on data (those are ``VerificationError``s).
public struct ConfigurationError: CodedError {
    /// A stable identifier of one configuration mistake.
    public enum Code: String, ErrorCode, CaseIterable {
        /// Neither the app's identity (`bundleId` and `environment`) nor
        /// ``TrustConfiguration/acceptsAnyApp`` was given.
        case missingAppIdentity = "missing_app_identity"
        /// The environment is Production but no `appAppleId` was given (Apple's libraries
        /// require it there too).
        case missingAppAppleId = "missing_app_apple_id"
        /// A trust anchor is not a DER certificate nor PEM holding only certificates.
        case unreadableTrustAnchor = "unreadable_trust_anchor"
        /// An Xcode certificate is not a DER certificate nor PEM holding only certificates.
        case unreadableXcodeCertificate = "unreadable_xcode_certificate"
        /// The trust anchor list is empty: nothing could ever verify.
        case noTrustAnchors = "no_trust_anchors"
        /// A receipt verifier's device identifier is not 16 bytes (a UUID's).
        case invalidDeviceIdentifier = "invalid_device_identifier"
        /// A Stripe webhook verifier was given no endpoint secret.
        case noStripeSecrets = "no_stripe_secrets"
        /// A Stripe endpoint secret is empty.
        case emptyStripeSecret = "empty_stripe_secret"
        /// A Stripe timestamp tolerance is negative or not a number.
        case invalidTolerance = "invalid_tolerance"
    }

    /// What is wrong, as a stable identifier.
    public let code: Code
    /// What is wrong, for people: which entry, and what to set.
    public let reason: String

    /// Always ``ErrorCategory/configuration``: a mistake in the set-up.
    public var category: ErrorCategory { .configuration }

    package init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}
