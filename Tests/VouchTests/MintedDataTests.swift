import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI

/// The verifier against data minted with an Apple-shaped test PKI: the committed corpus in
/// TestVectors/minted, and authorities minted for the run.
struct MintedDataTests {
    static let folder = "minted"

    static func verifier(anchor: String = "ca", configure: (inout Verifier.Configuration) -> Void = { _ in }) throws
        -> Verifier
    {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try TestVectors.bytes("\(folder)/\(anchor)/root.der")]
        configure(&configuration)
        return try Verifier(configuration: configuration)
    }

    static func lines(_ file: String) throws -> [String] {
        try TestVectors.text("\(folder)/\(file)").split(separator: "\n").map(String.init)
    }

    /// The payload segment decoded without any check: what was signed.
    static func signedPayload(_ token: String) throws -> JSONObject {
        try StrictJSON.parseObject(Base64.decodeURL(TokenParts.segments(token)[1].utf8) ?? [])
    }

    @Test(arguments: PayloadKind.allCases)
    func everyMintedKindVerifiesAndDecodesToWhatWasSigned(kind: PayloadKind) throws {
        let verifier = try Self.verifier()
        let tokens = try Self.lines("\(kind.rawValue).txt")
        #expect(tokens.count == 5)
        for token in tokens {
            let verified = try verifier.verify(token)
            #expect(verified.kind == kind)
            #expect(verified.payload == (try Self.signedPayload(token)))
            if kind == .notification {
                #expect(!verified.nested.isEmpty)
            }
        }
    }

    @Test func anExpiredLeafFailsAtItsSignedDate() throws {
        let verifier = try Self.verifier(anchor: "ca-expired-leaf")
        for token in try Self.lines("expired-leaf-transaction.txt") {
            let error = verifier.rejection(token)
            #expect(error?.code == .certificateExpired)
            #expect(error?.reason.hasPrefix("leaf certificate: certificate has expired") == true)
        }
    }

    @Test func aLeafNotYetValidFails() throws {
        let verifier = try Self.verifier(anchor: "ca-not-yet-valid-leaf")
        for token in try Self.lines("not-yet-valid-leaf-transaction.txt") {
            #expect(verifier.rejection(token)?.code == .certificateNotYetValid)
        }
    }

    @Test func chainsWithoutAMarkerFailWithTheMarkerCode() throws {
        for (anchor, file, which) in [
            ("ca-no-leaf-oid", "no-leaf-oid-transaction.txt", "leaf"),
            ("ca-no-intermediate-oid", "no-intermediate-oid-transaction.txt", "intermediate"),
        ] {
            let verifier = try Self.verifier(anchor: anchor)
            for token in try Self.lines(file) {
                let error = verifier.rejection(token)
                #expect(error?.code == .missingMarkerOID)
                #expect(error?.reason.hasPrefix("the \(which) certificate lacks") == true)
            }
        }
    }

    @Test func anotherRootIsUntrusted() throws {
        let otherRoot = try Self.verifier(anchor: "ca-expired-leaf")
        for token in try Self.lines("transaction.txt") {
            #expect(otherRoot.rejection(token)?.code == .untrustedChain)
        }
        #expect(
            try Verifier(configuration: .acceptingAnyApp()).rejection(try Self.lines("transaction.txt")[0])?.code
                == .untrustedChain)
    }

    @Test func everyTamperedTokenFailsWithItsStatedCode() throws {
        let appStore = try Self.verifier()
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try TestVectors.bytes("\(Self.folder)/xcode/xcode.der")]
        let xcode = try Verifier(configuration: configuration)
        var count = 0
        for (file, verifier) in [
            ("tampered.tsv", appStore), ("tampered-notification.tsv", appStore), ("tampered-xcode.tsv", xcode),
        ] {
            for line in try Self.lines(file) {
                let columns = line.split(separator: "\t").map(String.init)
                #expect(columns.count == 2)
                #expect(verifier.rejection(columns[0])?.code.rawValue == columns[1], "\(file): \(columns[1])")
                count += 1
            }
        }
        #expect(count == 15)
    }

    @Test func xcodeMintedDataNeedsTheXcodeCertificate() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [try TestVectors.bytes("\(Self.folder)/xcode/xcode.der")]
        let trusted = try Verifier(configuration: configuration)
        for kind in ["transaction", "renewal-info", "app-transaction"] {
            for token in try Self.lines("xcode-\(kind).txt") {
                #expect(try trusted.verify(token).kind.rawValue == kind)
                #expect(try Verifier(configuration: .acceptingAnyApp()).rejection(token)?.code == .xcodeNotTrusted)
            }
        }
    }

    // MARK: Minted for this run

    static let validity = MintValidity(
        notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
    static let signingDate = MintDate.parse("2025-06-01T12:00:00Z")!
    static let authority = try! MintAuthority.generate(MintAuthorityOptions(validity: validity))
    static let signer = try! MintSigner(authority: authority)

    static func runVerifier(_ configure: (inout Verifier.Configuration) -> Void = { _ in }) throws -> Verifier {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        configure(&configuration)
        return try Verifier(configuration: configuration)
    }

    @Test(arguments: MintKind.allCases)
    func freshlyMintedPayloadsRoundTrip(kind: MintKind) throws {
        let generator = MintGenerator(seed: 42, date: Self.signingDate)
        let verifier = try Self.runVerifier()
        for index in 0..<20 {
            let payload = try generator.payload(kind, index: index, signer: Self.signer)
            let verified = try verifier.verify(try Self.signer.sign(payload: payload))
            #expect(verified.kind.rawValue == kind.rawValue)
            #expect(verified.payload == payload)
        }
    }

    @Test func aSelfSignedLeafInFrontOfARealIntermediateIsUntrusted() throws {
        let impostor = try MintAuthority.generateXcode(validity: Self.validity)
        var chain = try Self.authority.certificateChain()
        chain[0] = try impostor.certificateChain()[0]
        let header = JSONObject([
            .init("alg", "ES256"),
            .init("x5c", .array(chain.map { .string(String(decoding: Base64.encodeStandard($0), as: UTF8.self)) })),
        ])
        let signer = MintSigner(authority: impostor, header: header)
        let token = try signer.sign(
            payload: try MintGenerator(seed: 1, date: Self.signingDate).payload(
                .transaction, index: 0, signer: Self.signer))
        let error = try Self.runVerifier().rejection(token)
        // The impostor is shaped like Xcode's certificate, whose basicConstraints say CA: the
        // leaf policy refuses it before any path is built.
        #expect(error?.code == .leafIsCA)
    }

    @Test func aNestedTokenThatDisagreesWithItsNotificationFailsWithTheNestedError() throws {
        let generator = MintGenerator(seed: 3, date: Self.signingDate)
        var notification = try generator.payload(.notification, index: 0, signer: Self.signer)
        var data = try #require(notification["data"]?.objectValue)
        var transaction = try Self.signedPayload(try #require(data["signedTransactionInfo"]?.stringValue))
        transaction["bundleId"] = "com.example.someone.else"
        data["signedTransactionInfo"] = .string(try Self.signer.sign(payload: transaction))
        notification["data"] = .object(data)
        let error = try Self.runVerifier().rejection(try Self.signer.sign(payload: notification))
        #expect(error?.code == .nestedTokenInvalid)
        #expect(error?.nested?.field == .signedTransactionInfo)
        #expect(error?.nested?.error.code == .wrongBundleId)
    }

    @Test func aNestedTokenFromAnotherChainFailsTheNotification() throws {
        let generator = MintGenerator(seed: 4, date: Self.signingDate)
        var notification = try generator.payload(.notification, index: 0, signer: Self.signer)
        var data = try #require(notification["data"]?.objectValue)
        let transaction = try Self.signedPayload(try #require(data["signedTransactionInfo"]?.stringValue))
        let stranger = try MintSigner(
            authority: try MintAuthority.generate(MintAuthorityOptions(validity: Self.validity)))
        data["signedTransactionInfo"] = .string(try stranger.sign(payload: transaction))
        notification["data"] = .object(data)
        let error = try Self.runVerifier().rejection(try Self.signer.sign(payload: notification))
        #expect(error?.code == .nestedTokenInvalid)
        #expect(error?.nested?.error.code == .untrustedChain)
    }

    @Test func theChainCacheStillRejectsATimeOutsideItsWindow() throws {
        let generator = MintGenerator(seed: 5, date: Self.signingDate)
        let verifier = try Self.runVerifier()
        let payload = try generator.payload(.transaction, index: 0, signer: Self.signer)
        #expect(verifier.rejection(try Self.signer.sign(payload: payload)) == nil)
        var late = payload
        late["signedDate"] = .number(String(Int64(MintDate.parse("2046-01-01")!.timeIntervalSince1970 * 1000)))
        #expect(verifier.rejection(try Self.signer.sign(payload: late))?.code == .certificateExpired)
        var early = payload
        early["signedDate"] = .number(String(Int64(MintDate.parse("2019-01-01")!.timeIntervalSince1970 * 1000)))
        #expect(verifier.rejection(try Self.signer.sign(payload: early))?.code == .certificateNotYetValid)
        #expect(verifier.rejection(try Self.signer.sign(payload: payload)) == nil)
    }

    @Test func oneChunkStillRejectsTheTimesOutsideItsSignersWindow() throws {
        // The tokens of a chunk share what they learn of their signer's validity: a token dated
        // outside the window must still fail, wherever it sits in the chunk.
        let generator = MintGenerator(seed: 5, date: Self.signingDate)
        let verifier = try Self.runVerifier()
        let payload = try generator.payload(.transaction, index: 0, signer: Self.signer)
        var late = payload
        late["signedDate"] = .number(String(Int64(MintDate.parse("2046-01-01")!.timeIntervalSince1970 * 1000)))
        var early = payload
        early["signedDate"] = .number(String(Int64(MintDate.parse("2019-01-01")!.timeIntervalSince1970 * 1000)))
        let tokens = try [payload, late, payload, early, payload].map {
            Array(try Self.signer.sign(payload: $0).utf8)[...]
        }
        let codes = verifier.verifyChunk(tokens).map { result -> VerificationError.Code? in
            if case .failure(let error) = result { return error.code } else { return nil }
        }
        #expect(codes == [nil, .certificateExpired, nil, .certificateNotYetValid, nil])
    }

    @Test func aMintedMultiseatTransactionVerifiesWithItsSeats() throws {
        let overrides = try [
            "quantity=8", "inAppOwnershipType=ASSIGNED", "additionalTransactionReason=SEAT_ADDITION",
            "multiSeatInfo.invitationManagement=APPLE", "multiSeatInfo.revokedSeatQuantity=2",
            #"multiSeatInfo.priceTiers=[{"price":9990,"quantity":5},{"price":7990,"quantity":3}]"#,
        ].map { try MintOverride(parsing: $0) }
        let generator = MintGenerator(seed: 7, date: Self.signingDate, overrides: overrides)
        let payload = try generator.payload(.transaction, index: 0, signer: Self.signer)
        let verified = try Self.runVerifier().verify(
            try Self.signer.sign(payload: payload), as: JWSTransactionDecodedPayload.self)
        #expect(verified.payload == payload)
        let transaction = verified.value
        #expect(transaction.quantity == 8)
        #expect(transaction.inAppOwnershipType == .assigned)
        #expect(transaction.additionalTransactionReason == .seatAddition)
        #expect(transaction.multiSeatInfo?.invitationManagement == .apple)
        #expect(transaction.multiSeatInfo?.revokedSeatQuantity == 2)
        #expect(transaction.multiSeatInfo?.priceTiers?.map(\.price) == [9990, 7990])
        #expect(transaction.multiSeatInfo?.priceTiers?.map(\.quantity) == [5, 3])

        // The documented types hold: a tier list that is not an array is refused before minting.
        let refused = #expect(throws: MintError.self) { try MintOverride(parsing: "multiSeatInfo.priceTiers=5") }
        #expect(refused?.code == .invalidOverride)
        #expect(refused?.reason.contains("multiSeatInfo.priceTiers is a JSON array") == true)
    }

    @Test func aMintedSeatRefundKeepsThePurchasersTransaction() throws {
        var overrides = try [
            "notificationType=REFUND", "subtype=SEATS",
            "data.signedTransactionInfo.multiSeatInfo.invitationManagement=DEVELOPER",
            "data.signedTransactionInfo.multiSeatInfo.revokedSeatQuantity=3",
        ].map { try MintOverride(parsing: $0) }
        // A seat-based refund leaves the transaction unrevoked: no revocation members.
        for member in ["revocationDate", "revocationReason", "revocationType", "revocationPercentage"] {
            overrides.append(MintOverride(path: ["data", "signedTransactionInfo", member], value: nil))
        }
        let generator = MintGenerator(seed: 8, date: Self.signingDate, overrides: overrides)
        let payload = try generator.payload(.notification, index: 0, signer: Self.signer)
        let verified = try Self.runVerifier().verify(
            try Self.signer.sign(payload: payload), as: ResponseBodyV2DecodedPayload.self)
        #expect(verified.value.notificationType == .refund)
        #expect(verified.value.subtype == .seats)
        let transaction = try #require(verified.transaction?.value)
        #expect(transaction.multiSeatInfo?.invitationManagement == .developer)
        #expect(transaction.multiSeatInfo?.revokedSeatQuantity == 3)
        #expect(transaction.revocationDate == nil)
        #expect(transaction.revocationReason == nil)
    }

    @Test func productionClaimsAreCheckedOnMintedData() throws {
        let generator = MintGenerator(
            seed: 6, date: Self.signingDate, overrides: [try MintOverride(parsing: "environment=Production")])
        let payload = try generator.payload(.appTransaction, index: 0, signer: Self.signer)
        let token = try Self.signer.sign(payload: payload)
        let appAppleId = try #require(payload["appAppleId"]?.int64Value)
        #expect(try Self.runVerifier { $0.appAppleId = appAppleId }.rejection(token) == nil)
        #expect(try Self.runVerifier { $0.appAppleId = appAppleId + 1 }.rejection(token)?.code == .wrongAppAppleId)
        #expect(try Self.runVerifier { $0.environment = .sandbox }.rejection(token)?.code == .wrongEnvironment)
    }
}
