internal import CVouchECDSA
internal import Foundation
internal import VouchOpenSSL

/// ES256 verification for one P-256 key that signs many tokens.
///
/// A generic ECDSA verify computes u1·G + u2·Q where only G has a precomputed table. For a
/// key that signs thousands of tokens Q is as fixed as G, so this key carries a copy of the
/// P-256 group whose generator is Q, with OpenSSL's fixed-base table built for it (tens of
/// milliseconds, about 150 KB). A chunk of signatures then shares one inversion modulo n, and
/// x(R) is compared with r in Jacobian coordinates, without a field inversion. The verdict is
/// OpenSSL's on every input: 0 < r, s < n, R not at infinity, x(R) ≡ r (mod n).
final class FixedKeyES256: @unchecked Sendable {
    private let pointer: OpaquePointer
    /// Seconds the table took to build.
    let buildSeconds: Double

    /// How the key computes (see `vouch_p256_mode`).
    var mode: vouch_p256_mode { vouch_p256_key_mode(pointer) }

    /// Whether verification uses the precomputed tables (false when OpenSSL lacks the
    /// deprecated EC API and the C layer falls back to EVP).
    var isPrecomputed: Bool { mode != VOUCH_P256_GENERIC }

    /// Whether x(R) is compared in Jacobian coordinates: the C layer checks, when it builds
    /// the key, that the coordinates OpenSSL hands back satisfy x = X/Z², else compares the
    /// affine x.
    var comparesInJacobianCoordinates: Bool { mode == VOUCH_P256_PRECOMPUTED_JACOBIAN }

    /// Prepares `key`; `nil` when it is not a P-256 key or OpenSSL fails.
    convenience init?(key: PublicKey) {
        guard key.isP256, let point = key.encodedPoint else { return nil }
        self.init(encodedPoint: point)
    }

    /// Prepares the P-256 point in X9.62 encoding.
    init?(encodedPoint point: [UInt8]) {
        let start = DispatchTime.now().uptimeNanoseconds
        guard let pointer = point.withUnsafeBufferPointer({ vouch_p256_key_new($0.baseAddress, $0.count) }) else {
            return nil
        }
        self.pointer = pointer
        buildSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    deinit { vouch_p256_key_free(pointer) }

    /// Verdicts for `count` signatures: `digests` holds their SHA-256 digests (32 bytes each),
    /// `signatures` their raw `r‖s` (64 bytes each). `nil` when OpenSSL failed (memory): the
    /// caller then verifies another way.
    func verify(digests: UnsafeRawBufferPointer, signatures: UnsafeRawBufferPointer, count: Int) -> [Bool]? {
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

/// The fixed-key verifier of one cached signer, built once the signer's key has been seen on
/// enough tokens to repay the table.
final class FixedKeySlot: Sendable {
    private struct State: Sendable {
        var seen = 0
        var key: FixedKeyES256? = nil
        var building = false
        var unavailable = false
    }
    private let state = Locked(State())

    /// Counts `tokens` more signatures by `publicKey` and returns the prepared key once it is
    /// ready. The call that crosses `threshold` builds it, outside the lock: other threads keep
    /// the generic path meanwhile instead of waiting.
    func key(for publicKey: PublicKey, counting tokens: Int, threshold: Int) -> FixedKeyES256? {
        let shouldBuild: Bool = state.withLock { state in
            if state.key != nil || state.unavailable || state.building { return false }
            state.seen += tokens
            guard state.seen > threshold else { return false }
            state.building = true
            return true
        }
        guard shouldBuild else { return state.withLock { $0.key } }
        let built = FixedKeyES256(key: publicKey).flatMap { $0.isPrecomputed ? $0 : nil }
        state.withLock { state in
            state.key = built
            state.unavailable = built == nil
            state.building = false
        }
        return built
    }

    /// The prepared key, if built.
    var key: FixedKeyES256? { state.withLock { $0.key } }
}

/// When verification switches to the fixed-key path.
struct FixedKeyPolicy: Sendable, Equatable {
    /// Tokens a key must have signed in this process before its table is built. A table costs
    /// about as much as 400 generic verifications and saves about 60% of each later one, so a
    /// key is worth it after some 700 tokens; waiting for 1,000 loses at most about twice the
    /// table's cost on a key that stops right there (the ski-rental bound), and nothing on the
    /// millions a leaf key signs.
    static let defaultThreshold = 1_000

    /// `nil`: never (generic `EVP_PKEY_verify` only).
    var threshold: Int?

    static let automatic = FixedKeyPolicy(threshold: defaultThreshold)
    static let off = FixedKeyPolicy(threshold: nil)
    static let always = FixedKeyPolicy(threshold: 0)

    /// The policy `VOUCH_FAST_VERIFY` asks for: `off` (or `0`) forces the generic path,
    /// `always` builds a key's table on its first token; unset or anything else leaves
    /// `configured` alone.
    static func overridden(_ configured: FixedKeyPolicy, environment: [String: String]) -> FixedKeyPolicy {
        switch environment["VOUCH_FAST_VERIFY"] {
        case "off", "0": .off
        case "always": .always
        default: configured
        }
    }
}
