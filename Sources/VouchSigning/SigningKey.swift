public import Foundation
public import Vouch
internal import VouchOpenSSL

/// A private key from App Store Connect: an In-App Purchase key (or an App Store Server API
/// key), ECDSA on P-256, as the `.p8` file Apple lets you download once holds it.
///
/// Read from PEM text (PKCS #8 `BEGIN PRIVATE KEY`, as `.p8` files are, or the traditional
/// `BEGIN EC PRIVATE KEY`). Anything else is a ``SigningError`` saying what it is: an encrypted
/// key (``SigningError/Code/keyEncrypted``; no passphrase is ever asked for), an RSA or other
/// key (``SigningError/Code/keyWrongType``), an EC key on another curve
/// (``SigningError/Code/keyWrongCurve``), or no key at all (``SigningError/Code/keyMalformed``).
/// The key is never part of an error, a description or a log.
///
/// Signing only reads the key: one value is shared by every thread that signs.
public struct SigningKey: Sendable, CustomStringConvertible {
    let key: PrivateKey

    /// Reads the key from PEM text, such as a `.p8` file's contents.
    public init(pem: String) throws(SigningError) {
        try self.init(pem: Array(pem.utf8))
    }

    /// Reads the key from the bytes of PEM text.
    public init(pem: [UInt8]) throws(SigningError) {
        do {
            key = try PrivateKey.read(pem: pem, curve: .p256)
        } catch .noKey where String(decoding: pem, as: UTF8.self).contains("-----BEGIN PUBLIC KEY-----") {
            throw SigningError(
                .keyMalformed, "the text holds a public key; signing needs the private key (the .p8 file)")
        } catch {
            throw SigningError(keyProblem: error, private: true)
        }
    }

    /// Reads the key from a file, such as `SubscriptionKey_KEYID.p8`.
    public init(contentsOf file: URL) throws(SigningError) {
        try self.init(pem: try Self.read(file))
    }

    /// The public half, to verify what this key signs.
    public var publicKey: SigningPublicKey {
        // A key OpenSSL has read always has an encodable public half.
        SigningPublicKey(key: try! key.publicKey())
    }

    /// Says what the key is, never what it holds.
    public var description: String { "SigningKey(EC P-256, private)" }

    /// The DER ECDSA signature of SHA-256(`message`).
    func derSignature(of message: [UInt8]) throws(SigningError) -> [UInt8] {
        do {
            return try key.derSignatureOfSHA256(message)
        } catch {
            throw SigningError(.openSSLFailure, error.description)
        }
    }

    /// The ES256 signature of `message`: raw `r‖s`, 64 bytes.
    func es256Signature(of message: [UInt8]) throws(SigningError) -> [UInt8] {
        do {
            return try key.signatureOfSHA256(message)
        } catch {
            throw SigningError(.openSSLFailure, error.description)
        }
    }

    /// A key file's bytes.
    static func read(_ file: URL) throws(SigningError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: file))
        } catch {
            throw SigningError(.keyUnreadable, "cannot read \(file.path): \(error.localizedDescription)")
        }
    }
}

/// The public half of a ``SigningKey``: what checks the signatures a server makes, in its own
/// tests (`vouch verify --signing-key`) or wherever the public key is shared.
public struct SigningPublicKey: Sendable, CustomStringConvertible {
    let key: PublicKey

    init(key: PublicKey) {
        self.key = key
    }

    /// Reads a PEM public key (`BEGIN PUBLIC KEY`), or the public half of a PEM private key,
    /// which must be EC P-256.
    public init(pem: String) throws(SigningError) {
        try self.init(pem: Array(pem.utf8))
    }

    /// Reads the bytes of PEM text, as ``init(pem:)-(String)``.
    public init(pem: [UInt8]) throws(SigningError) {
        do {
            key = try PublicKey.read(pem: pem, curve: .p256)
        } catch {
            throw SigningError(keyProblem: error, private: false)
        }
    }

    /// Reads a PEM file, as ``init(pem:)-(String)``.
    public init(contentsOf file: URL) throws(SigningError) {
        try self.init(pem: try SigningKey.read(file))
    }

    /// The key as PEM SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`).
    public var pemRepresentation: String {
        // Writing a key that was read only fails when memory runs out.
        String(decoding: (try? key.pem()) ?? [], as: UTF8.self)
    }

    public var description: String { "SigningPublicKey(EC P-256)" }

    /// Verifies a compact JWS (ES256) this key's private half signed: a promotional offer,
    /// introductory offer eligibility or Advanced Commerce signature, or an App Store Server API
    /// token.
    ///
    /// Checked, in order: the size (64 KiB at most) and the three segments; the header
    /// (canonical base64url, a strict JSON object, `alg` ES256, no `crit`, `kid` a string when
    /// present; `x5c` is not read); the 64-byte `r‖s` signature with this key over the
    /// `header.payload` bytes as received; the claims, a strict JSON object; then at the
    /// validation instant, `exp` must be later (else `token_expired`),
    /// `nbf` and `iat` not later (else `token_not_yet_valid`); and `bid`
    /// must be `bundleId` when one is given. Nothing else is checked: not `aud`, `iss`, `kid`
    /// or a nonce's freshness.
    ///
    /// - Parameters:
    ///   - token: the compact JWS.
    ///   - time: the validation instant: now (the default), a fixed instant, or
    ///     `.signedDate` for the token's own `iat`.
    ///   - bundleId: the `bid` claim required, if any.
    public func verify(_ token: String, at time: ValidationTime = .now, bundleId: String? = nil)
        throws(VerificationError) -> VerifiedJWS
    {
        try verify(bytes: Array(token.utf8), at: time, bundleId: bundleId)
    }

    /// Verifies a compact JWS given as UTF-8 bytes, as ``verify(_:at:bundleId:)``.
    public func verify(bytes token: [UInt8], at time: ValidationTime = .now, bundleId: String? = nil)
        throws(VerificationError) -> VerifiedJWS
    {
        // The one place the clock is read: once per call, at the API boundary.
        let verified = try KeySignedToken(
            verifying: token, key: key, at: time, now: Timestamp(Date()), bundleId: bundleId)
        return VerifiedJWS(header: verified.header, claims: verified.claims, validationTime: verified.validationTime)
    }

    /// Whether `signature` (a DER ECDSA-Sig-Value, as a version 1 promotional offer signature
    /// holds it once base64-decoded) is this key's signature over SHA-256 of `message`.
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        let digest = SHA256Digest.hash(message)
        return signature.withUnsafeBytes { signature in
            digest.withUnsafeBytes { digest in key.verify(derSignature: signature, sha256Digest: digest) == true }
        }
    }
}

/// A JWS that ``SigningPublicKey/verify(_:at:bundleId:)`` accepted.
public struct VerifiedJWS: Sendable, Hashable {
    /// The protected header, as signed.
    public let header: JSONObject
    /// The claims, as signed.
    public let claims: JSONObject
    /// The instant the time claims were checked at.
    public let validationTime: Timestamp
}

extension SigningError {
    /// The error for a PEM text that gave no usable key.
    init(keyProblem: PEMKeyError, private isPrivate: Bool) {
        let wanted = isPrivate ? "an EC P-256 private key (an App Store Connect .p8 file)" : "an EC P-256 public key"
        switch keyProblem {
        case .noKey:
            self.init(
                .keyMalformed,
                "no PEM \(isPrivate ? "private" : "public or private") key could be read; \(wanted) is needed")
        case .encrypted:
            self.init(.keyEncrypted, "the key is encrypted; \(wanted), unencrypted, is needed")
        case .notEC(let summary):
            self.init(.keyWrongType, "the key is \(summary); \(wanted) is needed")
        case .wrongCurve(let curve):
            self.init(.keyWrongCurve, "the key is on the curve \(curve); \(wanted) is needed")
        case .openSSL(let failure):
            self.init(.openSSLFailure, failure.description)
        }
    }
}
