import Foundation
import Testing
import VouchTestSupport

@testable import Vouch

/// A record copies a payload's signed bytes when the parser says they are canonical: that
/// must hold exactly when the bytes are what `JSONWriter` writes for the parsed object.
@Suite struct JSONCanonicalTests {
    /// The parser's verdict, and the truth: the writer's bytes compared with the input.
    static func verdicts(_ text: [UInt8]) -> (said: Bool, truth: Bool)? {
        guard let (object, isCanonical) = try? StrictJSON.parseObjectTellingCanonical(text) else { return nil }
        return (isCanonical, JSONWriter.encode(.object(object)) == text)
    }

    @Test(arguments: [
        #"{}"#, #"{"a":1}"#, #"{"a":"b","c":[1,2,{"d":null}],"e":true,"f":false}"#, #"{"a":-0.5e+10}"#,
        #"{"é":"ü😀"}"#, #"{"a":[]}"#, #"{"a":{}}"#, #"{"a":"a/b"}"#, #"{"a":"\n\r\t\"\\"}"#,
        #"{"a":"\u0000\u001f\u007f"}"#, #"{"\u0001":1}"#,
    ])
    func compactObjectsAsTheWriterWritesThemAreCanonical(text: String) throws {
        let verdicts = try #require(Self.verdicts(Array(text.utf8)))
        #expect(verdicts.said)
        #expect(verdicts.truth)
    }

    @Test(arguments: [
        #"{ "a":1}"#, #"{"a" :1}"#, #"{"a":1 }"#, "{\"a\":\n1}", #" {"a":1}"#, #"{"a":1} "#, #"{"a":[1, 2]}"#,
        #"{"a":"\/"}"#, #"{"a":"\u0041"}"#, #"{"a":"\b"}"#, #"{"a":"\f"}"#, #"{"\u0061":1}"#,
        "{\"a\":\"\u{7F}\"}", "{\"\u{7F}\":1}", #"{"a":"\u001F"}"#, #"{"a":"\u000a"}"#, #"{"a":"\u00e9"}"#,
    ])
    func whitespaceOtherEscapesAndARawDeleteAreNot(text: String) throws {
        let verdicts = try #require(Self.verdicts(Array(text.utf8)))
        #expect(!verdicts.said)
        #expect(!verdicts.truth)
    }

    @Test func theVerdictIsTheTruthOnEveryRealPayload() throws {
        for (_, token) in try TestVectors.realTokens() {
            let segments = token.split(separator: ".", omittingEmptySubsequences: false)
            let payload = try #require(Base64.decodeURL(segments[1].utf8))
            let verdicts = try #require(Self.verdicts(payload))
            #expect(verdicts.said == verdicts.truth)
            // Apple's payloads are compact: their records copy the signed bytes.
            #expect(verdicts.said)
        }
    }

    @Test func randomMutationsNeverMakeTheVerdictWrong() throws {
        var random = SeededRandom(seed: 2026)
        let seeds = [
            #"{"transactionId":"1","price":1990,"a":[true,null,{"b":"c d"}],"e":-1.5E3}"#,
            #"{"x":"\u00e9\\","y":[ ],"z":{"k":"v"}}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#" {}[]:,"\/ntfu0123456789aeE.-+"#.utf8) + [0x7F, 0x0A, 0xC3, 0xA9]
        var parsed = 0
        for _ in 0..<20_000 {
            var bytes = random.pick(seeds)
            for _ in 0..<random.int(in: 1...3) {
                let index = random.below(bytes.count)
                switch random.below(3) {
                case 0: bytes[index] = random.pick(alphabet)
                case 1: bytes.insert(random.pick(alphabet), at: index)
                default: if bytes.count > 2 { bytes.remove(at: index) }
                }
            }
            guard let verdicts = Self.verdicts(bytes) else { continue }
            parsed += 1
            #expect(verdicts.said == verdicts.truth, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(parsed > 100)
    }
}

/// Lookups by name compare fingerprints before text: they must find what comparing text finds.
@Suite struct JSONObjectLookupTests {
    @Test func aRenamedMemberIsFoundByItsNewName() {
        var object: JSONObject = ["transactionId": "1", "price": 5]
        object.members[0].name = "originalTransactionId"
        #expect(object["originalTransactionId"] == "1")
        #expect(object["transactionId"] == nil)
        #expect(object.value("originalTransactionId") == "1")
        #expect(object.value("transactionId") == nil)
    }

    @Test func canonicallyEquivalentNamesAreFoundAsSwiftComparesThem() throws {
        // "é" precomposed in the document, decomposed in the lookup: Swift's == says equal.
        let object = try StrictJSON.parseObject(Array(#"{"caf\#u{E9}":1,"cafe":2}"#.utf8))
        #expect(object["cafe\u{301}"] == 1)
        #expect(object["cafe"] == 2)
        #expect(object["caf"] == nil)
    }

    @Test func theModelsIndexFindsWhatTheObjectFinds() throws {
        // Names sharing fingerprints, a missing one, and objects of 5, 32 and 33 members.
        for count in [5, 32, 33] {
            var members = (0..<count).map { JSONObject.Member("offerIdentifie\($0 % 10)_\($0)", .number(String($0))) }
            members.append(.init("offerIdentifier", 1))
            members.append(.init("offerIdentifiex", 2))
            let object = JSONObject(members)
            let index = JSONObject.NameIndex(object)
            #expect(index.value("offerIdentifier") == 1)
            #expect(index.value("offerIdentifiex") == 2)
            #expect(index.value("offerIdentifiey") == nil)
            #expect(index.value("offerIdentifie3_3") == object["offerIdentifie3_3"])
            #expect(index.value("") == nil)
        }
        let accented = try StrictJSON.parseObject(Array(#"{"caf\#u{E9}":1,"cafe":2}"#.utf8))
        #expect(JSONObject.NameIndex(accented).value("cafe") == 2)
    }

    @Test func namesSharingLengthAndFirstBytesAreTold() throws {
        let object = try StrictJSON.parseObject(Array(#"{"offerIdentifier":1,"offerIdentifiex":2}"#.utf8))
        #expect(object["offerIdentifier"] == 1)
        #expect(object["offerIdentifiex"] == 2)
        #expect(object.value("offerIdentifier") == 1)
        #expect(object.value("offerIdentifiey") == nil)
    }
}

@Suite struct JSONWriterIntegerTests {
    @Test func integersAreSpelledAsStringSpellsThem() {
        var values: [Int] = [0, 1, 9, 10, 99, 100, -1, -10, .max, .min, .max - 1, .min + 1]
        var power = 1
        while power < Int.max / 10 {
            power *= 10
            values += [power - 1, power, power + 1, -power]
        }
        for value in values {
            var writer = JSONWriter()
            writer.write(integer: value)
            #expect(writer.bytes == Array(String(value).utf8), "\(value)")
        }
    }
}
