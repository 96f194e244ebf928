import Testing
import VouchTestSupport

@testable import Vouch

/// The payload parser hands out held strings for the App Store's member names and values:
/// the parsed object must be the same with and without them.
@Suite struct JSONVocabularyTests {
    static func word(_ vocabulary: JSONVocabulary, _ text: String) -> String? {
        Array(text.utf8).withUnsafeBufferPointer { vocabulary.word($0) }
    }

    @Test func findsExactlyItsWords() {
        let vocabulary = JSONVocabulary(["transactionId", "originalTransactionId", "", "é", "transactionId"])
        #expect(Self.word(vocabulary, "transactionId") == "transactionId")
        #expect(Self.word(vocabulary, "originalTransactionId") == "originalTransactionId")
        #expect(Self.word(vocabulary, "") == "")
        #expect(Self.word(vocabulary, "é") == "é")
        for other in ["transactionID", "transactionId ", "transaction", "originalTransactionIds", "e"] {
            #expect(Self.word(vocabulary, other) == nil, "\(other)")
        }
    }

    @Test func holdsTheModelsNamesAndValues() {
        let vocabulary = PayloadVocabulary.shared
        for word in [
            "originalTransactionId", "subscriptionGroupIdentifier", "signedTransactionInfo", "autoRenewProductId",
            "Auto-Renewable Subscription", "DID_CHANGE_RENEWAL_STATUS", "receiptCreationDate",
        ] {
            #expect(Self.word(vocabulary, word) == word, "\(word)")
        }
        #expect(Self.word(vocabulary, "com.example.app") == nil)
    }

    /// Properties are named as Apple's members, but for Swift's case rules.
    static let renamedProperties = ["sku": "SKU"]

    @Test func theNamesAreTheModelsPropertyNames() {
        let properties = Set(
            PayloadVocabulary.models.flatMap { Mirror(reflecting: $0).children.compactMap(\.label) }
                .map { Self.renamedProperties[$0] ?? $0 }
        ).subtracting(["json"])
        #expect(properties == Set(PayloadVocabulary.names))
    }

    @Test func everyRealPayloadParsesToTheSameObjectWithTheVocabulary() throws {
        for (name, token) in try TestVectors.realTokens() {
            let segments = token.split(separator: ".", omittingEmptySubsequences: false)
            let payload = try #require(Base64.decodeURL(segments[1].utf8))
            let plain = try StrictJSON.parseObject(payload, limits: .init(maximumDepth: 32))
            let held = try StrictJSON.parseObject(
                payload, limits: .init(maximumDepth: 32, vocabulary: PayloadVocabulary.shared))
            #expect(plain == held, "\(name)")
            #expect(JSONWriter.encode(.object(plain)) == JSONWriter.encode(.object(held)))
        }
    }
}
