internal import Vouch

/// A strict reader of BER and DER TLVs over a byte array it keeps, for reading a little of a
/// certificate; the receipt container and payload are read with ``BERCursor``, whose rules
/// this reader follows step by step, lending it the array for each.
///
/// Definite lengths must be minimal (no leading zero octets, the long form only from 128 on)
/// and at most four octets; indefinite lengths are allowed for constructed values only, which
/// Xcode's receipts use. Tags are single-octet. Every element lies inside its parent, nesting
/// is bounded, and a reader is done only when its range is consumed to the last byte.
struct BERReader {
    /// Why bytes are not well-formed BER; the caller turns it into an error code.
    struct Failure: Error {
        let message: String
        /// A more specific code than the caller's default, when the rule broken has one.
        let code: VerificationError.Code?
        init(_ message: String, code: VerificationError.Code? = nil) {
            self.message = message
            self.code = code
        }
    }

    struct Element {
        /// The identifier octet: class, constructed bit and tag number.
        let tag: UInt8
        /// The whole TLV, end-of-contents octets included.
        let whole: Range<Int>
        /// The contents, without the end-of-contents octets of an indefinite length.
        let contents: Range<Int>
        let indefinite: Bool

        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    static let maximumDepth = 16

    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int
    let depth: Int

    init(_ bytes: [UInt8], range: Range<Int>? = nil, depth: Int = 0) {
        self.bytes = bytes
        let range = range ?? 0..<bytes.count
        self.position = range.lowerBound
        self.end = range.upperBound
        self.depth = depth
    }

    /// Runs `body` on a cursor at this reader's place, then moves the reader where it left off.
    private mutating func step<Result>(_ body: (inout BERCursor) throws(Failure) -> Result) throws(Failure) -> Result {
        let (position, end, depth) = (self.position, self.end, self.depth)
        let (result, after) = try bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            var cursor = BERCursor(buffer, range: position..<end, depth: depth)
            return (try body(&cursor), cursor.position)
        }
        self.position = after
        return result
    }

    /// A reader over the contents of a constructed element.
    func children(of element: Element) throws(Failure) -> BERReader {
        try BERCursor.checkChildren(of: element, depth: depth)
        return BERReader(bytes, range: element.contents, depth: depth + 1)
    }

    var isAtEnd: Bool { position >= end }

    /// The next element, or `nil` at the end of the range.
    mutating func next() throws(Failure) -> Element? { try step { cursor throws(Failure) in try cursor.next() } }

    /// The next element, which must exist and carry `tag`.
    mutating func read(_ tag: UInt8, _ what: @autoclosure () -> String) throws(Failure) -> Element {
        try step { cursor throws(Failure) in try cursor.read(tag, what()) }
    }

    /// The next element if it carries `tag`, without consuming anything otherwise.
    mutating func readIfPresent(_ tag: UInt8) throws(Failure) -> Element? {
        try step { cursor throws(Failure) in try cursor.readIfPresent(tag) }
    }

    func requireEnd(_ what: @autoclosure () -> String) throws(Failure) {
        try BERCursor.requireEnd(position: position, end: end, what())
    }
}

/// The rules of BER as receipts are read (see ``BERReader``), over bytes borrowed for the
/// length of one parse: the container and payload of every receipt go through here, with no
/// array retained per element.
///
/// Every index is checked against `end` before it is read, and `end` never passes the buffer.
struct BERCursor {
    typealias Element = BERReader.Element
    typealias Failure = BERReader.Failure

    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position: Int
    let end: Int
    let depth: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, depth: Int = 0) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        self.bytes = bytes
        self.position = range.lowerBound
        self.end = range.upperBound
        self.depth = depth
    }

    static func checkChildren(of element: Element, depth: Int) throws(Failure) {
        guard element.isConstructed else { throw Failure("a primitive value where a constructed one is required") }
        guard depth + 1 < BERReader.maximumDepth else {
            throw Failure("nesting deeper than \(BERReader.maximumDepth)")
        }
    }

    /// A cursor over the contents of a constructed element.
    func children(of element: Element) throws(Failure) -> BERCursor {
        try Self.checkChildren(of: element, depth: depth)
        return BERCursor(bytes, range: element.contents, depth: depth + 1)
    }

    var isAtEnd: Bool { position >= end }

    /// The next element, or `nil` at the end of the range.
    mutating func next() throws(Failure) -> Element? {
        guard position < end else { return nil }
        let element = try Self.element(in: bytes, at: position, end: end, depth: depth)
        position = element.whole.upperBound
        return element
    }

    /// The next element, which must exist and carry `tag`.
    mutating func read(_ tag: UInt8, _ what: @autoclosure () -> String) throws(Failure) -> Element {
        guard let element = try next() else { throw Failure("\(what()) is missing") }
        guard element.tag == tag else {
            throw Failure("\(what()) has tag 0x\(String(element.tag, radix: 16)), expected 0x\(String(tag, radix: 16))")
        }
        return element
    }

    /// The next element if it carries `tag`, without consuming anything otherwise.
    mutating func readIfPresent(_ tag: UInt8) throws(Failure) -> Element? {
        guard position < end, bytes[position] == tag else { return nil }
        return try next()
    }

    func requireEnd(_ what: @autoclosure () -> String) throws(Failure) {
        try Self.requireEnd(position: position, end: end, what())
    }

    /// The next element when it is a receipt attribute as the App Store writes it, read in
    /// one step: `30 L { 02 l type, 02 l version, 04 l value }`, every length definite and
    /// minimal (up to two octets), both INTEGERs minimal and at most eight octets, nothing
    /// else inside. For anything else `nil`, with nothing consumed: the element-by-element
    /// rules then read it, or name what is wrong with it. What this accepts, they read the same.
    mutating func nextPlainAttribute() -> (type: Int64, version: Int64, value: Range<Int>)? {
        guard position < end, bytes[position] == 0x30, let attribute = definite(at: position + 1, end: end) else {
            return nil
        }
        var cursor = attribute.lowerBound
        guard let type = plainInteger(at: &cursor, end: attribute.upperBound),
            let version = plainInteger(at: &cursor, end: attribute.upperBound),
            cursor < attribute.upperBound, bytes[cursor] == 0x04,
            let value = definite(at: cursor + 1, end: attribute.upperBound), value.upperBound == attribute.upperBound
        else { return nil }
        position = attribute.upperBound
        return (type, version, value)
    }

    /// The contents of a definite length of up to two octets, minimally encoded, at `start`
    /// (just after a tag), when they end by `end`.
    @inline(__always)
    private func definite(at start: Int, end: Int) -> Range<Int>? {
        guard start < end else { return nil }
        let first = Int(bytes[start])
        var contents = start + 1
        var length = first
        if first >= 0x80 {
            if first == 0x81, end - start >= 2, bytes[start + 1] >= 0x80 {
                length = Int(bytes[start + 1])
            } else if first == 0x82, end - start >= 3, bytes[start + 1] != 0 {
                length = Int(bytes[start + 1]) << 8 | Int(bytes[start + 2])
            } else {
                return nil
            }
            contents += first - 0x80
        }
        guard length <= end - contents else { return nil }
        return contents..<(contents + length)
    }

    /// A minimal INTEGER of one to eight octets at `cursor`, which then moves past it.
    @inline(__always)
    private func plainInteger(at cursor: inout Int, end: Int) -> Int64? {
        guard cursor < end, bytes[cursor] == 0x02, let contents = definite(at: cursor + 1, end: end),
            let value = Self.minimalInteger(UnsafeBufferPointer(rebasing: bytes[contents]))
        else { return nil }
        cursor = contents.upperBound
        return value
    }

    /// The tag and contents of the primitive TLV that fills the whole range, when its length
    /// is one octet: the common case of ``read(_:_:)`` then ``requireEnd(_:)``, read in place.
    static func shortPrimitive(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> (UInt8, Range<Int>)? {
        guard range.count >= 2 else { return nil }
        let tag = bytes[range.lowerBound]
        let length = Int(bytes[range.lowerBound + 1])
        guard tag & 0x1F != 0x1F, tag != 0, tag & 0x20 == 0, length < 0x80, length == range.count - 2 else {
            return nil
        }
        return (tag, (range.lowerBound + 2)..<range.upperBound)
    }

    static func requireEnd(position: Int, end: Int, _ what: @autoclosure () -> String) throws(Failure) {
        guard position == end else { throw Failure("\(end - position) unexpected bytes after \(what())") }
    }

    /// Parses the TLV at `start`, which must end by `end`.
    @inline(__always)
    static func element(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int, depth: Int
    ) throws(Failure) -> Element {
        // The common case in place: a single-octet tag other than 0 and a definite length of
        // up to two octets that fits. Anything else, every error included, takes the full rules.
        if end - start >= 2 {
            let tag = bytes[start]
            let first = Int(bytes[start + 1])
            if tag & 0x1F != 0x1F, tag != 0 {
                var contents = start + 2
                var length = first
                if first > 0x80 {
                    if first == 0x81, end - start >= 3, bytes[start + 2] >= 0x80 {
                        length = Int(bytes[start + 2])
                        contents = start + 3
                    } else if first == 0x82, end - start >= 4, bytes[start + 2] != 0 {
                        length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
                        contents = start + 4
                    } else {
                        length = -1
                    }
                }
                if first != 0x80, length >= 0, length <= end - contents {
                    return Element(
                        tag: tag, whole: start..<(contents + length), contents: contents..<(contents + length),
                        indefinite: false)
                }
            }
        }
        return try anyElement(in: bytes, at: start, end: end, depth: depth)
    }

    /// ``element(in:at:end:depth:)`` by every rule: indefinite lengths, long lengths, errors.
    @inline(never)
    private static func anyElement(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int, depth: Int
    ) throws(Failure) -> Element {
        var cursor = start
        guard cursor < end else { throw Failure("truncated: no tag") }
        let tag = bytes[cursor]
        cursor += 1
        guard tag & 0x1F != 0x1F else { throw Failure("multi-octet tags are not used here") }
        guard !(tag == 0 && cursor < end && bytes[cursor] == 0) else {
            throw Failure("unexpected end-of-contents octets")
        }
        guard cursor < end else { throw Failure("truncated: no length") }
        let first = bytes[cursor]
        cursor += 1
        if first == 0x80 {
            guard tag & 0x20 != 0 else { throw Failure("an indefinite length on a primitive value") }
            guard depth + 1 < BERReader.maximumDepth else {
                throw Failure("nesting deeper than \(BERReader.maximumDepth)")
            }
            // Children up to the end-of-contents octets 00 00.
            let contentStart = cursor
            while true {
                guard cursor + 1 < end else { throw Failure("truncated: an indefinite length without end-of-contents") }
                if bytes[cursor] == 0 && bytes[cursor + 1] == 0 {
                    return Element(
                        tag: tag, whole: start..<(cursor + 2), contents: contentStart..<cursor, indefinite: true)
                }
                cursor = try anyElement(in: bytes, at: cursor, end: end, depth: depth + 1).whole.upperBound
            }
        }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4 else { throw Failure("a length of \(count) octets") }
            guard end - cursor >= count else { throw Failure("truncated: length octets") }
            guard bytes[cursor] != 0 else { throw Failure("a length with a leading zero octet") }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[cursor])
                cursor += 1
            }
            guard length >= 0x80 else { throw Failure("a long-form length below 128") }
        }
        guard length <= end - cursor else {
            throw Failure("a length of \(length) beyond the \(end - cursor) bytes left")
        }
        return Element(
            tag: tag, whole: start..<(cursor + length), contents: cursor..<(cursor + length), indefinite: false)
    }

    /// The bytes of an OCTET STRING: its contents when primitive, or its segments joined when
    /// constructed (BER), as ranges of `bytes`.
    func octetStringSegments(_ element: Element) throws(Failure) -> [Range<Int>] {
        guard element.tag & 0xDF == 0x04 else { throw Failure("an OCTET STRING was expected") }
        guard element.isConstructed else { return [element.contents] }
        var segments: [Range<Int>] = []
        var reader = try children(of: element)
        while let child = try reader.next() {
            segments += try reader.octetStringSegments(child)
        }
        return segments
    }

    /// A minimally encoded INTEGER that fits in `Int64`.
    func integer(_ element: Element) throws(Failure) -> Int64 {
        guard element.tag == 0x02 else { throw Failure("an INTEGER was expected") }
        return try Self.integer(UnsafeBufferPointer(rebasing: bytes[element.contents]))
    }

    static func integer(_ contents: UnsafeBufferPointer<UInt8>) throws(Failure) -> Int64 {
        if let value = minimalInteger(contents) { return value }
        guard !contents.isEmpty, contents.count <= 8 else { throw Failure("an INTEGER that is empty or over 64 bits") }
        throw Failure("an INTEGER that is not minimally encoded")
    }

    /// The INTEGER `contents` when they are one to eight octets, minimally encoded.
    @inline(__always)
    static func minimalInteger(_ contents: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = contents.first, contents.count <= 8 else { return nil }
        if contents.count > 1 {
            let second = contents[1]
            guard !(first == 0 && second & 0x80 == 0) && !(first == 0xFF && second & 0x80 != 0) else { return nil }
        }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for byte in contents { value = value << 8 | Int64(byte) }
        return value
    }
}
