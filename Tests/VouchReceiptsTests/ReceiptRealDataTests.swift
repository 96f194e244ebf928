import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchReceipts

/// The 52 real receipts and the negative files of the shared test data.
@Suite struct ReceiptRealDataTests {
    static let verifier = try! ReceiptVerifier(configuration: .acceptingAnyApp())

    static func xcodeVerifier() throws -> ReceiptVerifier {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [SharedReceipts.storeKitCertificate]
        return try ReceiptVerifier(configuration: configuration)
    }

    @Test(.sharedVectors("receipts"), arguments: SharedReceipts.real.filter { !$0.isXcode })
    func everyAppleReceiptVerifiesAtItsCreationDateAndDecodesToTheManifest(entry: SharedReceipts.Entry) throws {
        let verified = try Self.verifier.verify(try SharedReceipts.bytes("real/\(entry.name)"))
        let receipt = verified.receipt
        #expect(receipt.bundleId == entry.bundleId)
        #expect(receipt.inApp.count == entry.inAppCount)
        #expect(Set(receipt.inApp.compactMap(\.productId)) == entry.productIds)
        #expect(receipt.applicationVersion == entry.applicationVersion)
        #expect(verified.validationTime.milliseconds == CivilTime.milliseconds(entry.creationDate, .receipt))
        #expect(receipt.receiptCreationDate == verified.validationTime)
        #expect(!verified.isXcode)
        #expect(receipt.inApp.allSatisfy { $0.transactionId?.isEmpty == false && $0.purchaseDate != nil })
    }

    @Test(.sharedVectors("receipts"), arguments: SharedReceipts.real.filter(\.isXcode))
    func xcodeReceiptsAreRefusedUnlessTheStoreKitCertificateIsTrusted(entry: SharedReceipts.Entry) throws {
        let bytes = try SharedReceipts.bytes("real/\(entry.name)")
        #expect(Self.verifier.rejection(bytes)?.code == .xcodeNotTrusted)
        let verified = try Self.xcodeVerifier().verify(bytes)
        #expect(verified.isXcode)
        #expect(verified.receipt.receiptType == .xcode)
        #expect(verified.receipt.bundleId == entry.bundleId)
        #expect(verified.receipt.inApp.count == entry.inAppCount)
        #expect(Set(verified.receipt.inApp.compactMap(\.productId)) == entry.productIds)
        #expect(verified.validationTime.milliseconds == CivilTime.milliseconds(entry.creationDate, .receipt))
    }

    @Test(.sharedVectors("receipts")) func xcodeReceiptsAreBERWithIndefiniteLengths() throws {
        for entry in SharedReceipts.real where entry.isXcode {
            let container = try ReceiptContainer(try SharedReceipts.bytes("real/\(entry.name)"))
            #expect(container.usesIndefiniteLengths, "\(entry.name)")
            #expect(container.digest == .sha256)
        }
        for entry in SharedReceipts.real where !entry.isXcode {
            #expect(try !ReceiptContainer(try SharedReceipts.bytes("real/\(entry.name)")).usesIndefiniteLengths)
        }
    }

    @Test(.sharedVectors("receipts"), arguments: SharedReceipts.real.filter { !$0.isXcode })
    func everyAppleReceiptFailsNowBecauseItsSigningCertificateHasExpired(entry: SharedReceipts.Entry) throws {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.validationTime = .now
        let verifier = try ReceiptVerifier(configuration: configuration)
        #expect(verifier.rejection(try SharedReceipts.bytes("real/\(entry.name)"))?.code == .certificateExpired)
    }

    /// What each negative file must do, from its manifest.
    static let negativeExpectations: [String: VerificationError.Code?] = [
        // SignedData version 3 with signed attributes: refused before its signer is even looked
        // at (the test below shows the marker rule refuses its signer too).
        "wrong-signer-apple-config-profile.der": .receiptMalformedContainer,
        "ios6-transaction-receipt.plist": .receiptNotAReceipt,
        "mut-mindnodemac-2023-payload-bundle-byte-flipped.der": .badSignature,
        "mut-mindnodemac-2023-signature-last-byte-flipped.der": .badSignature,
        "mut-mindnodemac-2023-certificates-removed.der": .receiptSignerNotFound,
        "mut-mindnodemac-2023-intermediate-removed.der": .untrustedChain,
        "mut-mindnodemac-2023-root-removed.der": nil,
        "mut-mindnodemac-2023-certificates-reversed.der": nil,
        "mut-mindnodemac-2023-trailing-bytes.der": .receiptMalformedContainer,
    ]

    @Test(.sharedVectors("receipts"), arguments: SharedReceipts.manifest("negative/manifest.tsv"))
    func everyNegativeFileGetsItsSpecificOutcome(entry: SharedReceipts.Entry) throws {
        let expected = try #require(Self.negativeExpectations[entry.name], "no expectation for \(entry.name)")
        let bytes = try SharedReceipts.bytes("negative/\(entry.name)")
        #expect(entry.fields["expected"]!.hasPrefix(expected == nil ? "accept" : "reject"))
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        if let instant = entry.fields["validation_time"], !instant.isEmpty {
            configuration.validationTime = .fixed(
                Timestamp(milliseconds: try #require(CivilTime.milliseconds(instant, .receipt))))
        }
        let rejection = try ReceiptVerifier(configuration: configuration).rejection(bytes)
        #expect(rejection?.code == expected, "\(rejection?.description ?? "verified")")
        // The verdict does not depend on the validation time chosen.
        #expect(Self.verifier.rejection(bytes)?.code == expected)
    }

    @Test(.sharedVectors("receipts")) func theConfigurationProfileSignerLacksTheReceiptSigningMarker() throws {
        let bytes = try SharedReceipts.bytes("negative/wrong-signer-apple-config-profile.der")
        // ContentInfo → [0] → SignedData → certificates [0], read without the container's rules.
        var outer = BERReader(bytes)
        var contentInfo = try outer.children(of: try outer.read(0x30, "ContentInfo"))
        _ = try contentInfo.read(0x06, "contentType")
        var explicit = try contentInfo.children(of: try contentInfo.read(0xA0, "content"))
        var signedData = try explicit.children(of: try explicit.read(0x30, "SignedData"))
        var certificateSet: BERReader.Element? = nil
        while certificateSet == nil, let element = try signedData.next() {
            if element.tag == 0xA0 { certificateSet = element }
        }
        var certificates = try signedData.children(of: try #require(certificateSet))
        var leaves: [Certificate] = []
        while let element = try certificates.next() {
            let certificate = try #require(Certificate(der: Array(bytes[element.whole])))
            if !certificate.isCA { leaves.append(certificate) }
        }
        let leaf = try #require(leaves.first)
        #expect(leaf.commonName == "AppleCare Profile Signing Certificate")
        #expect(throws: VerificationError(.missingMarkerOID, "")) { try ReceiptEngine.checkSigningCertificate(leaf) }
    }

    @Test(.sharedVectors("receipts")) func theIOS6TransactionReceiptIsNamedAsSuch() throws {
        let error = try #require(
            Self.verifier.rejection(try SharedReceipts.bytes("negative/ios6-transaction-receipt.plist")))
        #expect(error.code == .receiptNotAReceipt)
        #expect(error.reason.contains("iOS 6"))
    }

    static let knownDevice = "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"
    static let knownDeviceReceipt = "real/sandbox-2025-12-26-dev.bonzer.weeka.app.der"

    static func uuidBytes(_ text: String) throws -> [UInt8] {
        let uuid = try #require(UUID(uuidString: text)).uuid
        return withUnsafeBytes(of: uuid) { Array($0) }
    }

    @Test(.sharedVectors("receipts")) func theKnownDeviceReceiptPassesTheDeviceCheck() throws {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.deviceIdentifier = try Self.uuidBytes(Self.knownDevice)
        let verified = try ReceiptVerifier(configuration: configuration).verify(
            try SharedReceipts.bytes(Self.knownDeviceReceipt))
        #expect(verified.receipt.bundleId == "dev.bonzer.weeka.app")
    }

    @Test(.sharedVectors("receipts")) func theKnownDeviceReceiptFailsTheDeviceCheckWithAnotherIdentifier() throws {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.deviceIdentifier = try Self.uuidBytes("956328D9-CC6A-47F4-BE40-6953FB0AB6C8")
        let verifier = try ReceiptVerifier(configuration: configuration)
        #expect(
            verifier.rejection(try SharedReceipts.bytes(Self.knownDeviceReceipt))?.code == .receiptDeviceHashMismatch)
    }

    @Test(.sharedVectors("receipts")) func hashingTheBareBundleIdStringInsteadOfItsEncodingDoesNotMatch() throws {
        let receipt = try Self.verifier.verify(try SharedReceipts.bytes(Self.knownDeviceReceipt)).receipt
        let device = try Self.uuidBytes(Self.knownDevice)
        let input = device + receipt.opaqueValue! + Array(receipt.bundleId.utf8)
        let bare = ReceiptCrypto.hash(.sha1, of: input, segments: [0..<input.count])
        #expect(bare != receipt.sha1Hash)
        #expect(receipt.matchesDevice(device))
    }

    @Test(.sharedVectors("receipts")) func aWrongBundleIdOrVersionIsRefused() throws {
        let bytes = try SharedReceipts.bytes("real/production-2023-08-28-com.ideasoncanvas.mindnode.macos.der")
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.bundleId = "com.ideasoncanvas.mindnode.macos"
        configuration.applicationVersion = "2023.2.2"
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes) == nil)
        configuration.bundleId = "com.example.other"
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes)?.code == .wrongBundleId)
        configuration.bundleId = nil
        configuration.applicationVersion = "2023.2.3"
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes)?.code == .receiptWrongAppVersion)
    }

    @Test(.sharedVectors("receipts")) func aReceiptOfAnotherTrustStoreIsUntrusted() throws {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [AppleRootCertificates.rootCAG3]
        let verifier = try ReceiptVerifier(configuration: configuration)
        let bytes = try SharedReceipts.bytes("real/production-2023-08-28-com.ideasoncanvas.mindnode.macos.der")
        #expect(verifier.rejection(bytes)?.code == .untrustedChain)
    }

    @Test(.sharedVectors("receipts")) func base64TextAndJSONBodiesHoldTheSameReceipt() throws {
        let bytes = try SharedReceipts.bytes("real/sandbox-2016-07-23-com.zhihu.test.der")
        let text = String(decoding: Base64.encodeStandard(bytes), as: UTF8.self)
        #expect(try ReceiptInput.receipt(in: Array(text.utf8)) == bytes)
        #expect(try ReceiptInput.receipt(in: Array("{\"receipt-data\":\"\(text)\",\"password\":\"x\"}".utf8)) == bytes)
        #expect(try ReceiptInput.receipt(in: Array("{\"status\":0,\"latest_receipt\":\"\(text)\"}".utf8)) == bytes)
        #expect(try ReceiptInput.receipt(in: Array("{\"r\":\"\(text)\"}".utf8), field: "r") == bytes)
        #expect(try Self.verifier.verify(base64: Array(text.utf8)).receipt.bundleId == "com.zhihu.test")
        // Line-wrapped base64, as `base64` writes it.
        var wrapped = Array(text.utf8)
        for index in stride(from: 76, to: wrapped.count, by: 77) { wrapped.insert(0x0A, at: index) }
        #expect(try ReceiptInput.receipt(in: wrapped) == bytes)
    }

    @Test func theEmbeddedAppleIncRootIsTheFileInCertificates() throws {
        let file = try TestVectors.bytes("../Certificates/AppleIncRootCertificate.cer")
        #expect(AppleRootCertificates.appleIncRoot == file)
        let fingerprint = SHA256Digest.hash(AppleRootCertificates.appleIncRoot).map { String(format: "%02X", $0) }
            .joined(separator: ":")
        #expect(
            fingerprint
                == "B0:B1:73:0E:CB:C7:FF:45:05:14:2C:49:F1:29:5E:6E:DA:6B:CA:ED:7E:2C:68:C5:BE:91:B5:A1:10:01:F0:24")
    }

    @Test(.sharedVectors("receipts")) func theReadmeReceiptExampleVerifiesARealReceipt() throws {
        let receiptData = Base64.encodeStandard(
            try SharedReceipts.bytes("real/sandbox-2025-12-26-dev.bonzer.weeka.app.der"))
        let deviceUUIDBytes = withUnsafeBytes(of: UUID(uuidString: "956328D9-CC6A-47F4-BE40-6953FB0AB6C7")!.uuid) {
            Array($0)
        }

        // Apple Inc. Root, at the creation date; this app's receipts from this environment only
        var configuration = ReceiptVerifier.Configuration(bundleId: "dev.bonzer.weeka.app", environment: .sandbox)
        configuration.deviceIdentifier = deviceUUIDBytes  // optional: checks the hash (attribute 5)
        let verifier = try ReceiptVerifier(configuration: configuration)
        let verified = try verifier.verify(base64: receiptData)  // or verify(derBytes)
        var seen: [String] = []
        for purchase in verified.receipt.inApp {
            seen.append(
                "\(purchase.productId ?? "") \(purchase.transactionId ?? "") \(purchase.purchaseDate?.iso8601 ?? "")")
        }
        #expect(seen.count == 2)
        #expect(seen.allSatisfy { $0.hasPrefix("dev.bonzer.weeka.app") })
    }
}
