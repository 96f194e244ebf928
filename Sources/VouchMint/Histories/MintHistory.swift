public import Vouch

/// The signed data of one account's life with an app, in the order Apple would send it:
/// purchases, renewals, an upgrade, billing retry with a grace period, expiry, refunds and
/// their reversal, Family Sharing and its revocation, consumables.
///
/// Each step adds what Apple signs for it: the transaction (as the App Store Server API returns
/// it), and for events the server is notified of, the notification with its nested
/// transaction and renewal info. Every payload is a pure function of the steps taken, so the
/// same history signs to the same payloads (signatures differ: ECDSA nonces are random).
///
/// Dates are UNIX milliseconds; the caller picks them, so a test can ask about any instant.
public struct MintHistory: Sendable {
    /// One signed statement to make.
    public enum Item: Sendable, Hashable {
        /// A transaction, signed alone (as the App Store Server API returns it).
        case transaction(JSONObject)
        /// Renewal info, signed alone.
        case renewalInfo(JSONObject)
        /// A notification; its `data` gets the signed forms of the nested payloads.
        case notification(JSONObject, transaction: JSONObject?, renewalInfo: JSONObject?)

        /// The `signedDate` of the item.
        public var signedDate: Int64 {
            switch self {
            case .transaction(let payload), .renewalInfo(let payload), .notification(let payload, _, _):
                payload["signedDate"]?.int64Value ?? 0
            }
        }
    }

    /// A transaction of the history, to refer to in later steps.
    public struct Transaction: Sendable, Hashable {
        /// The payload as last stated.
        public var payload: JSONObject
        /// Its `transactionId`.
        public var transactionId: String { payload["transactionId"]?.stringValue ?? "" }
        /// Its `originalTransactionId`.
        public var originalTransactionId: String { payload["originalTransactionId"]?.stringValue ?? "" }
        /// Its `productId`.
        public var productId: String { payload["productId"]?.stringValue ?? "" }
        /// Its `expiresDate`, for subscriptions.
        public var expiresDate: Int64? { payload["expiresDate"]?.int64Value }
    }

    /// `environment` of every payload.
    public let environment: String
    /// `bundleId` of every payload.
    public let bundleId: String
    /// `appAppleId` of every notification.
    public let appAppleId: Int64
    /// The app's account id, sent as `appAccountToken` (lowercase UUID), or `nil`.
    public let appAccountToken: String?
    /// What to sign, in the order Apple would send it.
    public private(set) var items: [Item] = []
    private var nextId: Int64
    private var notificationCount = 0

    /// Starts an empty history of one account.
    /// - Parameters:
    ///   - environment: the `environment` of every payload.
    ///   - bundleId: the `bundleId` of every payload.
    ///   - appAppleId: the `appAppleId` of every notification.
    ///   - appAccountToken: the account id sent as `appAccountToken`, or `nil` for none.
    ///   - firstTransactionId: ids are numbered from it (give each account its own range).
    public init(
        environment: String = "Production", bundleId: String = "com.example.app", appAppleId: Int64 = 1_234_567_890,
        appAccountToken: String? = nil, firstTransactionId: Int64 = 2_000_000_000_000_000
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.appAccountToken = appAccountToken?.lowercased()
        nextId = firstTransactionId
    }

    // MARK: Steps

    /// A purchase. Subscriptions get `expiresDate`; `group` defaults to one group per app.
    @discardableResult
    public mutating func purchase(
        _ productId: String, type: ProductType, at date: Int64, price: Int64, currency: String = "USD",
        expires: Int64? = nil, group: String? = nil, freeTrial: Bool = false, quantity: Int = 1, notify: Bool = true
    ) -> Transaction {
        let id = newId()
        var transaction = transactionPayload(
            id: id, originalId: id, productId: productId, type: type, purchase: date, originalPurchase: date,
            expires: expires, group: type == .autoRenewableSubscription ? (group ?? "21000001") : nil, price: price,
            currency: currency, quantity: quantity, reason: "PURCHASE", signed: date)
        if freeTrial {
            transaction["offerType"] = 1
            transaction["offerDiscountType"] = "FREE_TRIAL"
            transaction["price"] = 0
        }
        let minted = Transaction(payload: transaction)
        record(
            minted, at: date, notify: notify,
            type: type == .autoRenewableSubscription ? "SUBSCRIBED" : "ONE_TIME_CHARGE",
            subtype: type == .autoRenewableSubscription ? "INITIAL_BUY" : nil)
        return minted
    }

    /// The next period of a subscription, from the previous one's expiry.
    @discardableResult
    public mutating func renew(_ previous: Transaction, until expires: Int64, price: Int64? = nil) -> Transaction {
        let start = previous.expiresDate ?? 0
        var transaction = previous.payload
        transaction["transactionId"] = .string(String(newId()))
        transaction["webOrderLineItemId"] = .string(String(newId()))
        transaction["purchaseDate"] = .number(String(start))
        transaction["expiresDate"] = .number(String(expires))
        transaction["transactionReason"] = "RENEWAL"
        transaction["signedDate"] = .number(String(start))
        transaction["offerType"] = nil
        transaction["offerDiscountType"] = nil
        if let price { transaction["price"] = .number(String(price)) }
        let minted = Transaction(payload: transaction)
        record(minted, at: start, notify: true, type: "DID_RENEW", subtype: nil)
        return minted
    }

    /// An upgrade to a higher product of the same group at `date`: the current transaction is
    /// restated with `isUpgraded`, and a new one starts with the same `originalTransactionId`.
    @discardableResult
    public mutating func upgrade(
        _ current: Transaction, to productId: String, at date: Int64, until expires: Int64, price: Int64
    ) -> Transaction {
        var old = current.payload
        old["isUpgraded"] = true
        old["signedDate"] = .number(String(date))
        items.append(.transaction(old))
        var transaction = current.payload
        transaction["transactionId"] = .string(String(newId()))
        transaction["webOrderLineItemId"] = .string(String(newId()))
        transaction["productId"] = .string(productId)
        transaction["purchaseDate"] = .number(String(date))
        transaction["expiresDate"] = .number(String(expires))
        transaction["price"] = .number(String(price))
        transaction["transactionReason"] = "PURCHASE"
        transaction["signedDate"] = .number(String(date))
        transaction["offerType"] = nil
        transaction["offerDiscountType"] = nil
        let minted = Transaction(payload: transaction)
        record(minted, at: date, notify: true, type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE")
        return minted
    }

    /// The renewal failed at the subscription's expiry: `DID_FAIL_TO_RENEW` with renewal info in
    /// billing retry, with a grace period until `graceUntil` when given.
    public mutating func failRenewal(_ current: Transaction, graceUntil: Int64?) {
        let date = current.expiresDate ?? 0
        var renewal = renewalPayload(current, signed: date, autoRenew: true)
        renewal["expirationIntent"] = 2
        renewal["isInBillingRetryPeriod"] = true
        if let graceUntil { renewal["gracePeriodExpiresDate"] = .number(String(graceUntil)) }
        items.append(
            .notification(
                notification(
                    "DID_FAIL_TO_RENEW", subtype: graceUntil == nil ? nil : "GRACE_PERIOD", at: date,
                    status: graceUntil == nil ? 3 : 4),
                transaction: restated(current, at: date), renewalInfo: renewal))
    }

    /// The grace period ended without payment (`GRACE_PERIOD_EXPIRED`); billing retry goes on.
    public mutating func endGracePeriod(_ current: Transaction, at date: Int64) {
        var renewal = renewalPayload(current, signed: date, autoRenew: true)
        renewal["expirationIntent"] = 2
        renewal["isInBillingRetryPeriod"] = true
        items.append(
            .notification(
                notification("GRACE_PERIOD_EXPIRED", subtype: nil, at: date, status: 3),
                transaction: restated(current, at: date), renewalInfo: renewal))
    }

    /// The customer turned auto-renew off and the subscription expired (`EXPIRED`, `VOLUNTARY`).
    public mutating func expire(_ current: Transaction) {
        let date = current.expiresDate ?? 0
        var renewal = renewalPayload(current, signed: date, autoRenew: false)
        renewal["expirationIntent"] = 1
        renewal["isInBillingRetryPeriod"] = false
        items.append(
            .notification(
                notification("EXPIRED", subtype: "VOLUNTARY", at: date, status: 2),
                transaction: restated(current, at: date), renewalInfo: renewal))
    }

    /// A refund: the `REFUND` notification whose transaction carries the revocation.
    public mutating func refund(
        _ transaction: Transaction, at date: Int64, reason: Int32 = 0, type: String = "REFUND_FULL",
        percentage: Int32? = nil
    ) {
        var revoked = restated(transaction, at: date)
        revoked["revocationDate"] = .number(String(date))
        revoked["revocationReason"] = .number(String(reason))
        revoked["revocationType"] = .string(type)
        let share = percentage ?? (type == "REFUND_FULL" ? 100_000 : nil)
        if let share { revoked["revocationPercentage"] = .number(String(share)) }
        items.append(
            .notification(
                notification("REFUND", subtype: nil, at: date, status: 5), transaction: revoked,
                renewalInfo: isSubscription(transaction)
                    ? renewalPayload(transaction, signed: date, autoRenew: false) : nil))
    }

    /// The refund was reversed: `REFUND_REVERSED`, the transaction again without revocation.
    public mutating func reverseRefund(_ transaction: Transaction, at date: Int64) {
        items.append(
            .notification(
                notification("REFUND_REVERSED", subtype: nil, at: date, status: 1),
                transaction: restated(transaction, at: date),
                renewalInfo: nil))
    }

    /// What a family member's server sees when a purchase is shared with them: a transaction of
    /// their own (new ids, `FAMILY_SHARED`, no `appAccountToken`, no price).
    @discardableResult
    public mutating func shareWithFamily(_ transaction: Transaction, at date: Int64) -> Transaction {
        let id = newId()
        var shared = transaction.payload
        shared["transactionId"] = .string(String(id))
        shared["originalTransactionId"] = .string(String(id))
        shared["inAppOwnershipType"] = "FAMILY_SHARED"
        shared["appAccountToken"] = nil
        shared["signedDate"] = .number(String(date))
        shared["purchaseDate"] = .number(String(date))
        shared["originalPurchaseDate"] = .number(String(date))
        let minted = Transaction(payload: shared)
        items.append(.transaction(shared))
        return minted
    }

    /// The purchaser stopped sharing: `REVOKE` with a `FAMILY_REVOKE` revocation of the family
    /// member's transaction (nothing refunded).
    public mutating func revokeFamilySharing(_ shared: Transaction, at date: Int64) {
        var revoked = restated(shared, at: date)
        revoked["revocationDate"] = .number(String(date))
        revoked["revocationReason"] = 0
        revoked["revocationType"] = "FAMILY_REVOKE"
        items.append(
            .notification(
                notification("REVOKE", subtype: nil, at: date, status: 5), transaction: revoked, renewalInfo: nil))
    }

    /// A statement of the transaction as the App Store Server API returns it at `date`
    /// (transaction history, or Get Transaction Info), unchanged but for its `signedDate`.
    public mutating func restate(_ transaction: Transaction, at date: Int64) {
        items.append(.transaction(restated(transaction, at: date)))
    }

    /// Appends the items of another history (a family member's, say) after these.
    public mutating func append(_ other: MintHistory) {
        items += other.items
    }

    // MARK: Signing

    /// Signs every item, in order: one compact JWS per item.
    public func tokens(signer: MintSigner) throws(MintError) -> [String] {
        var tokens: [String] = []
        tokens.reserveCapacity(items.count)
        for item in items {
            tokens.append(try Self.sign(item, signer: signer))
        }
        return tokens
    }

    /// The compact JWS of one item (a notification's nested payloads signed first).
    public static func sign(_ item: Item, signer: MintSigner) throws(MintError) -> String {
        switch item {
        case .transaction(let payload), .renewalInfo(let payload):
            return try signer.sign(payload: payload)
        case .notification(var payload, let transaction, let renewal):
            guard var data = payload["data"]?.objectValue else { return try signer.sign(payload: payload) }
            if let transaction { data["signedTransactionInfo"] = .string(try signer.sign(payload: transaction)) }
            if let renewal { data["signedRenewalInfo"] = .string(try signer.sign(payload: renewal)) }
            payload["data"] = .object(data)
            return try signer.sign(payload: payload)
        }
    }

    // MARK: Payloads

    private mutating func newId() -> Int64 {
        defer { nextId += 1 }
        return nextId
    }

    private func isSubscription(_ transaction: Transaction) -> Bool {
        transaction.payload["type"]?.stringValue == ProductType.autoRenewableSubscription.rawValue
    }

    private func restated(_ transaction: Transaction, at date: Int64) -> JSONObject {
        var payload = transaction.payload
        payload["signedDate"] = .number(String(date))
        return payload
    }

    private mutating func record(
        _ transaction: Transaction, at date: Int64, notify: Bool, type: String, subtype: String?
    ) {
        guard notify else {
            items.append(.transaction(transaction.payload))
            return
        }
        let renewal = isSubscription(transaction) ? renewalPayload(transaction, signed: date, autoRenew: true) : nil
        items.append(
            .notification(
                notification(type, subtype: subtype, at: date, status: renewal == nil ? nil : 1),
                transaction: transaction.payload, renewalInfo: renewal))
    }

    private func transactionPayload(
        id: Int64, originalId: Int64, productId: String, type: ProductType, purchase: Int64, originalPurchase: Int64,
        expires: Int64?, group: String?, price: Int64, currency: String, quantity: Int, reason: String, signed: Int64
    ) -> JSONObject {
        var members: [JSONObject.Member] = [
            .init("transactionId", .string(String(id))),
            .init("originalTransactionId", .string(String(originalId))),
        ]
        if type == .autoRenewableSubscription {
            members.append(.init("webOrderLineItemId", .string(String(id + 500_000_000_000_000))))
        }
        members += [
            .init("bundleId", .string(bundleId)),
            .init("productId", .string(productId)),
        ]
        if let group { members.append(.init("subscriptionGroupIdentifier", .string(group))) }
        members += [
            .init("purchaseDate", .number(String(purchase))),
            .init("originalPurchaseDate", .number(String(originalPurchase))),
        ]
        if let expires { members.append(.init("expiresDate", .number(String(expires)))) }
        members += [
            .init("quantity", .number(String(quantity))),
            .init("type", .string(type.rawValue)),
        ]
        if let appAccountToken { members.append(.init("appAccountToken", .string(appAccountToken))) }
        members += [
            .init("inAppOwnershipType", "PURCHASED"),
            .init("signedDate", .number(String(signed))),
            .init("environment", .string(environment)),
            .init("transactionReason", .string(reason)),
            .init("storefront", currency == "USD" ? "USA" : "FRA"),
            .init("storefrontId", currency == "USD" ? "143441" : "143442"),
            .init("price", .number(String(price))),
            .init("currency", .string(currency)),
        ]
        return JSONObject(members)
    }

    private func renewalPayload(_ transaction: Transaction, signed: Int64, autoRenew: Bool) -> JSONObject {
        let payload = transaction.payload
        var members: [JSONObject.Member] = [
            .init("originalTransactionId", payload["originalTransactionId"] ?? .null),
            .init("autoRenewProductId", payload["productId"] ?? .null),
            .init("productId", payload["productId"] ?? .null),
            .init("autoRenewStatus", autoRenew ? 1 : 0),
            .init("isInBillingRetryPeriod", false),
            .init("signedDate", .number(String(signed))),
            .init("environment", .string(environment)),
            .init("recentSubscriptionStartDate", payload["originalPurchaseDate"] ?? .null),
            .init("renewalDate", payload["expiresDate"] ?? .null),
            .init("currency", payload["currency"] ?? .null),
            .init("renewalPrice", payload["price"] ?? .null),
        ]
        if let appAccountToken { members.append(.init("appAccountToken", .string(appAccountToken))) }
        return JSONObject(members)
    }

    private mutating func notification(_ type: String, subtype: String?, at date: Int64, status: Int?) -> JSONObject {
        notificationCount += 1
        var data: [JSONObject.Member] = [
            .init("appAppleId", .number(String(appAppleId))),
            .init("bundleId", .string(bundleId)),
            .init("bundleVersion", "1.0"),
            .init("environment", .string(environment)),
        ]
        if let status { data.append(.init("status", .number(String(status)))) }
        var members: [JSONObject.Member] = [.init("notificationType", .string(type))]
        if let subtype { members.append(.init("subtype", .string(subtype))) }
        // A UUID made of the history's first id and the notification's number: unique and stable.
        let serial = String(nextId, radix: 16) + String(notificationCount, radix: 16)
        let padded = String(repeating: "0", count: max(0, 12 - serial.count)) + serial.suffix(12)
        members += [
            .init("notificationUUID", .string("00000000-0000-4000-8000-" + padded)),
            .init("data", .object(JSONObject(data))),
            .init("version", "2.0"),
            .init("signedDate", .number(String(date))),
        ]
        return JSONObject(members)
    }
}
