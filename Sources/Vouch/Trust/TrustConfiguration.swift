package import VouchOpenSSL

/// What a verifier trusts and whose data it accepts: the part of a configuration that token
/// verification (``Verifier``) and legacy receipt verification (`ReceiptVerifier`, in
/// `VouchReceipts`) share.
///
/// Safe by default: a trust configuration names the app whose data it accepts (``bundleId`` and
/// its ``environments``, and for Production tokens ``appAppleId``, as Apple's libraries require)
/// or says explicitly that it accepts any app (``acceptsAnyApp``). A verifier refuses to be made
/// from one that does neither (``ConfigurationError/Code/missingAppIdentity``), because data
/// of another app, or Sandbox data on a Production server, is signed by Apple just the same.
///
/// One verifier may accept several environments of one app, Production and Sandbox for a server
/// that also serves App Review and TestFlight: each token or receipt is checked against the
/// environment it names in its own signed data, and its result says which
/// (`VerifiedPayload.environment`, `VerifiedReceipt.environment`).
///
/// Each verifier's configuration holds one as its ``VerifierConfiguration/trust`` and reads
/// and writes its members as its own (`configuration.bundleId = "com.example.app"`). The
/// configurations differ in their default ``trustAnchors``: Apple Root CA - G3 for tokens,
/// Apple Inc. Root for receipts.
public struct TrustConfiguration: Sendable {
    /// The trust anchors, each DER or PEM (a PEM bundle contributes every certificate it holds).
    /// A chain is trusted only when it ends at one of these, never at a root the data brings.
    public var trustAnchors: [[UInt8]]
    /// Certificates (DER or PEM) trusted to sign Xcode StoreKit-testing data. Empty by default:
    /// Xcode-signed data is then rejected with ``VerificationError/Code/xcodeNotTrusted``.
    public var xcodeCertificates: [[UInt8]] = []
    /// Apply OpenSSL's RFC 5280 strict checks. Apple's production chains pass them; Apple's own
    /// test root (used by its mock data) does not.
    public var strictX509: Bool = true
    /// When the certificate chain is validated: by default at the data's own signed date (a
    /// token's `signedDate`, a receipt's creation date).
    public var validationTime: ValidationTime = .signedDate
    /// The expected bundle id; `nil` accepts any, and only with ``acceptsAnyApp``.
    public var bundleId: String? = nil
    /// The environments whose data is accepted, each datum checked against the environment it
    /// names itself (a token's `environment`, an app transaction's `receiptType`, a receipt's
    /// type); empty accepts any, and only with ``acceptsAnyApp``.
    public var environments: Set<AppStoreEnvironment> = []
    /// The one environment whose data is accepted: the single-environment spelling of
    /// ``environments``. Setting it makes ``environments`` hold it alone (nothing, for `nil`);
    /// reading it gives the environment when ``environments`` holds exactly one, else `nil`.
    public var environment: AppStoreEnvironment? {
        get { environments.count == 1 ? environments.first : nil }
        set { environments = newValue.map { [$0] } ?? [] }
    }
    /// The expected app Apple ID, checked for Production data (a token's `appAppleId`, a
    /// receipt's app item id, attribute 1). Production tokens require it unless
    /// ``acceptsAnyApp``, also when Production is one environment of several; receipts are
    /// checked against it only when it is set.
    public var appAppleId: Int64? = nil
    /// Accept data of any app: ``bundleId``, ``appAppleId`` and ``environments`` are then checked
    /// only when set. Off by default; for tools that look at anyone's data (the `vouch`
    /// command), never for a server that grants purchases.
    public var acceptsAnyApp: Bool = false

    /// Trust in `trustAnchors` (DER or PEM each), no app named yet.
    public init(trustAnchors: [[UInt8]]) {
        self.trustAnchors = trustAnchors
    }

    /// The safe-by-default rule, the same for every verifier: the app is named (bundle id and at
    /// least one environment) or any app is accepted explicitly. `requiringAppAppleIdInProduction`
    /// adds Apple's rule for tokens: where Production data is accepted, the app Apple ID is named
    /// too.
    package func checkAppIdentity(requiringAppAppleIdInProduction: Bool) throws(ConfigurationError) {
        guard !acceptsAnyApp else { return }
        guard bundleId != nil, !environments.isEmpty else {
            throw ConfigurationError(
                .missingAppIdentity,
                "set bundleId and environment (and appAppleId for Production tokens), or accept any app explicitly"
                    + " with acceptingAnyApp()")
        }
        if requiringAppAppleIdInProduction, environments.contains(.production), appAppleId == nil {
            throw ConfigurationError(.missingAppAppleId, "Production data requires the app's appAppleId")
        }
    }

    /// The accepted environments as a reason names them: `"Production"`, or `"Production" or
    /// "Sandbox"` (in the order of their names, so that a reason is the same on every run).
    package static func describe(_ environments: Set<AppStoreEnvironment>, quoted: Bool) -> String {
        let names = environments.map(\.rawValue).sorted().map { quoted ? "\"\($0)\"" : $0 }
        guard let last = names.last, names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }
}

/// A verifier's configuration: a ``TrustConfiguration`` and the settings of one kind of data.
///
/// The members of ``trust`` read and write as the configuration's own, so
/// `configuration.trustAnchors`, `configuration.bundleId` or `configuration.validationTime`
/// reach the one trust configuration.
@dynamicMemberLookup
public protocol VerifierConfiguration: Sendable {
    /// What the verifier trusts and whose data it accepts.
    var trust: TrustConfiguration { get set }

    /// A configuration with the verifier's defaults: its embedded trust anchor, no app named.
    /// Set ``TrustConfiguration/bundleId`` and ``TrustConfiguration/environment`` (or
    /// ``TrustConfiguration/acceptsAnyApp``) before making a verifier.
    init()
}

extension VerifierConfiguration {
    /// A member of ``trust``, read and written as the configuration's own.
    public subscript<Value>(dynamicMember member: WritableKeyPath<TrustConfiguration, Value>) -> Value {
        get { trust[keyPath: member] }
        set { trust[keyPath: member] = newValue }
    }

    /// A configuration that accepts only this app's data, in this environment.
    ///
    /// - Parameters:
    ///   - bundleId: the app's bundle identifier.
    ///   - environment: the environment whose data is accepted.
    ///   - appAppleId: the app's Apple ID; required for Production tokens.
    public init(bundleId: String, environment: AppStoreEnvironment, appAppleId: Int64? = nil) {
        self.init(bundleId: bundleId, environments: [environment], appAppleId: appAppleId)
    }

    /// A configuration that accepts only this app's data, in any of these environments (each
    /// datum checked against the one it names): `environments: [.production, .sandbox]` for a
    /// server that also takes App Review's and TestFlight's Sandbox data.
    ///
    /// - Parameters:
    ///   - bundleId: the app's bundle identifier.
    ///   - environments: the environments whose data is accepted.
    ///   - appAppleId: the app's Apple ID; required for Production tokens.
    public init(bundleId: String, environments: Set<AppStoreEnvironment>, appAppleId: Int64? = nil) {
        self.init()
        trust.bundleId = bundleId
        trust.environments = environments
        trust.appAppleId = appAppleId
    }

    /// A configuration that accepts data of any app in any environment (see
    /// ``TrustConfiguration/acceptsAnyApp``).
    public static func acceptingAnyApp() -> Self {
        var configuration = Self()
        configuration.trust.acceptsAnyApp = true
        return configuration
    }
}

/// A trust configuration read once, as a verifier keeps it: the anchors parsed into a chain
/// validator, the Xcode certificates parsed.
package struct PreparedTrust: Sendable {
    package let chain: ChainValidator
    package let xcodeCertificates: [Certificate]

    /// Reads every certificate of `configuration`. Throws when one cannot be read or no anchor
    /// is left.
    package init(_ configuration: TrustConfiguration) throws(ConfigurationError) {
        let anchors = try Self.certificates(
            configuration.trustAnchors, named: "trust anchor", code: .unreadableTrustAnchor)
        guard !anchors.isEmpty else {
            throw ConfigurationError(.noTrustAnchors, "the trust anchor list is empty: nothing could verify")
        }
        chain = ChainValidator(anchors: anchors, strict: configuration.strictX509)
        xcodeCertificates = try Self.certificates(
            configuration.xcodeCertificates, named: "Xcode certificate", code: .unreadableXcodeCertificate)
    }

    /// Every certificate of each entry: DER, or PEM with one or more certificates.
    static func certificates(
        _ list: [[UInt8]], named name: String, code: ConfigurationError.Code
    ) throws(ConfigurationError) -> [Certificate] {
        var certificates: [Certificate] = []
        for (index, bytes) in list.enumerated() {
            let parsed = Certificate.all(inDERorPEM: bytes)
            guard !parsed.isEmpty else {
                throw ConfigurationError(
                    code, "\(name) \(index + 1) is not a DER certificate nor PEM holding only certificates")
            }
            certificates += parsed
        }
        return certificates
    }

    /// A trusted Xcode certificate stands for a whole chain: it must be valid at `seconds`.
    package static func checkValidity(ofXcode certificate: Certificate, at seconds: Int64) throws(VerificationError) {
        let when = ChainValidator.iso8601(seconds)
        if seconds < certificate.notBefore ?? .min {
            throw VerificationError(.certificateNotYetValid, "the Xcode certificate is not yet valid at \(when)")
        }
        if seconds >= certificate.notAfter ?? .max {
            throw VerificationError(.certificateExpired, "the Xcode certificate has expired at \(when)")
        }
    }
}
