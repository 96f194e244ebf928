// The payloads the App Store signs, and the member that holds each one's signing date.

extension JWSTransactionDecodedPayload: SignedPayload {}

extension JWSRenewalInfoDecodedPayload: SignedPayload {}

extension ResponseBodyV2DecodedPayload: SignedPayload {}

extension DecodedRealtimeRequestBody: SignedPayload {}

extension AppTransaction: SignedPayload {
    /// The signing date: ``receiptCreationDate``.
    public var signedDate: Timestamp? { receiptCreationDate }
}
