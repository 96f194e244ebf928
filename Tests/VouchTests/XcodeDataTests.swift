import Testing
import VouchTestSupport

@testable import Vouch

/// Xcode's StoreKit testing tokens (`apple-xcode/` in the shared test vectors); their
/// certificate is the single `x5c` entry they carry.
@Suite(.sharedVectors("apple-xcode", "apple-app-store-server-library"))
struct XcodeDataTests {
    static let samples = SharedVectors.xcodeSamples

    @Test func xcodeDataIsRejectedByDefault() throws {
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        for (path, _) in Self.samples {
            #expect(verifier.rejection(try SharedVectors.text(path))?.code == .xcodeNotTrusted, "\(path)")
        }
    }

    @Test func xcodeDataVerifiesWithItsCertificateTrusted() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try SharedVectors.xcodeCertificate()]
        let verifier = try Verifier(configuration: configuration)
        for (path, kind) in Self.samples {
            let verified = try verifier.verify(try SharedVectors.text(path), as: kind)
            #expect(verified.kind == kind)
            #expect(verified.keyIdentifier == "Apple_Xcode_Key")
        }
    }

    @Test func xcodeDataIsCheckedForRealAgainstTheTrustedCertificate() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try SharedVectors.xcodeCertificate()]
        let verifier = try Verifier(configuration: configuration)
        var parts = TokenParts.segments(try SharedVectors.text(Self.samples[0].0))
        var signature = Array(parts[2])
        signature[10] = signature[10] == "A" ? "B" : "A"
        parts[2] = String(signature)
        #expect(verifier.rejection(parts.joined(separator: "."))?.code == .badSignature)

        configuration.validationTime = .fixed(Timestamp(milliseconds: 1_800_000_000_000))
        let late = try Verifier(configuration: configuration)
        #expect(
            late.rejection(try SharedVectors.text(Self.samples[0].0), as: .transaction)?.code == .certificateExpired)
    }

    @Test func anotherXcodeCertificateIsAnUntrustedChain() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [
            try SharedVectors.certificateDER("apple-app-store-server-library/certs/leaf_cert.pem")
        ]
        let verifier = try Verifier(configuration: configuration)
        #expect(verifier.rejection(try SharedVectors.text(Self.samples[0].0))?.code == .untrustedChain)
    }
}
