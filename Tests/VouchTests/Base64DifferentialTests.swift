import Testing
import VouchTestSupport

@testable import Vouch

/// `Base64.decodeStandard` and `Base64.decodeURL` against a plain one-symbol-at-a-time decoder
/// of the same rules, on valid encodings and on every kind of wrong spelling: the table-driven
/// decoders must accept exactly the same strings and give the same bytes.
struct Base64DifferentialTests {
    static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The rules spelled out: the standard alphabet, `=` padding to a multiple of four, no
    /// symbol after padding, and zero bits below the last whole byte; for base64url its own
    /// alphabet and no padding at all.
    static func reference(_ input: [UInt8], url: Bool = false) -> [UInt8]? {
        let alphabet = url ? Self.url : Self.standard
        var length = input.count
        if !url {
            guard input.count % 4 == 0 else { return nil }
            if length > 0, input[length - 1] == UInt8(ascii: "=") { length -= 1 }
            if length > 0, input[length - 1] == UInt8(ascii: "=") { length -= 1 }
        }
        guard length % 4 != 1 else { return nil }
        var bits: UInt32 = 0
        var count = 0
        var output: [UInt8] = []
        for symbol in input[..<length] {
            guard let value = alphabet.firstIndex(of: symbol) else { return nil }
            bits = bits << 6 | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                output.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
                bits &= (1 << UInt32(count)) - 1
            }
        }
        return bits == 0 ? output : nil
    }

    /// `encoded` with each place set to each byte value in turn, one string at a time.
    static func everyByteAtEveryPlace(of encoded: [UInt8], _ body: ([UInt8]) -> Void) {
        for place in encoded.indices {
            for value in 0...255 {
                var text = encoded
                text[place] = UInt8(value)
                body(text)
            }
        }
    }

    @Test func agreesWithTheReferenceOnValidAndMutatedEncodings() {
        var random = SeededRandom(seed: 7)
        // Valid symbols, padding, bytes just outside the alphabet, whitespace and high bytes.
        let odd: [UInt8] = Array("=+/-_ \n\r.:AZaz09".utf8) + [0x00, 0x40, 0x5B, 0x60, 0x7B, 0x7F, 0x80, 0xFF]
        var checked = 0
        for length in 0..<200 {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                var text = Base64.encodeStandard(bytes)
                #expect(Base64.decodeStandard(text) == bytes)
                if !text.isEmpty {
                    switch random.below(4) {
                    case 0: text[random.below(text.count)] = odd[random.below(odd.count)]
                    case 1: text.removeLast(random.below(min(3, text.count)) + 1)
                    case 2: text.insert(odd[random.below(odd.count)], at: random.below(text.count + 1))
                    default:
                        // The last symbols before the padding carry the bits a canonical
                        // encoding leaves zero.
                        let index = text.lastIndex { $0 != UInt8(ascii: "=") } ?? 0
                        text[index] = odd[random.below(odd.count)]
                    }
                }
                #expect(Base64.decodeStandard(text) == Self.reference(text), "\(String(decoding: text, as: UTF8.self))")
                checked += 1
            }
        }
        #expect(checked == 4000)
    }

    @Test func base64URLAgreesWithTheReferenceOnValidAndMutatedEncodings() {
        var random = SeededRandom(seed: 11)
        let odd: [UInt8] = Array("=+/-_ \n\r.:AZaz09".utf8) + [0x00, 0x40, 0x5B, 0x60, 0x7B, 0x7F, 0x80, 0xFF]
        var checked = 0
        for length in 0..<200 {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                var text = Base64.encodeURL(bytes)
                #expect(Base64.decodeURL(text) == bytes)
                if !text.isEmpty {
                    switch random.below(4) {
                    case 0: text[random.below(text.count)] = odd[random.below(odd.count)]
                    case 1: text.removeLast(random.below(min(3, text.count)) + 1)
                    case 2: text.insert(odd[random.below(odd.count)], at: random.below(text.count + 1))
                    default: text[text.count - 1] = odd[random.below(odd.count)]
                    }
                }
                #expect(
                    Base64.decodeURL(text) == Self.reference(text, url: true),
                    "\(String(decoding: text, as: UTF8.self))")
                checked += 1
            }
        }
        #expect(checked == 4000)
    }

    @Test func agreesWithTheReferenceOnEveryShortString() {
        // Every string of up to three symbols from a small set, padded or not, and all four.
        let symbols: [UInt8] = Array("AQgw/+=-".utf8) + [0x00, 0x80]
        var strings: [[UInt8]] = [[]]
        for _ in 0..<4 {
            strings = strings.flatMap { prefix in [prefix] + symbols.map { prefix + [$0] } }
        }
        for text in Set(strings) {
            #expect(Base64.decodeStandard(text) == Self.reference(text), "\(text)")
            #expect(Base64.decodeURL(text) == Self.reference(text, url: true), "\(text)")
        }
    }

    /// The vector decoder takes whole 16-symbol blocks: every byte value at every place of
    /// four blocks and a tail must give what the reference and the group-at-a-time decoder give.
    @Test(arguments: [false, true]) func vectorBlocksAgreeWithTheReferenceOnEveryByteAtEveryPlace(url: Bool) {
        var random = SeededRandom(seed: url ? 13 : 17)
        let bytes = (0..<51).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let encoded = url ? Base64.encodeURL(bytes) : Base64.encodeStandard(bytes)
        #expect(encoded.count == 68)
        var mismatches = 0
        var accepted = 0
        Self.everyByteAtEveryPlace(of: encoded) { text in
            let expected = Self.reference(text, url: url)
            let vector = text.withUnsafeBufferPointer { Base64.decode($0, standard: !url) }
            let scalar = text.withUnsafeBufferPointer { Base64.decode($0, standard: !url, vector: false) }
            if vector != expected || scalar != expected { mismatches += 1 }
            if vector != nil { accepted += 1 }
        }
        #expect(mismatches == 0)
        // 51 bytes are 17 whole groups: each of the 64 symbols keeps any place valid.
        #expect(accepted >= 68 * 64)
    }

    /// The inline decoder of a token's signature accepts exactly the strings that decode to 64
    /// bytes, with the same bytes: every byte value at every place of a signature's 86 symbols,
    /// and valid and mutated encodings of 60 to 68 bytes.
    @Test func inlineSignatureDecodingAgreesWithTheReference() {
        var random = SeededRandom(seed: 19)
        func inline(_ text: [UInt8]) -> [UInt8]? {
            var value = SIMD64<UInt8>()
            let decoded = text.withUnsafeBufferPointer { Base64.decodeURL($0, exactlyInto: &value) }
            return decoded ? withUnsafeBytes(of: value) { Array($0) } : nil
        }
        func expected(_ text: [UInt8]) -> [UInt8]? {
            Self.reference(text, url: true).flatMap { $0.count == 64 ? $0 : nil }
        }
        let signature = (0..<64).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let encoded = Base64.encodeURL(signature)
        #expect(encoded.count == 86)
        #expect(inline(encoded) == signature)
        var mismatches = 0
        var accepted = 0
        Self.everyByteAtEveryPlace(of: encoded) { text in
            let decoded = inline(text)
            if decoded != expected(text) { mismatches += 1 }
            if decoded != nil { accepted += 1 }
        }
        let odd: [UInt8] = Array("=+/-_ .AZaz09".utf8) + [0x00, 0x80, 0xFF]
        for length in 60...68 {
            for _ in 0..<50 {
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                var text = Base64.encodeURL(bytes)
                if random.below(2) == 0 { text[random.below(text.count)] = odd[random.below(odd.count)] }
                if inline(text) != expected(text) { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
        // 85 places take any of the 64 symbols; the last carries 2 bits, so 4 symbols keep it valid.
        #expect(accepted == 85 * 64 + 4)
    }

    @Test func wholeBlocksAreDecodedWithVectorsOnX86() {
        #if arch(x86_64)
            #expect(Base64.decodesBlocksWithVectors)
        #endif
        let text = Array("QUJDREVGR0hJSktMTU5PUA==".utf8)
        #expect(Base64.decodeStandard(text) == Array("ABCDEFGHIJKLMNOP".utf8))
    }

    @Test func decodesFromEveryKindOfCollection() {
        let text = Array("TWFu".utf8)
        #expect(Base64.decodeStandard(text) == Array("Man".utf8))
        #expect(Base64.decodeStandard(text[...]) == Array("Man".utf8))
        #expect(Base64.decodeStandard("TWFu".utf8) == Array("Man".utf8))
        #expect(Base64.decodeStandard(text.lazy.map { $0 }) == Array("Man".utf8))
    }
}
