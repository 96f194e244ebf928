internal import Foundation
internal import VouchOpenSSL

/// Verifies App Store signed data (compact JWS, ES256, `x5c` chain) offline.
///
/// A token is trusted only when, in this order: it is a canonical compact JWS; its header says
/// ES256 with no `crit` and an `x5c` of exactly three DER certificates; the ES256 signature over
/// the received `header.payload` bytes verifies with the leaf's P-256 key; the payload is a
/// strict JSON object; the leaf and intermediate chain to one of *this verifier's* trust anchors
/// at the validation time (never to `x5c[2]`) and carry Apple's marker extensions; and the
/// claims (bundle id, app Apple id, environment) match what was asked. Notifications have
/// each nested token verified the same way.
///
/// A `Verifier` is a value, safe to use from many threads at once. Chains it has validated are
/// remembered, so the next token with the same chain costs one P-256 verification.
public struct Verifier: Sendable {
    /// What a verifier trusts and what it requires of the data: its ``trust`` (anchors, Xcode
    /// certificates, strictness, validation time, the app's identity) and the limits of token
    /// verification.
    ///
    /// By default the trust anchor is Apple Root CA - G3, embedded in the library, and no app is
    /// named: name one (``VerifierConfiguration/init(bundleId:environment:appAppleId:)``) or
    /// accept any explicitly (``VerifierConfiguration/acceptingAnyApp()``), or
    /// ``Verifier/init(configuration:)`` refuses the configuration.
    public struct Configuration: VerifierConfiguration {
        /// What the verifier trusts and whose tokens it accepts; its members read and write as
        /// the configuration's own (`configuration.trustAnchors`).
        public var trust = TrustConfiguration(trustAnchors: [AppleRootCertificates.rootCAG3])
        /// Tokens longer than this many bytes are rejected before any parsing.
        public var maximumTokenSize: Int = 64 * 1024
        /// Verify a leaf key's signatures with a table precomputed for that key once it has
        /// signed enough tokens in this process (about 1,000). The verdicts are the same as
        /// OpenSSL's generic verification, which `false` forces (as does the environment
        /// variable `VOUCH_FAST_VERIFY=off`).
        public var fastVerify: Bool = true
        /// Tokens a key must sign before its table is built (`fastVerify`).
        var fastVerifyThreshold: Int = FixedKeyPolicy.defaultThreshold

        /// A configuration without the app's identity: set ``TrustConfiguration/bundleId`` and
        /// ``TrustConfiguration/environment`` (and ``TrustConfiguration/appAppleId`` for
        /// Production) or ``TrustConfiguration/acceptsAnyApp`` before making a verifier.
        public init() {}
    }

    /// The configuration the verifier was made with.
    public let configuration: Configuration
    let engine: Engine

    /// Creates a verifier.
    ///
    /// Throws ``ConfigurationError`` when the configuration names no app and does not accept
    /// any (``ConfigurationError/Code/missingAppIdentity``), names Production without an
    /// `appAppleId`, trusts no anchor, or holds a certificate that cannot be read.
    public init(configuration: Configuration) throws(ConfigurationError) {
        try configuration.trust.checkAppIdentity(requiringAppAppleIdInProduction: true)
        self.configuration = configuration
        self.engine = try Engine(configuration: configuration)
    }

    /// Verifies one token and returns its payload, decoded.
    ///
    /// - Parameters:
    ///   - token: the compact JWS, as received.
    ///   - kind: the kind the token must be; `nil` detects it from the payload.
    public func verify(_ token: String, as kind: PayloadKind? = nil) throws(VerificationError) -> VerifiedPayload {
        try verify(bytes: token.utf8, as: kind)
    }

    /// Verifies one token given as UTF-8 bytes.
    public func verify(bytes token: some Collection<UInt8>, as kind: PayloadKind? = nil) throws(VerificationError)
        -> VerifiedPayload
    {
        try engine.verify(token, kind: kind, expectations: Expectations(configuration.trust), now: Self.clock())
    }

    /// Verifies one token that must be of `type`'s kind and returns it as that model:
    /// `try verifier.verify(signedTransactionInfo, as: JWSTransactionDecodedPayload.self).value`.
    ///
    /// Another kind is ``VerificationError/Code/wrongKind``.
    public func verify<T: VerifiablePayload>(_ token: String, as type: T.Type) throws(VerificationError) -> Verified<T>
    {
        try verify(bytes: token.utf8, as: type)
    }

    /// Verifies one token, given as UTF-8 bytes, that must be of `type`'s kind.
    public func verify<T: VerifiablePayload>(bytes token: some Collection<UInt8>, as type: T.Type)
        throws(VerificationError)
        -> Verified<T>
    {
        let verified = try verify(bytes: token, as: T.kind)
        guard let typed = Verified<T>(verified) else {
            throw VerificationError(.wrongKind, "the payload is a \(verified.kind), not a \(T.kind)")
        }
        return typed
    }

    /// The one place the clock is read: once per call, at the API boundary.
    package static func clock() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// What the tokens of one chunk learnt of their signer's validity: the last signer whose
/// chain held and the window in which that holds, so that the next token of the same signer
/// need not take the signer's lock to read it.
struct ValidationMemo {
    var signer: Signer? = nil
    var window: ChainValidator.Window? = nil
}

/// What the claims must match; a `nil` member, or no environment, is not checked.
struct Expectations: Sendable {
    var bundleId: String?
    var appAppleId: Int64?
    /// The environments a token may name; empty accepts any.
    var environments: Set<AppStoreEnvironment>

    init(_ configuration: TrustConfiguration) {
        bundleId = configuration.bundleId
        appAppleId = configuration.appAppleId
        environments = configuration.environments
    }

    init(bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environment.map { [$0] } ?? []
    }
}

extension Verifier {
    /// A payload's bytes read as every verification reads them, once the signature holds: the
    /// strict parser, nesting limited to 32, Apple's member names held once. Also tells whether
    /// the bytes are exactly what the record writer would write for the object.
    static func parsePayload(_ bytes: [UInt8]) throws(VerificationError) -> (
        object: JSONObject, isCanonical: Bool
    ) {
        do {
            return try StrictJSON.parseObjectTellingCanonical(
                bytes, limits: .init(maximumDepth: 32, vocabulary: PayloadVocabulary.shared))
        } catch {
            throw VerificationError(error.isNestingTooDeep ? .jsonTooDeep : .badPayloadJSON, "payload: \(error)")
        }
    }
}

/// The shared, immutable part of a verifier: trust store, Xcode certificates, signer cache.
final class Engine: Sendable {
    let trust: PreparedTrust
    var chain: ChainValidator { trust.chain }
    var xcodeCertificates: [Certificate] { trust.xcodeCertificates }
    let cache = SignerCache()
    let validationTime: ValidationTime
    let maximumTokenSize: Int
    let fixedKeys: FixedKeyPolicy

    init(configuration: Verifier.Configuration) throws(ConfigurationError) {
        trust = try PreparedTrust(configuration.trust)
        validationTime = configuration.trust.validationTime
        maximumTokenSize = configuration.maximumTokenSize
        fixedKeys = FixedKeyPolicy.overridden(
            configuration.fastVerify ? FixedKeyPolicy(threshold: configuration.fastVerifyThreshold) : .off,
            environment: ProcessInfo.processInfo.environment)
    }

    func verify(
        _ token: some Collection<UInt8>, kind: PayloadKind?, expectations: Expectations, now: Int64
    ) throws(VerificationError) -> VerifiedPayload {
        let result: Result<VerifiedPayload, VerificationError>? = token.withContiguousStorageIfAvailable { bytes in
            do throws(VerificationError) {
                return .success(try verify(bytes, kind: kind, expectations: expectations, now: now))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let verified): return verified
        case .failure(let error): throw error
        case nil: return try verify(Array(token), kind: kind, expectations: expectations, now: now)
        }
    }

    func verify(
        _ bytes: UnsafeBufferPointer<UInt8>, kind requiredKind: PayloadKind?, expectations: Expectations, now: Int64
    ) throws(VerificationError) -> VerifiedPayload {
        var recent: Signer? = nil
        let token = try prepare(bytes, recent: &recent)
        try Self.signatureVerdict(signaturesHold([token], signer: token.signer)[0])
        return try finish(token, kind: requiredKind, expectations: expectations, now: now)
    }

    /// The rest of a token's checks, once its signature holds.
    func finish(
        _ token: PreparedToken, kind requiredKind: PayloadKind?, expectations: Expectations, now: Int64
    ) throws(VerificationError) -> VerifiedPayload {
        var memo = ValidationMemo()
        return try finish(token, kind: requiredKind, expectations: expectations, now: now, memo: &memo)
    }

    /// The rest of a token's checks; `memo` carries what earlier tokens of a chunk learnt of
    /// their signer's validity.
    func finish(
        _ token: PreparedToken, kind requiredKind: PayloadKind?, expectations: Expectations, now: Int64,
        memo: inout ValidationMemo
    ) throws(VerificationError) -> VerifiedPayload {
        let signer = token.signer
        let payloadBytes = token.payload
        // Authenticated by the leaf key from here on; the payload may now be read.
        let (payload, isCanonical) = try Verifier.parsePayload(payloadBytes)
        let detectedKind = PayloadKind.detect(in: payload)
        let time = validationInstant(payload: payload, kind: requiredKind ?? detectedKind, now: now)
        try validate(signer, at: time.milliseconds, memo: &memo)

        let kind: PayloadKind
        switch (requiredKind, detectedKind) {
        case (let required?, let detected?) where required != detected:
            throw VerificationError(.wrongKind, "the payload is a \(detected), not a \(required)")
        case (let required?, _):
            kind = required
        case (nil, let detected?):
            kind = detected
        case (nil, nil):
            throw VerificationError(
                .unknownKind, "the payload's kind cannot be told from its members; name it explicitly")
        }
        let decoded = try DecodedPayload(kind: kind, json: payload)
        if signer.isXcode {
            try ClaimPolicy.requireXcodeEnvironment(decoded)
        }
        try ClaimPolicy.check(decoded, against: expectations)
        let nested = try verifyNested(in: decoded, now: now)
        return VerifiedPayload(
            kind: kind, payload: payload, decoded: decoded, validationTime: time, nested: nested,
            keyIdentifier: signer.keyIdentifier, leafCertificate: signer.leafCertificate,
            canonicalPayload: isCanonical ? payloadBytes : nil)
    }

    /// The signature step: payload and signature segments in canonical unpadded base64url, a
    /// 64-byte `r‖s`, ES256 over the received `header.payload` with `key`. Returns the payload's
    /// bytes, authenticated but not yet parsed.
    static func checkSignature(
        of jws: CompactJWS, in bytes: UnsafeBufferPointer<UInt8>, key: PublicKey
    ) throws(VerificationError) -> [UInt8] {
        let payloadBytes = try payload(UnsafeBufferPointer(rebasing: bytes[jws.payload]))
        let signature = try signature(UnsafeBufferPointer(rebasing: bytes[jws.signature]))
        let signingInput = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[jws.signingInput])
        try withUnsafeBytes(of: signature) { signature throws(VerificationError) in
            try checkSignature(signature, over: signingInput, key: key)
        }
        return payloadBytes
    }

    /// The payload segment's bytes: canonical unpadded base64url, else
    /// ``VerificationError/Code/badBase64URL``.
    static func payload(_ segment: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> [UInt8] {
        guard let bytes = Base64.decodeURL(segment) else {
            throw VerificationError(.badBase64URL, "the payload segment is not canonical unpadded base64url")
        }
        return bytes
    }

    /// The signature segment as ES256's 64-byte `r‖s`, held inline (no allocation):
    /// ``VerificationError/Code/badBase64URL`` when it is not canonical unpadded base64url,
    /// ``VerificationError/Code/badSignatureLength`` when it decodes to another length.
    static func signature(_ segment: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> SIMD64<UInt8> {
        var signature = SIMD64<UInt8>()
        if Base64.decodeURL(segment, exactlyInto: &signature) { return signature }
        // Decoded again only to tell which rule the segment breaks.
        guard let decoded = Base64.decodeURL(segment) else {
            throw VerificationError(.badBase64URL, "the signature segment is not canonical unpadded base64url")
        }
        throw VerificationError(
            .badSignatureLength, "the ES256 signature is \(decoded.count) bytes; it must be 64 (r‖s)")
    }

    /// The ES256 check: ``VerificationError/Code/badSignature`` when the signature is wrong,
    /// ``VerificationError/Code/internalError`` when OpenSSL gives no context to check it with.
    static func checkSignature(
        _ signature: some Collection<UInt8>, over signingInput: UnsafeRawBufferPointer, key: PublicKey
    ) throws(VerificationError) {
        try signatureVerdict(ES256.check(signature: signature, message: signingInput, key: key))
    }

    /// A signature check's outcome as the verifier reports it: `nil` is no verdict at all.
    static func signatureVerdict(_ holds: Bool?) throws(VerificationError) {
        switch holds {
        case true?:
            return
        case false?:
            throw VerificationError(
                .badSignature, "the ES256 signature does not verify with the leaf certificate's key")
        case nil:
            throw VerificationError(
                .internalError, "OpenSSL could not set up a signature check (EVP_PKEY_CTX_new or EVP_PKEY_verify_init)")
        }
    }

    /// The signer for a header segment, from the cache or parsed and checked now.
    func signer(forHeader segment: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> Signer {
        if let signer = cache.signer(forHeader: segment) { return signer }
        let header = try ProtectedHeader(segment: segment)
        let certificates = header.certificates
        let signer: Signer
        switch certificates.count {
        case 1 where isXcodeShaped(header):
            guard !xcodeCertificates.isEmpty else {
                throw VerificationError(
                    .xcodeNotTrusted,
                    "the token is signed by Xcode's StoreKit testing certificate, which is not trusted (see --xcode-cert)"
                )
            }
            guard let trusted = xcodeCertificates.first(where: { $0.der == certificates[0].der }) else {
                throw VerificationError(
                    .untrustedChain, "the token is signed by a StoreKit testing certificate other than the trusted one")
            }
            guard let key = trusted.publicKey, key.isP256 else {
                throw VerificationError(.wrongKeyType, "the Xcode certificate's key is not EC P-256")
            }
            signer = Signer(segment: Array(segment), header: header, anchor: .xcode(trusted), key: key)
        default:
            let chain = try AppleChainPolicy.signingChain(certificates)
            signer = Signer(
                segment: Array(segment), header: header,
                anchor: .chain(leaf: chain.leaf, intermediate: chain.intermediate), key: chain.key)
        }
        cache.insert(signer)
        return signer
    }

    private func isXcodeShaped(_ header: ProtectedHeader) -> Bool {
        header.keyIdentifier == "Apple_Xcode_Key" || header.certificates[0].commonName == "StoreKit Testing in Xcode"
    }

    private func validationInstant(payload: JSONObject, kind: PayloadKind?, now: Int64) -> Timestamp {
        switch validationTime {
        case .now:
            return Timestamp(milliseconds: now)
        case .fixed(let instant):
            return instant
        case .signedDate:
            // Read by static name: no array of names and no fingerprint of a string per token.
            func signed(_ field: StaticString) -> Timestamp? {
                guard case .number(let text)? = payload.value(field) else { return nil }
                return Timestamp(rawValue: text)
            }
            let signedInstant =
                if let kind { signed(kind.signedDateField) } else {
                    signed("signedDate") ?? signed("receiptCreationDate")
                }
            return signedInstant ?? Timestamp(milliseconds: now)
        }
    }

    /// Validates the signer's certificates at `milliseconds`, reusing an earlier result when the
    /// instant lies inside the window where it holds.
    private func validate(_ signer: Signer, at milliseconds: Int64, memo: inout ValidationMemo)
        throws(VerificationError)
    {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        if memo.signer === signer, let window = memo.window, window.strictlyContains(seconds) { return }
        if let window = signer.validatedWindow.withLock({ $0 }), window.strictlyContains(seconds) {
            memo = ValidationMemo(signer: signer, window: window)
            return
        }
        switch signer.anchor {
        case .chain(let leaf, let intermediate):
            let window = try validateAppleChain(leaf: leaf, intermediate: intermediate, at: seconds)
            signer.validatedWindow.withLock { $0 = window }
            memo = ValidationMemo(signer: signer, window: window)
        case .xcode(let certificate):
            try PreparedTrust.checkValidity(ofXcode: certificate, at: seconds)
        }
    }

    /// RFC 5280 path validation to the trust anchors, then Apple's marker extensions.
    func validateAppleChain(leaf: Certificate, intermediate: Certificate, at seconds: Int64) throws(VerificationError)
        -> ChainValidator.Window
    {
        let window = try chain.validate(leaf: leaf, intermediate: intermediate, at: seconds)
        try AppleChainPolicy.checkMarkers(leaf: leaf, intermediate: intermediate)
        return window
    }

    /// Verifies each token nested in a notification with the same trust; each must agree with
    /// the notification's bundle id, app Apple id and environment.
    private func verifyNested(in decoded: DecodedPayload, now: Int64) throws(VerificationError) -> [NestedPayload] {
        guard case .notification(let notification) = decoded else { return [] }
        let outer = Expectations(
            bundleId: notification.effectiveBundleId, appAppleId: notification.effectiveAppAppleId,
            environment: notification.effectiveEnvironment)
        var nested: [NestedPayload] = []
        let tokens: [(NestedTokenField, String?)] = [
            (.signedTransactionInfo, notification.data?.signedTransactionInfo),
            (.signedRenewalInfo, notification.data?.signedRenewalInfo),
            (.signedAppTransactionInfo, notification.appData?.signedAppTransactionInfo),
        ]
        for (field, token) in tokens {
            guard let token else { continue }
            do throws(VerificationError) {
                let payload = try verify(token.utf8, kind: field.kind, expectations: outer, now: now)
                nested.append(NestedPayload(field: field, payload: payload))
            } catch {
                throw VerificationError(nestedIn: field, error)
            }
        }
        return nested
    }
}
