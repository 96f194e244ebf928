import Foundation
import Testing
import VouchTestSupport

@testable import Vouch

/// Known attacks on JWS verifiers, each rejected with its own code.
struct AttackTests {
    let verifier = try! Verifier(configuration: .acceptingAnyApp())
    let token = try! TestVectors.text("apple-real/real/transaction-production-1.jws")

    func header(_ transform: (inout JSONObject) -> Void) throws -> String {
        try TokenParts.replacingHeader(of: token, transform)
    }

    func code(_ token: String) -> VerificationError.Code? {
        verifier.rejection(token)?.code
    }

    @Test func theBaseTokenVerifies() {
        #expect(code(token) == nil)
    }

    @Test(arguments: ["none", "HS256", "ES384", "RS256", "es256", "ES256 "])
    func algorithmsOtherThanES256AreRejected(algorithm: String) throws {
        #expect(code(try header { $0["alg"] = .string(algorithm) }) == .unsupportedAlgorithm)
    }

    @Test func aMissingOrNonStringAlgIsRejected() throws {
        #expect(code(try header { $0["alg"] = nil }) == .unsupportedAlgorithm)
        #expect(code(try header { $0["alg"] = .array(["ES256"]) }) == .unsupportedAlgorithm)
    }

    @Test func critIsRejected() throws {
        #expect(code(try header { $0["crit"] = .array(["exp"]) }) == .critPresent)
        #expect(code(try header { $0["crit"] = .array([]) }) == .critPresent)
    }

    @Test func duplicateHeaderMembersAreRejected() throws {
        var parts = TokenParts.segments(token)
        let json = TokenParts.decode(parts[0])
        parts[0] = TokenParts.encode("{\"alg\":\"none\"," + json.dropFirst())
        #expect(code(parts.joined(separator: ".")) == .badHeaderJSON)
    }

    @Test(arguments: [1, 2, 4])
    func chainsOfOtherLengthsAreRejected(count: Int) throws {
        let forged = try header { header in
            var chain = header["x5c"]!.arrayValue!
            chain = count <= 3 ? Array(chain.prefix(count)) : chain + [chain[2]]
            header["x5c"] = .array(chain)
        }
        #expect(code(forged) == .wrongChainLength)
    }

    @Test func certificatesMustBePaddedStandardBase64OfOneDERCertificate() throws {
        let urlSafe = try header { header in
            var chain = header["x5c"]!.arrayValue!
            chain[1] = .string(
                chain[1].stringValue!.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
            header["x5c"] = .array(chain)
        }
        #expect(code(urlSafe) == .badCertificateEncoding)
        let trailing = try header { header in
            var chain = header["x5c"]!.arrayValue!
            let der = Base64.decodeStandard(chain[2].stringValue!.utf8)! + [0x00]
            chain[2] = .string(String(decoding: Base64.encodeStandard(der), as: UTF8.self))
            header["x5c"] = .array(chain)
        }
        #expect(code(trailing) == .badCertificateEncoding)
    }

    @Test func paddingIsRejected() {
        var parts = TokenParts.segments(token)
        parts[2] += "=="
        #expect(code(parts.joined(separator: ".")) == .badBase64URL)
        parts = TokenParts.segments(token)
        parts[1] += "="
        #expect(code(parts.joined(separator: ".")) == .badBase64URL)
    }

    @Test func theStandardAlphabetIsRejected() {
        for (index, symbol) in [(1, "+"), (2, "/")] {
            var parts = TokenParts.segments(token)
            var characters = Array(parts[index])
            characters[5] = Character(symbol)
            parts[index] = String(characters)
            #expect(code(parts.joined(separator: ".")) == .badBase64URL)
        }
    }

    @Test(arguments: [" ", "\n", "\t", "\r\n"])
    func whitespaceInsideTheTokenIsRejected(space: String) {
        var parts = TokenParts.segments(token)
        parts[1].insert(contentsOf: space, at: parts[1].index(parts[1].startIndex, offsetBy: 8))
        #expect(code(parts.joined(separator: ".")) == .badBase64URL)
        #expect(code(token + space) == .badBase64URL)
    }

    @Test func nonCanonicalTrailingBitsAreRejected() {
        // 64 bytes are 86 symbols: the last carries 4 bits of data and 2 that must be zero.
        var parts = TokenParts.segments(token)
        var signature = Array(parts[2].utf8)
        #expect(signature.count == 86)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let value = alphabet.firstIndex(of: signature[85])!
        signature[85] = alphabet[value | 1]
        parts[2] = String(decoding: signature, as: UTF8.self)
        #expect(value & 3 == 0)
        #expect(code(parts.joined(separator: ".")) == .badBase64URL)
    }

    @Test func segmentCountsOtherThanThreeAreRejected() {
        #expect(code(token + ".e30") == .malformedToken)
        let parts = TokenParts.segments(token)
        #expect(code(parts[0] + "." + parts[1]) == .malformedToken)
        #expect(code(parts[0] + ".." + parts[2]) == .malformedToken)
        #expect(code("") == .malformedToken)
    }

    @Test func signaturesOfOtherLengthsAreRejected() {
        let parts = TokenParts.segments(token)
        let signature = Base64.decodeURL(Array(parts[2].utf8))!
        for length in [63, 65, 32, 96] {
            let forged = Array((signature + signature).prefix(length))
            let segment = String(decoding: Base64.encodeURL(forged), as: UTF8.self)
            #expect(code(parts[0] + "." + parts[1] + "." + segment) == .badSignatureLength, "\(length)")
        }
    }

    @Test func aSignatureFromAnotherTokenIsRejected() throws {
        let other = TokenParts.segments(try TestVectors.text("apple-real/real/transaction-production-2.jws"))
        let parts = TokenParts.segments(token)
        #expect(code(parts[0] + "." + parts[1] + "." + other[2]) == .badSignature)
    }

    @Test func oversizedTokensAreRejectedBeforeParsing() {
        let huge = String(repeating: "A", count: 64 * 1024 + 1)
        #expect(code(huge) == .tokenTooLarge)
    }

    @Test func aPayloadThatIsNotAnObjectIsRejectedAfterTheSignature() {
        // Not signed: the signature check comes first and fails.
        let parts = TokenParts.segments(token)
        #expect(code(parts[0] + "." + TokenParts.encode("[1]") + "." + parts[2]) == .badSignature)
    }
}
