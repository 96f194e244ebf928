import Testing

@testable import Vouch

struct Base64Tests {
    @Test func decodesURLAlphabetWithoutPadding() {
        #expect(Base64.decodeURL(Array("-_8".utf8)) == [0xFB, 0xFF])
        #expect(Base64.decodeURL(Array("QQ".utf8)) == [0x41])
    }

    @Test func rejectsPaddingPlusSlashWhitespaceAndNonCanonicalBits() {
        #expect(Base64.decodeURL(Array("QQ==".utf8)) == nil)
        #expect(Base64.decodeURL(Array("+/8".utf8)) == nil)
        #expect(Base64.decodeURL(Array("QU JD".utf8)) == nil)
        #expect(Base64.decodeURL(Array("QR".utf8)) == nil)
        #expect(Base64.decodeURL(Array("QUF".utf8)) == nil)
        #expect(Base64.decodeURL(Array("Q".utf8)) == nil)
    }

    @Test func standardDecoderRequiresPadding() {
        #expect(Base64.decodeStandard(Array("QQ==".utf8)) == [0x41])
        #expect(Base64.decodeStandard(Array("QUE=".utf8)) == [0x41, 0x41])
        #expect(Base64.decodeStandard(Array("QQ".utf8)) == nil)
        #expect(Base64.decodeStandard(Array("QR==".utf8)) == nil)
        #expect(Base64.decodeStandard(Array("Q===".utf8)) == nil)
        #expect(Base64.decodeStandard(Array("-_8=".utf8)) == nil)
    }

    @Test func encodingRoundTrips() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decodeURL(Base64.encodeURL(bytes)) == bytes)
            #expect(Base64.decodeStandard(Base64.encodeStandard(bytes)) == bytes)
        }
    }
}
