import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI
@testable import VouchReceipts

/// Receipts minted with a private Apple-shaped RSA PKI: what a verifier must accept and refuse,
/// code by code.
@Suite struct ReceiptMintedTests {
    static let created = Date(timeIntervalSince1970: 1_700_000_000)
    static let validity = MintValidity(
        notBefore: Date(timeIntervalSince1970: 1_600_000_000), notAfter: Date(timeIntervalSince1970: 1_800_000_000))
    static let authority = try! MintReceiptAuthority.generate(.init(validity: validity))
    static let xcodeAuthority = try! MintReceiptAuthority.generateXcode(validity: validity)
    static let signer = MintReceiptSigner(authority: authority)
    static let content = MintReceiptContent.sample(receiptCreationDate: created, inAppCount: 5)

    static func verifier(_ change: (inout ReceiptVerifier.Configuration) throws -> Void = { _ in }) throws
        -> ReceiptVerifier
    {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        try change(&configuration)
        return try ReceiptVerifier(configuration: configuration)
    }

    @Test(arguments: MintReceiptSigner.Digest.allCases)
    func aMintedReceiptVerifiesAndDecodesToWhatWasMinted(digest: MintReceiptSigner.Digest) throws {
        var content = Self.content
        content.inApp[1].cancellationDate = Self.created.addingTimeInterval(-60)
        content.inApp[2].promotionalOfferId = "offer-1"
        content.inApp[2].isInTrialPeriod = true
        content.extraAttributes = [(25, ReceiptDER.integer(3)), (8, ReceiptDER.ia5String(""))]
        let bytes = try Self.signer.sign(content, digest: digest)
        let verified = try Self.verifier { $0.deviceIdentifier = content.deviceIdentifier }.verify(bytes)
        let receipt = verified.receipt
        #expect(verified.digestAlgorithm == (digest == .sha1 ? "SHA-1" : "SHA-256"))
        #expect(receipt.bundleId == content.bundleId)
        #expect(receipt.receiptType == .productionSandbox)
        #expect(receipt.applicationVersion == "1")
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.receiptCreationDate?.milliseconds == 1_700_000_000_000)
        #expect(verified.validationTime.milliseconds == 1_700_000_000_000)
        // The SET OF is in DER order, as Apple's: look purchases up by transaction id.
        let byId = Dictionary(uniqueKeysWithValues: receipt.inApp.map { ($0.transactionId!, $0) })
        #expect(Set(byId.keys) == Set(content.inApp.map(\.transactionId)))
        for minted in content.inApp {
            #expect(byId[minted.transactionId]?.productId == minted.productId)
            #expect(
                byId[minted.transactionId]?.purchaseDate?.milliseconds == Int64(
                    minted.purchaseDate.timeIntervalSince1970) * 1000)
        }
        let cancelled = try #require(byId[content.inApp[1].transactionId])
        let first = try #require(byId[content.inApp[0].transactionId])
        let subscription = try #require(byId[content.inApp[2].transactionId])
        #expect(cancelled.cancellationDate?.milliseconds == 1_699_999_940_000)
        #expect(first.cancellationDate == nil)
        #expect(first.subscriptionExpirationDate == nil)
        #expect(subscription.subscriptionExpirationDate != nil)
        #expect(subscription.promotionalOfferId == "offer-1")
        #expect(subscription.isInTrialPeriod == true)
        #expect(first.isInTrialPeriod == false)
        #expect(receipt.attribute(25)?.value == [0x02, 0x01, 0x03])
        #expect(receipt.jsonObject["otherAttributes"]?.arrayValue?.count == 2)
    }

    /// One receipt verifier for several environments: each receipt is checked against the one
    /// its type (attribute 0) names, and its result says which.
    @Test func oneVerifierAcceptsEachOfItsEnvironmentsAndSaysWhich() throws {
        let both = try Self.verifier { $0.environments = [.production, .sandbox] }
        let sandboxOnly = try Self.verifier { $0.environment = .sandbox }
        let expected: [(String, AppStoreEnvironment)] = [
            ("Production", .production), ("ProductionVPP", .production), ("ProductionSandbox", .sandbox),
            ("ProductionVPPSandbox", .sandbox),
        ]
        for (type, environment) in expected {
            var content = Self.content
            content.receiptType = type
            let receipt = try Self.signer.sign(content)
            #expect(try both.verify(receipt).environment == environment, "\(type)")
            #expect(sandboxOnly.rejection(receipt)?.code == (environment == .sandbox ? nil : .wrongEnvironment))
        }
        var production = Self.content
        production.receiptType = "Production"
        #expect(
            sandboxOnly.rejection(try Self.signer.sign(production))?.reason
                == "the receipt's type is Production (Production), expected Sandbox")
        let xcodeOrProduction = try Self.verifier { $0.environments = [.production, .xcode] }
        let error = xcodeOrProduction.rejection(try Self.signer.sign(Self.content))
        #expect(error?.code == .wrongEnvironment)
        #expect(error?.reason == "the receipt's type is ProductionSandbox (Sandbox), expected Production or Xcode")
    }

    @Test func aReceiptVerifiesFromItsBase64StringAndFromData() throws {
        let receipt = try Self.signer.sign(Self.content)
        let verifier = try Self.verifier()
        let text = String(decoding: Base64.encodeStandard(receipt), as: UTF8.self)
        #expect(try verifier.verify(base64: text).payload == (try verifier.verify(receipt)).payload)
        #expect(try verifier.verify(base64: Data(text.utf8)).payload == (try verifier.verify(receipt)).payload)
        #expect(try verifier.verify(Data(receipt)).payload == (try verifier.verify(receipt)).payload)
        #expect(throws: VerificationError(.receiptNotAReceipt, "")) { try verifier.verify(base64: text + "\n") }
    }

    /// The app Apple ID of the shared trust configuration is the app item id (attribute 1) of a
    /// Production receipt; Sandbox receipts carry 0 there and are not checked against it.
    @Test func aProductionReceiptMustCarryTheConfiguredAppAppleId() throws {
        var content = Self.content
        content.receiptType = "Production"
        content.appItemId = 1_234_567_890
        let production = try Self.signer.sign(content)
        #expect(try Self.verifier { $0.appAppleId = 1_234_567_890 }.rejection(production) == nil)
        let error = try Self.verifier { $0.appAppleId = 42 }.rejection(production)
        #expect(error?.code == .wrongAppAppleId)
        #expect(error?.reason == "the receipt's app item id (attribute 1) is 1234567890, expected 42")
        #expect(try Self.verifier().rejection(production) == nil)

        content.receiptType = "ProductionSandbox"
        content.appItemId = 0
        #expect(try Self.verifier { $0.appAppleId = 42 }.rejection(try Self.signer.sign(content)) == nil)
    }

    /// Attribute 32 (preorder date) and 21 (expiration date) are ISO 8601 text: typed as
    /// timestamps, written in the record and in the `verifyReceipt` shape, and not repeated
    /// among the other attributes.
    @Test func theExpirationAndPreorderDatesAreDecoded() throws {
        var content = Self.content
        content.receiptExpirationDate = Self.created.addingTimeInterval(86_400)
        content.extraAttributes = [(32, ReceiptDER.ia5String("2023-11-01T08:00:00Z"))]
        let receipt = try Self.verifier().verify(try Self.signer.sign(content)).receipt
        #expect(receipt.preorderDate?.milliseconds == 1_698_825_600_000)
        #expect(receipt.receiptExpirationDate?.milliseconds == 1_700_086_400_000)
        var writer = JSONWriter()
        receipt.writeJSON(into: &writer)
        let record = try StrictJSON.parse(writer.bytes).objectValue
        #expect(record?["preorderDate"]?.int64Value == 1_698_825_600_000)
        #expect(record?["receiptExpirationDate"]?.int64Value == 1_700_086_400_000)
        #expect(record?["otherAttributes"] == nil)
        #expect(receipt.jsonObject["preorderDate"]?.int64Value == 1_698_825_600_000)
        let old = receipt.verifyReceiptResponse["receipt"]?.objectValue
        #expect(old?["preorder_date_ms"]?.stringValue == "1698825600000")
        #expect(old?["preorder_date"]?.stringValue == "2023-11-01 08:00:00 Etc/GMT")

        content.extraAttributes = [(32, ReceiptDER.ia5String("1 November 2023"))]
        #expect(try Self.verifier().rejection(try Self.signer.sign(content))?.code == .receiptMalformedPayload)
    }

    @Test(arguments: MintReceiptDefect.allCases)
    func everyMintedDefectIsRejectedWithItsCode(defect: MintReceiptDefect) throws {
        let bytes = try Self.signer.sign(Self.content, defect: defect)
        #expect(try Self.verifier().rejection(bytes)?.code.rawValue == defect.expectedCode)
    }

    @Test func aSigningCertificateWithoutTheReceiptMarkerIsRefused() throws {
        var options = MintReceiptAuthorityOptions(validity: Self.validity)
        options.includeLeafMarker = false
        let authority = try MintReceiptAuthority.generate(options)
        let bytes = try MintReceiptSigner(authority: authority).sign(Self.content)
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes)?.code == .missingMarkerOID)
    }

    @Test func anIntermediateWithoutTheWWDRMarkerIsRefused() throws {
        var options = MintReceiptAuthorityOptions(validity: Self.validity)
        options.includeIntermediateMarker = false
        let authority = try MintReceiptAuthority.generate(options)
        let bytes = try MintReceiptSigner(authority: authority).sign(Self.content)
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes)?.code == .missingMarkerOID)
    }

    @Test func aSigningKeyUnder2048BitsIsRefused() throws {
        var options = MintReceiptAuthorityOptions(validity: Self.validity)
        options.leafBits = 1024
        let authority = try MintReceiptAuthority.generate(options)
        let bytes = try MintReceiptSigner(authority: authority).sign(Self.content)
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        #expect(try ReceiptVerifier(configuration: configuration).rejection(bytes)?.code == .wrongKeyType)
    }

    @Test func theChainIsValidatedAtTheCreationDateNowOrAFixedInstant() throws {
        var content = Self.content
        content.receiptCreationDate = Date(timeIntervalSince1970: 1_500_000_000)  // before the leaf's notBefore
        let early = try Self.signer.sign(content)
        #expect(try Self.verifier().rejection(early)?.code == .certificateNotYetValid)
        #expect(
            try Self.verifier { $0.validationTime = .fixed(Timestamp(milliseconds: 1_700_000_000_000)) }.rejection(
                early) == nil)
        content.receiptCreationDate = Date(timeIntervalSince1970: 1_900_000_000)  // after its notAfter
        let late = try Self.signer.sign(content)
        #expect(try Self.verifier().rejection(late)?.code == .certificateExpired)
        // The real clock, read once per call: the minted chain is valid until 2027.
        #expect(try Self.verifier { $0.validationTime = .now }.rejection(try Self.signer.sign(Self.content)) == nil)
    }

    @Test func aReceiptBringingItsOwnRootIsNotTrustedForIt() throws {
        let bytes = try Self.signer.sign(Self.content)
        // The embedded Apple Inc. Root only: the minted root inside the receipt does not count.
        #expect(try ReceiptVerifier(configuration: .acceptingAnyApp()).rejection(bytes)?.code == .untrustedChain)
    }

    @Test func xcodeStyleReceiptsAreBERAndNeedTheirCertificateTrusted() throws {
        var content = Self.content
        content.xcodeStyle = true
        content.receiptType = "Xcode"
        let bytes = try MintReceiptSigner(authority: Self.xcodeAuthority).sign(content)
        #expect(bytes.starts(with: [0x30, 0x80]))
        #expect(try Self.verifier().rejection(bytes)?.code == .xcodeNotTrusted)
        let trusted = try Self.verifier { $0.xcodeCertificates = [try Self.xcodeAuthority.anchorCertificate()] }
        let verified = try trusted.verify(bytes)
        #expect(verified.isXcode)
        #expect(verified.receipt.inApp.count == 5)
        // Another Xcode certificate than the trusted one.
        let other = try MintReceiptAuthority.generateXcode(validity: Self.validity)
        let otherTrusted = try Self.verifier { $0.xcodeCertificates = [try other.anchorCertificate()] }
        #expect(otherTrusted.rejection(bytes)?.code == .untrustedChain)
        // An Xcode-signed receipt claiming to be Production.
        content.receiptType = "Production"
        #expect(
            trusted.rejection(try MintReceiptSigner(authority: Self.xcodeAuthority).sign(content))?.code
                == .wrongEnvironment)
    }

    @Test func aChainSignedReceiptSayingXcodeIsRefused() throws {
        var content = Self.content
        content.receiptType = "Xcode"
        #expect(try Self.verifier().rejection(try Self.signer.sign(content))?.code == .wrongEnvironment)
    }

    @Test func aBERContainerAroundAnAppStoreChainVerifies() throws {
        let bytes = try Self.signer.sign(payload: Self.content.encoded(), digest: .sha256, ber: true)
        #expect(try ReceiptContainer(bytes).usesIndefiniteLengths)
        #expect(try Self.verifier().verify(bytes).receipt.inApp.count == 5)
    }

    @Test func aRepeatedInAppAttributeIsRefused() throws {
        var content = Self.content
        var purchase = content.inApp[0]
        purchase.promotionalOfferId = "x"
        content.inApp = [purchase]
        var payload = content.encoded()
        // Add a second 1702 inside the in-app set by minting its attributes by hand.
        let inApp = MintReceiptContent.attributeSet(
            [
                (1702, ReceiptDER.utf8String("a")), (1702, ReceiptDER.utf8String("b")),
                (1703, ReceiptDER.utf8String("1")),
            ], byType: true)
        var attributes = content
        attributes.inApp = []
        attributes.extraAttributes = [(17, inApp)]
        payload = attributes.encoded()
        let bytes = try Self.signer.sign(payload: payload)
        #expect(try Self.verifier().rejection(bytes)?.code == .receiptDuplicateAttribute)
    }

    @Test func aMissingCreationDateCannotDateTheChain() throws {
        let attributes = MintReceiptContent.attributeSet(
            [(2, ReceiptDER.utf8String("com.example.vouch"))], byType: true)
        let bytes = try Self.signer.sign(payload: attributes)
        #expect(try Self.verifier().rejection(bytes)?.code == .receiptMalformedPayload)
        #expect(
            try Self.verifier { $0.validationTime = .fixed(Timestamp(milliseconds: 1_700_000_000_000)) }.verify(bytes)
                .receipt.bundleId == "com.example.vouch")
    }

    @Test func aKnownAttributeOfTheWrongTypeIsMalformed() throws {
        var content = Self.content
        content.extraAttributes = [(12, ReceiptDER.integer(7))]
        let attributes = MintReceiptContent.attributeSet(
            [(2, ReceiptDER.utf8String("com.example.vouch")), (12, ReceiptDER.integer(7))], byType: true)
        let bytes = try Self.signer.sign(payload: attributes)
        let error = try #require(try Self.verifier().rejection(bytes))
        #expect(error.code == .receiptMalformedPayload)
        #expect(error.reason.contains("attribute 12"))
    }

    @Test func everyTruncationOfAReceiptIsRejectedAsMalformed() throws {
        let bytes = try Self.signer.sign(Self.content)
        let ber = try Self.signer.sign(payload: Self.content.encoded(), digest: .sha256, ber: true)
        let verifier = try Self.verifier()
        for receipt in [bytes, ber] {
            for length in 0..<receipt.count {
                let code = verifier.rejection(Array(receipt.prefix(length)))?.code
                #expect(
                    code == .receiptMalformedContainer || code == .receiptNotAReceipt,
                    "prefix of \(length) bytes: \(String(describing: code))")
            }
        }
    }

    @Test func deepNestingAndHugeLengthsAreRefusedWithoutRecursingForever() throws {
        let verifier = try Self.verifier()
        let deep = Array(repeating: [UInt8]([0x30, 0x80]), count: 10_000).flatMap { $0 }
        #expect(verifier.rejection(deep)?.code == .receiptNotAReceipt)
        let signedDataDeep =
            [0x30, 0x80, 0x06, 0x09] + ReceiptContainer.oidSignedData
            + Array(repeating: [UInt8]([0xA0, 0x80]), count: 10_000).flatMap { $0 }
        // The outer indefinite length is walked to its end first, so the depth limit trips there.
        #expect([.receiptNotAReceipt, .receiptMalformedContainer].contains(verifier.rejection(signedDataDeep)?.code))
        #expect(verifier.rejection([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x06])?.code == .receiptNotAReceipt)
        #expect(verifier.rejection([0x30, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00])?.code == .receiptNotAReceipt)
    }

    @Test func aReceiptOneByteOverTheSizeLimitIsRefusedBeforeParsing() throws {
        let bytes = try Self.signer.sign(Self.content)
        #expect(try Self.verifier { $0.maximumReceiptSize = bytes.count }.rejection(bytes) == nil)
        #expect(
            try Self.verifier { $0.maximumReceiptSize = bytes.count - 1 }.rejection(bytes)?.code == .receiptTooLarge)
    }

    @Test func eightCertificatesPassAndNineAreTooMany() throws {
        var parts = try Self.signer.parts(payload: Self.content.encoded(), digest: .sha256, ber: false)
        let root = parts.certificates[2]
        parts.certificates += Array(repeating: root, count: 5)
        #expect(try Self.verifier().rejection(parts.encoded()) == nil)
        parts.certificates.append(root)
        let error = try #require(try Self.verifier().rejection(parts.encoded()))
        #expect(error.code == .receiptMalformedContainer)
        #expect(error.reason.contains("more than 8 certificates"))
    }

    @Test func theSignerChainIsValidatedOnceAndThenCached() throws {
        let verifier = try Self.verifier()
        let first = try Self.signer.sign(
            MintReceiptContent.sample(receiptCreationDate: Self.created, inAppCount: 1, seed: 1))
        let second = try Self.signer.sign(
            MintReceiptContent.sample(receiptCreationDate: Self.created, inAppCount: 2, seed: 2))
        _ = try verifier.verify(first)
        let container = try ReceiptContainer(second)
        let signer = try verifier.engine.signer(for: container)
        #expect(signer.validatedWindow.withLock { $0 } != nil)
        _ = try verifier.verify(second)
        #expect(try verifier.engine.signer(for: container) === signer)
    }
}
