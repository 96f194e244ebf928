import Testing
@testable import Vouch

/// Wycheproof vectors, read through one loader; each case asserts its expected result.
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
        return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    static func need<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw TestFailure("missing \(what)") }
        return value
    }

    static func loadECDSA(_ file: String) throws -> [Group] {
        let root = try need(try TestVectors.json("wycheproof/\(file)").objectValue, "root object")
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
                    message: hex(try need(test["msg"]?.stringValue, "msg")), signature: hex(try need(test["sig"]?.stringValue, "sig")),
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
}
