import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI

/// Every resource limit, at its edge: the largest input still goes on to the next check, one
/// more byte (or level, or certificate) gets the limit's own code.
struct LimitTests {
    let verifier = try! Verifier(configuration: .acceptingAnyApp())
    let token = try! TestVectors.text("apple-real/real/transaction-production-1.jws")

    static let mintedSigner = try! MintSigner(authority: MintAuthority.load(from: TestVectors.url("minted/ca")))

    static func mintedVerifier() throws -> Verifier {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try TestVectors.bytes("minted/ca/root.der")]
        return try Verifier(configuration: configuration)
    }

    func code(_ token: String, _ verifier: Verifier? = nil) -> VerificationError.Code? {
        (verifier ?? self.verifier).rejection(token)?.code
    }

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test func aTokenOfSixtyFourKiBIsParsedAndOneByteMoreIsTooLarge() {
        // Dots make the size the only thing wrong with the larger one.
        let filler = String(repeating: "A", count: 64 * 1024 - 4)
        #expect(code("A.A." + filler) == .badBase64URL)
        #expect(code("A.A.A" + filler) == .tokenTooLarge)
    }

    @Test func theTokenLimitIsConfigurable() throws {
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.maximumTokenSize = token.utf8.count - 1
        #expect(code(token, try Verifier(configuration: configuration)) == .tokenTooLarge)
        configuration.maximumTokenSize = token.utf8.count
        #expect(code(token, try Verifier(configuration: configuration)) == nil)
    }

    @Test func aHeaderOfSixteenKiBIsDecodedAndOneByteMoreIsTooLarge() {
        let parts = TokenParts.segments(token)
        // 16 KiB of base64url is 12 KiB of zero bytes: not JSON, so bad_header_json at the limit.
        let atLimit = String(repeating: "A", count: 16 * 1024)
        #expect(code(atLimit + "." + parts[1] + "." + parts[2]) == .badHeaderJSON)
        #expect(code(atLimit + "A." + parts[1] + "." + parts[2]) == .tokenTooLarge)
    }

    func header(withCertificateOf size: Int) throws -> String {
        try TokenParts.replacingHeader(of: token) { header in
            var chain = header["x5c"]!.arrayValue!
            chain[0] = .string(
                String(decoding: Base64.encodeStandard([UInt8](repeating: 0x30, count: size)), as: UTF8.self))
            header["x5c"] = .array(chain)
        }
    }

    @Test func aCertificateOfFourKiBIsParsedAndOneByteMoreIsTooLarge() throws {
        #expect(code(try header(withCertificateOf: 4096)) == .badCertificateEncoding)
        #expect(code(try header(withCertificateOf: 4097)) == .certificateTooLarge)
    }

    @Test func moreThanThreeCertificatesAreRefusedBeforeAnyIsDecoded() throws {
        let forged = try TokenParts.replacingHeader(of: token) { header in
            header["x5c"] = .array(Array(repeating: "not base64!", count: 4))
        }
        #expect(code(forged) == .wrongChainLength)
    }

    @Test func headerJSONNestsFourLevelsAndNoMore() {
        let parts = TokenParts.segments(token)
        let four = TokenParts.encode(#"{"alg":"ES256","x":"# + Self.nested(3) + "}")
        let five = TokenParts.encode(#"{"alg":"ES256","x":"# + Self.nested(4) + "}")
        #expect(code(four + "." + parts[1] + "." + parts[2]) == .missingX5C)
        #expect(code(five + "." + parts[1] + "." + parts[2]) == .jsonTooDeep)
    }

    @Test func inspectionNamesAHeaderNestedTooDeepAsVerificationDoes() {
        let parts = TokenParts.segments(token)
        func inspectionCode(_ depth: Int) -> VerificationError.Code? {
            let header = TokenParts.encode(#"{"alg":"ES256","x":"# + Self.nested(depth - 1) + "}")
            do {
                _ = try Inspection(token: header + "." + parts[1] + "." + parts[2])
                return nil
            } catch {
                return error.code
            }
        }
        // Inspection decodes without trusting, so it reads deeper headers than verification;
        // past its own limit it says what verification says.
        #expect(inspectionCode(5) == nil)
        #expect(inspectionCode(64) == nil)
        #expect(inspectionCode(65) == .jsonTooDeep)
    }

    @Test func payloadJSONNestsThirtyTwoLevelsAndNoMore() throws {
        let verifier = try Self.mintedVerifier()
        let thirtyTwo = try Self.mintedSigner.sign(payloadBytes: Array(("{\"x\":" + Self.nested(31) + "}").utf8))
        let thirtyThree = try Self.mintedSigner.sign(payloadBytes: Array(("{\"x\":" + Self.nested(32) + "}").utf8))
        #expect(code(thirtyTwo, verifier) == .unknownKind)
        #expect(code(thirtyThree, verifier) == .jsonTooDeep)
    }

    @Test func jsonInputNestsSixteenLevelsAndNoMore() throws {
        func inputCode(_ depth: Int) -> VerificationError.Code? {
            let body = Array(("{\"signedPayload\":\"\(token)\",\"x\":" + Self.nested(depth - 1) + "}").utf8)
            do {
                _ = try verifier.verify(bytes: try SignedInput.token(in: body))
                return nil
            } catch {
                return error.code
            }
        }
        #expect(inputCode(16) == nil)
        #expect(inputCode(17) == .jsonTooDeep)
    }

    /// A notification verifies at most three nested tokens (`data.signedTransactionInfo`,
    /// `data.signedRenewalInfo`, `appData.signedAppTransactionInfo`), one level deep: each must
    /// be of its own kind, so a notification inside a notification is refused, not followed.
    @Test func nestedTokensAreThreeAtMostAndOneLevelDeep() throws {
        let verifier = try Self.mintedVerifier()
        let generator = MintGenerator(seed: 4, date: Date(timeIntervalSince1970: 1_748_779_200))
        let inner = try generator.token(.notification, index: 0, signer: Self.mintedSigner)
        var outer = try generator.payload(.notification, index: 1, signer: Self.mintedSigner)
        var data = try #require(outer["data"]?.objectValue)
        data["signedTransactionInfo"] = .string(inner)
        outer["data"] = .object(data)
        let error = try #require(verifier.rejection(try Self.mintedSigner.sign(payload: outer)))
        #expect(error.code == .nestedTokenInvalid)
        #expect(error.nested?.field == .signedTransactionInfo)
        #expect(error.nested?.error.code == .wrongKind)

        var extra = try generator.payload(.notification, index: 2, signer: Self.mintedSigner)
        var extraData = try #require(extra["data"]?.objectValue)
        extraData["signedSomethingElse"] = "not a token"
        extra["data"] = .object(extraData)
        let verified = try verifier.verify(try Self.mintedSigner.sign(payload: extra))
        #expect(verified.nested.count <= 3)
        #expect(!verified.nested.isEmpty)
    }
}
