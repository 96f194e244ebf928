import Dispatch
import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI
@testable import VouchOpenSSL

/// The fixed-key ES256 path (a per-key precomputed table, chunks sharing one inversion)
/// against OpenSSL's generic `EVP_PKEY_verify`: the same verdict on every input.
struct FixedKeyES256Tests {
    /// The P-256 group order n, big-endian.
    static let order: [UInt8] = WycheproofTests.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
    /// p − n, big-endian: r + n < p exactly when r < p − n.
    static let primeMinusOrder: [UInt8] = WycheproofTests.hex(
        "000000000000000000000000000000004319055258e8617b0c46353d039cdaae")

    // MARK: Wycheproof

    @Test(.sharedVectors("wycheproof"))
    func everyWycheproofP1363CaseGetsTheGenericVerdictThroughItsGroupsTable() throws {
        let url = SharedVectors.url("wycheproof/ecdsa_secp256r1_sha256_p1363_test.json")
        let root = try #require(
            try StrictJSON.parse([UInt8](Data(contentsOf: url)), limits: .init(maximumDepth: 64)).objectValue)
        let groups = try #require(root["testGroups"]?.arrayValue)
        var count = 0
        var fixedKeyCount = 0
        for group in groups {
            let group = try #require(group.objectValue)
            let der = WycheproofTests.hex(try #require(group["publicKeyDer"]?.stringValue))
            let key = try #require(PublicKey(subjectPublicKeyInfo: der))
            let fixed = try #require(FixedKeyES256(key: key), "a table for the group's key")
            #expect(fixed.isPrecomputed)
            var digests: [UInt8] = []
            var signatures: [UInt8] = []
            var expected: [Bool] = []
            for test in try #require(group["tests"]?.arrayValue) {
                let test = try #require(test.objectValue)
                let id = try #require(test["tcId"]?.int64Value)
                let message = WycheproofTests.hex(try #require(test["msg"]?.stringValue))
                let signature = WycheproofTests.hex(try #require(test["sig"]?.stringValue))
                let valid = try #require(test["result"]?.stringValue) == "valid"
                let generic = ES256.verify(signature: signature, message: message, key: key)
                #expect(generic == valid, "tcId \(id): generic")
                count += 1
                // Other lengths never reach a verifier: the token is rejected for its length.
                guard signature.count == 64 else {
                    #expect(!valid, "tcId \(id)")
                    continue
                }
                let digest = SHA256Digest.hash(message)
                #expect(fixed.verify(digest: digest, signature: signature) == generic, "tcId \(id): alone")
                digests += digest
                signatures += signature
                expected.append(generic)
                fixedKeyCount += 1
            }
            // And all of the group's cases as one chunk, good and bad mixed.
            let together = digests.withUnsafeBytes { digests in
                signatures.withUnsafeBytes { fixed.verify(digests: digests, signatures: $0, count: expected.count) }
            }
            #expect(together == expected)
        }
        #expect(count == 262)
        #expect(fixedKeyCount > 200)
    }

    // MARK: Differential

    static func leafKey(of authority: MintAuthority) throws -> PublicKey {
        let leaf = try #require(Certificate(derOrPEM: try authority.certificateChain()[0]))
        return try #require(leaf.publicKey)
    }

    /// A big-endian 256-bit sum or difference, wrapping.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> (sum: [UInt8], carry: Bool) {
        var sum = [UInt8](repeating: 0, count: 32)
        var carry = 0
        for index in (0..<32).reversed() {
            let total = Int(a[index]) + Int(b[index]) + carry
            sum[index] = UInt8(total & 0xff)
            carry = total >> 8
        }
        return (sum, carry != 0)
    }

    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var difference = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let total = Int(a[index]) - Int(b[index]) - borrow
            difference[index] = UInt8((total + 256) & 0xff)
            borrow = total < 0 ? 1 : 0
        }
        return difference
    }

    static func lessThan(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// The variants of one valid signature, each with the verdict it must get.
    static func variants(
        of signature: [UInt8], digest: [UInt8], random: inout SeededRandom
    ) -> [(digest: [UInt8], signature: [UInt8], valid: Bool)] {
        let r = Array(signature[0..<32])
        let s = Array(signature[32..<64])
        func bit(_ bytes: [UInt8]) -> [UInt8] {
            var flipped = bytes
            let position = Int(random.next() % UInt64(8 * bytes.count))
            flipped[position / 8] ^= 1 << (position % 8)
            return flipped
        }
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        let zero = [UInt8](repeating: 0, count: 32)
        let ones = [UInt8](repeating: 0xff, count: 32)
        let orderMinusOne = subtract(order, [UInt8](repeating: 0, count: 31) + [1])
        let (rPlusN, overflow) = add(r, order)
        // Below p − n, so that the comparison with r + n runs too.
        var small = bytes(32)
        while !lessThan(small, primeMinusOrder) { small[Int(random.next() % 17)] = 0 }
        return [
            (digest, signature, true),
            (digest, bit(r) + s, false),
            (digest, r + bit(s), false),
            (bit(digest), signature, false),
            (digest, r + subtract(order, s), true),  // high S is valid in ES256
            (digest, (overflow ? order : rPlusN) + s, false),
            (digest, zero + s, false),
            (digest, r + zero, false),
            (digest, order + s, false),
            (digest, r + order, false),
            (digest, orderMinusOne + s, false),
            (digest, r + orderMinusOne, false),
            (digest, bytes(64), false),
            (digest, s + r, false),
            (digest, small + s, false),
            (digest, r + ones, false),
        ]
    }

    /// Signatures per run: enough to hit every branch many times, a few seconds in a debug
    /// build; `VOUCH_DIFFERENTIAL_SIGNATURES` asks for more.
    static let differentialCount =
        ProcessInfo.processInfo.environment["VOUCH_DIFFERENTIAL_SIGNATURES"].flatMap { Int($0) } ?? 100_000

    @Test func aHundredThousandMixedSignaturesGetTheGenericVerdictPositionByPosition() throws {
        let authority = try MintAuthority.generate(MintAuthorityOptions(validity: MintedDataTests.validity))
        let signer = try MintSigner(authority: authority)
        let leaf = try #require(Certificate(derOrPEM: try authority.certificateChain()[0]))
        let key = try #require(leaf.publicKey)
        let fixed = try #require(FixedKeyES256(key: key))

        // Each valid signature yields 16 variants; workers take interleaved slices.
        let bases = max(1, Self.differentialCount / 16)
        let workers = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let mismatches = Locked<[String]>([])
        let counts = Locked<(total: Int, valid: Int)>((0, 0))
        let signing = signer
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var random = SeededRandom(seed: UInt64(worker) &+ 2026)
            var digests: [UInt8] = []
            var signatures: [UInt8] = []
            var expected: [Bool] = []
            var generic: [Bool] = []
            var total = 0
            var valid = 0
            func flush() {
                let verdicts = digests.withUnsafeBytes { digests in
                    signatures.withUnsafeBytes { fixed.verify(digests: digests, signatures: $0, count: expected.count) }
                }
                for index in expected.indices
                where verdicts?[index] != generic[index] || generic[index] != expected[index] {
                    let text =
                        "worker \(worker), position \(index) of \(expected.count): expected \(expected[index]), "
                        + "generic \(generic[index]), fixed key \(String(describing: verdicts?[index]))"
                    mismatches.withLock { $0.append(text) }
                }
                digests.removeAll(keepingCapacity: true)
                signatures.removeAll(keepingCapacity: true)
                expected.removeAll(keepingCapacity: true)
                generic.removeAll(keepingCapacity: true)
            }
            var chunkSize = 1 + Int(random.next() % 160)
            for base in stride(from: worker, to: bases, by: workers) {
                let message = Array("message \(base)".utf8)
                guard let signature = try? signing.signature(over: message) else {
                    mismatches.withLock { $0.append("signing failed") }
                    return
                }
                for variant in Self.variants(of: signature, digest: SHA256Digest.hash(message), random: &random) {
                    digests += variant.digest
                    signatures += variant.signature
                    expected.append(variant.valid)
                    generic.append(ES256.verify(signature: variant.signature, digest: variant.digest, key: key))
                    total += 1
                    if variant.valid { valid += 1 }
                    if expected.count == chunkSize {
                        flush()
                        chunkSize = 1 + Int(random.next() % 160)
                    }
                }
            }
            if !expected.isEmpty { flush() }
            counts.withLock { $0 = ($0.total + total, $0.valid + valid) }
        }
        let found = mismatches.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) mismatches, first: \(found.prefix(5))")
        let (total, valid) = counts.withLock { $0 }
        #expect(total == 16 * bases)
        #expect(valid == 2 * bases)
    }

    @Test func aBadSignatureNeitherFailsNorPassesItsChunkMates() throws {
        let authority = try MintAuthority.generate(MintAuthorityOptions(validity: MintedDataTests.validity))
        let signer = try MintSigner(authority: authority)
        let key = try Self.leafKey(of: authority)
        let fixed = try #require(FixedKeyES256(key: key))
        let message = Array("one message".utf8)
        let digest = SHA256Digest.hash(message)
        let good = try signer.signature(over: message)
        let zero = [UInt8](repeating: 0, count: 32)
        // s = 0 and s = n cannot be inverted; s = n − 1 can, but the signature is wrong.
        let bad = [
            Array(good[0..<32]) + zero, Array(good[0..<32]) + Self.order,
            Array(good[0..<32]) + Self.subtract(Self.order, [UInt8](repeating: 0, count: 31) + [1]),
        ]
        var signatures: [UInt8] = []
        var digests: [UInt8] = []
        for index in 0..<7 {
            signatures += index % 2 == 0 ? good : bad[index / 2]
            digests += digest
        }
        let verdicts = digests.withUnsafeBytes { digests in
            signatures.withUnsafeBytes { fixed.verify(digests: digests, signatures: $0, count: 7) }
        }
        #expect(verdicts == [true, false, true, false, true, false, true])
    }

    @Test func theSumsCoordinatesAreReadAsJacobianOnThisOpenSSL() throws {
        let authority = try MintAuthority.generate(MintAuthorityOptions(validity: MintedDataTests.validity))
        let key = try Self.leafKey(of: authority)
        let fixed = try #require(FixedKeyES256(key: key))
        // The C layer checks X/Z² against the affine x on two sums before it trusts them.
        #expect(fixed.comparesInJacobianCoordinates)
    }

    // MARK: When the path is used

    @Test func aKeysTableIsBuiltOnlyOnceItHasSignedMoreThanTheThreshold() throws {
        let authority = try MintAuthority.generate(MintAuthorityOptions(validity: MintedDataTests.validity))
        let key = try Self.leafKey(of: authority)
        let slot = FixedKeySlot()
        #expect(slot.key(for: key, counting: 60, threshold: 100) == nil)
        #expect(slot.key(for: key, counting: 40, threshold: 100) == nil)
        let built = try #require(slot.key(for: key, counting: 1, threshold: 100))
        #expect(slot.key(for: key, counting: 1, threshold: 100) === built)
    }

    @Test func threadsCrossingTheThresholdTogetherShareOneTable() throws {
        let authority = try MintAuthority.generate(MintAuthorityOptions(validity: MintedDataTests.validity))
        let key = try Self.leafKey(of: authority)
        let slot = FixedKeySlot()
        let seen = Locked<[FixedKeyES256]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<50 {
                if let built = slot.key(for: key, counting: 1, threshold: 20) {
                    seen.withLock { $0.append(built) }
                }
            }
        }
        let tables = seen.withLock { $0 }
        #expect(!tables.isEmpty)
        #expect(tables.allSatisfy { $0 === tables[0] })
    }

    static func mintedTokens() throws -> [String] {
        var tokens: [String] = []
        for file in ["transaction.txt", "renewal-info.txt", "app-transaction.txt", "notification.txt"] {
            tokens += try MintedDataTests.lines(file)
        }
        for line in try MintedDataTests.lines("tampered.tsv") + MintedDataTests.lines("tampered-notification.tsv") {
            tokens.append(String(line.split(separator: "\t")[0]))
        }
        return tokens
    }

    @Test func aChunkGetsTheResultOfEachTokenAloneWithTheFastPathOnAndOff() throws {
        let tokens = try Self.mintedTokens()
        // Mixed: every token twice, tampered ones between good ones, plus garbage.
        let mixed = (tokens + ["", "a.b.c", "not a token"] + tokens.reversed()).map { Array($0.utf8)[...] }
        let reference = try MintedDataTests.verifier { $0.fastVerify = false }
        let alone = mixed.map { token in Result { () throws(VerificationError) in try reference.verify(bytes: token) } }
        for fast in [false, true] {
            let verifier = try MintedDataTests.verifier {
                $0.fastVerify = fast
                $0.fastVerifyThreshold = 0
            }
            let together = verifier.verifyChunk(mixed)
            #expect(together.count == alone.count)
            for (index, (chunk, single)) in zip(together, alone).enumerated() {
                switch (chunk, single) {
                case (.success(let a), .success(let b)):
                    #expect(a.payload == b.payload && a.kind == b.kind, "token \(index)")
                case (.failure(let a), .failure(let b)):
                    #expect(a.code == b.code && a.reason == b.reason, "token \(index)")
                default:
                    Issue.record("token \(index): \(chunk) alone gave \(single)")
                }
            }
            #expect(alone.contains { if case .failure(let error) = $0 { error.code == .badSignature } else { false } })
            let signers = verifier.engine.cache.signers
            #expect(!signers.isEmpty)
            // VOUCH_FAST_VERIFY, when the suites run with it, overrides the configuration.
            let used = verifier.engine.fixedKeys.threshold != nil
            #expect(used == (Self.forced == "always" ? true : Self.forced == "off" ? false : fast))
            #expect(signers.allSatisfy { ($0.fixedKey.key != nil) == used })
        }
    }

    @Test func aSingleVerifyUsesTheTableOnceTheKeyIsHot() throws {
        let tokens = try MintedDataTests.lines("transaction.txt")
        let verifier = try MintedDataTests.verifier { $0.fastVerifyThreshold = tokens.count - 1 }
        for token in tokens { _ = try verifier.verify(token) }
        let signer = try #require(verifier.engine.cache.signers.first)
        #expect((signer.fixedKey.key != nil) == (Self.forced != "off"))
        // And the hot key still rejects a forged signature through the table.
        var parts = TokenParts.segments(tokens[0])
        parts[2] = String(decoding: Base64.encodeURL([UInt8](repeating: 1, count: 64)), as: UTF8.self)
        #expect(verifier.rejection(parts.joined(separator: "."))?.code == .badSignature)
    }

    @Test func theEnvironmentCanForceEitherPathAndNothingElse() {
        let configured = FixedKeyPolicy(threshold: 5)
        #expect(FixedKeyPolicy.overridden(configured, environment: [:]) == configured)
        #expect(FixedKeyPolicy.overridden(configured, environment: ["VOUCH_FAST_VERIFY": "off"]) == .off)
        #expect(FixedKeyPolicy.overridden(configured, environment: ["VOUCH_FAST_VERIFY": "0"]) == .off)
        #expect(FixedKeyPolicy.overridden(configured, environment: ["VOUCH_FAST_VERIFY": "always"]) == .always)
        #expect(FixedKeyPolicy.overridden(configured, environment: ["VOUCH_FAST_VERIFY": "fast"]) == configured)
        #expect(FixedKeyPolicy.overridden(.off, environment: ["VOUCH_FAST_VERIFY": "always"]) == .always)
    }

    /// The suites run again with `VOUCH_FAST_VERIFY` set (scripts/test): this shows the run
    /// really took the path it names.
    static let forced = ProcessInfo.processInfo.environment["VOUCH_FAST_VERIFY"]

    @Test func theForcedPathIsThePathTaken() throws {
        let forced = Self.forced
        let verifier = try MintedDataTests.verifier()
        _ = try verifier.verify(try MintedDataTests.lines("transaction.txt")[0])
        let signer = try #require(verifier.engine.cache.signers.first)
        switch forced {
        case "always": #expect(signer.fixedKey.key != nil)
        default: #expect(signer.fixedKey.key == nil)
        }
    }
}
