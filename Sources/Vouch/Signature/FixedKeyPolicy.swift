internal import VouchOpenSSL

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
