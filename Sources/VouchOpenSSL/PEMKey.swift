internal import COpenSSL

/// Why a PEM text gave no key of the kind asked for.
package enum PEMKeyError: Error, Sendable {
    /// No PEM key block OpenSSL can read (not PEM at all, another object, a damaged key).
    case noKey
    /// The key is encrypted (`ENCRYPTED PRIVATE KEY`, or a traditional key with
    /// `Proc-Type: 4,ENCRYPTED`); no passphrase is ever asked for.
    case encrypted
    /// Not an EC key; the key's summary ("RSA 2048", "Ed25519").
    case notEC(String)
    /// An EC key on another curve than the one asked for; its group name ("secp384r1").
    case wrongCurve(String)
    /// OpenSSL failed where it should not (an allocation).
    case openSSL(OpenSSLError)
}

/// Refuses every passphrase request: a key file is read without a terminal prompt, and an
/// encrypted key fails to decrypt instead of waiting for input.
private func noPassphrase(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ writing: Int32, _ context: UnsafeMutableRawPointer?
) -> Int32 { 0 }

extension PrivateKey {
    /// Reads the first PEM private key of `pem` (PKCS #8 as App Store Connect's `.p8` files
    /// hold, or the traditional EC form), unencrypted, and checks that it is an EC key on
    /// `curve` (any curve for `nil`).
    package static func read(pem: [UInt8], curve: Curve? = nil) throws(PEMKeyError) -> PrivateKey {
        if PEMText.isEncrypted(pem) { throw .encrypted }
        let pointer: OpaquePointer?
        do {
            pointer = try MemoryBIO.reading(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, noPassphrase, nil) }
        } catch {
            throw .openSSL(error)
        }
        guard let pointer else {
            OpenSSLError.drain()
            throw .noKey
        }
        let key = PrivateKey(taking: pointer)
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else {
            throw .notEC((try? key.publicKey())?.summary ?? "key type \(EVP_PKEY_get_base_id(pointer))")
        }
        if let curve, key.curve != curve { throw .wrongCurve(Curve.groupName(of: pointer) ?? "an unnamed curve") }
        return key
    }
}

extension PublicKey {
    /// Reads the first PEM public key of `pem` (`BEGIN PUBLIC KEY`), or the public half of the
    /// first PEM private key when it holds none, and checks that it is an EC key on `curve`
    /// (any curve for `nil`).
    package static func read(pem: [UInt8], curve: Curve? = nil) throws(PEMKeyError) -> PublicKey {
        let pointer: OpaquePointer?
        do {
            pointer = try MemoryBIO.reading(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, noPassphrase, nil) }
        } catch {
            throw .openSSL(error)
        }
        let key: PublicKey
        if let pointer {
            key = PublicKey(owning: pointer)
        } else {
            OpenSSLError.drain()
            let privateKey = try PrivateKey.read(pem: pem)
            do {
                key = try privateKey.publicKey()
            } catch {
                throw .openSSL(error)
            }
        }
        guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_EC else { throw .notEC(key.summary) }
        if let curve, key.curve != curve {
            throw .wrongCurve(Curve.groupName(of: key.pointer) ?? "an unnamed curve")
        }
        return key
    }

    /// The key as PEM SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`).
    package func pem() throws(OpenSSLError) -> [UInt8] {
        let bio = try MemoryBIO()
        try bio.withUnsafePointer { bio throws(OpenSSLError) in
            guard PEM_write_bio_PUBKEY(bio, pointer) == 1 else { throw OpenSSLError("PEM_write_bio_PUBKEY") }
        }
        return bio.contents
    }
}

/// What a PEM text says of itself before OpenSSL reads it.
enum PEMText {
    /// Whether `pem` holds an encrypted private key: a PKCS #8 `ENCRYPTED PRIVATE KEY` block or
    /// a traditional block whose headers say `Proc-Type: 4,ENCRYPTED`.
    static func isEncrypted(_ pem: [UInt8]) -> Bool {
        let text = String(decoding: pem, as: UTF8.self)
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }
}
