import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchBatch

/// `InputOptions.maximumInputSize`: a reader of one input stops after the limit and one more
/// byte, whatever the input holds, and refuses the input as too large.
struct InputLimitTests {
    /// An input that never ends: `prefix`, then `pattern` over and over. Past `cap` bytes it
    /// fails, so that a reader that does not stop fails the test instead of reading forever.
    struct EndlessSource: ByteSource {
        let prefix: [UInt8]
        let pattern: [UInt8]
        let cap = 64 << 20
        private(set) var consumed = 0

        init(prefix: [UInt8] = [], _ pattern: [UInt8]) {
            self.prefix = prefix
            self.pattern = pattern
        }

        mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputFailure) -> Int {
            guard consumed <= cap else { throw InputFailure("read past \(cap) bytes: the reader did not stop") }
            for index in buffer.indices {
                let offset = consumed + index
                buffer[index] =
                    offset < prefix.count ? prefix[offset] : pattern[(offset - prefix.count) % pattern.count]
            }
            consumed += buffer.count
            return buffer.count
        }
    }

    static let limit = 1 << 20

    /// Every unit of `reader` to its end.
    func units(_ reader: InputReader) throws -> [InputUnit] {
        var units: [InputUnit] = []
        while let unit = try reader.next() { units.append(unit) }
        return units
    }

    func reader(_ source: some ByteSource, limit: Int? = InputLimitTests.limit) throws -> InputReader {
        var options = InputOptions()
        options.maximumInputSize = limit
        return try InputReader(source: source, options: options)
    }

    @Test(
        arguments: [
            ("NUL bytes without a newline", [], [0x00]),
            ("`yes`: y and a newline", [], Array("y\n".utf8)),
            ("an endless string in a JSON document", Array(#"{"signedPayload":""#.utf8), Array("A".utf8)),
            ("JSON documents in a row", [], Array("{}\n".utf8)),
        ] as [(String, [UInt8], [UInt8])])
    func anEndlessInputEndsAtTheLimitWithOneUnitRefusingItAsTooLarge(
        name: String, prefix: [UInt8], pattern: [UInt8]
    ) throws {
        let source = EndlessSource(prefix: prefix, pattern)
        let reader = try reader(source)
        let units = try units(reader)
        let last = try #require(units.last, "\(name)")
        #expect(last.exceedsInputLimit, "\(name)")
        #expect(last.failure?.error.code == .tokenTooLarge, "\(name)")
        #expect(
            last.failure?.error.reason == "the input is larger than \(Self.limit) bytes; reading stopped there",
            "\(name)")
        #expect(units.dropLast().allSatisfy { !$0.exceedsInputLimit }, "\(name)")
        // The limit and the one byte past it are read, and nothing more.
        #expect(reader.bytesConsumed == Self.limit + 1, "\(name)")
    }

    @Test func anEndlessGzipStreamStopsAtTheLimitOfItsInflatedBytes() throws {
        // Gzip of 8 MiB of zeros, repeated: members follow one another without end.
        let member = try BatchTests().gzip([UInt8](repeating: 0x30, count: 8 << 20))
        let reader = try reader(EndlessSource(member))
        let units = try units(reader)
        #expect(units.count == 1)
        #expect(units.first?.exceedsInputLimit == true)
        #expect(units.first?.failure?.error.code == .tokenTooLarge)
        // Compressed bytes: what the gzip source reads ahead, far from the end it never has.
        #expect(reader.bytesConsumed < 1 << 20)
    }

    @Test func anInputOfExactlyTheLimitIsReadWhole() throws {
        // Lines of 1 KiB (a newline included), the limit's worth.
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 1023) + [0x0A]
        let input = Array(repeating: line, count: Self.limit / line.count).flatMap { $0 }
        let whole = try units(try reader(MemorySource(input, step: 4093)))
        #expect(whole.count == Self.limit / line.count)
        #expect(whole.allSatisfy { !$0.exceedsInputLimit && $0.failure == nil && $0.isBareLine })

        // One byte more: the units complete within the limit come first, then the refusal.
        let over = try units(try reader(MemorySource(input + [UInt8(ascii: "x")], step: 4093)))
        #expect(over.count == whole.count + 1)
        #expect(over.dropLast().allSatisfy { !$0.exceedsInputLimit && $0.failure == nil })
        #expect(over.last?.exceedsInputLimit == true)
        #expect(over.last?.failure?.error.code == .tokenTooLarge)
    }

    @Test func aUnitCutByTheLimitIsDroppedNotHandedOutAsComplete() throws {
        // A document that closes one byte after the limit never reaches its end here.
        let token = try TestVectors.text("apple-real/real/transaction-sandbox-13.jws")
        var document = Array(#"{"note":""#.utf8)
        let tail = Array(#"","signedTransactionInfo":"\#(token)"}"#.utf8)
        document += [UInt8](repeating: UInt8(ascii: "A"), count: Self.limit + 1 - document.count - tail.count + 1)
        document += tail
        #expect(document.count == Self.limit + 2)
        let units = try units(try reader(MemorySource(document)))
        #expect(units.count == 1)
        #expect(units[0].exceedsInputLimit)
        #expect(units[0].groups.isEmpty && units[0].single == nil)
    }

    @Test func withoutALimitAnInputIsReadToItsEnd() throws {
        // The default: a dump streams through at any size (here 3 MiB of short lines).
        let input = Array(repeating: Array("y\n".utf8), count: 3 << 19).flatMap { $0 }
        let units = try units(try reader(MemorySource(input), limit: nil))
        #expect(units.count == 3 << 19)
        #expect(units.allSatisfy { !$0.exceedsInputLimit })
    }
}
