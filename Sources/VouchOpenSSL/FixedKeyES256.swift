internal import CVouchECDSA

/// ES256 verification for one P-256 key that signs many tokens.
///
/// A generic ECDSA verify computes u1·G + u2·Q where only G has a precomputed table. For a
/// key that signs thousands of tokens Q is as fixed as G, so this key carries a copy of the
/// P-256 group whose generator is Q, with OpenSSL's fixed-base table built for it (tens of
/// milliseconds, about 150 KB). A chunk of signatures then shares one inversion modulo n, and
/// x(R) is compared with r in Jacobian coordinates, without a field inversion. The verdict is
/// OpenSSL's on every input: 0 < r, s < n, R not at infinity, x(R) ≡ r (mod n).
///
/// Owns one `vouch_p256_key` (the two groups, the table and the moduli), freed in `deinit`;
/// the C layer only reads it after `init`, so one instance serves many threads at once.
package final class FixedKeyES256: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// How the key computes (see `vouch_p256_mode`).
    private var mode: vouch_p256_mode { vouch_p256_key_mode(pointer) }

    /// Whether verification uses the precomputed tables (false when OpenSSL lacks the
    /// deprecated EC API and the C layer falls back to EVP).
    package var isPrecomputed: Bool { mode != VOUCH_P256_GENERIC }

    /// Whether x(R) is compared in Jacobian coordinates: the C layer checks, when it builds
    /// the key, that the coordinates OpenSSL hands back satisfy x = X/Z², else compares the
    /// affine x.
    var comparesInJacobianCoordinates: Bool { mode == VOUCH_P256_PRECOMPUTED_JACOBIAN }

    /// Prepares `key`, building its table; `nil` when it is not a P-256 key or OpenSSL fails.
    package init?(key: PublicKey) {
        guard key.isP256, let point = key.encodedPoint,
            let pointer = point.withUnsafeBufferPointer({ vouch_p256_key_new($0.baseAddress, $0.count) })
        else { return nil }
        self.pointer = pointer
    }

    deinit { vouch_p256_key_free(pointer) }

    /// Verdicts for `count` signatures: `digests` holds their SHA-256 digests (32 bytes each),
    /// `signatures` their raw `r‖s` (64 bytes each). `nil` when OpenSSL failed (memory): the
    /// caller then verifies another way.
    package func verify(digests: UnsafeRawBufferPointer, signatures: UnsafeRawBufferPointer, count: Int) -> [Bool]? {
        precondition(digests.count >= 32 * count && signatures.count >= 64 * count)
        guard count > 0 else { return [] }
        var verdicts = [UInt8](repeating: 0, count: count)
        let ok = verdicts.withUnsafeMutableBufferPointer { verdicts in
            vouch_p256_verify(
                pointer, digests.bindMemory(to: UInt8.self).baseAddress,
                signatures.bindMemory(to: UInt8.self).baseAddress,
                count, verdicts.baseAddress)
        }
        guard ok == 1 else { return nil }
        return verdicts.map { $0 == 1 }
    }

    /// One signature; `nil` when OpenSSL failed.
    func verify(digest: [UInt8], signature: [UInt8]) -> Bool? {
        guard digest.count == 32, signature.count == 64 else { return false }
        return digest.withUnsafeBytes { digest in
            signature.withUnsafeBytes { signature in
                verify(digests: digest, signatures: signature, count: 1)?[0]
            }
        }
    }
}
