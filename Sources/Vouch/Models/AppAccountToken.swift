public import Foundation

extension JWSTransactionDecodedPayload {
    /// ``appAccountToken`` as a UUID, or `nil` when absent or not a UUID. Compare UUIDs, not
    /// their text: the payload's text may be lower-case, `UUID.uuidString` is upper-case.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap { UUID(uuidString: $0) } }
}

extension JWSRenewalInfoDecodedPayload {
    /// ``appAccountToken`` as a UUID, or `nil` when absent or not a UUID. Compare UUIDs, not
    /// their text: the payload's text may be lower-case, `UUID.uuidString` is upper-case.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap { UUID(uuidString: $0) } }
}
