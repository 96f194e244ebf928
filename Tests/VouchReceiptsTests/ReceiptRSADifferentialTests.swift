import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchReceipts

/// `ReceiptRSAKey`'s Montgomery verification against `EVP_PKEY_verify` (``ReceiptCrypto/verifyRSA``):
/// on good signatures, every kind of damaged one, numbers at and above the modulus, and blocks
/// padded every wrong way (signed with the raw private-key operation), the two verdicts agree.
@Suite(.serialized) struct ReceiptRSADifferentialTests {
    static let sha256Prefix = ReceiptContainer.Digest.sha256.digestInfoPrefix
    static let sha1Prefix = ReceiptContainer.Digest.sha1.digestInfoPrefix

    /// Both verdicts on `signature` over `digestInfo`; records a disagreement. Returns EVP's.
    @discardableResult
    static func agree(
        _ key: ReceiptRSAKey, _ publicKey: PublicKey, _ signature: [UInt8], _ digestInfo: [UInt8],
        _ note: @autoclosure () -> String
    ) -> Bool {
        let expected = ReceiptCrypto.verifyRSA(signature: signature, digestInfo: digestInfo, key: publicKey)
        #expect(key.verify(signature: signature, digestInfo: digestInfo) == expected, "\(note())")
        return expected
    }

    /// `00 01 FF… 00 ‖ data` at `size` bytes, with `padding` FF bytes (the rest of the room
    /// is left to `data`, which may then not fit: callers give consistent numbers).
    static func block(size: Int, data: [UInt8], first: UInt8 = 0x00, type: UInt8 = 0x01, filler: UInt8 = 0xFF)
        -> [UInt8]
    {
        [first, type] + Array(repeating: filler, count: size - 3 - data.count) + [0x00] + data
    }

    static func checkKey(bits: Int, exponent: UInt = 65537, rounds: Int) throws {
        let key = try PrivateKey.generateRSA(bits: bits, exponent: exponent)
        let publicKey = try key.publicKey()
        let prepared = ReceiptRSAKey(publicKey)
        #expect(prepared.isPrepared == (exponent == 65537))
        let size = bits / 8
        var random = SeededRandom(seed: UInt64(bits) &* 31 &+ UInt64(exponent))
        var accepted = 0
        for round in 0..<rounds {
            let message = random.bytes(100 + round)
            for digest in [ReceiptCrypto.Digest.sha256, .sha1] {
                let signature = try ReceiptCrypto.signRSA(message, digest: digest, key: key)
                let hash = ReceiptCrypto.hash(digest, of: message, segments: [0..<message.count])
                let prefix = digest == .sha256 ? Self.sha256Prefix : Self.sha1Prefix
                let other = digest == .sha256 ? Self.sha1Prefix : Self.sha256Prefix
                if agree(prepared, publicKey, signature, prefix + hash, "good, \(bits) bits") { accepted += 1 }
                // The right signature for other data: another hash, the other algorithm's
                // prefix, the bare hash, the DigestInfo cut or extended.
                var wrong = hash
                wrong[random.below(wrong.count)] ^= 0x01
                agree(prepared, publicKey, signature, prefix + wrong, "other hash")
                agree(prepared, publicKey, signature, other + hash, "other prefix")
                agree(prepared, publicKey, signature, hash, "bare hash")
                agree(prepared, publicKey, signature, Array((prefix + hash).dropLast()), "short DigestInfo")
                agree(prepared, publicKey, signature, prefix + hash + [0], "long DigestInfo")
                agree(prepared, publicKey, signature, [], "empty DigestInfo")
                // The signature damaged: one bit, cut, lengthened, leading zero bytes.
                var flipped = signature
                flipped[random.below(flipped.count)] ^= UInt8(1 << random.below(8))
                agree(prepared, publicKey, flipped, prefix + hash, "flipped signature")
                agree(prepared, publicKey, Array(signature.dropLast()), prefix + hash, "cut signature")
                agree(
                    prepared, publicKey, Array(signature.dropFirst()), prefix + hash, "signature without its first byte"
                )
                agree(prepared, publicKey, signature + [0], prefix + hash, "signature with a byte after")
                agree(prepared, publicKey, [0] + signature, prefix + hash, "signature with a zero byte before")
                agree(prepared, publicKey, [], prefix + hash, "empty signature")
            }
            // Numbers near and past the modulus, and random ones.
            agree(prepared, publicKey, random.bytes(size), Self.sha256Prefix + random.bytes(32), "random")
            agree(prepared, publicKey, [UInt8](repeating: 0xFF, count: size), Self.sha256Prefix, "all ones")
            agree(prepared, publicKey, [UInt8](repeating: 0, count: size), Self.sha256Prefix, "zero")
            agree(prepared, publicKey, [UInt8](repeating: 0, count: size - 1) + [1], [], "one")
        }
        // Blocks padded every wrong way, and the right way, through the raw private operation.
        let data = Self.sha256Prefix + random.bytes(32)
        let blocks: [(String, [UInt8])] = [
            ("right", block(size: size, data: data)),
            ("type 2", block(size: size, data: data, type: 0x02)),
            ("type 0", block(size: size, data: data, type: 0x00)),
            ("no leading zero", block(size: size, data: data, first: 0x01, type: 0xFF)),
            ("a padding byte not FF", block(size: size, data: data, filler: 0xFE)),
            ("no zero separator", [0x00, 0x01] + Array(repeating: 0xFF, count: size - 2 - data.count) + data),
            ("seven FF", [0x00, 0x01] + Array(repeating: 0xFF, count: 7) + [0x00] + random.bytes(size - 10)),
            ("eight FF", [0x00, 0x01] + Array(repeating: 0xFF, count: 8) + [0x00] + random.bytes(size - 11)),
            ("data one byte longer", block(size: size, data: [0x00] + data)),
            ("data one byte shorter", block(size: size, data: Array(data.dropFirst()))),
            ("no data", block(size: size, data: [])),
        ]
        for (name, padded) in blocks {
            let signature = try key.rawRSA(padded)
            let recovered = Array(padded.drop { $0 == 0x00 }.drop { $0 != 0x00 }.dropFirst())
            for digestInfo in [data, recovered, Array(padded.suffix(size - 11)), Array(padded.suffix(size - 10))] {
                agree(prepared, publicKey, signature, digestInfo, "block \(name), \(bits) bits")
            }
        }
        // Data of every length the padding leaves room for, in correctly padded blocks: the
        // arithmetic meets arbitrary numbers, and only the data signed verifies.
        for _ in 0..<(4 * rounds) {
            let data = random.bytes(1 + random.below(size - 11))
            let signature = try key.rawRSA(block(size: size, data: data))
            #expect(agree(prepared, publicKey, signature, data, "random data of \(data.count) bytes"))
            var other = data
            other[random.below(other.count)] ^= 0x80
            #expect(!agree(prepared, publicKey, signature, other, "other data of \(data.count) bytes"))
        }
        #expect(accepted == 2 * rounds, "every good signature verifies")
        #expect(agree(prepared, publicKey, try key.rawRSA(block(size: size, data: data)), data, "right block"))
        let eight: [UInt8] =
            [0x00, 0x01] + Array(repeating: 0xFF, count: 8) + [0x00] + Array(repeating: 0x42, count: size - 11)
        #expect(
            agree(prepared, publicKey, try key.rawRSA(eight), Array(repeating: 0x42, count: size - 11), "eight FF"))
        let seven: [UInt8] =
            [0x00, 0x01] + Array(repeating: 0xFF, count: 7) + [0x00] + Array(repeating: 0x42, count: size - 10)
        #expect(
            !agree(prepared, publicKey, try key.rawRSA(seven), Array(repeating: 0x42, count: size - 10), "seven FF"))
    }

    @Test func verdictsAgreeForA2048BitKey() throws { try Self.checkKey(bits: 2048, rounds: 40) }

    @Test func aGoodSignaturePlusTheModulusIsRefused() throws {
        // A key whose modulus leaves room above it in 256 bytes for a good signature plus n,
        // the same number modulo n: at least one signature in eight has that room.
        var key = try PrivateKey.generateRSA(bits: 2048)
        while try ReceiptRSAKey(key.publicKey()).modulusBytes![0] > 0xE0 {
            key = try PrivateKey.generateRSA(bits: 2048)
        }
        let publicKey = try key.publicKey()
        let prepared = ReceiptRSAKey(publicKey)
        let modulus = try #require(prepared.modulusBytes)
        var random = SeededRandom(seed: 3)
        var refused = 0
        for round in 0..<200 where refused < 5 {
            let message = random.bytes(20 + round)
            let signature = try ReceiptCrypto.signRSA(message, digest: .sha256, key: key)
            let digestInfo = Self.sha256Prefix + ReceiptCrypto.hash(.sha256, of: message, segments: [0..<message.count])
            var sum = [UInt8](repeating: 0, count: signature.count)
            var carry = 0
            for index in signature.indices.reversed() {
                let total = Int(signature[index]) + Int(modulus[index]) + carry
                sum[index] = UInt8(total & 0xFF)
                carry = total >> 8
            }
            guard carry == 0 else { continue }
            #expect(Self.agree(prepared, publicKey, signature, digestInfo, "the signature"))
            #expect(!Self.agree(prepared, publicKey, sum, digestInfo, "the signature plus the modulus"))
            refused += 1
        }
        #expect(refused == 5)
    }

    @Test func verdictsAgreeFor3072And4096BitKeys() throws {
        try Self.checkKey(bits: 3072, rounds: 6)
        try Self.checkKey(bits: 4096, rounds: 4)
    }

    @Test func aKeyWithAnotherExponentIsVerifiedByEVP() throws { try Self.checkKey(bits: 2048, exponent: 3, rounds: 4) }

    @Test(.sharedVectors("receipts")) func realReceiptSignaturesVerifyOnTheMontgomeryPath() throws {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.xcodeCertificates = [SharedReceipts.storeKitCertificate]
        let engine = try ReceiptVerifier(configuration: configuration).engine
        for entry in SharedReceipts.real {
            let bytes = try SharedReceipts.bytes("real/\(entry.name)")
            let container = try ReceiptContainer(bytes)
            let signer = try engine.signer(for: container)
            #expect(signer.rsa.isPrepared, "\(entry.name)")
            let hash = ReceiptCrypto.hash(container.digest.crypto, of: bytes, segments: container.content)
            let digestInfo = container.digest.digestInfoPrefix + hash
            #expect(Self.agree(signer.rsa, signer.key, container.signature, digestInfo, entry.name), "\(entry.name)")
            var damaged = container.signature
            damaged[damaged.count / 2] ^= 0x10
            #expect(!Self.agree(signer.rsa, signer.key, damaged, digestInfo, entry.name), "\(entry.name)")
        }
    }
}
