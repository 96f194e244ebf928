import Foundation
import Testing
import Vouch
import VouchMint
import VouchOpenSSL
import VouchSigning
import VouchTestSupport

/// Reading App Store Connect keys: a `.p8` is accepted, everything else is named.
@Suite struct SigningKeyTests {
    /// A P-256 test key in the traditional form (`openssl ecparam -genkey -noout`), the same key
    /// encrypted in that form (passphrase `test`; ``TestKeyFiles/encryptedPKCS8`` is it in
    /// PKCS #8), and its public key.
    static let traditional = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIErhT9PllIrGdwtAnbNtdOMFfFozU/xpaEh6GhL1U5o2oAoGCCqGSM49
        AwEHoUQDQgAE7xzhHIRiTWhUWLjdItW1YRnM4xJQ3EcOQ8uQyTgk1hOSHVCZ5nfS
        XnClXd0SZc+phNClTJrcryvNXjiR0NU5QQ==
        -----END EC PRIVATE KEY-----
        """
    static let encryptedTraditional = """
        -----BEGIN EC PRIVATE KEY-----
        Proc-Type: 4,ENCRYPTED
        DEK-Info: AES-128-CBC,1AC214BF268F92BF1E4944E2819D6C9B

        cNh7Ij1jd1E8IQdsu78H7gOsSoaPTbIFvdh5SxtO8tJQ4kT20IJT4gZfUuPi314o
        oYnE9upgWNF4dCxy+Yls0OxV73MlZpeCkbriAA1tESQsOgFjlDVaogcle5kIyz0k
        c38lvjZdYMxWnns17ocQiNy60EcZWvs/8rSDNYA4hB4=
        -----END EC PRIVATE KEY-----
        """
    static let traditionalPublic = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7xzhHIRiTWhUWLjdItW1YRnM4xJQ
        3EcOQ8uQyTgk1hOSHVCZ5nfSXnClXd0SZc+phNClTJrcryvNXjiR0NU5QQ==
        -----END PUBLIC KEY-----

        """

    @Test func readsAMintedP8File() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try TestKeys.minted.write(to: folder)
        #expect(
            files.map(\.lastPathComponent) == [
                "SubscriptionKey_2X9R4HXF34.p8", "SubscriptionKey_2X9R4HXF34.public.pem",
            ])
        let key = try SigningKey(contentsOf: files[0])
        let publicKey = try SigningPublicKey(contentsOf: files[1])
        #expect(publicKey.pemRepresentation == key.publicKey.pemRepresentation)
        #expect(try SigningPublicKey(contentsOf: files[0]).pemRepresentation == publicKey.pemRepresentation)
        let mode = try FileManager.default.attributesOfItem(atPath: files[0].path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try String(contentsOf: files[0], encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    }

    @Test func readsATraditionalECKey() throws {
        let key = try SigningKey(pem: Self.traditional)
        #expect(key.publicKey.pemRepresentation == Self.traditionalPublic)
        #expect(try SigningPublicKey(pem: Self.traditionalPublic).pemRepresentation == Self.traditionalPublic)
    }

    @Test(arguments: [(Curve.p384, "secp384r1"), (Curve.p521, "secp521r1")])
    func refusesAnotherCurveNamingIt(curve: Curve, name: String) throws {
        let pem = try PrivateKey.generate(curve).privateKeyPEM()
        let error = try #require(throws: SigningError.self) { try SigningKey(pem: pem) }
        #expect(error.code == .keyWrongCurve)
        #expect(error.reason.contains(name))
        let publicError = try #require(throws: SigningError.self) { try SigningPublicKey(pem: pem) }
        #expect(publicError.code == .keyWrongCurve)
    }

    @Test func refusesAnRSAKeyNamingIt() throws {
        let pem = try PrivateKey.generateRSA(bits: 2048).privateKeyPEM()
        let error = try #require(throws: SigningError.self) { try SigningKey(pem: pem) }
        #expect(error.code == .keyWrongType)
        #expect(error.reason.contains("RSA 2048"))
    }

    @Test(arguments: [TestKeyFiles.encryptedPKCS8, SigningKeyTests.encryptedTraditional])
    func refusesAnEncryptedKeyWithoutAskingForAPassphrase(pem: String) throws {
        let error = try #require(throws: SigningError.self) { try SigningKey(pem: pem) }
        #expect(error.code == .keyEncrypted)
        let publicError = try #require(throws: SigningError.self) { try SigningPublicKey(pem: pem) }
        #expect(publicError.code == .keyEncrypted)
    }

    @Test(arguments: ["", "not a key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"])
    func refusesTextWithoutAKey(pem: String) throws {
        let error = try #require(throws: SigningError.self) { try SigningKey(pem: pem) }
        #expect(error.code == .keyMalformed)
    }

    @Test func aPublicKeyGivenForSigningIsNamedAsSuch() throws {
        let error = try #require(throws: SigningError.self) {
            try SigningKey(pem: TestKeys.publicKey.pemRepresentation)
        }
        #expect(error.code == .keyMalformed)
        #expect(error.reason.contains("public key"))
    }

    @Test func anUnreadableFileIsKeyUnreadable() throws {
        let error = try #require(throws: SigningError.self) {
            try SigningKey(contentsOf: URL(fileURLWithPath: "/nonexistent/SubscriptionKey_X.p8"))
        }
        #expect(error.code == .keyUnreadable)
    }

    @Test func theKeyIsNeverDescribedOrQuoted() throws {
        let body = TestKeys.pem.split(separator: "\n")[1]
        #expect(!"\(TestKeys.key)".contains(body))
        #expect(!String(reflecting: TestKeys.key).contains(body))
        // A damaged key's error does not quote it either.
        let damaged = TestKeys.pem.replacingOccurrences(of: "A", with: "!")
        let error = try #require(throws: SigningError.self) { try SigningKey(pem: damaged) }
        #expect(!error.reason.contains(body.prefix(16)))
    }

    @Test func everyCodeIsListedOnceInDocumentationOrder() {
        #expect(Set(SigningError.Code.all).count == SigningError.Code.all.count)
        #expect(SigningError(.keyEncrypted, "a") == SigningError(.keyEncrypted, "b"))
        #expect(SigningError(.keyEncrypted, "a") != SigningError(.keyWrongType, "a"))
    }
}
