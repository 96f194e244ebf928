import Testing
import VouchTestSupport

@testable import Vouch

/// JSONTestSuite (`jsontestsuite/` in the shared test vectors) through the strict JSON layer: every `y_` file is
/// accepted but the two with duplicate keys, every `n_` file rejected, and each `i_` file gets
/// the choice documented below and in the README. Foundation's parsers accept trailing commas, byte-order marks, UTF-16 and
/// duplicate keys; this layer accepts none of them.
@Suite(.sharedVectors("jsontestsuite"))
struct JSONTestSuiteTests {
    static func parsingFiles(prefix: String) throws -> [String] {
        try SharedVectors.files(in: "jsontestsuite/test_parsing").filter {
            $0.split(separator: "/").last!.hasPrefix(prefix)
        }
    }

    static func accepts(_ path: String, maximumDepth: Int = StrictJSON.Limits().maximumDepth) throws -> Bool {
        (try? StrictJSON.parse(try SharedVectors.bytes(path), limits: .init(maximumDepth: maximumDepth))) != nil
    }

    static func name(_ path: String) -> String { String(path.split(separator: "/").last!) }

    /// RFC 8259 lets names repeat, so the suite counts these two as valid; the strict layer
    /// refuses duplicates (RFC 7515 §4 allows only that or last-wins, and Foundation's two
    /// parsers disagree on which one wins).
    static let refusedYFiles: Set<String> = ["y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json"]

    @Test func acceptsEveryYFileButTheTwoWithDuplicateKeys() throws {
        let files = try Self.parsingFiles(prefix: "y_")
        #expect(files.count == 95)
        for file in files {
            #expect(try Self.accepts(file) == !Self.refusedYFiles.contains(Self.name(file)), "\(file)")
        }
    }

    /// Records copy a payload's bytes when the parser calls them canonical: on every object
    /// of the suite that verdict must be the truth (the writer's bytes equal to the input).
    @Test func theCanonicalVerdictIsTheTruthOnEveryObjectOfTheSuite() throws {
        var checked = 0
        for file in try SharedVectors.files(in: "jsontestsuite/test_parsing") {
            let bytes = try SharedVectors.bytes(file)
            guard let (object, isCanonical) = try? StrictJSON.parseObjectTellingCanonical(bytes) else { continue }
            #expect(isCanonical == (JSONWriter.encode(.object(object)) == bytes), "\(file)")
            checked += 1
        }
        #expect(checked >= 10)
    }

    @Test func rejectsEveryNFile() throws {
        let files = try Self.parsingFiles(prefix: "n_")
        #expect(files.count == 188)
        for file in files {
            #expect(try !Self.accepts(file), "\(file)")
        }
    }

    /// The trailing commas Foundation's parsers let through, one by one.
    @Test func rejectsTheNFilesFoundationAccepts() throws {
        for file in ["n_array_extra_comma.json", "n_array_number_and_comma.json", "n_object_trailing_comma.json"] {
            #expect(try !Self.accepts("jsontestsuite/test_parsing/\(file)"), "\(file)")
        }
    }

    /// Numbers keep their text: nothing is converted while parsing, so size is no reason to
    /// refuse. A field read as an integer or a date rejects a value out of its range then.
    static let acceptedIFiles: Set<String> = [
        "i_number_double_huge_neg_exp.json", "i_number_huge_exp.json", "i_number_neg_int_huge_exp.json",
        "i_number_pos_double_huge_exp.json", "i_number_real_neg_overflow.json", "i_number_real_pos_overflow.json",
        "i_number_real_underflow.json", "i_number_too_big_neg_int.json", "i_number_too_big_pos_int.json",
        "i_number_very_big_negative_int.json",
    ]

    /// Everything else is refused: lone or inverted surrogate escapes (no Unicode string has
    /// them), invalid, overlong or truncated UTF-8, Latin-1, UTF-16 with or without a BOM, a
    /// UTF-8 BOM, and 500 nested arrays (deeper than any limit the library uses).
    static let rejectedIFiles: Set<String> = [
        "i_object_key_lone_2nd_surrogate.json", "i_string_1st_surrogate_but_2nd_missing.json",
        "i_string_1st_valid_surrogate_2nd_invalid.json", "i_string_incomplete_surrogate_and_escape_valid.json",
        "i_string_incomplete_surrogate_pair.json", "i_string_incomplete_surrogates_escape_valid.json",
        "i_string_invalid_lonely_surrogate.json", "i_string_invalid_surrogate.json",
        "i_string_inverted_surrogates_U+1D11E.json", "i_string_lone_second_surrogate.json",
        "i_string_UTF-8_invalid_sequence.json", "i_string_UTF8_surrogate_U+D800.json", "i_string_invalid_utf-8.json",
        "i_string_iso_latin_1.json", "i_string_lone_utf8_continuation_byte.json", "i_string_not_in_unicode_range.json",
        "i_string_overlong_sequence_2_bytes.json", "i_string_overlong_sequence_6_bytes.json",
        "i_string_overlong_sequence_6_bytes_null.json", "i_string_truncated-utf-8.json",
        "i_string_UTF-16LE_with_BOM.json", "i_string_utf16BE_no_BOM.json", "i_string_utf16LE_no_BOM.json",
        "i_structure_UTF-8_BOM_empty_object.json", "i_structure_500_nested_arrays.json",
    ]

    @Test func everyIFileGetsItsDocumentedChoice() throws {
        let files = try Self.parsingFiles(prefix: "i_")
        #expect(files.count == 35)
        #expect(Set(files.map(Self.name)) == Self.acceptedIFiles.union(Self.rejectedIFiles))
        for file in files {
            #expect(try Self.accepts(file) == Self.acceptedIFiles.contains(Self.name(file)), "\(file)")
        }
    }

    @Test func fiveHundredNestedArraysAreRefusedForDepthAlone() throws {
        let file = "jsontestsuite/test_parsing/i_structure_500_nested_arrays.json"
        #expect(try Self.accepts(file, maximumDepth: 500))
        let bytes = try SharedVectors.bytes(file)
        do {
            _ = try StrictJSON.parse(bytes)
            Issue.record("500 nested arrays were accepted under the default limit")
        } catch {
            #expect(error.isNestingTooDeep)
        }
    }

    @Test func duplicateKeysOfTheTransformSuiteAreRejected() throws {
        for file in [
            "object_same_key_different_values.json", "object_same_key_same_value.json",
            "object_same_key_unclear_values.json",
        ] {
            #expect(try !Self.accepts("jsontestsuite/test_transform/\(file)"), "\(file)")
        }
    }

    /// Swift compares strings by canonical equivalence, so "é" precomposed and decomposed are
    /// one name: a document holding both is rejected as having a duplicate, never read two ways.
    @Test func canonicallyEquivalentKeysCountAsDuplicates() throws {
        for file in ["object_key_nfc_nfd.json", "object_key_nfd_nfc.json"] {
            #expect(try !Self.accepts("jsontestsuite/test_transform/\(file)"), "\(file)")
        }
    }

    @Test func numbersOfTheTransformSuiteKeepTheirExactText() throws {
        let files = try SharedVectors.files(in: "jsontestsuite/test_transform").filter {
            Self.name($0).hasPrefix("number_")
        }
        #expect(files.count == 10)
        for file in files {
            let text = String(decoding: try SharedVectors.bytes(file), as: UTF8.self)
            let value = try StrictJSON.parse(Array(text.utf8))
            #expect(JSONWriter.string(value) + "\n" == text, "\(file)")
        }
    }

    @Test func invalidCodePointsOfTheTransformSuiteAreRejectedAndAnEscapedNULIsKept() throws {
        let invalid = try SharedVectors.files(in: "jsontestsuite/test_transform").filter {
            Self.name($0).contains("invalid_codepoint")
        }
        #expect(invalid.count == 6)
        for file in invalid {
            #expect(try !Self.accepts(file), "\(file)")
        }
        let value = try StrictJSON.parse(
            try SharedVectors.bytes("jsontestsuite/test_transform/string_with_escaped_NULL.json"))
        #expect(value == .array([.string("A\u{0}B")]))
    }
}
