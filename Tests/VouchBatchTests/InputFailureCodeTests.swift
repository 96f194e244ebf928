import Foundation
import Testing
import Vouch
import VouchBatch
import VouchTestSupport

/// The input layer's one error names what failed with a code: a file that cannot be read, a
/// gzip stream that is cut or corrupt.
struct InputFailureCodeTests {
    /// Reads every unit of `bytes`, returning the failure that ended the reading.
    static func failure(reading bytes: [UInt8]) -> InputFailure? {
        do {
            let reader = try InputReader(bytes: bytes)
            while try reader.next() != nil {}
            return nil
        } catch {
            return error
        }
    }

    /// A gzip member header (RFC 1952: magic, deflate, no flags, no time, no extra flags, Unix).
    static let gzipHeader: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]

    @Test func aMissingFileAndADirectoryAreUnreadableInput() throws {
        let missing = #expect(throws: InputFailure.self) { try InputReader(path: "/nonexistent/export.json") }
        #expect(missing?.code == .unreadableInput)
        #expect(missing?.category == .storage)
        let directory = #expect(throws: InputFailure.self) {
            try InputReader(path: FileManager.default.temporaryDirectory.path)
        }
        #expect(directory?.code == .unreadableInput)
    }

    @Test func aGzipStreamThatEndsInsideAMemberIsTruncatedGzip() {
        let failure = Self.failure(reading: Self.gzipHeader)
        #expect(failure?.code == .truncatedGzip)
        #expect(failure?.category == .input)
        #expect(failure?.reason == "the gzip stream is truncated")
    }

    @Test func aGzipStreamThatIsNotDeflateIsCorruptGzip() {
        // 0xFF: a final block of the reserved type 3, which zlib refuses.
        let failure = Self.failure(reading: Self.gzipHeader + [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(failure?.code == .corruptGzip)
        #expect(failure?.reason.hasPrefix("the gzip stream is corrupt: ") == true)
    }

    @Test func anInputFailureIsEqualOnItsCodeAndDescribedByItsReason() {
        CodedErrorExpectations.expectShape(
            InputFailure(.corruptGzip, "the gzip stream is corrupt: invalid block type"),
            sameCode: InputFailure(.corruptGzip, "the gzip stream is corrupt: invalid distance too far back"),
            otherCode: InputFailure(.truncatedGzip, "the gzip stream is corrupt: invalid block type"),
            describedByReason: true)
        #expect(InputFailure("cannot read a.json: Permission denied").code == .unreadableInput)
    }
}
