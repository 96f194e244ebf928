import Foundation
import Testing
import Vouch
import VouchOpenSSL
import VouchTestSupport

@testable import VouchMintPKI

@Suite struct MintSignerTests {
    typealias Support = MintTestSupport

    let payload = JSONObject([
        .init("transactionId", "2000000816072421"), .init("price", .number("150000")),
        .init("signedDate", .number("1735188409824")), .init("environment", "Sandbox"),
    ])

    @Test func signatureVerifiesWithTheLeafKeyOverTheExactSigningInput() throws {
        let token = try Support.Token(try Support.signer.sign(payload: payload))
        #expect(token.signature.count == 64)
        #expect(try token.signatureVerifies)
        // The same signature must not verify over any other input.
        var other = token.signingInput
        other[other.count - 1] ^= 0x01
        #expect(try !Support.verifyES256(signature: token.signature, input: other, certificate: token.chain[0]))
    }

    @Test func headerIsAlgThenX5cWithTheChainInPaddedStandardBase64() throws {
        let token = try Support.Token(try Support.signer.sign(payload: payload))
        #expect(token.header.members.map(\.name) == ["alg", "x5c"])
        #expect(token.header["alg"] == "ES256")
        #expect(try token.chain == (try Support.authority.certificateChain()))
        let chain = try Support.authority.certificateChain()
        let encoded = chain.map { String(decoding: Base64.encodeStandard($0), as: UTF8.self) }
        #expect(
            token.headerText == "{\"alg\":\"ES256\",\"x5c\":[\"\(encoded[0])\",\"\(encoded[1])\",\"\(encoded[2])\"]}")
    }

    @Test func payloadDecodesBackToWhatWasSigned() throws {
        let token = try Support.Token(try Support.signer.sign(payload: payload))
        #expect(token.payload == payload)
        #expect(
            String(decoding: token.payloadBytes, as: UTF8.self)
                == #"{"transactionId":"2000000816072421","price":150000,"signedDate":1735188409824,"environment":"Sandbox"}"#
        )
    }

    @Test func signsGivenBytesExactly() throws {
        let bytes = Array(#"{ "a" : 1 ,"a":2 }"#.utf8)
        let token = try Support.signer.sign(payloadBytes: bytes)
        let parts = token.split(separator: ".")
        #expect(Base64.decodeURL(Array(parts[1].utf8)) == bytes)
        let header = try #require(Base64.decodeURL(Array(parts[0].utf8)))
        #expect(
            try Support.verifyES256(
                signature: try #require(Base64.decodeURL(Array(parts[2].utf8))),
                input: Array((parts[0] + "." + parts[1]).utf8), certificate: try Support.authority.certificateChain()[0]
            ))
        #expect(String(decoding: header, as: UTF8.self).hasPrefix(#"{"alg":"ES256","x5c":["#))
    }

    @Test func signaturesAreFreshButAllVerify() throws {
        let first = try Support.Token(try Support.signer.sign(payload: payload))
        let second = try Support.Token(try Support.signer.sign(payload: payload))
        #expect(first.signingInput == second.signingInput)
        #expect(first.signature != second.signature)
        #expect(try first.signatureVerifies && second.signatureVerifies)
    }

    @Test func xcodeHeaderHasXcodesMembersAndOneCertificate() throws {
        let token = try Support.Token(try Support.xcodeSigner.sign(payload: payload))
        #expect(token.header.members.map(\.name) == ["kid", "typ", "x5c", "alg"])
        #expect(token.header["kid"] == "Apple_Xcode_Key")
        #expect(token.header["typ"] == "JWT")
        #expect(token.header["alg"] == "ES256")
        #expect(try token.chain == [try Support.xcodeAuthority.anchorCertificate()])
        #expect(try token.signatureVerifies)
    }

    @Test func signersShareTheKeyAcrossThreads() async throws {
        let signer = Support.signer
        let payload = payload
        let verified = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var ok = true
                    for _ in 0..<25 {
                        ok = try ok && Support.Token(try signer.sign(payload: payload)).signatureVerifies
                    }
                    return ok
                }
            }
            return try await group.reduce(true) { $0 && $1 }
        }
        #expect(verified)
    }

    @Test func rawSignatureIsLeftPaddedToThirtyTwoBytesPerHalf() throws {
        // SEQUENCE { INTEGER 1, INTEGER 0x00FF (a positive with a sign byte) }
        let der: [UInt8] = [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0xFF]
        let raw = try PrivateKey.rawSignature(fromDER: der, width: 32)
        #expect(raw == [UInt8](repeating: 0, count: 31) + [0x01] + [UInt8](repeating: 0, count: 31) + [0xFF])
    }
}
