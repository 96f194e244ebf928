import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMint
@testable import VouchMintPKI

@Suite struct MintTamperTests {
    typealias Support = MintTestSupport

    static let tamperer: MintTamperer = try! MintTamperer(signer: Support.signer)
    static let xcodeTamperer: MintTamperer = try! MintTamperer(signer: Support.xcodeSigner)

    let payload = try! MintGenerator(seed: 5, date: Support.signingDate).payload(
        .transaction, index: 0, signer: Support.signer)

    @Test func eachDefectNamesTheErrorItMustProduce() {
        #expect(MintTamper.allCases.map(\.rawValue) == ["signature", "payload", "header", "chain", "alg"])
        #expect(
            MintTamper.allCases.map(\.expectedErrorCode) == [
                "bad_signature", "bad_signature", "bad_signature", "untrusted_chain", "unsupported_algorithm",
            ])
    }

    @Test func signatureDefectKeepsHeaderAndPayloadButBreaksTheSignature() throws {
        let token = try Support.Token(try Self.tamperer.token(.signature, payload: payload))
        #expect(token.payload == payload)
        #expect(token.header == Support.signer.header)
        #expect(token.signature.count == 64)
        #expect(try !token.signatureVerifies)
    }

    @Test func payloadDefectChangesOneDigitOfValidJSON() throws {
        let token = try Support.Token(try Self.tamperer.token(.payload, payload: payload))
        #expect(token.header == Support.signer.header)
        #expect(try !token.signatureVerifies)
        let changed = zip(payload.members, token.payload.members).filter { $0.0 != $0.1 }
        #expect(changed.count == 1)
        let (before, after) = try #require(changed.first)
        #expect(before.name == "purchaseDate" && after.name == "purchaseDate")
        let old = try #require(before.value.int64Value)
        let new = try #require(after.value.int64Value)
        #expect(new == (old % 10 == 9 ? old - 9 : old + 1))
    }

    @Test func payloadDefectAddsAMemberWhenThereIsNoNumber() {
        let altered = MintTamperer.altered(JSONObject([.init("a", "b")]))
        #expect(altered == JSONObject([.init("a", "b"), .init("tampered", true)]))
    }

    @Test func headerDefectChangesTheHeaderButKeepsItValidAndAcceptable() throws {
        let token = try Support.Token(try Self.tamperer.token(.header, payload: payload))
        #expect(token.header.members.map(\.name) == ["alg", "typ", "x5c"])
        #expect(token.header["typ"] == "JWT")
        #expect(token.header["alg"] == "ES256")
        #expect(try token.chain == (try Support.authority.certificateChain()))
        #expect(token.payload == payload)
        #expect(try !token.signatureVerifies)

        let xcode = try Support.Token(try Self.xcodeTamperer.token(.header, payload: payload))
        #expect(xcode.header.members.map(\.name) == ["kid", "x5c", "alg"])
        #expect(try !xcode.signatureVerifies)
    }

    @Test func chainDefectSignsWithAForeignLeafInFrontOfTheRealCAs() throws {
        let token = try Support.Token(try Self.tamperer.token(.chain, payload: payload))
        let chain = try token.chain
        let genuine = try Support.authority.certificateChain()
        #expect(chain.count == 3)
        #expect(chain[0] != genuine[0])
        #expect(Array(chain[1...]) == Array(genuine[1...]))
        // The signature is right for x5c[0]: only the chain is wrong.
        #expect(try token.signatureVerifies)
        #expect(token.payload == payload)

        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            try Data(chain[0]).write(to: directory.appendingPathComponent("foreign.der"))
            let converted = try Support.openssl(
                ["x509", "-inform", "DER", "-in", "foreign.der", "-out", "foreign.pem"], in: directory)
            #expect(converted.status == 0)
            let result = try Support.openssl(
                [
                    "verify", "-x509_strict", "-attime", String(Int(Support.signingDate.timeIntervalSince1970)),
                    "-CAfile",
                    "root.pem", "-untrusted", "intermediate.pem", "foreign.pem",
                ], in: directory)
            #expect(result.status != 0)
            #expect(result.output.contains("unable to get local issuer certificate"))
        }
    }

    @Test func xcodeChainDefectUsesAnotherSelfSignedCertificate() throws {
        let token = try Support.Token(try Self.xcodeTamperer.token(.chain, payload: payload))
        let chain = try token.chain
        #expect(chain.count == 1)
        #expect(chain[0] != (try Support.xcodeAuthority.anchorCertificate()))
        #expect(try token.signatureVerifies)
    }

    @Test func algDefectClaimsHS256OverAValidES256Signature() throws {
        let token = try Support.Token(try Self.tamperer.token(.alg, payload: payload))
        #expect(token.header["alg"] == "HS256")
        #expect(token.header.members.map(\.name) == ["alg", "x5c"])
        #expect(try token.signatureVerifies)
    }
}
