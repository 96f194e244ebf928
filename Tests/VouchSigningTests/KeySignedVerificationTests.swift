import Foundation
import Testing
import Vouch
import VouchOpenSSL
import VouchSigning
import VouchTestSupport

/// `SigningPublicKey.verify`: a JWS signed with a known key, every rule with the code it fails with.
@Suite struct KeySignedVerificationTests {
    static let privateKey = try! PrivateKey.read(pem: Array(TestKeys.pem.utf8))
    static let now = Timestamp(milliseconds: 1_700_000_000_000)

    /// A token of exactly these header and claims texts, signed with the test key.
    static func token(header: String = #"{"alg":"ES256","kid":"K","typ":"JWT"}"#, claims: String) throws -> String {
        let input = TokenParts.encode(header) + "." + TokenParts.encode(claims)
        let signature = try privateKey.signatureOfSHA256(Array(input.utf8))
        return input + "." + TokenParts.encode(signature)
    }

    static func rejection(_ token: String, at time: ValidationTime = .fixed(now), bundleId: String? = nil)
        -> VerificationError.Code?
    {
        do {
            _ = try TestKeys.publicKey.verify(token, at: time, bundleId: bundleId)
            return nil
        } catch {
            #expect(!error.reason.isEmpty)
            return error.code
        }
    }

    @Test func aTokenOfTheKeyVerifiesAndGivesItsHeaderAndClaims() throws {
        let token = try Self.token(claims: #"{"iat":1699999999,"exp":1700000001,"bid":"com.example.app","x":[1]}"#)
        let verified = try TestKeys.publicKey.verify(token, at: .fixed(Self.now), bundleId: "com.example.app")
        #expect(verified.header["kid"] == "K")
        #expect(verified.claims["x"] == [1])
        #expect(verified.validationTime == Self.now)
    }

    @Test func anotherKeysSignatureIsBadSignature() throws {
        let token = try PromotionalOfferV2SignatureCreator(
            signingKey: TestKeys.other, keyId: "K", issuerId: "I", bundleId: "B"
        ).createSignature(productId: "P", offerIdentifier: "O").token
        #expect(Self.rejection(token, at: .now) == .badSignature)
    }

    @Test func aChangedClaimIsBadSignature() throws {
        let token = try Self.token(claims: #"{"bid":"a"}"#)
        let parts = TokenParts.segments(token)
        #expect(
            Self.rejection([parts[0], TokenParts.encode(#"{"bid":"b"}"#), parts[2]].joined(separator: "."))
                == .badSignature)
    }

    @Test(arguments: [
        (#"{"alg":"none"}"#, VerificationError.Code.unsupportedAlgorithm),
        (#"{"alg":"HS256"}"#, .unsupportedAlgorithm),
        (#"{"kid":"K"}"#, .unsupportedAlgorithm),
        (#"{"alg":"ES256","crit":["exp"]}"#, .critPresent),
        (#"{"alg":"ES256","kid":7}"#, .badHeaderJSON),
        (#"{"alg":"ES256","alg":"ES256"}"#, .badHeaderJSON),
        (#"{"alg":"ES256","x":[[[[[]]]]]}"#, .jsonTooDeep),
    ])
    func aHeaderBreakingARuleIsNamed(header: String, code: VerificationError.Code) throws {
        #expect(Self.rejection(try Self.token(header: header, claims: "{}")) == code)
    }

    @Test func x5cIsNotRead() throws {
        let token = try Self.token(header: #"{"alg":"ES256","x5c":["not a certificate"]}"#, claims: "{}")
        #expect(Self.rejection(token) == nil)
    }

    @Test(arguments: [
        ("[1]", VerificationError.Code.badPayloadJSON), (#"{"exp":"soon"}"#, .badPayloadJSON),
        (#"{"iat":1e400}"#, .badPayloadJSON), (#"{"exp":1700000000}"#, .tokenExpired),
        (#"{"exp":1699999999.999}"#, .tokenExpired), (#"{"nbf":1700000000.001}"#, .tokenNotYetValid),
        (#"{"iat":1700000001}"#, .tokenNotYetValid),
    ])
    func aTimeClaimIsCheckedAtTheInstant(claims: String, code: VerificationError.Code) throws {
        #expect(Self.rejection(try Self.token(claims: claims)) == code)
    }

    @Test func theBoundaryInstantsAreOnTheirDocumentedSides() throws {
        #expect(
            Self.rejection(try Self.token(claims: #"{"exp":1700000000.001,"nbf":1700000000,"iat":1700000000}"#)) == nil)
    }

    @Test func signedDateIsTheTokensOwnIat() throws {
        let token = try Self.token(claims: #"{"iat":1600000000,"exp":1600000060}"#)
        #expect(Self.rejection(token, at: .signedDate) == nil)
        #expect(Self.rejection(token, at: .now) == .tokenExpired)
    }

    @Test func bidIsCheckedOnlyWhenABundleIdIsGiven() throws {
        let token = try Self.token(claims: #"{"bid":"com.example.app"}"#)
        #expect(Self.rejection(token) == nil)
        #expect(Self.rejection(token, bundleId: "com.example.app") == nil)
        #expect(Self.rejection(token, bundleId: "com.example.other") == .wrongBundleId)
        #expect(Self.rejection(try Self.token(claims: "{}"), bundleId: "com.example.app") == .wrongBundleId)
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "..", "e30.e30."])
    func aTokenOfTheWrongShapeIsMalformed(token: String) {
        #expect(Self.rejection(token) == .malformedToken)
    }

    @Test func aTokenOver64KiBIsTooLarge() throws {
        let token = try Self.token(claims: #"{"pad":""# + String(repeating: "a", count: 64 * 1024) + #""}"#)
        #expect(Self.rejection(token) == .tokenTooLarge)
    }

    @Test func everyTruncationIsRefused() throws {
        let token = try Self.token(claims: #"{"iat":1699999999,"bid":"b"}"#)
        for length in 0..<token.utf8.count {
            #expect(Self.rejection(String(token.utf8.prefix(length))!) != nil)
        }
    }

    @Test func aVersion1SignatureOfAnotherMessageOrKeyIsInvalid() throws {
        let signature = try Self.privateKey.derSignatureOfSHA256(Array("message".utf8))
        #expect(TestKeys.publicKey.isValidSignature(signature, of: Array("message".utf8)))
        #expect(!TestKeys.publicKey.isValidSignature(signature, of: Array("messagf".utf8)))
        #expect(!TestKeys.other.publicKey.isValidSignature(signature, of: Array("message".utf8)))
        #expect(!TestKeys.publicKey.isValidSignature(Array(signature.dropLast()), of: Array("message".utf8)))
    }
}
