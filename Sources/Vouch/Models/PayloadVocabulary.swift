/// The member names and enum values of the App Store's payloads, for the payload parser
/// (``JSONVocabulary``): the names the models read, and the documented values of their
/// enum-like fields (literals too).
enum PayloadVocabulary {
    static let shared = JSONVocabulary(names + values)

    /// One of each model, for the test that holds ``names`` to their properties.
    static var models: [Any] {
        [
            JWSTransactionDecodedPayload(), JWSRenewalInfoDecodedPayload(), ResponseBodyV2DecodedPayload(),
            NotificationData(), Summary(), ExternalPurchaseToken(), AppData(), AppTransaction(),
            DecodedRealtimeRequestBody(), TransactionCommitmentInfo(), RenewalCommitmentInfo(),
            AdvancedCommerceTransactionInfo(), AdvancedCommerceRenewalInfo(), AdvancedCommerceDescriptors(),
            AdvancedCommerceTransactionItem(), AdvancedCommerceRenewalItem(), AdvancedCommerceOffer(),
            AdvancedCommerceRefund(), AdvancedCommercePriceIncreaseInfo(),
        ]
    }

    /// Every member name the models read, as literals: a literal's storage is immortal, so
    /// the threads that share these strings never contend for a reference count. A test
    /// checks the list against the models' property names, which are Apple's member names.
    static let names: [String] = [
        "SKU", "advancedCommerceInfo", "appAccountToken", "appAppleId", "appData", "appTransactionId",
        "applicationVersion", "autoRenewProductId", "autoRenewStatus", "billingPeriodNumber", "billingPlanType",
        "bundleId", "bundleVersion", "commitmentAutoRenewProductId", "commitmentAutoRenewStatus",
        "commitmentExpiresDate", "commitmentInfo", "commitmentPrice", "commitmentRenewalBillingPlanType",
        "commitmentRenewalDate", "commitmentRenewalPrice", "consistencyToken", "consumptionRequestReason",
        "currency", "data", "dependentSKUs", "description", "descriptors", "deviceVerification",
        "deviceVerificationNonce", "displayName", "eligibleWinBackOfferIds", "environment", "estimatedTax",
        "expirationIntent", "expiresDate", "externalPurchaseId", "externalPurchaseToken", "failedCount",
        "gracePeriodExpiresDate", "inAppOwnershipType", "isInBillingRetryPeriod", "isUpgraded", "items",
        "notificationType", "notificationUUID", "offer", "offerDiscountType", "offerIdentifier", "offerPeriod",
        "offerType", "originalApplicationVersion", "originalPlatform", "originalPurchaseDate",
        "originalTransactionId", "period", "periodCount", "preorderDate", "previousOriginalTransactionId", "price",
        "priceIncreaseInfo", "priceIncreaseStatus", "productId", "purchaseDate", "quantity", "reason",
        "receiptCreationDate", "receiptType", "recentSubscriptionStartDate", "refundAmount", "refundDate",
        "refundReason", "refundType", "refunds", "renewalBillingPlanType", "renewalDate", "renewalPrice",
        "requestIdentifier", "requestReferenceId", "revocationDate", "revocationPercentage", "revocationReason",
        "revocationType", "signedAppTransactionInfo", "signedDate", "signedRenewalInfo", "signedTransactionInfo",
        "status", "storefront", "storefrontCountryCodes", "storefrontId", "subscriptionGroupIdentifier", "subtype",
        "succeededCount", "summary", "taxCode", "taxExclusivePrice", "taxRate", "tokenCreationDate", "tokenType",
        "totalBillingPeriods", "transactionId", "transactionReason", "type", "userLocale", "version",
        "versionExternalIdentifier", "webOrderLineItemId",
    ]

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
