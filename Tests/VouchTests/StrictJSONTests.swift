import Foundation
import Testing

@testable import Vouch

struct StrictJSONTests {
    func rejects(_ text: String) -> Bool {
        (try? StrictJSON.parse(Array(text.utf8))) == nil
    }

    @Test func parsesObjectsKeepingMemberOrderAndNumberText() throws {
        let value = try StrictJSON.parse(Array(#"{"b":1.50,"a":[true,null,"x"],"c":-0e+1}"#.utf8))
        let object = try #require(value.objectValue)
        #expect(object.members.map(\.name) == ["b", "a", "c"])
        #expect(object["b"] == .number("1.50"))
        #expect(object["c"] == .number("-0e+1"))
        #expect(object["a"] == .array([.bool(true), .null, .string("x")]))
        #expect(JSONWriter.string(value) == #"{"b":1.50,"a":[true,null,"x"],"c":-0e+1}"#)
    }

    /// Strings are scanned eight bytes at a time while every byte is plain ASCII: each byte
    /// that ends the plain run must be found at whatever offset it falls, in a name or a value,
    /// with the same outcome as the byte-by-byte reading (a raw control character rejected,
    /// DEL and escapes kept but not canonical, multi-byte UTF-8 decoded, a quote ending it).
    @Test func findsEachSpecialByteAtEveryOffsetOfAScannedWord() throws {
        enum Outcome: Equatable {
            case rejected
            case parsed(text: String, canonical: Bool)
        }
        let cases: [(bytes: [UInt8], outcome: (String, String) -> Outcome)] = [
            ([0x00], { _, _ in .rejected }), ([0x0A], { _, _ in .rejected }), ([0x1F], { _, _ in .rejected }),
            ([0x7F], { head, tail in .parsed(text: head + "\u{7F}" + tail, canonical: false) }),
            ([0xC3, 0xA9], { head, tail in .parsed(text: head + "\u{E9}" + tail, canonical: true) }),
            ([0xF0, 0x9F, 0x98, 0x80], { head, tail in .parsed(text: head + "\u{1F600}" + tail, canonical: true) }),
            ([0x5C, 0x22], { head, tail in .parsed(text: head + "\"" + tail, canonical: true) }),
            ([0x5C, 0x2F], { head, tail in .parsed(text: head + "/" + tail, canonical: false) }),
            ([0x20, 0x21, 0x7E], { head, tail in .parsed(text: head + " !~" + tail, canonical: true) }),
        ]
        for (special, expected) in cases {
            for offset in 0..<20 {
                let head = String(repeating: "a", count: offset)
                let tail = String(repeating: "b", count: 19 - offset)
                let text = Array(head.utf8) + special + Array(tail.utf8)
                for asName in [true, false] {
                    let document: [UInt8] =
                        asName
                        ? Array(#"{""#.utf8) + text + Array(#"":0}"#.utf8)
                        : Array(#"{"k":""#.utf8) + text + Array(#""}"#.utf8)
                    let outcome: Outcome
                    if let (object, canonical) = try? StrictJSON.parseObjectTellingCanonical(document) {
                        let member = try #require(object.members.first)
                        outcome = .parsed(
                            text: asName ? member.name : try #require(member.value.stringValue), canonical: canonical)
                    } else {
                        outcome = .rejected
                    }
                    let place = "bytes \(special) at \(offset), in a \(asName ? "name" : "value")"
                    #expect(outcome == expected(head, tail), "\(place)")
                }
            }
        }
    }

    @Test func rejectsDuplicateMemberNames() {
        #expect(rejects(#"{"a":1,"a":2}"#))
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(!rejects("{\(many)}"))
        #expect(rejects("{\(many),\"k7\":0}"))
    }

    /// Names that share length and first bytes used to make the duplicate check quadratic:
    /// 60,000 such members (a 1 MiB batch line) took minutes.
    @Test func checksManyMembersSharingAFingerprintInLinearTime() throws {
        let members = (0..<60_000).map { String(format: "\"aaaaaa%06d\":0", $0) }
        let start = ContinuousClock.now
        let object = try StrictJSON.parseObject(Array("{\(members.joined(separator: ","))}".utf8))
        #expect(object.members.count == 60_000)
        #expect(ContinuousClock.now - start < .seconds(10))
        let duplicated = "{\(members.joined(separator: ",")),\"aaaaaa059999\":1}"
        #expect(throws: StrictJSON.ParseError.self) { try StrictJSON.parse(Array(duplicated.utf8)) }
    }

    /// Swift compares names by canonical equivalence; duplicates are found the same way in
    /// small objects (fingerprints) and large ones (a hashed set).
    @Test func canonicallyEquivalentNamesAreDuplicatesInSmallAndLargeObjects() {
        let filler = (0..<40).map { "\"f\($0)\":0" }.joined(separator: ",")
        for (first, second) in [("\u{E9}", "e\u{301}"), ("e\u{301}", "\u{E9}"), ("K", "\u{212A}"), ("\u{212A}", "K")] {
            #expect(rejects("{\"\(first)\":1,\"\(second)\":2}"), "\(first.unicodeScalars.map(\.value))")
            #expect(rejects("{\(filler),\"\(first)\":1,\"\(second)\":2}"), "\(first.unicodeScalars.map(\.value))")
        }
        #expect(!rejects("{\"\u{E9}\":1,\"e\":2}"))
    }

    @Test func tellsADepthLimitFromASyntaxError() {
        let limits = StrictJSON.Limits(maximumDepth: 2)
        do {
            _ = try StrictJSON.parse(Array("[[[1]]]".utf8), limits: limits)
            Issue.record("accepted three levels under a limit of two")
        } catch {
            #expect(error.isNestingTooDeep)
        }
        do {
            _ = try StrictJSON.parse(Array("[[1,]]".utf8), limits: limits)
            Issue.record("accepted a trailing comma")
        } catch {
            #expect(!error.isNestingTooDeep)
        }
    }

    @Test func rejectsWhatFoundationAccepts() {
        #expect(rejects("[1,]"))
        #expect(rejects(#"{"id":0,}"#))
        #expect(rejects("\u{FEFF}{}"))
        #expect(rejects("[01]"))
        #expect(rejects("[1.]"))
        #expect(rejects("[.5]"))
        #expect(rejects(#"["\ud800"]"#))
        #expect(rejects(#"["\udc00\ud800"]"#))
        #expect(rejects("[\"\t\"]"))
        #expect(rejects("{} x"))
        #expect(rejects("[NaN]"))
    }

    @Test func rejectsInvalidUTF8() {
        #expect((try? StrictJSON.parse([0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D])) == nil)  // overlong "/"
        #expect((try? StrictJSON.parse([0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D])) == nil)  // encoded surrogate
        #expect((try? StrictJSON.parse([0x5B, 0x22, 0xFF, 0x22, 0x5D])) == nil)
        #expect((try? StrictJSON.parse([0x22, 0x00, 0x22])) == nil)
        #expect((try? StrictJSON.parse([0x00, 0x5B, 0x00, 0x5D])) == nil)  // UTF-16
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try StrictJSON.parse(Array(#"["a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]"#.utf8))
        #expect(value == .array([.string("a\"\\/\u{8}\u{C}\n\r\té😀")]))
    }

    @Test func boundsNesting() {
        let limits = StrictJSON.Limits(maximumDepth: 8)
        #expect(
            (try? StrictJSON.parse(
                Array((String(repeating: "[", count: 8) + String(repeating: "]", count: 8)).utf8), limits: limits))
                != nil)
        #expect(throws: StrictJSON.ParseError.self) {
            try StrictJSON.parse(
                Array((String(repeating: "[", count: 9) + String(repeating: "]", count: 9)).utf8), limits: limits)
        }
        #expect(throws: StrictJSON.ParseError.self) {
            try StrictJSON.parse(Array(String(repeating: "[", count: 100_000).utf8))
        }
    }

    @Test func writerEscapesControlCharacters() {
        #expect(JSONWriter.string(.string("a\u{1}\"\\\n")) == #""a\u0001\"\\\n""#)
    }
}
