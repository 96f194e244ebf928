import Testing

@testable import Vouch

extension Verifier {
    /// The code a token is rejected with, or `nil` when it verifies.
    func rejection(_ token: String, as kind: PayloadKind? = nil) -> VerificationError? {
        do {
            _ = try verify(token, as: kind)
            return nil
        } catch {
            return error
        }
    }
}
