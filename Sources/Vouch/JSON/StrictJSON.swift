/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Unlike Foundation's parsers it rejects trailing commas, a byte-order mark, any encoding
/// other than UTF-8 (invalid sequences, overlong forms, encoded surrogates, lone `\u`
/// surrogates), duplicate member names, and nesting deeper than ``Limits/maximumDepth``. So one
/// document has one meaning, whichever parser later reads it.
package enum StrictJSON {
    /// Why a document was rejected, with the byte offset where parsing stopped.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        package var message: String
        package var offset: Int
        /// Whether the document was refused for nesting deeper than ``Limits/maximumDepth``
        /// (a resource limit) rather than for its syntax.
        package var isNestingTooDeep = false

        package var description: String { "\(message) at byte \(offset)" }
    }

    package struct Limits: Sendable {
        /// Arrays and objects nested deeper than this are rejected.
        package var maximumDepth: Int
        /// Texts to hand out as held strings instead of decoding each occurrence anew.
        package var vocabulary: JSONVocabulary?

        package init(maximumDepth: Int = 64, vocabulary: JSONVocabulary? = nil) {
            self.maximumDepth = maximumDepth
            self.vocabulary = vocabulary
        }
    }

    /// Parses one JSON text (any value at the top, surrounded by optional whitespace).
    package static func parse(_ bytes: some Collection<UInt8>, limits: Limits = Limits()) throws(ParseError)
        -> JSONValue
    {
        let result: Result<JSONValue, ParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            parseBuffer(buffer, limits: limits)
        }
        switch result ?? Array(bytes).withUnsafeBufferPointer({ parseBuffer($0, limits: limits) }) {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Parses a JSON text that must be an object.
    package static func parseObject(_ bytes: some Collection<UInt8>, limits: Limits = Limits()) throws(ParseError)
        -> JSONObject
    {
        guard case .object(let object) = try parse(bytes, limits: limits) else {
            throw ParseError(message: "expected a JSON object", offset: 0)
        }
        return object
    }

    /// Parses a JSON text that must be an object, and tells whether `bytes` are exactly what
    /// ``JSONWriter`` writes for it (no whitespace, no escape, no DEL): then the bytes can be
    /// copied where the object would be written.
    package static func parseObjectTellingCanonical(_ bytes: [UInt8], limits: Limits = Limits()) throws(ParseError)
        -> (object: JSONObject, isCanonical: Bool)
    {
        let result = bytes.withUnsafeBufferPointer { parseBufferTellingCanonical($0, limits: limits) }
        guard case .object(let object) = try result.value.get() else {
            throw ParseError(message: "expected a JSON object", offset: 0)
        }
        return (object, result.isCanonical)
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>, limits: Limits) -> Result<
        JSONValue, ParseError
    > {
        parseBufferTellingCanonical(buffer, limits: limits).value
    }

    private static func parseBufferTellingCanonical(_ buffer: UnsafeBufferPointer<UInt8>, limits: Limits) -> (
        value: Result<JSONValue, ParseError>, isCanonical: Bool
    ) {
        // `limits` holds the vocabulary for the whole parse; the parser reads its table.
        var parser = Parser(bytes: buffer, maximumDepth: limits.maximumDepth, vocabulary: limits.vocabulary?.table)
        do throws(StrictJSON.ParseError) {
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else {
                throw parser.error("unexpected data after the JSON value")
            }
            return (.success(value), parser.isCanonical)
        } catch {
            return (.failure(error), false)
        }
    }
}

private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    /// The vocabulary's table, whose owner outlives the parse: pointers only, so looking a
    /// word up retains nothing.
    let vocabulary: JSONVocabulary.Table?
    var position = 0
    /// Whether everything read so far is what ``JSONWriter`` writes for it: no whitespace
    /// between tokens, no escape and no DEL (which the writer escapes) in strings.
    var isCanonical = true

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, vocabulary: JSONVocabulary.Table? = nil) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.vocabulary = vocabulary
    }

    /// A plain ASCII run as a string: the vocabulary's, or decoded now. Names are nearly always
    /// in the vocabulary; values only sometimes, and a value of up to 15 bytes is held inline
    /// with nothing to allocate, so only longer ones are looked up.
    @inline(__always)
    func string(_ text: UnsafeBufferPointer<UInt8>, isName: Bool = false) -> String {
        if isName || text.count > 15, let vocabulary, let word = vocabulary.word(text) { return word }
        return String(decoding: text, as: UTF8.self)
    }

    func error(_ message: String) -> StrictJSON.ParseError {
        StrictJSON.ParseError(message: message, offset: position)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D:
                position += 1
                isCanonical = false
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(StrictJSON.ParseError) -> JSONValue {
        guard position < bytes.count else { throw error("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected byte 0x\(String(bytes[position], radix: 16))")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(StrictJSON.ParseError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw error("invalid literal") }
        let pointer = literal.utf8Start
        for offset in 0..<count where bytes[position + offset] != pointer[offset] {
            throw error("invalid literal")
        }
        position += count
    }

    func tooDeep() -> StrictJSON.ParseError {
        StrictJSON.ParseError(message: "nesting deeper than \(maximumDepth)", offset: position, isNestingTooDeep: true)
    }

    /// Objects up to this many members find duplicates by comparing fingerprints; larger ones
    /// switch to a hashed set, so that many names sharing a fingerprint cannot make the check
    /// quadratic (String hashing is seeded per process).
    static let linearDuplicateCheckLimit = 32

    mutating func parseObject(depth: Int) throws(StrictJSON.ParseError) -> JSONObject {
        guard depth <= maximumDepth else { throw tooDeep() }
        position += 1  // {
        var members: [JSONObject.Member] = []
        // A cheap fingerprint per name (length and first bytes), kept in each member, so that
        // duplicate checks compare text only when fingerprints match, and a 64-bit filter of
        // the fingerprints seen, so that a name whose bit is clear (most) skips even that.
        var filter: UInt64 = 0
        var sawAnyName = false
        var names: Set<String>? = nil
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return JSONObject(members)
        }
        // One allocation for the members of most objects, rather than four or five as the
        // array doubles: a payload's top level has up to about 30 (a transaction 20 to 30),
        // the objects inside it far fewer.
        members.reserveCapacity(depth == 1 ? 32 : 16)
        while true {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a member name")
            }
            let nameOffset = position
            let (name, fingerprint) = try parseName()
            if members.count < Self.linearDuplicateCheckLimit {
                let bit: UInt64 = 1 << ((fingerprint &* 0x9E37_79B9_7F4A_7C15) >> 58)
                if filter & bit != 0 || fingerprint == Self.anyName || sawAnyName {
                    for member in members
                    where
                        (member.fingerprint == fingerprint || member.fingerprint == Self.anyName
                        || fingerprint == Self.anyName) && member.name == name
                    {
                        throw duplicate(name, at: nameOffset)
                    }
                }
                filter |= bit
                sawAnyName = sawAnyName || fingerprint == Self.anyName
            } else {
                if names == nil { names = Set(members.map(\.name)) }
                guard names!.insert(name).inserted else { throw duplicate(name, at: nameOffset) }
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONObject.Member(name, value, fingerprint: fingerprint))
            skipWhitespace()
            guard position < bytes.count else { throw error("unterminated object") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                position += 1
                return JSONObject(members)
            default:
                throw error("expected ',' or '}'")
            }
        }
    }

    /// See ``JSONObject/anyName``: such a name is compared with every name, as the hashed set
    /// compares it.
    static let anyName = JSONObject.anyName

    static func fingerprint(_ name: String) -> UInt64 { JSONObject.fingerprint(name) }

    @inline(__always)
    static func fingerprint(ascii name: UnsafeBufferPointer<UInt8>) -> UInt64 { JSONObject.fingerprint(ascii: name) }

    /// A member name and its fingerprint: taken from the bytes when the name is plain ASCII
    /// (the rule for every name Apple uses), else from the decoded string.
    mutating func parseName() throws(StrictJSON.ParseError) -> (String, UInt64) {
        let start = position + 1
        let end = plainRunEnd(from: start)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let name = UnsafeBufferPointer(rebasing: bytes[start..<end])
            position = end + 1
            return (string(name, isName: true), Self.fingerprint(ascii: name))
        }
        let name = try parseString()
        return (name, Self.fingerprint(name))
    }

    func duplicate(_ name: String, at offset: Int) -> StrictJSON.ParseError {
        StrictJSON.ParseError(message: "duplicate member name \"\(name)\"", offset: offset)
    }

    mutating func parseArray(depth: Int) throws(StrictJSON.ParseError) -> [JSONValue] {
        guard depth <= maximumDepth else { throw tooDeep() }
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw error("unterminated array") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                position += 1
                return elements
            default:
                throw error("expected ',' or ']'")
            }
        }
    }

    mutating func parseNumber() throws(StrictJSON.ParseError) -> String {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw error("invalid number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if isDigit(bytes[position]) {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        } else {
            throw error("invalid number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("invalid number") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("invalid number") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// The position of the first byte from `start` on that ends a string's plain run: a quote,
    /// a backslash, a control character, DEL or any byte of a multi-byte sequence; the end of
    /// the input if none does. Eight bytes at a time while they are all plain: a payload's
    /// strings (nested tokens above all) are most of its bytes.
    @inline(__always)
    func plainRunEnd(from start: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// High bit set in some byte where `word` has a zero byte, and only if it has one.
        func zeroByte(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highs }
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while bytes.count - index >= 8 {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                // Below 0x20: subtracting 0x20 borrows into the high bit of a byte that had it
                // clear. DEL and quote and backslash: a zero byte after the XOR. 0x80 and up:
                // the high bit itself.
                let stop =
                    ((word &- ones &* 0x20) & ~word & highs) | zeroByte(word ^ (ones &* 0x22))
                    | zeroByte(word ^ (ones &* 0x5C)) | zeroByte(word ^ (ones &* 0x7F)) | (word & highs)
                if stop != 0 { break }
                index += 8
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x7F { break }
            index += 1
        }
        return index
    }

    mutating func parseString() throws(StrictJSON.ParseError) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: printable ASCII without escapes.
        position = plainRunEnd(from: start)
        if position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
            let text = string(UnsafeBufferPointer(rebasing: bytes[start..<position]))
            position += 1
            return text
        }
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while true {
            guard position < bytes.count else { throw error("unterminated string") }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw StrictJSON.ParseError(message: "invalid UTF-8 in string", offset: start)
                }
                return string
            case UInt8(ascii: "\\"):
                position += 1
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw error("unescaped control character in string")
            default:
                if byte == 0x7F { isCanonical = false }
                utf8.append(byte)
                position += 1
            }
        }
    }

    mutating func parseEscape(into utf8: inout [UInt8]) throws(StrictJSON.ParseError) {
        guard position < bytes.count else { throw error("unterminated escape") }
        let byte = bytes[position]
        position += 1
        // The writer escapes `"`, `\\`, LF, CR and TAB so, and other control characters and DEL
        // as `\u00xx` in lower case: any other escape makes the text not canonical.
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): utf8.append(byte)
        case UInt8(ascii: "/"):
            isCanonical = false
            utf8.append(byte)
        case UInt8(ascii: "b"):
            isCanonical = false
            utf8.append(0x08)
        case UInt8(ascii: "f"):
            isCanonical = false
            utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            let digits = position
            var scalar = try parseHex4()
            let writtenSo =
                (scalar < 0x20 && scalar != 0x09 && scalar != 0x0A && scalar != 0x0D || scalar == 0x7F)
                && !bytes[digits..<digits + 4].contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }
            if !writtenSo { isCanonical = false }
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("lone surrogate escape") }
                position += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("lone surrogate escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("lone surrogate escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid escape") }
            utf8.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw error("invalid escape")
        }
    }

    mutating func parseHex4() throws(StrictJSON.ParseError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
