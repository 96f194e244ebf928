extension ResponseBodyV2DecodedPayload {
    /// The bundle identifier the notification applies to, taken as Apple's verifier does: from
    /// the first present object among ``data``, ``summary``, ``externalPurchaseToken`` and
    /// ``appData``. A present object without the member gives `nil`; later objects are not consulted.
    public var effectiveBundleId: String? { effectiveApp?.bundleId }

    /// The App Apple ID the notification applies to, from the same object as ``effectiveBundleId``.
    public var effectiveAppAppleId: Int64? { effectiveApp?.appAppleId }

    /// The environment the notification applies to, from the same object as ``effectiveBundleId``.
    /// An external purchase token carries no environment: it is ``AppStoreEnvironment/sandbox``
    /// when its `externalPurchaseId` starts with `SANDBOX`, else ``AppStoreEnvironment/production``.
    public var effectiveEnvironment: AppStoreEnvironment? { effectiveApp?.environment }

    private var effectiveApp: (bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?)? {
        if let data {
            return (data.bundleId, data.appAppleId, data.environment)
        }
        if let summary {
            return (summary.bundleId, summary.appAppleId, summary.environment)
        }
        if let token = externalPurchaseToken {
            let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
            return (token.bundleId, token.appAppleId, sandbox ? .sandbox : .production)
        }
        if let appData {
            return (appData.bundleId, appData.appAppleId, appData.environment)
        }
        return nil
    }
}
