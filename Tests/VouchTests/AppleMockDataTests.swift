import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch

/// Apple's own test fixtures (app-store-server-library), signed by Apple's test chain.
@Suite(.sharedVectors("apple-app-store-server-library"))
struct AppleMockDataTests {
    static let folder = "apple-app-store-server-library"

    func testRootVerifier(bundleId: String? = nil) throws -> Verifier {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try SharedVectors.bytes("\(Self.folder)/certs/testCA.der")]
        // Apple's test root has no subject key identifier, which strict RFC 5280 checks require.
        configuration.strictX509 = false
        configuration.bundleId = bundleId
        return try Verifier(configuration: configuration)
    }

    func mock(_ name: String) throws -> String {
        try SharedVectors.text("\(Self.folder)/mock_signed_data/\(name)")
    }

    @Test func mockTokensVerifyWithTheTestRootAsAnchor() throws {
        let verifier = try testRootVerifier(bundleId: "com.example")
        let transaction = try verifier.verify(try mock("transactionInfo"), as: .transaction)
        #expect(transaction.payload["bundleId"] == "com.example")
        #expect(transaction.validationTime.milliseconds == 1_672_956_154_000)
        let notification = try verifier.verify(try mock("testNotification"))
        #expect(notification.kind == .notification)
        #expect(notification.payload["notificationType"] == "TEST")
        let renewal = try verifier.verify(try mock("renewalInfo"), as: .renewalInfo)
        #expect(renewal.payload["environment"] == "Sandbox")
    }

    @Test func aRenewalInfoWithoutIdentifyingMembersNeedsAKind() throws {
        #expect(try testRootVerifier().rejection(try mock("renewalInfo"))?.code == .unknownKind)
    }

    @Test func mockTokensFailStrictChecksBecauseTheTestRootLacksAKeyIdentifier() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try SharedVectors.bytes("\(Self.folder)/certs/testCA.der")]
        let error = try Verifier(configuration: configuration).rejection(try mock("transactionInfo"))
        #expect(error?.code == .untrustedChain)
    }

    @Test func mockTokensAreUntrustedUnderTheAppleRoot() throws {
        #expect(
            try Verifier(configuration: .acceptingAnyApp()).rejection(try mock("transactionInfo"))?.code
                == .untrustedChain)
    }

    @Test func theWrongBundleIdFailsWithItsCode() throws {
        let error = try testRootVerifier(bundleId: "com.example").rejection(try mock("wrongBundleId"))
        #expect(error?.code == .wrongBundleId)
        #expect(error?.reason.contains("com.example.wrong") == true)
    }

    @Test func aHeaderWithoutX5CIsRejected() throws {
        #expect(try testRootVerifier().rejection(try mock("missingX5CHeaderClaim"))?.code == .missingX5C)
    }

    @Test func aLegacyReceiptIsNotAToken() throws {
        #expect(try testRootVerifier().rejection(try mock("legacyTransaction"))?.code == .malformedToken)
    }

    func chainError(leaf: String, intermediate: String) throws -> VerificationError? {
        let engine = try Engine(
            configuration: {
                var configuration = Verifier.Configuration.acceptingAnyApp()
                configuration.trustAnchors = [try SharedVectors.bytes("\(Self.folder)/certs/testCA.der")]
                configuration.strictX509 = false
                return configuration
            }())
        let leaf = try #require(Certificate(der: try SharedVectors.certificateDER("\(Self.folder)/certs/\(leaf)")))
        let intermediate = try #require(
            Certificate(der: try SharedVectors.certificateDER("\(Self.folder)/certs/\(intermediate)")))
        do {
            _ = try engine.validateAppleChain(leaf: leaf, intermediate: intermediate, at: 1_761_962_975)
            return nil
        } catch {
            return error
        }
    }

    @Test func theTestChainWithMarkersIsValid() throws {
        #expect(try chainError(leaf: "leaf_cert.pem", intermediate: "intermediate_ca.pem") == nil)
    }

    @Test func wrongOIDChainsFailWithTheMarkerCode() throws {
        #expect(
            try chainError(leaf: "leaf_cert_invalid_oid.pem", intermediate: "intermediate_ca.pem")?.code
                == .missingMarkerOID)
        #expect(
            try chainError(
                leaf: "leaf_cert_for_intermediate_ca_invalid_oid.pem", intermediate: "intermediate_ca_invalid_oid.pem")?
                .code
                == .missingMarkerOID)
    }

    @Test func theRealChainValidatesOnlyInsideItsWindow() throws {
        let engine = try Engine(configuration: Verifier.Configuration.acceptingAnyApp())
        let leaf = try #require(
            Certificate(
                der: try SharedVectors.certificateDER("\(Self.folder)/certs/real_apple_signing_certificate.pem")))
        let intermediate = try #require(
            Certificate(der: try SharedVectors.certificateDER("\(Self.folder)/certs/real_apple_intermediate.pem")))
        let window = try engine.validateAppleChain(leaf: leaf, intermediate: intermediate, at: 1_761_962_975)
        #expect(window.notAfter == leaf.notAfter)
        #expect(throws: VerificationError(.certificateExpired, "")) {
            try engine.validateAppleChain(leaf: leaf, intermediate: intermediate, at: 2_280_946_846)
        }
        #expect(throws: VerificationError(.certificateNotYetValid, "")) {
            try engine.validateAppleChain(leaf: leaf, intermediate: intermediate, at: 1_600_000_000)
        }
    }
}
