public import Foundation
public import Vouch
internal import VouchOpenSSL

/// Verifies legacy App Store app receipts (PKCS #7 / CMS SignedData, RSA) offline.
///
/// A receipt is trusted only when, in this order: it is one strictly formed SignedData with
/// nothing after it; the signer named by its SignerInfo is among the
/// certificates it carries, an X.509 v3 end-entity certificate with an RSA key of at least 2048
/// bits and Apple's receipt-signing marker 1.2.840.113635.100.6.11.1; the RSA signature over the
/// content verifies; the content is a well-formed receipt payload without repeated attribute
/// types; the signer chains, through the receipt's other certificates, to one of *this
/// verifier's* trust anchors (never to a root the receipt brings) at the validation time, by way
/// of an intermediate carrying 1.2.840.113635.100.6.2.1, with every certificate the receipt
/// carries on that path; and bundle id, environment, app Apple ID (the app item id of a
/// Production receipt), version and device hash match what was asked.
///
/// Receipts signed by Xcode's StoreKit testing certificate are accepted only when that
/// certificate is among the `xcodeCertificates` of its configuration.
///
/// A `ReceiptVerifier` is a value, safe to use from many threads at once. Signer chains it has
/// validated are remembered, so the next receipt of the same signer costs one RSA verification.
public struct ReceiptVerifier: Sendable {
    /// What a receipt verifier trusts and what it requires of a receipt: its ``trust`` (as a
    /// token verifier's) and what only receipts carry.
    ///
    /// By default the trust anchor is Apple Inc. Root, embedded in the library, and no app is
    /// named: name one (`VerifierConfiguration.init(bundleId:environment:appAppleId:)`) or
    /// accept any explicitly (`VerifierConfiguration.acceptingAnyApp()`), or
    /// ``ReceiptVerifier/init(configuration:)`` refuses the configuration.
    ///
    /// For receipts, the environment checked against `TrustConfiguration.environments` is told by
    /// the receipt type (attribute 0): Production takes `Production` and `ProductionVPP`, Sandbox
    /// `ProductionSandbox` and `ProductionVPPSandbox`, Xcode `Xcode`;
    /// `ValidationTime.signedDate` is the receipt creation date (attribute 12), as Apple
    /// documents for receipts; `TrustConfiguration.appAppleId`, when set, must equal the app
    /// item id (attribute 1) of a Production receipt.
    public struct Configuration: VerifierConfiguration {
        /// What the verifier trusts and whose receipts it accepts; its members read and write as
        /// the configuration's own (`configuration.trustAnchors`).
        public var trust = TrustConfiguration(trustAnchors: [AppleRootCertificates.appleIncRoot])
        /// The expected application version (attribute 3), or `nil` to accept any.
        public var applicationVersion: String? = nil
        /// The 16 bytes of the device identifier to check the receipt's hash (attribute 5)
        /// against, or `nil` not to check it.
        public var deviceIdentifier: [UInt8]? = nil
        /// Receipts longer than this many bytes are rejected before any parsing.
        public var maximumReceiptSize: Int = 1 << 20

        /// A configuration without the app's identity: set `TrustConfiguration.bundleId` and
        /// `TrustConfiguration.environments` (or `environment`) or
        /// `TrustConfiguration.acceptsAnyApp` before making a verifier.
        public init() {}
    }

    /// The configuration the verifier was made with.
    public let configuration: Configuration
    let engine: ReceiptEngine

    /// Creates a receipt verifier.
    ///
    /// Throws `ConfigurationError` when the configuration names no app and does not accept
    /// any (`ConfigurationError.Code.missingAppIdentity`), trusts no anchor, holds a
    /// certificate that cannot be read, or a device identifier that is not 16 bytes
    /// (`ConfigurationError.Code.invalidDeviceIdentifier`).
    public init(configuration: Configuration) throws(ConfigurationError) {
        try configuration.trust.checkAppIdentity(requiringAppAppleIdInProduction: false)
        if let device = configuration.deviceIdentifier, device.count != 16 {
            throw ConfigurationError(
                .invalidDeviceIdentifier, "the device identifier is \(device.count) bytes; it must be 16")
        }
        self.configuration = configuration
        self.engine = try ReceiptEngine(configuration: configuration)
    }

    /// Verifies one receipt given as its DER (or BER) bytes.
    public func verify(_ receipt: [UInt8]) throws(VerificationError) -> VerifiedReceipt {
        try engine.verify(receipt, now: Verifier.clock())
    }

    /// Verifies one receipt given as its DER (or BER) bytes, as `Data` (the contents of the
    /// app's `appStoreReceiptURL`).
    public func verify(_ receipt: Data) throws(VerificationError) -> VerifiedReceipt {
        try verify([UInt8](receipt))
    }

    /// Verifies one receipt given as standard base64 text (`receipt-data`, as an app sends it),
    /// padded, without whitespace inside.
    public func verify(base64 text: String) throws(VerificationError) -> VerifiedReceipt {
        try verify(base64: text.utf8)
    }

    /// Verifies one receipt given as the UTF-8 bytes of its standard base64 text (`Data` of a
    /// request body, `[UInt8]`), padded, without whitespace inside.
    public func verify(base64 text: some Collection<UInt8>) throws(VerificationError) -> VerifiedReceipt {
        guard text.count <= (configuration.maximumReceiptSize + 2) / 3 * 4 else {
            throw VerificationError(
                .receiptTooLarge,
                "the receipt's base64 text is \(text.count) bytes, over the \(configuration.maximumReceiptSize)-byte limit"
            )
        }
        return try verify(try ReceiptInput.decodeBase64(text))
    }
}

/// A receipt that verified: its decoded payload and how it was trusted.
public struct VerifiedReceipt: Sendable {
    /// The decoded receipt.
    public let receipt: AppReceipt
    /// The signed content, exactly as signed.
    public let payload: [UInt8]
    /// The instant the chain was validated at.
    public var validationTime: Timestamp { Timestamp(milliseconds: validationMilliseconds) }
    /// The environment the receipt's type (attribute 0) names, which the verifier checked against
    /// its `TrustConfiguration.environments`: `Production` (also for `ProductionVPP`), `Sandbox`
    /// (`ProductionSandbox`, `ProductionVPPSandbox`) or `Xcode`; `nil` without a receipt type.
    public var environment: AppStoreEnvironment? {
        receipt.receiptType.map { AppStoreEnvironment(rawValue: $0.environment) }
    }
    /// ``validationTime`` in milliseconds: a Timestamp spells its number out when made.
    let validationMilliseconds: Int64
    /// `SHA-1` or `SHA-256`.
    public let digestAlgorithm: String
    /// Whether an Xcode StoreKit testing certificate signed it.
    public let isXcode: Bool
    /// The signing certificate's subject, OpenSSL's one-line form.
    public let signer: String
}

/// A signer seen before: the receipt's certificate set and signer id, what was parsed from them,
/// and once validated, the window in which that result holds.
final class ReceiptSigner: Sendable {
    enum Anchor: Sendable {
        /// The leaf and the receipt's other certificates, validated to the trust anchors.
        case chain(leaf: Certificate, others: [Certificate])
        /// A trusted Xcode StoreKit certificate.
        case xcode(Certificate)
    }

    let certificateSet: [UInt8]
    let issuer: [UInt8]
    let serial: [UInt8]
    let anchor: Anchor
    let key: PublicKey
    /// The key prepared once for the RSA verification of every receipt of this signer.
    let rsa: ReceiptRSAKey
    /// The signing certificate's subject, read once.
    let subject: String
    let validatedWindow = Locked<ChainValidator.Window?>(nil)

    init(certificateSet: [UInt8], issuer: [UInt8], serial: [UInt8], anchor: Anchor, key: PublicKey) {
        self.certificateSet = certificateSet
        self.issuer = issuer
        self.serial = serial
        self.anchor = anchor
        self.key = key
        self.rsa = ReceiptRSAKey(key)
        switch anchor {
        case .chain(let leaf, _): subject = leaf.subject
        case .xcode(let certificate): subject = certificate.subject
        }
    }

    var leaf: Certificate {
        switch anchor {
        case .chain(let leaf, _): leaf
        case .xcode(let certificate): certificate
        }
    }

    func matches(_ container: ReceiptContainer) -> Bool {
        container.bytes.withUnsafeBufferPointer { buffer in
            Self.equal(certificateSet, buffer, container.certificateSet)
                && Self.equal(issuer, buffer, container.signerIssuer)
                && Self.equal(serial, buffer, container.signerSerial)
        }
    }

    private static func equal(_ stored: [UInt8], _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard stored.count == range.count else { return false }
        return stored.withUnsafeBufferPointer {
            memcmp($0.baseAddress!, buffer.baseAddress! + range.lowerBound, range.count) == 0
        }
    }
}

/// The shared, immutable part of a receipt verifier: trust store, Xcode certificates, signers.
final class ReceiptEngine: Sendable {
    let trust: PreparedTrust
    var chain: ChainValidator { trust.chain }
    var xcodeCertificates: [Certificate] { trust.xcodeCertificates }
    let configuration: ReceiptVerifier.Configuration
    private let signers = Locked<[ReceiptSigner]>([])
    static let cacheCapacity = 32

    init(configuration: ReceiptVerifier.Configuration) throws(ConfigurationError) {
        trust = try PreparedTrust(configuration.trust)
        self.configuration = configuration
    }

    func verify(_ bytes: [UInt8], now: Int64) throws(VerificationError) -> VerifiedReceipt {
        guard bytes.count <= configuration.maximumReceiptSize else {
            throw VerificationError(
                .receiptTooLarge,
                "the receipt is \(bytes.count) bytes; the limit is \(configuration.maximumReceiptSize)")
        }
        let container = try ReceiptContainer(bytes)
        let signer = try signer(for: container)

        let hash = ReceiptCrypto.hash(container.digest.crypto, of: bytes, segments: container.content)
        guard
            signer.rsa.verify(signature: container.signature, digestInfo: container.digest.digestInfoPrefix + hash)
        else {
            throw VerificationError(
                .badSignature, "the RSA signature does not verify with the signing certificate's key")
        }

        // Authenticated by the signer's key from here on; the payload may now be read.
        let payload =
            container.content.count == 1 ? Array(bytes[container.content[0]]) : container.content.flatMap { bytes[$0] }
        let receipt = try AppReceipt(payload: payload)
        let isXcode: Bool
        if case .xcode = signer.anchor { isXcode = true } else { isXcode = false }
        if isXcode != receipt.hasReceiptType(.xcode) {
            throw VerificationError(
                .wrongEnvironment,
                isXcode
                    ? "the receipt is signed by an Xcode certificate but its type is \(receipt.receiptType?.rawValue ?? "missing")"
                    : "the receipt says it comes from Xcode but is signed by a certificate chain")
        }

        let time: Int64
        switch configuration.trust.validationTime {
        case .now: time = now
        case .fixed(let instant): time = instant.milliseconds
        case .signedDate:
            guard let created = receipt.receiptCreationMilliseconds else {
                throw VerificationError(
                    .receiptMalformedPayload,
                    "receipt payload: no creation date (attribute 12) to validate the chain at")
            }
            time = created
        }
        try validate(signer, at: time)
        try check(receipt)
        return VerifiedReceipt(
            receipt: receipt, payload: payload, validationMilliseconds: time,
            digestAlgorithm: container.digest.rawValue, isXcode: isXcode, signer: signer.subject)
    }

    private func check(_ receipt: AppReceipt) throws(VerificationError) {
        if let expected = configuration.trust.bundleId, !receipt.table.text(receipt.bundleIdText, equals: expected) {
            throw VerificationError(
                .wrongBundleId, "the receipt's bundle id is \(receipt.bundleId), expected \(expected)")
        }
        let environments = configuration.trust.environments
        if !environments.isEmpty {
            guard let type = receipt.receiptType else {
                throw VerificationError(
                    .wrongEnvironment,
                    "the receipt has no receipt type (attribute 0), expected "
                        + TrustConfiguration.describe(environments, quoted: false))
            }
            if !environments.contains(where: { $0.rawValue == type.environment }) {
                throw VerificationError(
                    .wrongEnvironment,
                    "the receipt's type is \(type.rawValue) (\(type.environment)), expected "
                        + TrustConfiguration.describe(environments, quoted: false))
            }
        }
        if let expected = configuration.trust.appAppleId, receipt.receiptType?.environment == "Production",
            receipt.appItemId != expected
        {
            throw VerificationError(
                .wrongAppAppleId,
                "the receipt's app item id (attribute 1) is \(receipt.appItemId.map(String.init) ?? "absent"), expected \(expected)"
            )
        }
        if let expected = configuration.applicationVersion, receipt.applicationVersion != expected {
            throw VerificationError(
                .receiptWrongAppVersion,
                "the receipt's application version is \(receipt.applicationVersion ?? "missing"), expected \(expected)")
        }
        if let device = configuration.deviceIdentifier, !receipt.matchesDevice(device) {
            throw VerificationError(
                .receiptDeviceHashMismatch,
                receipt.sha1Hash == nil || receipt.opaqueValue == nil
                    ? "the receipt has no hash or opaque value (attributes 5 and 4) to check the device against"
                    : "the receipt's hash (attribute 5) does not match this device identifier")
        }
    }

    /// The signer of `container`, from the cache or found and checked now.
    func signer(for container: ReceiptContainer) throws(VerificationError) -> ReceiptSigner {
        // The entries are read under the lock, compared (kilobytes of certificates) outside it,
        // so that threads verifying receipts of one signer do not wait on each other.
        if let cached = signers.withLock({ $0 }).first(where: { $0.matches(container) }) { return cached }

        var certificates: [Certificate] = []
        for index in container.certificates.indices {
            guard let certificate = Certificate(der: container.certificateDER(index)) else {
                throw VerificationError(
                    .badCertificateEncoding, "certificate \(index + 1) of the receipt is not one DER certificate")
            }
            certificates.append(certificate)
        }
        let issuer = Array(container.bytes[container.signerIssuer])
        let serial = Array(container.bytes[container.signerSerial])
        guard
            let leafIndex = certificates.firstIndex(where: { certificate in
                Self.issuerAndSerial(of: certificate.der).map { $0.0 == issuer && $0.1 == serial } ?? false
            })
        else {
            throw VerificationError(
                .receiptSignerNotFound, "no certificate of the receipt has the SignerInfo's issuer and serial number")
        }
        let leaf = certificates[leafIndex]
        let anchor: ReceiptSigner.Anchor
        if let trusted = xcodeCertificates.first(where: { $0.der == leaf.der }) {
            guard certificates.count == 1 else {
                throw VerificationError(.untrustedChain, "an Xcode receipt carries exactly one certificate")
            }
            anchor = .xcode(trusted)
        } else if leaf.commonName == "StoreKit", leaf.subject == leaf.issuer {
            throw xcodeCertificates.isEmpty
                ? VerificationError(
                    .xcodeNotTrusted,
                    "the receipt is signed by Xcode's StoreKit testing certificate, which is not trusted (see --xcode-cert)"
                )
                : VerificationError(
                    .untrustedChain,
                    "the receipt is signed by a StoreKit testing certificate other than the trusted one")
        } else {
            try Self.checkSigningCertificate(leaf)
            var others = certificates
            others.remove(at: leafIndex)
            anchor = .chain(leaf: leaf, others: others)
        }
        guard let key = leaf.publicKey else {
            throw VerificationError(.wrongKeyType, "the signing certificate's public key cannot be read")
        }
        guard key.isRSA, key.bits >= 2048 else {
            throw VerificationError(
                .wrongKeyType, "the signing key is \(key.summary); receipts require RSA of at least 2048 bits")
        }
        let signer = ReceiptSigner(
            certificateSet: Array(container.bytes[container.certificateSet]), issuer: issuer, serial: serial,
            anchor: anchor, key: key)
        signers.withLock { entries in
            if entries.count >= Self.cacheCapacity { entries.removeLast() }
            entries.insert(signer, at: 0)
        }
        return signer
    }

    /// Apple's rules for the receipt-signing certificate, before its signature is trusted: an
    /// X.509 v3 end-entity certificate with the marker 1.2.840.113635.100.6.11.1, which no
    /// other Apple-signed CMS (a configuration profile, for one) carries.
    static func checkSigningCertificate(_ leaf: Certificate) throws(VerificationError) {
        guard leaf.version == 3 else {
            throw VerificationError(
                .unsupportedCertificateVersion, "the signing certificate is X.509 v\(leaf.version); v3 is required")
        }
        guard !leaf.isCA else { throw VerificationError(.leafIsCA, "the signing certificate is a CA certificate") }
        guard leaf.hasExtension(.appleReceiptSigning) else {
            throw VerificationError(
                .missingMarkerOID,
                "the signing certificate lacks Apple's receipt-signing extension \(ASN1ObjectIdentifier.appleReceiptSigning.dotted)"
            )
        }
    }

    /// The issuer Name and serial number TLVs of a certificate's TBSCertificate.
    static func issuerAndSerial(of der: [UInt8]) -> ([UInt8], [UInt8])? {
        do throws(BERReader.Failure) {
            var outer = BERReader(der)
            var certificate = try outer.children(of: try outer.read(0x30, "Certificate"))
            var tbs = try certificate.children(of: try certificate.read(0x30, "TBSCertificate"))
            _ = try tbs.readIfPresent(0xA0)
            let serial = try tbs.read(0x02, "serialNumber")
            _ = try tbs.read(0x30, "signature")
            let issuer = try tbs.read(0x30, "issuer")
            return (Array(der[issuer.whole]), Array(der[serial.whole]))
        } catch {
            return nil
        }
    }

    /// Validates the signer at `milliseconds`, reusing an earlier result inside its window.
    private func validate(_ signer: ReceiptSigner, at milliseconds: Int64) throws(VerificationError) {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        if let window = signer.validatedWindow.withLock({ $0 }), window.strictlyContains(seconds) { return }
        switch signer.anchor {
        case .chain(let leaf, let others):
            let window = try validateChain(leaf: leaf, others: others, at: seconds)
            signer.validatedWindow.withLock { $0 = window }
        case .xcode(let certificate):
            try PreparedTrust.checkValidity(ofXcode: certificate, at: seconds)
        }
    }

    /// RFC 5280 path validation from the leaf through the receipt's other certificates (all
    /// untrusted) to a trust anchor; then Apple's shape: leaf, WWDR intermediate, anchor, and
    /// no certificate in the receipt that is not on that path.
    private func validateChain(leaf: Certificate, others: [Certificate], at seconds: Int64) throws(VerificationError)
        -> ChainValidator.Window
    {
        try chain.validatePath(leaf: leaf, untrusted: others, at: seconds) { path throws(VerificationError) in
            guard path.count == 3, let intermediateFound = path[1], let root = path[2],
                let anchor = chain.anchors.first(where: { $0.isSame(as: root) }),
                let intermediate = others.first(where: { $0.isSame(as: intermediateFound) })
            else {
                throw VerificationError(
                    .untrustedChain, "the path is not signing certificate, intermediate, trusted root")
            }
            guard intermediate.version == 3 else {
                throw VerificationError(
                    .unsupportedCertificateVersion,
                    "the intermediate certificate is X.509 v\(intermediate.version); v3 is required")
            }
            guard intermediate.hasExtension(.appleWWDRIntermediate) else {
                throw VerificationError(
                    .missingMarkerOID,
                    "the intermediate certificate lacks Apple's WWDR extension \(ASN1ObjectIdentifier.appleWWDRIntermediate.dotted)"
                )
            }
            for other in others where other.der != intermediate.der && other.der != anchor.der {
                throw VerificationError(
                    .untrustedChain, "the receipt carries a certificate that is not on its path: \(other.subject)")
            }
            let certificates = [leaf, intermediate, anchor]
            return ChainValidator.Window(
                notBefore: certificates.compactMap(\.notBefore).max() ?? .min,
                notAfter: certificates.compactMap(\.notAfter).min() ?? .max)
        }
    }
}
