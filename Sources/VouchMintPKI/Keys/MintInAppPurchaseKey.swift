public import Foundation
internal import VouchOpenSSL

/// An In-App Purchase key shaped like the ones App Store Connect issues, for tests: a fresh
/// EC P-256 key, a ten-character key id, and the files Apple's download and a verifier use.
///
/// ``write(to:)`` writes `SubscriptionKey_KEYID.p8` (the private key as unencrypted PKCS #8
/// PEM, mode 0600, as App Store Connect's download holds it) and
/// `SubscriptionKey_KEYID.public.pem` (the public key, for `vouch verify --signing-key`). The
/// key is for tests only: nothing Apple runs knows it.
public struct MintInAppPurchaseKey: Sendable {
    /// The key's identifier, as App Store Connect shows it (ten letters and digits).
    public let keyId: String
    let key: PrivateKey

    /// The characters of generated key ids: App Store Connect's are upper-case letters and digits.
    static let keyIdCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// A new key. `keyId` is the id to give it (letters and digits only); a random one of ten
    /// characters by default.
    public static func generate(keyId: String? = nil) throws(MintError) -> MintInAppPurchaseKey {
        let id = keyId ?? String((0..<10).map { _ in keyIdCharacters.randomElement()! })
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw MintError(.invalidInput, "the key id \"\(id)\" is not letters and digits")
        }
        let key = try MintError.openSSL { () throws(OpenSSLError) in try PrivateKey.generate(.p256) }
        return MintInAppPurchaseKey(keyId: id, key: key)
    }

    /// The private key as the `.p8` file holds it: PKCS #8 PEM, unencrypted.
    public func privateKeyPEM() throws(MintError) -> String {
        String(decoding: try MintError.openSSL { () throws(OpenSSLError) in try key.privateKeyPEM() }, as: UTF8.self)
    }

    /// The public key as PEM SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`).
    public func publicKeyPEM() throws(MintError) -> String {
        String(decoding: try MintError.openSSL { () throws(OpenSSLError) in try key.publicKey().pem() }, as: UTF8.self)
    }

    /// The files ``write(to:)`` writes into `directory`: the `.p8` first.
    public func files(in directory: URL) -> [URL] {
        ["SubscriptionKey_\(keyId).p8", "SubscriptionKey_\(keyId).public.pem"].map {
            directory.appendingPathComponent($0)
        }
    }

    /// Writes the `.p8` (mode 0600) and the public key (mode 0644) into `directory`, creating
    /// it if needed and replacing existing files. Returns the files written.
    @discardableResult
    public func write(to directory: URL) throws(MintError) -> [URL] {
        try MintFiles.createDirectory(directory)
        let files = files(in: directory)
        try MintFiles.write(Array(try privateKeyPEM().utf8), to: files[0], mode: 0o600)
        try MintFiles.write(Array(try publicKeyPEM().utf8), to: files[1], mode: 0o644)
        return files
    }
}
