internal import CVouchECDSA

/// SHA-256 over a cached header segment and its ".", kept as a midstate: a token's digest then
/// hashes only its payload segment. The header (with its three certificates) is most of a
/// token's signing input.
package final class HeaderDigest: @unchecked Sendable {
    /// Owned; only read (copied from) after `init`. `nil` when OpenSSL has no low-level
    /// SHA-256 API: each digest then hashes the whole signing input.
    private let midstate: OpaquePointer?

    package init(segment: [UInt8]) {
        let prefix = segment + [UInt8(ascii: ".")]
        midstate = vouch_sha256_midstate_new(prefix, prefix.count)
    }

    deinit { vouch_sha256_midstate_free(midstate) }

    /// SHA-256 of `segment ‖ "." ‖ payload`, the signing input, held inline (no allocation);
    /// from scratch should OpenSSL fail.
    package func digest(payload: UnsafeRawBufferPointer, signingInput: UnsafeRawBufferPointer) -> SIMD32<UInt8> {
        var digest = SIMD32<UInt8>()
        withUnsafeMutableBytes(of: &digest) { digest in
            let output = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if let midstate,
                vouch_sha256_midstate_finish(
                    midstate, payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload.count, output) == 1
            {
                return
            }
            SHA256Digest.hash(signingInput, into: digest)
        }
        return digest
    }
}
