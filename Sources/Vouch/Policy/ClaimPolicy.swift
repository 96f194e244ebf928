/// The claim checks of Apple's official verifiers, so results agree with them, with one code
/// per failure instead of one "invalid app identifier":
///
/// | kind | bundleId | appAppleId (Production only) | environment |
/// |---|---|---|---|
/// | transaction | yes | – | `environment` |
/// | renewal info | – | – | `environment` |
/// | notification | yes | yes | from `data`, `summary`, `externalPurchaseToken` or `appData` |
/// | app transaction | yes | yes | `receiptType` |
/// | realtime request | – | yes | `environment` |
///
/// An expectation left `nil` (no environment) is not checked; of several environments, the one
/// the payload names must be among them.
enum ClaimPolicy {
    struct Claims {
        var bundleId: String?
        var checksBundleId: Bool
        var appAppleId: Int64?
        var checksAppAppleId: Bool
        var environment: AppStoreEnvironment?
    }

    static func claims(of decoded: DecodedPayload) -> Claims {
        switch decoded {
        case .transaction(let payload):
            Claims(
                bundleId: payload.bundleId, checksBundleId: true, appAppleId: nil, checksAppAppleId: false,
                environment: payload.environment)
        case .renewalInfo(let payload):
            Claims(
                bundleId: nil, checksBundleId: false, appAppleId: nil, checksAppAppleId: false,
                environment: payload.environment)
        case .notification(let payload):
            Claims(
                bundleId: payload.effectiveBundleId, checksBundleId: true, appAppleId: payload.effectiveAppAppleId,
                checksAppAppleId: true, environment: payload.effectiveEnvironment)
        case .appTransaction(let payload):
            Claims(
                bundleId: payload.bundleId, checksBundleId: true, appAppleId: payload.appAppleId,
                checksAppAppleId: true, environment: payload.receiptType)
        case .realtimeRequest(let payload):
            Claims(
                bundleId: nil, checksBundleId: false, appAppleId: payload.appAppleId, checksAppAppleId: true,
                environment: payload.environment)
        }
    }

    static func check(_ decoded: DecodedPayload, against expected: Expectations) throws(VerificationError) {
        let claims = claims(of: decoded)
        if claims.checksBundleId, let bundleId = expected.bundleId, claims.bundleId != bundleId {
            throw VerificationError(
                .wrongBundleId, "bundleId is \(show(claims.bundleId)); expected \"\(bundleId)\"")
        }
        if claims.checksAppAppleId, claims.environment == .production, let appAppleId = expected.appAppleId,
            claims.appAppleId != appAppleId
        {
            throw VerificationError(
                .wrongAppAppleId,
                "appAppleId is \(claims.appAppleId.map(String.init) ?? "absent"); expected \(appAppleId)")
        }
        if !expected.environments.isEmpty, !expected.environments.contains(where: { $0 == claims.environment }) {
            throw VerificationError(
                .wrongEnvironment,
                "environment is \(show(claims.environment?.rawValue)); expected "
                    + TrustConfiguration.describe(expected.environments, quoted: true))
        }
    }

    /// Data signed by a trusted Xcode certificate must say it comes from Xcode or local
    /// testing: such a key can never vouch for Sandbox or Production data.
    static func requireXcodeEnvironment(_ decoded: DecodedPayload) throws(VerificationError) {
        let environment = claims(of: decoded).environment
        guard environment == .xcode || environment == .localTesting else {
            throw VerificationError(
                .wrongEnvironment,
                "Xcode-signed data says environment \(show(environment?.rawValue)); only Xcode or LocalTesting can be")
        }
    }

    private static func show(_ value: String?) -> String {
        value.map { "\"\($0)\"" } ?? "absent"
    }
}
