public import Foundation

/// Why a token was rejected: a stable ``Code`` for programs and a ``reason`` for people.
///
/// Two errors are equal when their codes are equal; the reason carries the detail (OpenSSL's
/// verify error text, the field, the expected and actual values).
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// Which step refused the data: the size or shape of the input, the token's encoding, its
    /// signature, its certificate chain, or its claims. ``VerificationError/category`` names it.
    public enum Category: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The input is not something to verify: too large, empty, not a compact JWS.
        case input
        /// The token's encoding or structure: base64url, header or payload JSON, `alg`, `x5c`.
        case format
        /// The ES256 signature.
        case signature
        /// The certificate chain and Apple's certificate policy, or an untrusted Xcode certificate.
        case chain
        /// The payload's kind, bundle id, app Apple id or environment; the time claims of a token
        /// signed with a known key.
        case claims
        /// The verifier itself failed (OpenSSL could not allocate or set up a check): not a
        /// verdict on the data; trying again may succeed.
        case `internal`

        public var description: String { rawValue }
    }

    /// A stable identifier of one kind of failure. The raw values are part of the CLI's JSON
    /// output and never change.
    /// The list is closed: every code is one of the constants below.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code as text, such as `wrong_bundle_id`.
        public let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The token is larger than the verifier's size limit.
        public static let tokenTooLarge = Code(rawValue: "token_too_large")
        /// Not a compact JWS: not exactly three non-empty dot-separated segments.
        public static let malformedToken = Code(rawValue: "malformed_token")
        /// A segment is not canonical unpadded base64url.
        public static let badBase64URL = Code(rawValue: "bad_base64url")
        /// The protected header is not a strict UTF-8 JSON object, or a member has the wrong type.
        public static let badHeaderJSON = Code(rawValue: "bad_header_json")
        /// A JSON document (header, payload or JSON input) nests arrays and objects deeper than
        /// its limit.
        public static let jsonTooDeep = Code(rawValue: "json_too_deep")
        /// `alg` is anything but `ES256`.
        public static let unsupportedAlgorithm = Code(rawValue: "unsupported_algorithm")
        /// The header carries `crit`.
        public static let critPresent = Code(rawValue: "crit_present")
        /// The header has no `x5c` member.
        public static let missingX5C = Code(rawValue: "missing_x5c")
        /// `x5c` does not hold exactly three certificates.
        public static let wrongChainLength = Code(rawValue: "wrong_chain_length")
        /// An `x5c` entry is not standard base64 of exactly one DER certificate.
        public static let badCertificateEncoding = Code(rawValue: "bad_certificate_encoding")
        /// An `x5c` entry is larger than the certificate size limit.
        public static let certificateTooLarge = Code(rawValue: "certificate_too_large")
        /// The chain does not lead to a trust anchor (OpenSSL's reason in the text).
        public static let untrustedChain = Code(rawValue: "untrusted_chain")
        /// A certificate of the chain had expired at the validation time.
        public static let certificateExpired = Code(rawValue: "certificate_expired")
        /// A certificate of the chain was not yet valid at the validation time.
        public static let certificateNotYetValid = Code(rawValue: "certificate_not_yet_valid")
        /// The leaf or intermediate lacks Apple's marker extension.
        public static let missingMarkerOID = Code(rawValue: "missing_marker_oid")
        /// The leaf key is not an EC P-256 key.
        public static let wrongKeyType = Code(rawValue: "wrong_key_type")
        /// A certificate of the chain is X.509 v1 or v2; only v3 certificates carry the
        /// extensions Apple's policy needs.
        public static let unsupportedCertificateVersion = Code(rawValue: "unsupported_certificate_version")
        /// The verifier could not run a check (an allocation or OpenSSL context failure): no
        /// verdict on the data.
        public static let internalError = Code(rawValue: "internal_error")
        /// The leaf certificate is a CA.
        public static let leafIsCA = Code(rawValue: "leaf_is_ca")
        /// The signature segment is not 64 bytes (raw `r‖s`).
        public static let badSignatureLength = Code(rawValue: "bad_signature_length")
        /// The ES256 signature does not verify with the leaf key over `header.payload`.
        public static let badSignature = Code(rawValue: "bad_signature")
        /// The payload is not a strict UTF-8 JSON object, or a known field has the wrong type.
        public static let badPayloadJSON = Code(rawValue: "bad_payload_json")
        /// The payload's kind could not be told (or is not the kind that was asked for).
        public static let unknownKind = Code(rawValue: "unknown_kind")
        /// The payload is of another kind than the one required.
        public static let wrongKind = Code(rawValue: "wrong_kind")
        /// `bundleId` differs from the expected one.
        public static let wrongBundleId = Code(rawValue: "wrong_bundle_id")
        /// `appAppleId` differs from the expected one (checked in Production).
        public static let wrongAppAppleId = Code(rawValue: "wrong_app_apple_id")
        /// The environment differs from the expected one.
        public static let wrongEnvironment = Code(rawValue: "wrong_environment")
        /// A token nested in a notification failed; ``VerificationError/nested`` holds why.
        public static let nestedTokenInvalid = Code(rawValue: "nested_token_invalid")
        /// The token was signed by Xcode's StoreKit testing certificate, which is not trusted.
        public static let xcodeNotTrusted = Code(rawValue: "xcode_not_trusted")
        /// Line input: the line is empty, or only whitespace.
        public static let emptyLine = Code(rawValue: "empty_line")
        /// Line input: the line is longer than the limit; its bytes were skipped.
        public static let lineTooLong = Code(rawValue: "line_too_long")
        /// Document input: a transaction and a renewal info of one object disagree
        /// (`originalTransactionId` or environment).
        public static let pairMismatch = Code(rawValue: "pair_mismatch")
        /// Document input: a document larger than the buffer names a response member
        /// (`bundleId`, `appAppleId`, `environment`, an echoed field) after tokens already verified.
        public static let documentTooLarge = Code(rawValue: "document_too_large")

        /// Every code, in documentation order.
        public static let all: [Code] =
            [
                .tokenTooLarge, .malformedToken, .badBase64URL, .badHeaderJSON, .jsonTooDeep, .unsupportedAlgorithm,
                .critPresent, .missingX5C, .wrongChainLength, .badCertificateEncoding, .certificateTooLarge,
                .untrustedChain,
                .certificateExpired, .certificateNotYetValid, .unsupportedCertificateVersion, .missingMarkerOID,
                .wrongKeyType, .leafIsCA,
                .badSignatureLength, .badSignature, .badPayloadJSON, .unknownKind, .wrongKind, .wrongBundleId,
                .wrongAppAppleId, .wrongEnvironment, .nestedTokenInvalid, .xcodeNotTrusted, .internalError,
                .emptyLine, .lineTooLong, .pairMismatch, .documentTooLarge,
            ] + receiptCodes + keySignedCodes + stripeCodes

        /// The step this code belongs to; `nil` for ``nestedTokenInvalid``, whose category is
        /// the nested error's.
        var category: Category? {
            switch self {
            case .tokenTooLarge, .malformedToken, .emptyLine, .lineTooLong, .documentTooLarge: .input
            case .badBase64URL, .badHeaderJSON, .jsonTooDeep, .unsupportedAlgorithm, .critPresent, .missingX5C,
                .wrongChainLength, .badCertificateEncoding, .certificateTooLarge, .badPayloadJSON, .unknownKind:
                .format
            case .badSignatureLength, .badSignature: .signature
            case .untrustedChain, .certificateExpired, .certificateNotYetValid, .unsupportedCertificateVersion,
                .missingMarkerOID, .wrongKeyType, .leafIsCA, .xcodeNotTrusted:
                .chain
            case .wrongKind, .wrongBundleId, .wrongAppAppleId, .wrongEnvironment, .pairMismatch: .claims
            case .receiptNotAReceipt, .receiptTooLarge: .input
            case .receiptMalformedContainer, .receiptUnsupportedAlgorithm, .receiptMalformedPayload,
                .receiptDuplicateAttribute:
                .format
            case .receiptSignerNotFound: .chain
            case .receiptWrongAppVersion, .receiptDeviceHashMismatch: .claims
            case .tokenExpired, .tokenNotYetValid: .claims
            case .stripeNotADelivery, .stripeMalformedDelivery, .stripeBodyTooLarge: .input
            case .stripeMalformedHeader, .stripeBadBodyJSON, .stripeNotAnEvent, .stripeBadObject: .format
            case .stripeNoSignature, .stripeBadSignature: .signature
            case .stripeTimestampOutOfTolerance: .claims
            case .nestedTokenInvalid: nil
            case .internalError: .internal
            default: .internal
            }
        }
    }

    /// What refused the data, as a stable identifier.
    public let code: Code
    /// Why, for people: the field, the expected and actual values, OpenSSL's reason.
    public let reason: String
    /// For ``Code/nestedTokenInvalid``: the member that held the nested token and its error.
    public let nested: Nested?

    /// A nested token's failure: where the token was and why it failed.
    public final class Nested: Sendable, Hashable {
        /// The member that held the token; its `description` is the dotted path, such as
        /// `data.signedTransactionInfo`.
        public let field: NestedTokenField
        /// Why the nested token failed.
        public let error: VerificationError

        init(field: NestedTokenField, error: VerificationError) {
            self.field = field
            self.error = error
        }

        public static func == (lhs: Nested, rhs: Nested) -> Bool { lhs.field == rhs.field && lhs.error == rhs.error }
        public func hash(into hasher: inout Hasher) {
            hasher.combine(field)
            hasher.combine(error)
        }
    }

    /// An error with `code` and `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
        self.nested = nil
    }

    init(nestedIn field: NestedTokenField, _ error: VerificationError) {
        self.code = .nestedTokenInvalid
        self.reason = "\(field): \(error.code): \(error.reason)"
        self.nested = Nested(field: field, error: error)
    }

    /// The step that refused the data. For ``Code/nestedTokenInvalid`` it is the nested
    /// error's category (a nested token's bad signature is a `signature` failure).
    public var category: Category {
        if let nested { return nested.error.category }
        return code.category ?? .internal
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: VerificationError, rhs: VerificationError) -> Bool {
        lhs.code == rhs.code && lhs.nested?.error.code == rhs.nested?.error.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// The reason, for `localizedDescription`.
    public var errorDescription: String? { reason }
}
