import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchReceipts

/// A receipt verifier is safe by default: it names the app and environment whose receipts it
/// accepts, or says that it accepts any.
@Suite struct ReceiptConfigurationTests {
    static func configurationError(_ configuration: ReceiptVerifier.Configuration) -> ConfigurationError? {
        do {
            _ = try ReceiptVerifier(configuration: configuration)
            return nil
        } catch {
            return error
        }
    }

    @Test func aConfigurationNamingNoAppIsRefused() {
        #expect(Self.configurationError(ReceiptVerifier.Configuration())?.code == .missingAppIdentity)
        var bundleOnly = ReceiptVerifier.Configuration()
        bundleOnly.bundleId = "com.example.app"
        #expect(Self.configurationError(bundleOnly)?.code == .missingAppIdentity)
        var environmentOnly = ReceiptVerifier.Configuration()
        environmentOnly.environment = .production
        #expect(Self.configurationError(environmentOnly)?.code == .missingAppIdentity)
        #expect(Self.configurationError(.init(bundleId: "com.example.app", environment: .production)) == nil)
        #expect(Self.configurationError(.acceptingAnyApp()) == nil)
    }

    /// One safe-by-default rule with a token verifier's, but a Production receipt verifier
    /// needs no app Apple ID (it checks one when given).
    @Test func theSafeByDefaultRuleIsTheTokenVerifiersLessTheAppAppleId() throws {
        let named = ReceiptVerifier.Configuration(bundleId: "com.example.app", environment: .production)
        #expect(Self.configurationError(named) == nil)
        let production = Self.error { () throws(ConfigurationError) in
            try Verifier(configuration: .init(bundleId: "com.example.app", environment: .production))
        }
        #expect(production?.code == .missingAppAppleId)
        let tokens = Self.error { () throws(ConfigurationError) in try Verifier(configuration: .init()) }
        #expect(tokens?.reason.contains("acceptingAnyApp()") == true)
        let receipts = Self.error { () throws(ConfigurationError) in try ReceiptVerifier(configuration: .init()) }
        #expect(receipts?.code == .missingAppIdentity)
        #expect(receipts?.reason == tokens?.reason)
    }

    static func error(_ make: () throws(ConfigurationError) -> Any) -> ConfigurationError? {
        do {
            _ = try make()
            return nil
        } catch {
            return error
        }
    }

    @Test func theDefaultAnchorIsAppleIncRootAndTheTrustMembersAreTheConfigurationsOwn() {
        var configuration = ReceiptVerifier.Configuration()
        #expect(configuration.trustAnchors == [AppleRootCertificates.appleIncRoot])
        #expect(Verifier.Configuration().trustAnchors == [AppleRootCertificates.rootCAG3])
        configuration.bundleId = "com.example.app"
        configuration.validationTime = .now
        #expect(configuration.trust.bundleId == "com.example.app")
        #expect(configuration.trust.validationTime == .now)
    }

    @Test func aDeviceIdentifierOfAnotherLengthThanSixteenBytesIsRefused() {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.deviceIdentifier = Array(repeating: 7, count: 15)
        #expect(Self.configurationError(configuration)?.code == .invalidDeviceIdentifier)
        configuration.deviceIdentifier = Array(repeating: 7, count: 16)
        #expect(Self.configurationError(configuration) == nil)
    }

    @Test func unreadableOrMissingAnchorsAreRefused() {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = []
        #expect(Self.configurationError(configuration)?.code == .noTrustAnchors)
        configuration.trustAnchors = [Array("not a certificate".utf8)]
        #expect(Self.configurationError(configuration)?.code == .unreadableTrustAnchor)
        configuration.trustAnchors = [AppleRootCertificates.appleIncRoot]
        configuration.xcodeCertificates = [[0x30, 0x00]]
        #expect(Self.configurationError(configuration)?.code == .unreadableXcodeCertificate)
    }

    @Test(.sharedVectors("receipts"), arguments: SharedReceipts.real.filter { !$0.isXcode })
    func everyAppleReceiptVerifiesForItsOwnAppAndEnvironmentOnly(entry: SharedReceipts.Entry) throws {
        let bytes = try SharedReceipts.bytes("real/\(entry.name)")
        let own = try ReceiptVerifier(configuration: .init(bundleId: entry.bundleId, environment: entry.environment))
        #expect(own.rejection(bytes) == nil)
        let other: AppStoreEnvironment = entry.environment == .production ? .sandbox : .production
        let otherEnvironment = try ReceiptVerifier(configuration: .init(bundleId: entry.bundleId, environment: other))
        #expect(otherEnvironment.rejection(bytes)?.code == .wrongEnvironment)
        let otherApp = try ReceiptVerifier(
            configuration: .init(bundleId: entry.bundleId + ".other", environment: entry.environment))
        #expect(otherApp.rejection(bytes)?.code == .wrongBundleId)
    }

    @Test(.sharedVectors("receipts"), arguments: SharedReceipts.real.filter(\.isXcode))
    func xcodeReceiptsVerifyOnlyForTheXcodeEnvironment(entry: SharedReceipts.Entry) throws {
        let bytes = try SharedReceipts.bytes("real/\(entry.name)")
        var configuration = ReceiptVerifier.Configuration(bundleId: entry.bundleId, environment: .xcode)
        configuration.xcodeCertificates = [SharedReceipts.storeKitCertificate]
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes) == nil)
        configuration.environment = .sandbox
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes)?.code == .wrongEnvironment)
    }
}
