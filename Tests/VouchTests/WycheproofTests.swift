import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch

/// Wycheproof vectors, read through one loader; each case asserts its expected result.
@Suite(.sharedVectors("wycheproof"))
struct WycheproofTests {
    struct Case {
        let id: Int64
        let comment: String
        let message: [UInt8]
        let signature: [UInt8]
        let valid: Bool
    }

    struct Group {
        let key: PublicKey
        let cases: [Case]
    }

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)!
        }
    }

    static func need<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw TestFailure("missing \(what)") }
        return value
    }

    static func loadECDSA(_ file: String) throws -> [Group] {
        let root = try need(try SharedVectors.json("wycheproof/\(file)").objectValue, "root object")
        return try need(root["testGroups"]?.arrayValue, "testGroups").map { group in
            let group = try need(group.objectValue, "group")
            let der = hex(try need(group["publicKeyDer"]?.stringValue, "publicKeyDer"))
            let key = try need(PublicKey(subjectPublicKeyInfo: der), "a parsable public key")
            let cases = try need(group["tests"]?.arrayValue, "tests").map { test in
                let test = try need(test.objectValue, "test")
                let result = try need(test["result"]?.stringValue, "result")
                #expect(result == "valid" || result == "invalid")
                return Case(
                    id: try need(test["tcId"]?.int64Value, "tcId"), comment: test["comment"]?.stringValue ?? "",
                    message: hex(try need(test["msg"]?.stringValue, "msg")),
                    signature: hex(try need(test["sig"]?.stringValue, "sig")),
                    valid: result == "valid")
            }
            return Group(key: key, cases: cases)
        }
    }

    @Test func everyP1363CaseGivesItsExpectedResultThroughES256() throws {
        let groups = try Self.loadECDSA("ecdsa_secp256r1_sha256_p1363_test.json")
        var count = 0
        for group in groups {
            #expect(group.key.isP256)
            for test in group.cases {
                let verified = ES256.verify(signature: test.signature, message: test.message, key: group.key)
                #expect(verified == test.valid, "tcId \(test.id): \(test.comment)")
                count += 1
            }
        }
        #expect(count == 262)
    }

    struct JWSCase {
        let id: Int64
        let comment: String
        let jws: String
        let valid: Bool
    }

    struct JWSGroup {
        let comment: String
        /// The group's key as a JWK (private members included upstream; only public ones are read).
        let key: JSONObject
        let cases: [JWSCase]
    }

    static func loadJWS(_ file: String) throws -> [JWSGroup] {
        let root = try need(try SharedVectors.json("wycheproof/\(file)").objectValue, "root object")
        return try need(root["testGroups"]?.arrayValue, "testGroups").map { group in
            let group = try need(group.objectValue, "group")
            let cases = try need(group["tests"]?.arrayValue, "tests").map { test in
                let test = try need(test.objectValue, "test")
                let result = try need(test["result"]?.stringValue, "result")
                #expect(result == "valid" || result == "invalid")
                return JWSCase(
                    id: try need(test["tcId"]?.int64Value, "tcId"), comment: test["comment"]?.stringValue ?? "",
                    jws: try need(test["jws"]?.stringValue, "jws"), valid: result == "valid")
            }
            return JWSGroup(
                comment: group["comment"]?.stringValue ?? "", key: try need(group["private"]?.objectValue, "private"),
                cases: cases)
        }
    }

    /// A P-256 public key from a JWK's `x` and `y`, as a SubjectPublicKeyInfo.
    static func p256Key(jwk: JSONObject) throws -> PublicKey {
        let x = try need(jwk["x"]?.stringValue.flatMap { Base64.decodeURL($0.utf8) }, "x")
        let y = try need(jwk["y"]?.stringValue.flatMap { Base64.decodeURL($0.utf8) }, "y")
        // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING 04 ‖ x ‖ y }
        let prefix = hex("3059301306072a8648ce3d020106082a8648ce3d030107034200")
        return try need(PublicKey(subjectPublicKeyInfo: prefix + [0x04] + x + y), "a P-256 key")
    }

    /// The verifier's own JWS steps with the key given instead of taken from `x5c`: split
    /// (`CompactJWS`), header (`ProtectedHeader`: `alg` ES256, no `crit`; these vectors carry no
    /// `x5c`, so `missing_x5c` marks a header that passed every other check), then
    /// `Engine.checkSignature` (base64url, signature length, ES256 over the received
    /// `header.payload`). `nil` when the signature holds.
    static func jwsRejection(_ jws: String, key: PublicKey) -> VerificationError.Code? {
        [UInt8](jws.utf8).withUnsafeBufferPointer { bytes -> VerificationError.Code? in
            do throws(VerificationError) {
                let parts = try CompactJWS(locatingIn: bytes, maximumSize: 64 * 1024)
                do throws(VerificationError) {
                    _ = try ProtectedHeader(segment: UnsafeBufferPointer(rebasing: bytes[parts.header]))
                } catch  where error.code == .missingX5C {
                    // Expected: the key comes from the test group.
                }
                _ = try Engine.checkSignature(of: parts, in: bytes, key: key)
                return nil
            } catch {
                return error.code
            }
        }
    }

    /// The code of each invalid ES256 case, from the groups `es256` (tcId 18–32) and
    /// `SpecialCaseEs256` (378–401); tcId 18 and 378 are the valid ones.
    static let es256Rejections: [Int64: VerificationError.Code] = {
        var codes: [Int64: VerificationError.Code] = [
            19: .badSignature, 22: .badSignature, 25: .badSignature, 32: .badSignature, 31: .unsupportedAlgorithm,
        ]
        for id: Int64 in [20, 21, 23, 24, 26, 27, 28, 29, 30] { codes[id] = .malformedToken }
        for id: Int64 in 379...385 { codes[id] = .badSignatureLength }
        for id: Int64 in 386...401 { codes[id] = .badSignature }
        return codes
    }()

    @Test func everyES256JWSCaseGivesItsExpectedResult() throws {
        let groups = try Self.loadJWS("json_web_signature_test.json").filter {
            ["es256", "SpecialCaseEs256"].contains($0.comment)
        }
        #expect(groups.count == 2)
        var count = 0
        for group in groups {
            let key = try Self.p256Key(jwk: group.key)
            for test in group.cases {
                let rejection = Self.jwsRejection(test.jws, key: key)
                #expect((rejection == nil) == test.valid, "tcId \(test.id): \(test.comment)")
                #expect(rejection == Self.es256Rejections[test.id], "tcId \(test.id): \(test.comment)")
                count += 1
            }
        }
        #expect(count == 39)
    }

    /// None of these tokens carries `x5c`, so the verifier refuses all 401; a token of any
    /// other algorithm never gets past the `alg` check. (The `result` of the HS256 `base64`
    /// group, tcId 357–377, contradicts itself upstream; it plays no part here.)
    @Test func theVerifierRejectsEveryJWSCaseAndNoOtherAlgorithmPassesTheHeader() throws {
        let verifier = try Verifier(configuration: .acceptingAnyApp())
        var count = 0
        for group in try Self.loadJWS("json_web_signature_test.json") {
            let es256 = group.key["alg"]?.stringValue == "ES256" || group.comment == "ec_key_for_encryption"
            for test in group.cases {
                let code = verifier.rejection(test.jws)?.code
                #expect(code != nil, "tcId \(test.id) was accepted")
                if !es256 {
                    #expect(
                        [.unsupportedAlgorithm, .malformedToken, .badBase64URL].contains(code),
                        "tcId \(test.id): \(String(describing: code))")
                }
                count += 1
            }
        }
        #expect(count == 401)
    }
}
