public import Foundation
internal import Vouch
internal import VouchReceipts
internal import VouchStripe

/// The one reader of Vouch's inputs: what `vouch verify`, `vouch batch`, `vouch entitlements`,
/// `vouch refunds` and `vouch receipt` read, and what a server reads a dump, an export or a
/// webhook body with. It finds every token and receipt in:
///
/// - lines: a bare compact JWS, a JSON object holding one (a webhook body), a receipt's base64
///   text (wrapped over several lines or not), blank lines; one unit per line, numbered by line;
/// - JSON documents: App Store Server API responses, arrays, webhook bodies, one per line,
///   pretty-printed over many lines, or several in a row, each token found by its JSON path
///   (``InputOptions/field``) and cross-checked with the response holding it;
/// - stored Stripe webhook deliveries: a JSON object holding the raw body as the string `body`
///   and the `Stripe-Signature` header as a top-level member or in `headers` (names of any
///   letter case), one per line or document (``InputUnit/delivery``);
/// - a receipt file: DER or BER (an app receipt as `appStoreReceiptURL` holds it), or an old
///   style plist (an iOS 6 transaction receipt), when it is the whole input;
/// - gzip of any of these (by its magic number; concatenated members too).
///
/// Memory stays bounded whatever the input: a bare line is held up to
/// ``InputOptions/maximumLineLength``, one string up to the same limit, nesting up to
/// ``InputOptions/maximumDepth``, and a document's own bytes (kept to check it strictly and
/// to cross-check its tokens once its last member is known) up to
/// ``InputOptions/documentBuffer``. A larger document is streamed: its tokens go out as they
/// are found, checked against the response members seen before them.
///
/// When the input cannot be read to its end (an I/O error, a truncated gzip stream), every unit
/// completed before the failure comes first; the unfinished one is dropped, and the next call
/// of ``next()`` throws the ``InputFailure``.
///
/// With ``InputOptions/maximumInputSize``, reading stops after that many bytes (inflated bytes
/// for gzip) and one more: an input that holds more is refused without being read to its end,
/// however it goes on (`/dev/zero`, an endless pipe, a decompression bomb). Every unit
/// completed within the limit comes first; the unfinished one is dropped, and the input ends
/// with a unit rejected as a whole, `token_too_large` (``InputUnit/exceedsInputLimit``).
public final class InputReader {
    private var source: any ByteSource
    private let options: InputOptions
    private let pattern: FieldPattern?
    private let buffer: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var position = 0
    private var atEnd = false
    private var pendingFailure: InputFailure?
    /// Bytes taken from the source so far (inflated bytes for gzip), counted against
    /// ``InputOptions/maximumInputSize``.
    private var taken = 0
    /// The input holds more than ``InputOptions/maximumInputSize`` bytes: reading stopped.
    private var overLimit = false
    /// The unit that says so was handed out.
    private var reportedOverLimit = false
    /// The whole input is one receipt file, read as it is.
    private var receiptFile = false

    /// The number of the line being read.
    private var line: Int
    /// Lines seen so far, a last line without newline included.
    public private(set) var linesRead = 0
    /// Units (bare lines, blank lines, JSON documents, a receipt file) seen so far.
    public private(set) var documentsRead = 0
    private let firstDocument: Int
    private var bytesOnLine = 0
    /// After a broken document: the byte that broke it starts a line of its own.
    private var resumeAtLineStart = false
    private var ready: [InputUnit] = []
    private var readyHead = 0

    /// Reads the file at `path`.
    ///
    /// - Parameters:
    ///   - path: the file to read (plain or gzip).
    ///   - options: where tokens are and the limits.
    ///   - firstLine: the number of the first line (to continue the numbers of an earlier input).
    ///   - firstDocument: the number of the first document.
    /// - Throws: ``InputFailure`` when the file cannot be opened or read, or is a directory.
    public convenience init(
        path: String, options: InputOptions = InputOptions(), firstLine: Int = 1, firstDocument: Int = 1
    ) throws(InputFailure) {
        try self.init(
            source: FileDescriptorSource(path: path), options: options, firstLine: firstLine,
            firstDocument: firstDocument)
    }

    /// Reads an open file handle (a file, a pipe, standard input) from where it stands; the
    /// handle is not closed.
    public convenience init(
        fileHandle: FileHandle, options: InputOptions = InputOptions(), firstLine: Int = 1, firstDocument: Int = 1
    ) throws(InputFailure) {
        try self.init(
            source: FileDescriptorSource(descriptor: fileHandle.fileDescriptor), options: options,
            firstLine: firstLine, firstDocument: firstDocument)
    }

    /// Reads bytes in memory: a request body, a file already loaded.
    public convenience init(
        bytes: [UInt8], options: InputOptions = InputOptions(), firstLine: Int = 1, firstDocument: Int = 1
    ) throws(InputFailure) {
        try self.init(source: MemorySource(bytes), options: options, firstLine: firstLine, firstDocument: firstDocument)
    }

    /// Reads `base`, inflating it when it starts with the gzip magic number (1F 8B).
    package init(
        source base: any ByteSource, options: InputOptions = InputOptions(), firstLine: Int = 1,
        firstDocument: Int = 1
    ) throws(InputFailure) {
        self.options = options
        self.pattern = options.field.map(FieldPattern.init)
        self.line = firstLine
        self.firstDocument = firstDocument
        buffer = .allocate(byteCount: 256 * 1024, alignment: 1)
        // The first bytes tell gzip and a receipt file from text.
        var base = base
        var count = 0
        do {
            while count < Self.sniffLength {
                let read = try base.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[count..<Self.sniffLength]))
                if read == 0 { break }
                count += read
            }
        } catch {
            buffer.deallocate()
            throw error
        }
        let prefix = Array(buffer[..<count])
        if GzipSource.isGzip(prefix) {
            do {
                source = try GzipSource(base: base, prefix: prefix)
            } catch {
                buffer.deallocate()
                throw error
            }
            filled = 0
            // The inflated text is sniffed for a receipt file in turn.
            while filled < Self.sniffLength, refill(appending: true) {}
        } else {
            source = base
            filled = count
            taken = count
        }
        receiptFile = Self.startsReceiptFile(buffer[..<filled])
    }

    deinit {
        buffer.deallocate()
    }

    /// Enough bytes to tell gzip, DER and an old-style plist from text.
    private static let sniffLength = 64

    /// Whether an input starting with `prefix` is a receipt file rather than text: a DER or BER
    /// SEQUENCE with a long or indefinite length (30 80 … 30 84, never text: 80…84 cannot
    /// follow `0` in UTF-8), or an old-style plist (`{ "signature" = …`, an iOS 6 transaction
    /// receipt).
    private static func startsReceiptFile(_ prefix: Slice<UnsafeMutableRawBufferPointer>) -> Bool {
        let bytes = Array(prefix)
        if bytes.count >= 2, bytes[0] == 0x30, (0x80...0x84).contains(bytes[1]) { return true }
        var index = bytes.firstIndex { !Self.isBlank($0) && $0 != 0x0A } ?? bytes.endIndex
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        while index < bytes.endIndex, Self.isBlank(bytes[index]) || bytes[index] == 0x0A { index += 1 }
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") else { return false }
        guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return false }
        index = close + 1
        while index < bytes.endIndex, Self.isBlank(bytes[index]) { index += 1 }
        return index < bytes.endIndex && bytes[index] == UInt8(ascii: "=")
    }

    /// Input bytes consumed so far (compressed bytes for gzip).
    public var bytesConsumed: Int { source.consumed }

    /// The next unit of the input, or `nil` at the end: a bare or blank line, a JSON document, a
    /// receipt file. When the source fails, every unit completed before the failure comes
    /// first; the failure is thrown by the call after them.
    public func next() throws(InputFailure) -> InputUnit? {
        while readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
            if !readUnit() {
                if let failure = pendingFailure {
                    pendingFailure = nil
                    throw failure
                }
                guard overLimit, !reportedOverLimit else { return nil }
                reportedOverLimit = true
                ready.append(overLimitUnit())
            }
        }
        readyHead += 1
        return ready[readyHead - 1]
    }

    /// The input failed before its end, or reading stopped at the size limit: a unit that
    /// reached the end now was cut short.
    private var inputCut: Bool { pendingFailure != nil || overLimit }

    /// The last unit of an input over ``InputOptions/maximumInputSize``.
    private func overLimitUnit() -> InputUnit {
        documentsRead += 1
        var unit = InputUnit(
            document: firstDocument + documentsRead - 1,
            failure: .init(
                lines: line...line,
                error: VerificationError(
                    .tokenTooLarge,
                    "the input is larger than \(options.maximumInputSize ?? 0) bytes; reading stopped there")))
        unit.exceedsInputLimit = true
        return unit
    }

    // MARK: Bytes

    /// The next quote, backslash and newline in the buffer at or after the reading position
    /// (`filled` when none), found with memchr and kept until passed or refilled, so strings
    /// cost linear time in all.
    private var found: (quote: Int, backslash: Int, newline: Int) = (-1, -1, -1)

    /// Reads more input into the buffer: after the bytes not yet read when `appending`, else in
    /// place of the buffer's contents, which have all been read. `false` at the end of the
    /// input or on a failure (kept in `pendingFailure`).
    private func refill(appending: Bool = false) -> Bool {
        guard !atEnd else { return false }
        found = (-1, -1, -1)
        if appending, position > 0 {
            // Keep the unread bytes, at the start.
            let unread = filled - position
            if unread > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[0..<unread]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: buffer[position..<filled]))
            }
            filled = unread
            position = 0
        } else if !appending {
            filled = 0
            position = 0
        }
        guard filled < buffer.count else { return true }
        var room = buffer.count - filled
        if let limit = options.maximumInputSize {
            // One byte past the limit tells an input over it from one that ends there.
            guard taken <= limit else {
                overLimit = true
                atEnd = true
                return false
            }
            room = min(room, limit + 1 - taken)
        }
        let count: Int
        do {
            count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<filled + room]))
        } catch {
            pendingFailure = error
            atEnd = true
            return false
        }
        if count == 0 { atEnd = true }
        filled += count
        taken += count
        return count > 0
    }

    @inline(__always) private func peek() -> UInt8? {
        if position == filled, !refill() { return nil }
        return buffer[position]
    }

    /// Consumes the byte `peek` returned, keeping count of lines.
    @inline(__always) private func advance(_ byte: UInt8) {
        position += 1
        if byte == 0x0A {
            line += 1
            linesRead += 1
            bytesOnLine = 0
        } else {
            bytesOnLine += 1
        }
    }

    @inline(__always) private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D
    }

    /// Consumes the rest of the line and its newline, appending at most `limit` bytes of it to
    /// `output` (when given). Returns the bytes before the newline.
    @discardableResult
    private func skipLine(into output: UnsafeMutablePointer<[UInt8]>? = nil, limit: Int = 0) -> Int {
        var length = 0
        while true {
            if position == filled, !refill() {
                if bytesOnLine > 0 {
                    linesRead += 1
                    line += 1
                    bytesOnLine = 0
                }
                return length
            }
            let base = buffer.baseAddress!
            let newline = memchr(base + position, 0x0A, filled - position)
            let end = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? filled
            if let output, output.pointee.count < limit {
                let take = min(end - position, limit - output.pointee.count)
                output.pointee.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position..<position + take]))
            }
            length += end - position
            bytesOnLine += end - position
            position = end
            if newline != nil {
                advance(0x0A)
                return length
            }
        }
    }

    // MARK: Units

    /// Reads the next unit into `ready`; `false` at the end of input, and when the unit being
    /// read was cut short by a failure of the input.
    private func readUnit() -> Bool {
        if receiptFile {
            receiptFile = false
            return readReceiptFile()
        }
        var atLineStart = bytesOnLine == 0 || resumeAtLineStart
        resumeAtLineStart = false
        while true {
            // Leading blanks: part of a bare line, skipped before a JSON document.
            var leading: [UInt8] = []
            while let byte = peek(), Self.isBlank(byte) {
                if leading.count <= options.maximumLineLength { leading.append(byte) }
                advance(byte)
            }
            guard let byte = peek() else {
                if atLineStart, !leading.isEmpty, !inputCut {
                    let lineNumber = line
                    linesRead += 1
                    line += 1
                    bytesOnLine = 0
                    return emitBlank(line: lineNumber, leadingLength: leading.count)
                }
                return false
            }
            if byte == 0x0A {
                let lineNumber = line
                advance(byte)
                if atLineStart { return emitBlank(line: lineNumber, leadingLength: leading.count) }
                atLineStart = true
                continue
            }
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                return readDocument()
            }
            if atLineStart {
                return readBareLine(leading: leading)
            }
            // Something other than a document after a document on the same line.
            let lineNumber = line
            skipLine()
            if inputCut { return false }
            documentsRead += 1
            ready.append(
                InputUnit(
                    document: firstDocument + documentsRead - 1,
                    failure: .init(
                        lines: lineNumber...lineNumber,
                        error: VerificationError(
                            .malformedToken, "the line holds something other than a JSON document after a JSON document"
                        ))))
            return true
        }
    }

    private func emitBlank(line lineNumber: Int, leadingLength: Int) -> Bool {
        documentsRead += 1
        let tooLong = leadingLength > options.maximumLineLength
        var unit = InputUnit(
            document: firstDocument + documentsRead - 1,
            failure: .init(
                lines: lineNumber...lineNumber,
                error: tooLong ? lineTooLong(leadingLength) : VerificationError(.emptyLine, "the line is empty")))
        unit.isBlank = !tooLong
        ready.append(unit)
        return true
    }

    private func lineTooLong(_ length: Int) -> VerificationError {
        VerificationError(.lineTooLong, "the line is \(length) bytes; the limit is \(options.maximumLineLength)")
    }

    private func readBareLine(leading: [UInt8]) -> Bool {
        let lineNumber = line
        var bytes = leading
        let length =
            leading.count
            + withUnsafeMutablePointer(to: &bytes) { skipLine(into: $0, limit: options.maximumLineLength + 1) }
        // Reading stops at the newline: a failure met now cut this line short.
        if inputCut { return false }
        documentsRead += 1
        let document = firstDocument + documentsRead - 1
        if length > options.maximumLineLength {
            ready.append(
                InputUnit(
                    document: document, failure: .init(lines: lineNumber...lineNumber, error: lineTooLong(length))))
            return true
        }
        Self.trim(&bytes)
        var token = InputToken(line: lineNumber, path: nil, content: .token(bytes))
        // A JWS starts with `eyJ` (`{"`); base64 DER of a receipt with `MI` (a long SEQUENCE).
        if bytes.starts(with: Self.receiptPrefix) {
            token.form = .receipt
            if let wrapped = readWrappedBase64(firstLine: bytes) { token.content = .token(wrapped) }
            // Looking for more lines of it met the failure: whether it goes on is not known.
            if inputCut { return false }
        }
        var unit = InputUnit(document: document)
        unit.single = token
        unit.isBareLine = true
        ready.append(unit)
        return true
    }

    /// Removes a line's surrounding JSON whitespace (a CR before its newline included).
    private static func trim(_ bytes: inout [UInt8]) {
        var end = bytes.count
        while end > 0, bytes[end - 1].isJSONWhitespace { end -= 1 }
        bytes.removeSubrange(end...)
        let start = bytes.firstIndex { !$0.isJSONWhitespace } ?? bytes.endIndex
        bytes.removeSubrange(..<start)
    }

    /// The widest line of wrapped base64 text: 76 characters (MIME and `base64`), 64 (PEM).
    static let maximumWrapWidth = 76

    /// Base64 text wrapped over several lines, as `base64` or a PEM writer leaves it: a first
    /// line of at most ``maximumWrapWidth`` characters (a receipt on one line is kilobytes long),
    /// lines of base64 characters of the same length after it, and one shorter last line. The
    /// lines after the first are consumed and the whole text returned; `nil` when the first line
    /// is not so continued.
    private func readWrappedBase64(firstLine: [UInt8]) -> [UInt8]? {
        let width = firstLine.count
        guard width <= Self.maximumWrapWidth, width % 4 == 0, firstLine.allSatisfy(Self.isBase64) else { return nil }
        var text = firstLine
        while let next = peekLine(maximum: width + 2) {
            var content = next
            if content.last == 0x0D { content.removeLast() }
            guard !content.isEmpty, content.count <= width, content.allSatisfy(Self.isBase64) else { break }
            skipLine()
            text += content
            if content.count < width { break }
        }
        return text.count > width ? text : nil
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }

    /// The next line's bytes (without its newline), not consumed; `nil` at the end of input or
    /// when it is longer than `maximum` (or has no newline within it and more input follows).
    private func peekLine(maximum: Int) -> [UInt8]? {
        while true {
            let available = filled - position
            if let newline = UnsafeRawBufferPointer(rebasing: buffer[position..<filled]).firstIndex(of: 0x0A) {
                return newline <= maximum ? Array(buffer[position..<position + newline]) : nil
            }
            if available > maximum { return nil }
            if atEnd { return available > 0 && !inputCut ? Array(buffer[position..<filled]) : nil }
            if !refill(appending: true), filled - position == available {
                return available > 0 && !inputCut ? Array(buffer[position..<filled]) : nil
            }
        }
    }

    /// The whole input as one receipt file (DER or BER, or an old-style plist), held up to
    /// ``InputOptions/documentBuffer``.
    private func readReceiptFile() -> Bool {
        var bytes: [UInt8] = []
        var length = 0
        while position < filled || refill() {
            let take = min(filled - position, options.documentBuffer + 1 - bytes.count)
            if take > 0 { bytes.append(contentsOf: buffer[position..<position + take]) }
            length += filled - position
            for byte in buffer[position..<filled] where byte == 0x0A { linesRead += 1 }
            position = filled
        }
        if inputCut { return false }
        let lineNumber = line
        line += 1
        linesRead += 1
        documentsRead += 1
        var token = InputToken(line: lineNumber, path: nil, content: .token(bytes))
        token.form = .receiptFile
        if length > options.documentBuffer {
            token.content = .failure(
                VerificationError(
                    .receiptTooLarge, "the receipt file is \(length) bytes; the limit is \(options.documentBuffer)"))
        }
        var unit = InputUnit(document: firstDocument + documentsRead - 1)
        unit.single = token
        unit.isBareLine = true
        ready.append(unit)
        return true
    }

    // MARK: JSON documents

    private struct Frame {
        var isObject: Bool
        /// The current member's name (objects) or element index (arrays).
        var key: String = ""
        var index = -1
        /// Tokens that are direct members of this object: checked against each other.
        var group: [InputToken] = []
    }

    private enum Expect { case value, valueOrClose, keyOrClose, key, colon, commaOrClose }

    private struct SyntaxFailure: Error {
        var message: String
        /// Whether the failure is JSON syntax (so a strict parse of the held bytes says it
        /// best) rather than a rule of this reader.
        var isSyntax = true
        var tooDeep = false
    }

    /// State of the document being read.
    private var held: [UInt8] = []
    private var holding = true
    private var stack: [Frame] = []
    private var context = InputContext()
    private var capture: (name: String, depth: Int, bytes: [UInt8], tooLarge: Bool)?
    private var pending: [[InputToken]] = []
    private var pendingTokens = 0
    private var released = false
    private var releasedTokens = 0
    /// Tokens found in the document so far: the next one's ``InputToken/order``.
    private var tokensFound = 0
    private var document = 0
    private var documentLine = 0
    private var isArray = false
    /// What the document holds of a stored Stripe delivery.
    private var deliveryBody = DeliveryPart.absent
    private var deliverySignature = DeliveryPart.absent

    /// A member of a stored Stripe delivery: absent, its value, or why it is not usable.
    private enum DeliveryPart {
        case absent
        case value([UInt8])
        case invalid(VerificationError)

        var isAbsent: Bool {
            if case .absent = self { true } else { false }
        }
    }

    /// Which member of a stored delivery a value is.
    private enum DeliveryRole {
        case body, signature
    }

    private func readDocument() -> Bool {
        documentsRead += 1
        document = firstDocument + documentsRead - 1
        documentLine = line
        isArray = peek() == UInt8(ascii: "[")
        // A fresh buffer: the last one went out with its document's work (and may have grown
        // to a large document's size).
        held = []
        held.reserveCapacity(8192)
        holding = true
        stack.removeAll(keepingCapacity: true)
        context = InputContext(echo: Array(repeating: nil, count: options.echo.count))
        capture = nil
        pending.removeAll()
        pendingTokens = 0
        released = false
        releasedTokens = 0
        tokensFound = 0
        deliveryBody = .absent
        deliverySignature = .absent
        var lastLine = line
        do throws(SyntaxFailure) {
            try scanValue()
            lastLine = line
            // After the document: blanks, then the end of the line or another document.
            while let byte = peek(), Self.isBlank(byte) {
                hold(byte)
                advance(byte)
            }
            if let byte = peek(), byte != 0x0A, byte != UInt8(ascii: "{"), byte != UInt8(ascii: "[") {
                throw SyntaxFailure(message: "unexpected data after the JSON document")
            }
            // What followed on its line was never read: the document's line is not complete.
            if inputCut { throw SyntaxFailure(message: "the input failed") }
        } catch {
            if inputCut {
                // The input failed inside the document: what a streamed document handed out
                // stands; the rest was never read.
                if released, !pending.isEmpty { releasePending() }
                return !ready.isEmpty
            }
            return failDocument(error)
        }
        finishDocument(oneLine: documentLine == lastLine, lastLine: lastLine)
        return true
    }

    private func failDocument(_ failure: SyntaxFailure) -> Bool {
        let errorLine = line
        // A later line whose first byte broke the document starts anew there; otherwise the
        // rest of the line belongs to the broken document.
        var lastLine: Int
        if errorLine > documentLine, bytesOnLine == 0 || onlyBlanksBeforeOnLine, peek() != nil {
            lastLine = errorLine - 1
            resumeAtLineStart = true
        } else {
            if holding {
                withUnsafeMutablePointer(to: &held) { _ = skipLine(into: $0, limit: options.documentBuffer) }
            } else {
                skipLine()
            }
            lastLine = bytesOnLine == 0 ? line - 1 : line
        }
        lastLine = max(lastLine, documentLine)
        var trimmed = held[...]
        while let last = trimmed.last, last.isJSONWhitespace { trimmed.removeLast() }
        let error = VerificationError(
            failure.tooDeep ? .jsonTooDeep : .malformedToken,
            "the input looks like JSON but is not \(isArray ? "strict JSON" : "a strict JSON object"): \(failure.message) (line \(errorLine))"
        )
        var work = InputUnit(document: document)
        if released {
            // A streamed document: one record, where it broke.
            if !pending.isEmpty { releasePending() }
            work.failure = .init(lines: errorLine...errorLine, error: error)
        } else {
            work.failure = .init(lines: documentLine...lastLine, error: error)
            if holding, failure.isSyntax { work.strictCheck = Array(trimmed) }
        }
        work.context = context
        ready.append(work)
        return true
    }

    /// Whether only blanks precede the reading position on its line.
    private var onlyBlanksBeforeOnLine: Bool {
        guard position >= bytesOnLine else { return false }
        for offset in (position - bytesOnLine)..<position where !Self.isBlank(buffer[offset]) { return false }
        return true
    }

    private func finishDocument(oneLine: Bool, lastLine: Int) {
        if !deliverySignature.isAbsent {
            finishDelivery(lastLine: lastLine)
            return
        }
        if released {
            if !pending.isEmpty { releasePending() }
            if releasedTokens == 0 { noToken(lines: documentLine...lastLine, strict: nil) }
            return
        }
        let tokens = pending.reduce(0) { $0 + $1.count }
        guard tokens > 0 else {
            noToken(lines: documentLine...lastLine, strict: held)
            return
        }
        var work = InputUnit(document: document)
        work.context = context
        work.lines = documentLine...lastLine
        // A line holding one object with one token in a top-level member reads as before:
        // no document, no path.
        let plain =
            oneLine && tokens == 1 && !isArray
            && pending[0][0].path.map { !$0.contains(".") && !$0.contains("[") } == true
        work.groups = pending.map { group in
            group.map { token in
                var token = token
                if plain { token.path = nil } else { token.showsDocument = true }
                return token
            }
        }
        work.strictCheck = held
        ready.append(work)
    }

    /// A document with a `Stripe-Signature` is a stored delivery, read as one: its unit holds
    /// the delivery (or why it cannot be read) and nothing else.
    private func finishDelivery(lastLine: Int) {
        var work = InputUnit(document: document)
        work.context = context
        work.lines = documentLine...lastLine
        if !released { work.strictCheck = held }
        let body = deliveryBody
        let signature = deliverySignature
        work.delivery = Result { () throws(VerificationError) -> StripeDelivery in
            guard case .value(let header) = signature else {
                if case .invalid(let error) = signature { throw error }
                throw VerificationError(.stripeMalformedDelivery, "the delivery has no Stripe-Signature")
            }
            switch body {
            case .value(let bytes):
                return StripeDelivery(signature: String(decoding: header, as: UTF8.self), body: bytes)
            case .invalid(let error):
                throw error
            case .absent:
                throw VerificationError(
                    .stripeMalformedDelivery, "the delivery has a Stripe-Signature but no body member")
            }
        }
        ready.append(work)
    }

    /// Which member of a stored delivery the value about to start is: the top-level `body`, or
    /// a `Stripe-Signature` at the top level or in the top-level `headers`.
    private func deliveryRole() -> DeliveryRole? {
        guard let root = stack.first, root.isObject else { return nil }
        let top = stack[stack.count - 1]
        if stack.count == 1 {
            if top.key == "body" { return .body }
            if Self.isStripeSignature(top.key) { return .signature }
        } else if stack.count == 2, root.key == "headers", top.isObject, Self.isStripeSignature(top.key) {
            return .signature
        }
        return nil
    }

    /// HTTP header names are compared without regard to letter case.
    private static func isStripeSignature(_ name: String) -> Bool {
        name.utf8.count == 16 && name.lowercased() == "stripe-signature"
    }

    /// Records a member of a stored delivery; a second one of the same role makes it unusable.
    private func setDelivery(_ role: DeliveryRole, _ part: DeliveryPart) {
        switch role {
        case .body:
            deliveryBody =
                deliveryBody.isAbsent
                ? part : .invalid(VerificationError(.stripeMalformedDelivery, "the delivery has two bodies"))
        case .signature:
            deliverySignature =
                deliverySignature.isAbsent
                ? part
                : .invalid(VerificationError(.stripeMalformedDelivery, "the delivery has two Stripe-Signature headers"))
        }
    }

    /// A delivery's member that is not a string.
    private func deliveryNotString(_ role: DeliveryRole, _ what: String) -> DeliveryPart {
        .invalid(
            VerificationError(
                .stripeMalformedDelivery,
                role == .body
                    ? "the delivery's body is \(what), not the raw body as a string: the signature is over the exact bytes received"
                    : "the delivery's Stripe-Signature is \(what), not a string"))
    }

    private func noToken(lines: ClosedRange<Int>, strict: [UInt8]?) {
        let names = pattern?.text ?? (SignedInput.knownFields + ReceiptInput.knownFields).joined(separator: ", ")
        let reason =
            isArray
            ? "the JSON input holds no token" : "the JSON input has no \(names) member holding a token"
        var work = InputUnit(document: document)
        work.context = context
        work.failure = .init(
            lines: lines.lowerBound...lines.lowerBound, error: VerificationError(.malformedToken, reason))
        work.lines = lines
        work.strictCheck = strict
        ready.append(work)
    }

    private func releasePending() {
        releasedTokens += pending.reduce(0) { $0 + $1.count }
        var work = InputUnit(document: document)
        work.context = context
        work.groups = pending.map {
            $0.map {
                var token = $0
                token.showsDocument = true
                return token
            }
        }
        pending.removeAll()
        pendingTokens = 0
        ready.append(work)
    }

    @inline(__always) private func hold(_ byte: UInt8) {
        if holding { held.append(byte) }
        if capture != nil, capture!.bytes.count < InputOptions.maximumCapture { capture!.bytes.append(byte) }
    }

    /// The escaped length of a JSON string that may hold `limit` bytes: six for each (`\uXXXX`).
    private static func escapedLimit(_ limit: Int) -> Int {
        let (escaped, overflow) = limit.multipliedReportingOverflow(by: 6)
        return overflow ? Int.max : escaped
    }

    private func stopHoldingIfFull() {
        guard holding, held.count > options.documentBuffer else { return }
        holding = false
        held = []
        // Streamed from here: what goes out goes out in the document's order, so open objects'
        // tokens found before those already grouped go with them.
        if let last = pending.lazy.flatMap({ $0 }).map(\.order).max() { takeGroups(before: last) }
        released = true
        if !pending.isEmpty { releasePending() }
    }

    private func path() -> String {
        var text = ""
        for frame in stack {
            if frame.isObject {
                if !text.isEmpty { text += "." }
                text += frame.key
            } else {
                text += "[\(frame.index)]"
            }
        }
        return text
    }

    private enum Role {
        case none, token
        case capture(String)
    }

    /// What the value about to start is.
    private func role() -> Role {
        guard let top = stack.last else { return .none }
        if let pattern {
            if pattern.matches(stack.map { $0.isObject ? .member($0.key) : .element }) { return .token }
        } else if top.isObject {
            if SignedInput.knownFields.contains(top.key) { return .token }
            if stack.count == 1, ReceiptInput.knownFields.contains(top.key) { return .token }
        } else if stack.count == 1 {
            return .token
        } else if let parent = stack.dropLast().last, parent.isObject, parent.key == "signedTransactions" {
            return .token
        }
        if stack.count == 1, top.isObject, capture == nil,
            InputContext.names.contains(top.key) || options.echo.contains(top.key)
        {
            return .capture(top.key)
        }
        return .none
    }

    private func scanValue() throws(SyntaxFailure) {
        var expect = Expect.value
        while true {
            guard let byte = peek() else {
                throw SyntaxFailure(message: "the document ends before its last bracket")
            }
            if Self.isBlank(byte) || byte == 0x0A {
                hold(byte)
                advance(byte)
                continue
            }
            switch expect {
            case .value, .valueOrClose:
                if expect == .valueOrClose, byte == UInt8(ascii: "]") {
                    hold(byte)
                    advance(byte)
                    if try closeContainer() { return }
                    expect = .commaOrClose
                    continue
                }
                if !stack.isEmpty, !stack[stack.count - 1].isObject { stack[stack.count - 1].index += 1 }
                let role = role()
                let delivery = deliveryRole()
                if case .capture(let name) = role { capture = (name, stack.count, [], false) }
                let rootArrayElement = stack.count == 1 && !stack[0].isObject
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if rootArrayElement, byte == UInt8(ascii: "[") {
                        throw SyntaxFailure(
                            message: "an array in the input holds tokens or objects, not arrays", isSyntax: false)
                    }
                    if case .token = role, !rootArrayElement {
                        addToken(.failure(VerificationError(.malformedToken, notString())))
                    }
                    if let delivery {
                        setDelivery(
                            delivery, deliveryNotString(delivery, byte == UInt8(ascii: "{") ? "an object" : "an array"))
                    }
                    guard stack.count < options.maximumDepth else {
                        throw SyntaxFailure(message: "nesting deeper than \(options.maximumDepth)", tooDeep: true)
                    }
                    hold(byte)
                    advance(byte)
                    stack.append(Frame(isObject: byte == UInt8(ascii: "{")))
                    expect = byte == UInt8(ascii: "{") ? .keyOrClose : .valueOrClose
                    continue
                case UInt8(ascii: "\""):
                    let isToken: Bool
                    if case .token = role { isToken = true } else { isToken = false }
                    // A delivery's body is limited by its own bytes, not by the escaped text
                    // that stores it, which may take up to six bytes for one (`\u0022`).
                    let keep =
                        delivery == .body
                        ? Self.escapedLimit(options.maximumLineLength)
                        : isToken || capture != nil || delivery != nil ? options.maximumLineLength : 0
                    let text = try readString(keep: keep)
                    if let delivery {
                        if let text, delivery != .body || text.count <= options.maximumLineLength {
                            setDelivery(delivery, .value(text))
                        } else if let text {
                            setDelivery(
                                delivery,
                                .invalid(
                                    VerificationError(
                                        .stripeBodyTooLarge,
                                        "the delivery's body is \(text.count) bytes; the limit is \(options.maximumLineLength)"
                                    )))
                        } else {
                            setDelivery(
                                delivery,
                                .invalid(
                                    delivery == .body
                                        ? VerificationError(
                                            .stripeBodyTooLarge,
                                            "the delivery's body is larger than \(options.maximumLineLength) bytes")
                                        : VerificationError(
                                            .stripeMalformedDelivery,
                                            "the delivery's Stripe-Signature is larger than \(options.maximumLineLength) bytes"
                                        )))
                        }
                    }
                    if isToken {
                        if let text {
                            addToken(.token(text))
                        } else {
                            addToken(
                                .failure(
                                    VerificationError(
                                        .tokenTooLarge, "the token is larger than \(options.maximumLineLength) bytes")))
                        }
                    }
                default:
                    if rootArrayElement {
                        throw SyntaxFailure(message: "an array in the input holds tokens or objects", isSyntax: false)
                    }
                    if case .token = role {
                        addToken(.failure(VerificationError(.malformedToken, notString())))
                    }
                    if let delivery { setDelivery(delivery, deliveryNotString(delivery, "not a string")) }
                    try readScalar()
                }
                if stack.isEmpty { return }
                endCapture()
                expect = .commaOrClose
            case .keyOrClose, .key:
                if expect == .keyOrClose, byte == UInt8(ascii: "}") {
                    hold(byte)
                    advance(byte)
                    if try closeContainer() { return }
                    expect = .commaOrClose
                    continue
                }
                guard byte == UInt8(ascii: "\"") else { throw SyntaxFailure(message: "expected a member name") }
                // A name longer than any this reader looks for matches none.
                let name = try readString(keep: 256)
                stack[stack.count - 1].key = name.map { String(decoding: $0, as: UTF8.self) } ?? "…"
                expect = .colon
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw SyntaxFailure(message: "expected ':'") }
                hold(byte)
                advance(byte)
                expect = .value
            case .commaOrClose:
                let isObject = stack[stack.count - 1].isObject
                hold(byte)
                if byte == UInt8(ascii: ",") {
                    advance(byte)
                    expect = isObject ? .key : .value
                } else if byte == UInt8(ascii: isObject ? "}" : "]") {
                    advance(byte)
                    if try closeContainer() { return }
                } else {
                    throw SyntaxFailure(message: "expected ',' or a closing bracket")
                }
            }
            stopHoldingIfFull()
        }
    }

    private func notString() -> String {
        guard let top = stack.last else { return "the value is not a string" }
        return top.isObject ? "the JSON member \(top.key) is not a string" : "the element \(path()) is not a string"
    }

    /// Closes the innermost container; `true` when that ends the document.
    private func closeContainer() throws(SyntaxFailure) -> Bool {
        let frame = stack.removeLast()
        if !frame.group.isEmpty { addGroup(frame.group) }
        if stack.isEmpty { return true }
        endCapture()
        return false
    }

    private func endCapture() {
        guard let captured = capture, captured.depth == stack.count else { return }
        capture = nil
        var value: JSONValue = .null
        if !captured.tooLarge, captured.bytes.count < InputOptions.maximumCapture,
            let parsed = try? StrictJSON.parse(captured.bytes, limits: .init(maximumDepth: 4))
        {
            value = parsed
        }
        let isLate = releasedTokens > 0
        if let index = InputContext.names.firstIndex(of: captured.name) {
            if context.values.isEmpty { context.values = [nil, nil, nil] }
            context.values[index] = value
        }
        if let index = options.echo.firstIndex(of: captured.name) {
            context.echo[index] = value
        }
        if isLate {
            // Tokens already went out without this member: say so rather than skip the check.
            var work = InputUnit(document: document)
            work.failure = .init(
                lines: line...line,
                error: VerificationError(
                    .documentTooLarge,
                    "the document is over the \(options.documentBuffer)-byte buffer and its member \(captured.name) comes after tokens already verified; put it first or raise --document-buffer"
                ))
            work.failurePath = captured.name
            ready.append(work)
        }
    }

    /// Base64 of a DER SEQUENCE of 256 bytes or more: how every receipt's text starts.
    static let receiptPrefix: [UInt8] = [UInt8(ascii: "M"), UInt8(ascii: "I")]

    /// Whether a token found here is a receipt: the value of a top-level `receipt-data` or
    /// `latest_receipt` member, or text starting like one anywhere but in a JWS member.
    private func isReceipt(_ content: InputToken.Content) -> Bool {
        let key = stack.last.flatMap { $0.isObject ? $0.key : nil }
        if pattern == nil, let key {
            if stack.count == 1, ReceiptInput.knownFields.contains(key) { return true }
            if SignedInput.knownFields.contains(key) { return false }
        }
        guard case .token(let bytes) = content else { return false }
        return bytes.starts(with: Self.receiptPrefix)
    }

    private func addToken(_ content: InputToken.Content) {
        var token = InputToken(line: line, path: path(), content: content)
        if isReceipt(content) { token.form = .receipt }
        token.order = tokensFound
        tokensFound += 1
        if let top = stack.last, top.isObject {
            stack[stack.count - 1].group.append(token)
            if stack[stack.count - 1].group.count >= 8 {
                addGroup(stack[stack.count - 1].group)
                stack[stack.count - 1].group = []
            }
        } else {
            addGroup([token])
        }
    }

    /// Moves to `pending` the members that open objects hold and that were found before token
    /// `order`, outermost object first.
    private func takeGroups(before order: Int) {
        for index in stack.indices where stack[index].isObject {
            guard let first = stack[index].group.first, first.order < order else { continue }
            pending.append(stack[index].group)
            pendingTokens += stack[index].group.count
            stack[index].group = []
        }
    }

    private func addGroup(_ group: [InputToken]) {
        // A streamed document's tokens go out as they are found, in its order: the objects
        // around this group let go of the members they hold that came before it (which are
        // then not checked against members that come after it).
        if released, let first = group.first { takeGroups(before: first.order) }
        pending.append(group)
        pendingTokens += group.count
        if released { releasePending() }
    }

    /// Reads a string (the opening quote is next). Keeps up to `keep` bytes of its content,
    /// unescaped; `nil` when it is longer (or `keep` is 0).
    private func readString(keep: Int) throws(SyntaxFailure) -> [UInt8]? {
        hold(UInt8(ascii: "\""))
        advance(UInt8(ascii: "\""))
        var raw: [UInt8] = []
        var length = 0
        var escaped = false
        func next(_ byte: UInt8, after old: Int) -> Int {
            guard old < position else { return old }
            let base = buffer.baseAddress!
            return memchr(base + position, Int32(byte), filled - position).map {
                UnsafeRawPointer($0) - UnsafeRawPointer(base)
            } ?? filled
        }
        while true {
            if position == filled, !refill() { throw SyntaxFailure(message: "a string is not closed") }
            // The common case: a run of plain bytes, copied at once. Other control characters
            // than the newline are left to the strict parse of the held document.
            found.quote = next(UInt8(ascii: "\""), after: found.quote)
            found.backslash = next(UInt8(ascii: "\\"), after: found.backslash)
            found.newline = next(0x0A, after: found.newline)
            let end = min(found.quote, found.backslash, found.newline)
            if end > position {
                let run = UnsafeRawBufferPointer(rebasing: buffer[position..<end])
                if holding { held.append(contentsOf: run) }
                if capture != nil, capture!.bytes.count + run.count <= InputOptions.maximumCapture {
                    capture!.bytes.append(contentsOf: run)
                }
                if length + run.count <= keep { raw.append(contentsOf: run) }
                length += run.count
                bytesOnLine += run.count
                position = end
                stopHoldingIfFull()
                continue
            }
            let byte = buffer[position]
            if byte < 0x20 { throw SyntaxFailure(message: "a control character in a string") }
            hold(byte)
            advance(byte)
            if byte == UInt8(ascii: "\"") { break }
            // A backslash: the next byte belongs to the escape.
            escaped = true
            if length + 1 <= keep { raw.append(byte) }
            length += 1
            guard let next = peek() else { throw SyntaxFailure(message: "a string is not closed") }
            if next < 0x20 { throw SyntaxFailure(message: "a control character in a string") }
            hold(next)
            advance(next)
            if length + 1 <= keep { raw.append(next) }
            length += 1
            stopHoldingIfFull()
        }
        guard length <= keep, keep > 0 else { return nil }
        guard escaped else { return raw }
        guard case .string(let text)? = try? StrictJSON.parse([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]) else {
            throw SyntaxFailure(message: "a string has an invalid escape")
        }
        return Array(text.utf8)
    }

    /// Reads a number, `true`, `false` or `null`.
    private func readScalar() throws(SyntaxFailure) {
        var length = 0
        var first: UInt8 = 0
        while let byte = peek() {
            let isScalarByte =
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "E")
            guard isScalarByte else { break }
            if length == 0 { first = byte }
            hold(byte)
            advance(byte)
            length += 1
        }
        let startsWell =
            first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
            || first == UInt8(ascii: "t") || first == UInt8(ascii: "f") || first == UInt8(ascii: "n")
        guard length > 0, startsWell else { throw SyntaxFailure(message: "expected a JSON value") }
    }
}

extension UInt8 {
    /// JSON's whitespace: space, tab, line feed, carriage return.
    fileprivate var isJSONWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}
