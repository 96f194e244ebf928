import Testing
import Vouch
import VouchOpenSSL

/// The keyed HMAC-SHA256 owner against RFC 4231's test cases, and its constant-time comparison.
struct HMACSHA256Tests {
    static func mac(key: [UInt8], data: [UInt8]) throws -> String {
        let hmac = try HMACSHA256(key: key)
        let mac = try #require(data.withUnsafeBytes { hmac.authenticate($0) })
        return withUnsafeBytes(of: mac) { $0.hexString }
    }

    @Test func matchesRFC4231TestCases() throws {
        // Test case 1: a 20-byte key of 0x0b.
        #expect(
            try Self.mac(key: [UInt8](repeating: 0x0B, count: 20), data: Array("Hi There".utf8))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // Test case 2: a key shorter than the block.
        #expect(
            try Self.mac(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block (131 bytes of 0xaa) is hashed first.
        #expect(
            try Self.mac(
                key: [UInt8](repeating: 0xAA, count: 131),
                data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func aMessageInPartsHasTheMACOfTheWhole() throws {
        let hmac = try HMACSHA256(key: Array("Jefe".utf8))
        let whole = Array("what do ya want for nothing?".utf8)
        let split = whole.withUnsafeBytes { bytes in
            hmac.authenticate(
                UnsafeRawBufferPointer(rebasing: bytes[..<4]), UnsafeRawBufferPointer(rebasing: bytes[4..<4]),
                UnsafeRawBufferPointer(rebasing: bytes[4...]))
        }
        #expect(split == whole.withUnsafeBytes { hmac.authenticate($0) })
    }

    @Test func comparesWholeBuffersOnly() {
        let a: [UInt8] = [1, 2, 3]
        a.withUnsafeBytes { a in
            [UInt8]([1, 2, 3]).withUnsafeBytes { #expect(HMACSHA256.constantTimeEqual(a, $0)) }
            [UInt8]([1, 2, 4]).withUnsafeBytes { #expect(!HMACSHA256.constantTimeEqual(a, $0)) }
            [UInt8]([1, 2]).withUnsafeBytes { #expect(!HMACSHA256.constantTimeEqual(a, $0)) }
        }
    }
}
