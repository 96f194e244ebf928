import Testing
import VouchOpenSSL
import VouchTestSupport

/// A token's digest continues from its header's midstate: it must be SHA-256 of the whole
/// signing input for headers and payloads of every length around SHA-256's 64-byte blocks.
struct HeaderDigestTests {
    @Test func midstateDigestIsTheDigestOfTheWholeSigningInput() {
        var random = SeededRandom(seed: 23)
        func byte() -> UInt8 { UInt8(truncatingIfNeeded: random.next()) }
        var mismatches = 0
        var checked = 0
        for headerLength in [0, 1, 54, 55, 56, 63, 64, 65, 119, 128, 3_632] {
            let segment = (0..<headerLength).map { _ in byte() }
            let digest = HeaderDigest(segment: segment)
            for payloadLength in [0, 1, 7, 8, 9, 55, 56, 63, 64, 65, 127, 128, 908] {
                let payload = (0..<payloadLength).map { _ in byte() }
                let signingInput = segment + [UInt8(ascii: ".")] + payload
                let midstate = payload.withUnsafeBytes { payload in
                    signingInput.withUnsafeBytes { digest.digest(payload: payload, signingInput: $0) }
                }
                if withUnsafeBytes(of: midstate, { Array($0) }) != SHA256Digest.hash(signingInput) { mismatches += 1 }
                checked += 1
            }
        }
        #expect(checked == 11 * 13)
        #expect(mismatches == 0)
    }
}
