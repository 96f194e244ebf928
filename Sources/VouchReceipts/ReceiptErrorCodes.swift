public import Vouch

extension VerificationError.Code {
    /// The input is not a PKCS #7 SignedData app receipt at all (an iOS 6 transaction receipt
    /// is named as such in the reason).
    public static let receiptNotAReceipt = Self(rawValue: "receipt_not_a_receipt", category: .input)
    /// The receipt is larger than the verifier's size limit.
    public static let receiptTooLarge = Self(rawValue: "receipt_too_large", category: .input)
    /// The SignedData breaks a rule: bad BER, trailing bytes, not exactly one SignerInfo,
    /// content not id-data, signed attributes, CRLs, nesting or counts over their limits.
    public static let receiptMalformedContainer = Self(rawValue: "receipt_malformed_container", category: .format)
    /// The digest or signature algorithm is not SHA-1/SHA-256 with RSA PKCS #1 v1.5.
    public static let receiptUnsupportedAlgorithm = Self(rawValue: "receipt_unsupported_algorithm", category: .format)
    /// No certificate of the receipt matches the SignerInfo's issuer and serial number.
    public static let receiptSignerNotFound = Self(rawValue: "receipt_signer_not_found", category: .chain)
    /// The signed payload is not a receipt attribute set, or a known attribute has the wrong form.
    public static let receiptMalformedPayload = Self(rawValue: "receipt_malformed_payload", category: .format)
    /// An attribute type occurs twice (type 17, in-app purchases, excepted).
    public static let receiptDuplicateAttribute = Self(rawValue: "receipt_duplicate_attribute", category: .format)
    /// The receipt's application version differs from the expected one.
    public static let receiptWrongAppVersion = Self(rawValue: "receipt_wrong_app_version", category: .claims)
    /// The receipt's SHA-1 hash does not match the device identifier given.
    public static let receiptDeviceHashMismatch = Self(rawValue: "receipt_device_hash_mismatch", category: .claims)

    /// The codes only receipts produce, in documentation order. With
    /// `VerificationError.Code.all` and the other modules' lists, every code.
    public static let receiptCodes: [Self] = [
        .receiptNotAReceipt, .receiptTooLarge, .receiptMalformedContainer, .receiptUnsupportedAlgorithm,
        .receiptSignerNotFound, .receiptMalformedPayload, .receiptDuplicateAttribute, .receiptWrongAppVersion,
        .receiptDeviceHashMismatch,
    ]
}
