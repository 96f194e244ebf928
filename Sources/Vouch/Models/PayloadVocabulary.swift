/// The member names and enum values of the App Store's payloads, for the payload parser
/// (``JSONVocabulary``): taken from the models themselves, whose properties are named as
/// Apple's members, and from the documented values of their enum-like fields.
enum PayloadVocabulary {
    static let shared = JSONVocabulary(names + values)

    /// Every property name of every model (`json` included, harmlessly).
    static var names: [String] {
        let models: [Any] = [
            JWSTransactionDecodedPayload(), JWSRenewalInfoDecodedPayload(), ResponseBodyV2DecodedPayload(),
            NotificationData(), Summary(), ExternalPurchaseToken(), AppData(), AppTransaction(),
            DecodedRealtimeRequestBody(), TransactionCommitmentInfo(), RenewalCommitmentInfo(),
            AdvancedCommerceTransactionInfo(), AdvancedCommerceRenewalInfo(), AdvancedCommerceDescriptors(),
            AdvancedCommerceTransactionItem(), AdvancedCommerceRenewalItem(), AdvancedCommerceOffer(),
            AdvancedCommerceRefund(), AdvancedCommercePriceIncreaseInfo(),
        ]
        return models.flatMap { Mirror(reflecting: $0).children.compactMap(\.label) }
    }

    /// Every documented value of the enum-like fields that hold text.
    static var values: [String] {
        func raw<Value: PayloadEnum>(_ type: Value.Type) -> [String] where Value.RawValue == String {
            type.knownValues.map(\.rawValue)
        }
        return raw(ProductType.self) + raw(InAppOwnershipType.self) + raw(TransactionReason.self)
            + raw(AppStoreEnvironment.self) + raw(RevocationType.self) + raw(OfferDiscountType.self)
            + raw(BillingPlanType.self) + raw(RenewalBillingPlanType.self) + raw(NotificationType.self)
            + raw(NotificationSubtype.self) + raw(PurchasePlatform.self) + raw(ConsumptionRequestReason.self)
            + raw(ExternalPurchaseTokenType.self) + raw(AdvancedCommercePeriod.self)
            + raw(AdvancedCommerceOfferPeriod.self) + raw(AdvancedCommerceOfferReason.self)
            + raw(AdvancedCommerceRefundReason.self) + raw(AdvancedCommerceRefundType.self)
            + raw(AdvancedCommercePriceIncreaseInfoStatus.self)
    }
}
