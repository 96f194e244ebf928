import Testing
@testable import Vouch

struct XcodeDataTests {
    static let samples = [
        ("apple-xcode/neg-xcode-signed-transaction.jws", PayloadKind.transaction),
        ("apple-xcode/neg-xcode-signed-renewal-info.jws", .renewalInfo),
        ("apple-xcode/neg-xcode-signed-app-transaction.jws", .appTransaction),
    ]

    @Test func xcodeDataIsRejectedByDefault() throws {
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        for (path, _) in Self.samples {
            #expect(verifier.rejection(try TestVectors.text(path))?.code == .xcodeNotTrusted, "\(path)")
        }
    }

    @Test func xcodeDataVerifiesWithItsCertificateTrusted() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try TestVectors.bytes("apple-xcode/StoreKitTestingInXcode.cer")]
        let verifier = try Verifier(configuration: configuration)
        for (path, kind) in Self.samples {
            let verified = try verifier.verify(try TestVectors.text(path), as: kind)
            #expect(verified.kind == kind)
            #expect(verified.keyIdentifier == "Apple_Xcode_Key")
        }
    }

    @Test func xcodeDataIsCheckedForRealAgainstTheTrustedCertificate() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try TestVectors.bytes("apple-xcode/StoreKitTestingInXcode.cer")]
        let verifier = try Verifier(configuration: configuration)
        var parts = TokenParts.segments(try TestVectors.text(Self.samples[0].0))
        var signature = Array(parts[2])
        signature[10] = signature[10] == "A" ? "B" : "A"
        parts[2] = String(signature)
        #expect(verifier.rejection(parts.joined(separator: "."))?.code == .badSignature)

        configuration.validationTime = .fixed(Timestamp(milliseconds: 1_800_000_000_000))
        let late = try Verifier(configuration: configuration)
        #expect(late.rejection(try TestVectors.text(Self.samples[0].0), as: .transaction)?.code == .certificateExpired)
    }

    @Test func anotherXcodeCertificateIsAnUntrustedChain() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try TestVectors.certificateDER("apple-app-store-server-library/certs/leaf_cert.pem")]
        let verifier = try Verifier(configuration: configuration)
        #expect(verifier.rejection(try TestVectors.text(Self.samples[0].0))?.code == .untrustedChain)
    }
}
