extension VerificationError.Code {
    /// A token signed with a known key: its `exp` is not after the validation time.
    public static let tokenExpired = Self(rawValue: "token_expired", category: .claims)
    /// A token signed with a known key: its `nbf` or `iat` is after the validation time.
    public static let tokenNotYetValid = Self(rawValue: "token_not_yet_valid", category: .claims)

    /// The codes only tokens signed with a known key produce, in documentation order.
    static let keySignedCodes: [Self] = [.tokenExpired, .tokenNotYetValid]
}
