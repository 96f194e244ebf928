internal import CVouchBase64

/// Strict Base64 codecs working on bytes.
///
/// Both decoders accept exactly one spelling per byte string: the RFC 4648 alphabet of their
/// variant, no whitespace, and zero trailing bits, so two different strings never decode to the
/// same bytes.
package enum Base64 {
    private static let urlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    private static let standardAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    private static let urlSymbols = Array(urlAlphabet.utf8)
    private static let standardSymbols = Array(standardAlphabet.utf8)

    /// Decodes base64url without padding (RFC 7515 §2), or returns `nil` for any other spelling.
    package static func decodeURL(_ input: some Collection<UInt8>) -> [UInt8]? {
        input.withContiguousStorageIfAvailable { decode($0, standard: false) }
            ?? Array(input).withUnsafeBufferPointer { decode($0, standard: false) }
    }

    /// Decodes standard base64 with its required `=` padding (as in the JWS `x5c` header), or
    /// returns `nil` for any other spelling.
    package static func decodeStandard(_ input: some Collection<UInt8>) -> [UInt8]? {
        input.withContiguousStorageIfAvailable { decode($0, standard: true) }
            ?? Array(input).withUnsafeBufferPointer { decode($0, standard: true) }
    }

    /// For each of the four places of a symbol in a group, what the symbol contributes to the
    /// group's three bytes, laid out as a little-endian `UInt32` (byte 0 first); a byte outside
    /// the alphabet contributes ``invalidMark``, above the three bytes. One table lookup per
    /// symbol and three ORs decode a group, and one OR over all groups tells whether any symbol
    /// was invalid: receipts are kilobytes of base64 and every token's payload is base64url, so
    /// this is on the batch path.
    private static func places(for alphabet: String) -> [UInt32] {
        var places = [UInt32](repeating: invalidMark, count: 4 * 256)
        for (value, symbol) in alphabet.utf8.enumerated() {
            let value = UInt32(value)
            let symbol = Int(symbol)
            places[symbol] = value << 2
            places[256 + symbol] = value >> 4 | (value & 0x0F) << 12
            places[512 + symbol] = (value >> 2) << 8 | (value & 0x03) << 22
            places[768 + symbol] = value << 16
        }
        return places
    }
    private static let standardPlaces = places(for: standardAlphabet)
    private static let urlPlaces = places(for: urlAlphabet)
    private static let invalidMark: UInt32 = 0x0100_0000

    /// Decodes standard base64, which requires `=` padding to a multiple of four, or
    /// base64url, which allows no padding at all: the whole 16-symbol blocks with SSSE3 where
    /// the CPU has it (unless `vector` is false, for tests), the rest a group at a time with the
    /// symbol places.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, standard: Bool, vector: Bool = true) -> [UInt8]? {
        guard let layout = Layout(input, standard: standard) else { return nil }
        var valid = false
        let output = [UInt8](unsafeUninitializedCapacity: layout.capacity) { output, initialized in
            valid = decode(
                input, layout, standard: standard, vector: vector, into: UnsafeMutableRawPointer(output.baseAddress!))
            initialized = valid ? layout.outputLength : 0
        }
        return valid ? output : nil
    }

    /// Decodes base64url without padding that must come to exactly `MemoryLayout<Value>.size`
    /// bytes into `value`, held inline (a token's 64-byte signature: no allocation); `false`
    /// for any other spelling or length, `value` then unspecified.
    package static func decodeURL<Value: BitwiseCopyable>(
        _ input: UnsafeBufferPointer<UInt8>, exactlyInto value: inout Value
    ) -> Bool {
        guard let layout = Layout(input, standard: false), layout.outputLength == MemoryLayout<Value>.size else {
            return false
        }
        return withUnsafeTemporaryAllocation(byteCount: layout.capacity, alignment: 16) { scratch in
            guard decode(input, layout, standard: false, vector: true, into: scratch.baseAddress!) else { return false }
            withUnsafeMutableBytes(of: &value) {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[..<layout.outputLength]))
            }
            return true
        }
    }

    /// Where an input's symbols go: whole groups, the symbols of a last partial group, and the
    /// bytes they decode to.
    private struct Layout {
        let groups: Int
        let rest: Int
        let outputLength: Int
        /// Each group is stored as four bytes, the fourth overwritten by the next group; a
        /// partial last group stores four too: up to three bytes of spare capacity past the end.
        var capacity: Int { groups * 3 + 4 }

        /// `nil` when the length (after any `=` padding of standard base64) cannot be one.
        init?(_ input: UnsafeBufferPointer<UInt8>, standard: Bool) {
            var length = input.count
            if standard {
                guard length % 4 == 0 else { return nil }
                if length > 0, input[length - 1] == UInt8(ascii: "=") { length -= 1 }
                if length > 0, input[length - 1] == UInt8(ascii: "=") { length -= 1 }
            }
            guard length % 4 != 1 else { return nil }
            groups = length / 4
            rest = length % 4
            outputLength = groups * 3 + (rest == 0 ? 0 : rest - 1)
        }
    }

    /// Decodes `input` into `output` (``Layout/capacity`` bytes); whether every symbol was in
    /// the alphabet and the last group canonical.
    private static func decode(
        _ input: UnsafeBufferPointer<UInt8>, _ layout: Layout, standard: Bool, vector: Bool,
        into output: UnsafeMutableRawPointer
    ) -> Bool {
        let places = standard ? standardPlaces : urlPlaces
        let alphabet = standard ? VOUCH_BASE64_STANDARD : VOUCH_BASE64_URL
        let groups = layout.groups
        let rest = layout.rest
        return places.withUnsafeBufferPointer { places in
            var invalid: UInt32 = 0
            var vectorInvalid: Int32 = 0
            // Whole blocks first; each stores 16 bytes for its 12, within the spare capacity.
            let decoded =
                vector && groups >= 4
                ? vouch_base64_decode_blocks(
                    input.baseAddress!, groups * 4, output.assumingMemoryBound(to: UInt8.self), alphabet,
                    &vectorInvalid)
                : 0
            if vectorInvalid != 0 { invalid |= invalidMark }
            for group in decoded / 4..<groups {
                let symbols = input.baseAddress! + group * 4
                let bytes =
                    places[Int(symbols[0])] | places[256 + Int(symbols[1])] | places[512 + Int(symbols[2])]
                    | places[768 + Int(symbols[3])]
                invalid |= bytes
                output.storeBytes(of: bytes.littleEndian, toByteOffset: group * 3, as: UInt32.self)
            }
            if rest > 0 {
                let symbols = input.baseAddress! + groups * 4
                var bytes = places[Int(symbols[0])] | places[256 + Int(symbols[1])]
                if rest == 3 { bytes |= places[512 + Int(symbols[2])] }
                // The bits below the last whole byte must be zero (canonical form).
                if bytes >> (rest == 2 ? 8 : 16) & 0xFF != 0 { invalid |= invalidMark }
                invalid |= bytes
                output.storeBytes(of: bytes.littleEndian, toByteOffset: groups * 3, as: UInt32.self)
            }
            return invalid & invalidMark == 0
        }
    }

    /// Whether this machine decodes whole blocks with vector instructions (x86-64 with SSSE3).
    static var decodesBlocksWithVectors: Bool {
        let symbols = [UInt8](repeating: UInt8(ascii: "A"), count: 16)
        var output = [UInt8](repeating: 0xFF, count: 16)
        var invalid: Int32 = 0
        let decoded = vouch_base64_decode_blocks(symbols, 16, &output, VOUCH_BASE64_STANDARD, &invalid)
        return decoded == 16 && invalid == 0 && output.prefix(12).allSatisfy { $0 == 0 }
    }

    /// Encodes as base64url without padding.
    package static func encodeURL(_ bytes: some Collection<UInt8>) -> [UInt8] {
        encode(bytes, symbols: urlSymbols, padded: false)
    }

    /// Encodes as standard base64 with padding.
    package static func encodeStandard(_ bytes: some Collection<UInt8>) -> [UInt8] {
        encode(bytes, symbols: standardSymbols, padded: true)
    }

    /// Writes the standard base64 of `bytes`, with padding, at `output`, which has room for it
    /// (four bytes for every three, rounded up); returns how many bytes it wrote.
    package static func encodeStandard(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>)
        -> Int
    {
        encode(bytes, symbols: standardSymbols, padded: true, into: output)
        return encodedLength(bytes.count, padded: true)
    }

    private static func encode(_ bytes: some Collection<UInt8>, symbols: [UInt8], padded: Bool) -> [UInt8] {
        func encoded(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
            let length = encodedLength(input.count, padded: padded)
            return [UInt8](unsafeUninitializedCapacity: length) { output, count in
                encode(input, symbols: symbols, padded: padded, into: output.baseAddress!)
                count = length
            }
        }
        return bytes.withContiguousStorageIfAvailable(encoded) ?? Array(bytes).withUnsafeBufferPointer(encoded)
    }

    /// The length of the encoding of `count` bytes.
    private static func encodedLength(_ count: Int, padded: Bool) -> Int {
        padded ? (count + 2) / 3 * 4 : count / 3 * 4 + [0, 2, 3][count % 3]
    }

    /// Writes the encoding of `input` (``encodedLength(_:padded:)`` bytes) at `output`.
    private static func encode(
        _ input: UnsafeBufferPointer<UInt8>, symbols: [UInt8], padded: Bool, into output: UnsafeMutablePointer<UInt8>
    ) {
        symbols.withUnsafeBufferPointer { symbols in
            var index = 0
            var out = output
            while index + 3 <= input.count {
                let word = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                out[0] = symbols[Int(word >> 18 & 0x3F)]
                out[1] = symbols[Int(word >> 12 & 0x3F)]
                out[2] = symbols[Int(word >> 6 & 0x3F)]
                out[3] = symbols[Int(word & 0x3F)]
                out += 4
                index += 3
            }
            switch input.count - index {
            case 1:
                let word = UInt32(input[index]) << 16
                out[0] = symbols[Int(word >> 18 & 0x3F)]
                out[1] = symbols[Int(word >> 12 & 0x3F)]
                if padded {
                    out[2] = UInt8(ascii: "=")
                    out[3] = UInt8(ascii: "=")
                }
            case 2:
                let word = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                out[0] = symbols[Int(word >> 18 & 0x3F)]
                out[1] = symbols[Int(word >> 12 & 0x3F)]
                out[2] = symbols[Int(word >> 6 & 0x3F)]
                if padded { out[3] = UInt8(ascii: "=") }
            default:
                break
            }
        }
    }
}
