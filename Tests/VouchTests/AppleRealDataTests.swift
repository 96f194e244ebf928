import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch

/// Real tokens signed by Apple, checked against the embedded Apple Root CA - G3.
struct AppleRealDataTests {
    let verifier = try! Verifier(configuration: .acceptingAnyApp())

    @Test func everyRealTokenVerifiesAtItsSignedDate() throws {
        let tokens = try TestVectors.realTokens()
        #expect(tokens.count == 29)
        for (name, token) in tokens {
            let verified: VerifiedPayload
            do {
                verified = try verifier.verify(token)
            } catch {
                Issue.record("\(name): \(error)")
                continue
            }
            let expectedKind: PayloadKind =
                switch name.split(separator: "/").last!.split(separator: "-").first! {
                case "transaction": .transaction
                case "renewalInfo": .renewalInfo
                case "notification": .notification
                case "appTransaction": .appTransaction
                default: .realtimeRequest
                }
            #expect(verified.kind == expectedKind, "\(name)")
            let dateField = expectedKind == .appTransaction ? "receiptCreationDate" : "signedDate"
            #expect(verified.validationTime.milliseconds == verified.payload[dateField]?.int64Value, "\(name)")
        }
    }

    @Test func notificationsHaveEveryNestedTokenVerified() throws {
        var nestedCount = 0
        for (name, token) in try TestVectors.realTokens() where name.contains("notification") {
            let verified = try verifier.verify(token)
            let data = verified.payload["data"]?.objectValue
            let present = ["signedTransactionInfo", "signedRenewalInfo"].filter { data?[$0] != nil }
            #expect(verified.nested.map(\.field.path) == present.map { "data.\($0)" }, "\(name)")
            for nested in verified.nested {
                #expect(nested.payload.validationTime.milliseconds == nested.payload.payload["signedDate"]?.int64Value)
                let expanded = verified.expandedPayload["data"]?.objectValue?[nested.field.member]
                #expect(expanded == .object(nested.payload.payload))
            }
            nestedCount += verified.nested.count
        }
        #expect(nestedCount >= 20)
    }

    @Test func expiredLeavesFailAtTheCurrentTimeWithTheExpiryCode() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.validationTime = .now
        let atNow = try Verifier(configuration: configuration)
        let now = Timestamp(Date())
        var expired = 0
        var valid = 0
        for (name, token) in try TestVectors.realTokens() {
            let leaf = try #require(try Inspection(token: token).certificates[0])
            let rejection = atNow.rejection(token)
            if try #require(leaf.notAfter) <= now {
                expired += 1
                // A notification's own leaf may still be valid while a nested one has expired.
                let code = rejection?.code == .nestedTokenInvalid ? rejection?.nested?.error.code : rejection?.code
                #expect(code == .certificateExpired, "\(name): \(String(describing: rejection))")
            } else if rejection == nil {
                valid += 1
            } else {
                #expect(
                    rejection?.nested?.error.code == .certificateExpired, "\(name): \(String(describing: rejection))")
            }
        }
        #expect(expired > 0)
        #expect(valid > 0)
    }

    /// Replacing any one character of a segment by another base64url character.
    @Test func flippingAnyCharacterFailsWithASpecificCode() throws {
        let headerCodes: Set<VerificationError.Code> = [
            .badBase64URL, .badHeaderJSON, .badCertificateEncoding, .badSignature, .unsupportedAlgorithm,
            .missingX5C, .wrongChainLength, .wrongKeyType, .leafIsCA,
        ]
        let bodyCodes: Set<VerificationError.Code> = [.badSignature, .badBase64URL]
        for (name, token) in try TestVectors.realTokens() {
            var bytes = Array(token.utf8)
            let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
            // The start of the header, then a stride through it (mostly certificate bytes).
            var positions = Array(0..<60) + Array(stride(from: 60, to: dots[0], by: 37)) + [dots[0] - 1]
            // Every seventh of the payload plus its last symbols, and all of the signature.
            positions += Array(stride(from: dots[0] + 1, to: dots[1] - 8, by: 7)) + Array(dots[1] - 8..<dots[1])
            positions += Array(dots[1] + 1..<bytes.count)
            for position in positions {
                let original = bytes[position]
                bytes[position] = original == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                let rejection = verifier.rejection(String(decoding: bytes, as: UTF8.self))
                bytes[position] = original
                let allowed = position < dots[0] ? headerCodes : bodyCodes
                #expect(
                    rejection.map { allowed.contains($0.code) } == true,
                    "\(name) at \(position): \(String(describing: rejection))")
            }
        }
    }

    @Test func embeddedRootEqualsTheCertificateFileAndItsPinnedFingerprint() throws {
        let file = try TestVectors.bytes("../Certificates/AppleRootCA-G3.cer")
        #expect(AppleRootCertificates.rootCAG3 == file)
        #expect(
            SHA256Digest.hash(AppleRootCertificates.rootCAG3).hexString
                == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
    }

    @Test func claimsAreCheckedWithTheirOwnCodes() throws {
        let token = try TestVectors.text("apple-real/real/transaction-production-1.jws")
        let payload = try verifier.verify(token).payload
        let bundleId = try #require(payload["bundleId"]?.stringValue)

        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.bundleId = bundleId
        configuration.environment = .production
        #expect(try Verifier(configuration: configuration).rejection(token) == nil)

        configuration.bundleId = bundleId + ".other"
        #expect(try Verifier(configuration: configuration).rejection(token)?.code == .wrongBundleId)

        configuration.bundleId = bundleId
        configuration.environment = .sandbox
        #expect(try Verifier(configuration: configuration).rejection(token)?.code == .wrongEnvironment)
    }

    @Test func appTransactionsCheckTheAppAppleIdInProduction() throws {
        let token = try TestVectors.text("apple-real/real/appTransaction-production-1.jws")
        let appAppleId = try #require(try verifier.verify(token).payload["appAppleId"]?.int64Value)
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.appAppleId = appAppleId
        #expect(try Verifier(configuration: configuration).rejection(token) == nil)
        configuration.appAppleId = appAppleId + 1
        #expect(try Verifier(configuration: configuration).rejection(token)?.code == .wrongAppAppleId)
    }

    @Test func forcingAnotherKindIsRejected() throws {
        let token = try TestVectors.text("apple-real/real/transaction-production-1.jws")
        #expect(verifier.rejection(token, as: .renewalInfo)?.code == .wrongKind)
        #expect(verifier.rejection(token, as: .transaction) == nil)
    }
}
