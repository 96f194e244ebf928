public import Vouch
public import VouchMintPKI

/// The signed data of one account's life with an app, in the order Apple would send it:
/// purchases, renewals, an upgrade, billing retry with a grace period, expiry, refunds and
/// their reversal, Family Sharing and its revocation, consumables, a test notification, and the
/// seats of a multiseat subscription: bought, added, refunded, given to members, released.
///
/// Each step adds what Apple signs for it: the transaction (as the App Store Server API returns
/// it), and for events the server is notified of, the notification with its nested
/// transaction and renewal info. Every payload is a pure function of the steps taken, so the
/// same history signs to the same payloads (signatures differ: ECDSA nonces are random).
///
/// The caller picks the dates, so a test can ask about any instant. A step out of order (a
/// refund before its purchase, a renewal that ends before it starts, a grace period of a
/// purchase that never expires) is refused when the history is signed, by
/// ``tokens(signer:)`` and ``webhookBodies(signer:)``, with the step named.
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
        public var signedDate: Timestamp {
            switch self {
            case .transaction(let payload), .renewalInfo(let payload), .notification(let payload, _, _):
                Timestamp(milliseconds: payload["signedDate"]?.int64Value ?? 0)
            }
        }

        /// Whether the App Store sends the item to the server's notification URL (as
        /// ``MintHistory/webhookBody(signedPayload:)``), rather than returning it from the App Store Server API.
        public var isNotification: Bool {
            if case .notification = self { return true }
            return false
        }
    }

    /// A transaction of the history, to refer to in later steps.
    public struct Transaction: Sendable, Hashable {
        /// The payload as last stated.
        public var payload: JSONObject
        /// What a period costs without an offer, when the transaction itself is free (a trial).
        var regularPrice: Int64? = nil

        /// Its `transactionId`.
        public var transactionId: String { payload["transactionId"]?.stringValue ?? "" }
        /// Its `originalTransactionId`.
        public var originalTransactionId: String { payload["originalTransactionId"]?.stringValue ?? "" }
        /// Its `productId`.
        public var productId: String { payload["productId"]?.stringValue ?? "" }
        /// Its `purchaseDate`.
        public var purchaseDate: Timestamp { Timestamp(milliseconds: milliseconds("purchaseDate") ?? 0) }
        /// Its `expiresDate`, for subscriptions.
        public var expiresDate: Timestamp? { milliseconds("expiresDate").map(Timestamp.init(milliseconds:)) }
        /// Its `price`, in milliunits.
        public var price: Int64? { payload["price"]?.int64Value }

        func milliseconds(_ name: String) -> Int64? { payload[name]?.int64Value }
        var expiresMilliseconds: Int64? { milliseconds("expiresDate") }
        var purchaseMilliseconds: Int64 { milliseconds("purchaseDate") ?? 0 }
    }

    /// `environment` of every payload.
    public let environment: AppStoreEnvironment
    /// `bundleId` of every payload.
    public let bundleId: String
    /// `appAppleId` of every notification (of a test notification in Production only, as Apple sends it).
    public let appAppleId: Int64
    /// The app's account id, sent as `appAccountToken` (lowercase UUID), or `nil`.
    public let appAccountToken: String?
    /// The history's first id: its transaction ids count up from it, and its notifications'
    /// `notificationUUID`s are made of it and their number.
    public let firstTransactionId: Int64
    /// What to sign, in the order Apple would send it.
    public internal(set) var items: [Item] = []
    private var nextId: Int64
    private var notificationCount = 0
    /// The steps that were out of order, in the order taken.
    var problems: [String] = []
    /// The seats that renew, by price, of each multiseat subscription (by `originalTransactionId`).
    var renewalSeats: [String: [MultiSeatPriceTier]] = [:]

    /// Starts an empty history of one account.
    /// - Parameters:
    ///   - environment: the `environment` of every payload.
    ///   - bundleId: the `bundleId` of every payload.
    ///   - appAppleId: the `appAppleId` of every notification.
    ///   - appAccountToken: the account id sent as `appAccountToken`, or `nil` for none.
    ///   - firstTransactionId: ids are numbered from it (give each account its own range, such as
    ///     ``firstTransactionId(environment:namespace:account:)``'s); below 4·10¹⁸, so that a
    ///     first purchase's `webOrderLineItemId` (the id plus 5·10¹⁸) is no transaction's id.
    public init(
        environment: AppStoreEnvironment = .production, bundleId: String = "com.example.app",
        appAppleId: Int64 = 1_234_567_890, appAccountToken: String? = nil,
        firstTransactionId: Int64 = 2_000_000_000_000_000
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.appAccountToken = appAccountToken?.lowercased()
        self.firstTransactionId = firstTransactionId
        nextId = firstTransactionId
    }

    /// How many transaction ids an account of ``firstTransactionId(environment:namespace:account:)``
    /// has: the first 50 its own, the next 50 a family member's.
    public static let idsPerAccount: Int64 = 100

    /// The first transaction id of account `index` (0 to 9,999,999) in the id space
    /// `namespace` (a seed, or a hash of an account id): `1` (Production) or `2` (other
    /// environments) · 10¹⁸, plus the namespace's number · 10⁹, plus ``idsPerAccount`` per
    /// account. Namespaces 0 to 999,999,999 each own their ids; a larger one is hashed to one
    /// of them (two such share ids with a chance of one in 10⁹). Data minted in two namespaces
    /// can be fed to one ledger: no transaction id, `webOrderLineItemId` or `notificationUUID`
    /// of one is the other's.
    public static func firstTransactionId(environment: AppStoreEnvironment, namespace: UInt64, account index: Int)
        -> Int64
    {
        precondition((0..<10_000_000).contains(index), "account \(index) is outside 0 to 9,999,999")
        let space = namespace < 1_000_000_000 ? namespace : SplitMix64.mix(namespace) % 1_000_000_000
        return (environment == .production ? 1 : 2) * 1_000_000_000_000_000_000 + Int64(space) * 1_000_000_000
            + Int64(index) * idsPerAccount
    }

    // MARK: Steps

    /// A purchase at `date`. Subscriptions get `expiresDate`; `group` defaults to one group per
    /// app. A free trial costs nothing: `price` is then what each renewal after it costs.
    @discardableResult
    public mutating func purchase(
        _ productId: String, type: ProductType, at date: Timestamp, price: Int64, currency: String = "USD",
        expires: Timestamp? = nil, group: String? = nil, freeTrial: Bool = false, quantity: Int = 1,
        notify: Bool = true
    ) -> Transaction {
        let at = date.milliseconds
        var transaction = newPurchase(
            productId, type: type, at: date, price: price, currency: currency, expires: expires, group: group,
            quantity: quantity)
        if freeTrial {
            transaction["offerType"] = .number(String(OfferType.introductoryOffer.rawValue))
            transaction["offerDiscountType"] = .string(OfferDiscountType.freeTrial.rawValue)
            transaction["price"] = 0
        }
        let minted = Transaction(payload: transaction, regularPrice: freeTrial ? price : nil)
        record(
            minted, at: at, notify: notify,
            type: type == .autoRenewableSubscription ? .subscribed : .oneTimeCharge,
            subtype: type == .autoRenewableSubscription ? .initialBuy : nil)
        return minted
    }

    /// The next period of a subscription, from the previous one's expiry until `expires`, at
    /// `price` (by default what the previous period cost without an offer). The next period of a
    /// multiseat subscription is one transaction of the seats that renew, at their average price
    /// by default.
    @discardableResult
    public mutating func renew(_ previous: Transaction, until expires: Timestamp, price: Int64? = nil) -> Transaction {
        guard let start = previous.expiresMilliseconds else {
            problems.append("renewal of \(previous.transactionId): it does not expire")
            return previous
        }
        if expires.milliseconds <= start {
            problems.append("renewal of \(previous.transactionId): ends before it starts")
        }
        var transaction = previous.payload
        transaction["transactionId"] = .string(String(newId()))
        transaction["webOrderLineItemId"] = .string(String(newId()))
        transaction["purchaseDate"] = .number(String(start))
        transaction["expiresDate"] = .number(String(expires.milliseconds))
        transaction["transactionReason"] = .string(TransactionReason.renewal.rawValue)
        transaction["signedDate"] = .number(String(start))
        transaction["offerType"] = nil
        transaction["offerDiscountType"] = nil
        if let cost = price ?? previous.regularPrice { transaction["price"] = .number(String(cost)) }
        if let tiers = renewalSeats[previous.originalTransactionId] {
            Self.setSeats(tiers, of: &transaction, price: price)
            transaction["additionalTransactionReason"] = nil
        }
        let minted = Transaction(payload: transaction)
        record(minted, at: start, notify: true, type: .didRenew, subtype: nil)
        return minted
    }

    /// An upgrade to a higher product of the same group at `date`: the current transaction is
    /// restated with `isUpgraded`, and a new one starts with the same `originalTransactionId`.
    @discardableResult
    public mutating func upgrade(
        _ current: Transaction, to productId: String, at date: Timestamp, until expires: Timestamp, price: Int64
    ) -> Transaction {
        let at = date.milliseconds
        if at < current.purchaseMilliseconds {
            problems.append("upgrade of \(current.transactionId): before its purchase")
        }
        if expires <= date { problems.append("upgrade to \(productId): ends before it starts") }
        var old = current.payload
        old["isUpgraded"] = true
        old["signedDate"] = .number(String(at))
        items.append(.transaction(old))
        var transaction = current.payload
        transaction["transactionId"] = .string(String(newId()))
        transaction["webOrderLineItemId"] = .string(String(newId()))
        transaction["productId"] = .string(productId)
        transaction["purchaseDate"] = .number(String(at))
        transaction["expiresDate"] = .number(String(expires.milliseconds))
        transaction["price"] = .number(String(price))
        transaction["transactionReason"] = .string(TransactionReason.purchase.rawValue)
        transaction["signedDate"] = .number(String(at))
        transaction["offerType"] = nil
        transaction["offerDiscountType"] = nil
        let minted = Transaction(payload: transaction)
        record(minted, at: at, notify: true, type: .didChangeRenewalPref, subtype: .upgrade)
        return minted
    }

    /// The renewal failed at the subscription's expiry: `DID_FAIL_TO_RENEW` with renewal info in
    /// billing retry, with a grace period until `graceUntil` when given.
    public mutating func failRenewal(_ current: Transaction, graceUntil: Timestamp?) {
        let date = expiry(of: current, "failed renewal")
        if let graceUntil, graceUntil.milliseconds <= date {
            problems.append("grace period of \(current.transactionId): ends before the expiry")
        }
        var renewal = renewalPayload(current, signed: date, autoRenew: true)
        renewal["expirationIntent"] = .number(String(ExpirationIntent.billingError.rawValue))
        renewal["isInBillingRetryPeriod"] = true
        if let graceUntil { renewal["gracePeriodExpiresDate"] = .number(String(graceUntil.milliseconds)) }
        items.append(
            .notification(
                notification(
                    .didFailToRenew, subtype: graceUntil == nil ? nil : .gracePeriod, at: date,
                    status: graceUntil == nil ? .billingRetry : .billingGracePeriod),
                transaction: restated(current, at: date), renewalInfo: renewal))
    }

    /// The grace period ended without payment (`GRACE_PERIOD_EXPIRED`); billing retry goes on.
    public mutating func endGracePeriod(_ current: Transaction, at date: Timestamp) {
        let at = date.milliseconds
        if at < expiry(of: current, "end of a grace period") {
            problems.append("end of the grace period of \(current.transactionId): before the expiry")
        }
        var renewal = renewalPayload(current, signed: at, autoRenew: true)
        renewal["expirationIntent"] = .number(String(ExpirationIntent.billingError.rawValue))
        renewal["isInBillingRetryPeriod"] = true
        items.append(
            .notification(
                notification(.gracePeriodExpired, subtype: nil, at: at, status: .billingRetry),
                transaction: restated(current, at: at), renewalInfo: renewal))
    }

    /// The customer turned auto-renew off and the subscription expired (`EXPIRED`, `VOLUNTARY`).
    public mutating func expire(_ current: Transaction) {
        let date = expiry(of: current, "expiry")
        var renewal = renewalPayload(current, signed: date, autoRenew: false)
        renewal["expirationIntent"] = .number(String(ExpirationIntent.customerCancelled.rawValue))
        renewal["isInBillingRetryPeriod"] = false
        items.append(
            .notification(
                notification(.expired, subtype: .voluntary, at: date, status: .expired),
                transaction: restated(current, at: date), renewalInfo: renewal))
    }

    /// A refund at `date`: the `REFUND` notification whose transaction carries the revocation.
    /// A free transaction (price 0) refunds no money, whatever the share.
    public mutating func refund(
        _ transaction: Transaction, at date: Timestamp, reason: RevocationReason = .refundedForOtherReason,
        type: RevocationType = .refundFull, percentage: Int32? = nil
    ) {
        let at = date.milliseconds
        checkAfterPurchase(transaction, at, "refund")
        var revoked = restated(transaction, at: at)
        revoked["revocationDate"] = .number(String(at))
        revoked["revocationReason"] = .number(String(reason.rawValue))
        revoked["revocationType"] = .string(type.rawValue)
        let share = percentage ?? (type == .refundFull ? 100_000 : nil)
        if let share { revoked["revocationPercentage"] = .number(String(share)) }
        items.append(
            .notification(
                notification(.refund, subtype: nil, at: at, status: .revoked), transaction: revoked,
                renewalInfo: isSubscription(transaction)
                    ? renewalPayload(transaction, signed: at, autoRenew: false) : nil
            ))
    }

    /// The refund was reversed: `REFUND_REVERSED`, the transaction again without revocation.
    public mutating func reverseRefund(_ transaction: Transaction, at date: Timestamp) {
        let at = date.milliseconds
        checkAfterPurchase(transaction, at, "refund reversal")
        items.append(
            .notification(
                notification(.refundReversed, subtype: nil, at: at, status: .active),
                transaction: restated(transaction, at: at),
                renewalInfo: nil))
    }

    /// What a family member's server sees when a purchase is shared with them: a transaction of
    /// their own (new ids, `FAMILY_SHARED`, no `appAccountToken`, no price).
    @discardableResult
    public mutating func shareWithFamily(_ transaction: Transaction, at date: Timestamp) -> Transaction {
        let at = date.milliseconds
        if at < transaction.purchaseMilliseconds {
            problems.append("sharing of \(transaction.transactionId): before its purchase")
        }
        let id = newId()
        var shared = transaction.payload
        shared["transactionId"] = .string(String(id))
        shared["originalTransactionId"] = .string(String(id))
        shared["inAppOwnershipType"] = .string(InAppOwnershipType.familyShared.rawValue)
        shared["appAccountToken"] = nil
        shared["signedDate"] = .number(String(at))
        shared["purchaseDate"] = .number(String(at))
        shared["originalPurchaseDate"] = .number(String(at))
        let minted = Transaction(payload: shared)
        items.append(.transaction(shared))
        return minted
    }

    /// The purchaser stopped sharing: `REVOKE` with a `FAMILY_REVOKE` revocation of the family
    /// member's transaction (nothing refunded).
    public mutating func revokeFamilySharing(_ shared: Transaction, at date: Timestamp) {
        let at = date.milliseconds
        checkAfterPurchase(shared, at, "revocation")
        var revoked = restated(shared, at: at)
        revoked["revocationDate"] = .number(String(at))
        revoked["revocationReason"] = .number(String(RevocationReason.refundedForOtherReason.rawValue))
        revoked["revocationType"] = .string(RevocationType.familyRevoke.rawValue)
        items.append(
            .notification(
                notification(.revoke, subtype: nil, at: at, status: .revoked), transaction: revoked, renewalInfo: nil))
    }

    /// A statement of the transaction as the App Store Server API returns it at `date`
    /// (transaction history, or Get Transaction Info), unchanged but for its `signedDate`.
    public mutating func restate(_ transaction: Transaction, at date: Timestamp) {
        let at = date.milliseconds
        if at < transaction.purchaseMilliseconds {
            problems.append("statement of \(transaction.transactionId): before its purchase")
        }
        items.append(.transaction(restated(transaction, at: at)))
    }

    /// The notification the App Store sends when the server asks for one (Request a Test
    /// Notification): `TEST`, with the app's bundle and environment, and `appAppleId` in
    /// Production, as Apple's carry it.
    public mutating func testNotification(at date: Timestamp) {
        var payload = notification(.test, subtype: nil, at: date.milliseconds, status: nil)
        if var data = payload["data"]?.objectValue {
            data["bundleVersion"] = nil
            if environment != .production { data["appAppleId"] = nil }
            payload["data"] = .object(data)
        }
        items.append(.notification(payload, transaction: nil, renewalInfo: nil))
    }

    /// Appends the items of another history (a family member's, say) after these.
    public mutating func append(_ other: MintHistory) {
        items += other.items
        problems += other.problems
        renewalSeats.merge(other.renewalSeats) { _, theirs in theirs }
    }

    // MARK: Signing

    /// Signs every item, in order: one compact JWS per item. Refuses a history with a step out
    /// of order (`MintError` code `unsupported`, naming the step).
    public func tokens(signer: MintSigner) throws(MintError) -> [String] {
        try checkOrder()
        var tokens: [String] = []
        tokens.reserveCapacity(items.count)
        for item in items {
            tokens.append(try Self.sign(item, signer: signer))
        }
        return tokens
    }

    /// The bodies the App Store POSTs to the server's notification URL for the history's
    /// notifications, in order (``webhookBody(signedPayload:)`` of each); the transactions
    /// signed alone come from the App Store Server API instead. Refuses a history with a step
    /// out of order, as ``tokens(signer:)`` does.
    public func webhookBodies(signer: MintSigner) throws(MintError) -> [String] {
        try checkOrder()
        var bodies: [String] = []
        for item in items where item.isNotification {
            bodies.append(Self.webhookBody(signedPayload: try Self.sign(item, signer: signer)))
        }
        return bodies
    }

    /// The body of an App Store Server Notification V2 request: `{"signedPayload":"…"}`.
    public static func webhookBody(signedPayload: String) -> String {
        JSONWriter.string(.object(JSONObject([.init("signedPayload", .string(signedPayload))])))
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

    private func checkOrder() throws(MintError) {
        if let problem = problems.first { throw MintError(.unsupported, "a step out of order: \(problem)") }
    }

    // MARK: Payloads

    mutating func newId() -> Int64 {
        defer { nextId += 1 }
        return nextId
    }

    private func isSubscription(_ transaction: Transaction) -> Bool {
        transaction.payload["type"]?.stringValue == ProductType.autoRenewableSubscription.rawValue
    }

    /// The expiry of a subscription a step needs one of; a step about a purchase that does not
    /// expire is out of order, and keeps its purchase date.
    private mutating func expiry(of transaction: Transaction, _ step: String) -> Int64 {
        guard let expires = transaction.expiresMilliseconds else {
            problems.append("\(step) of \(transaction.transactionId): it does not expire")
            return transaction.purchaseMilliseconds
        }
        return expires
    }

    mutating func checkAfterPurchase(_ transaction: Transaction, _ date: Int64, _ step: String) {
        if date <= transaction.purchaseMilliseconds {
            problems.append("\(step) of \(transaction.transactionId): not after its purchase")
        }
    }

    func restated(_ transaction: Transaction, at date: Int64) -> JSONObject {
        var payload = transaction.payload
        payload["signedDate"] = .number(String(date))
        return payload
    }

    mutating func record(
        _ transaction: Transaction, at date: Int64, notify: Bool, type: NotificationType,
        subtype: NotificationSubtype?
    ) {
        guard notify else {
            items.append(.transaction(transaction.payload))
            return
        }
        let renewal = isSubscription(transaction) ? renewalPayload(transaction, signed: date, autoRenew: true) : nil
        items.append(
            .notification(
                notification(type, subtype: subtype, at: date, status: renewal == nil ? nil : .active),
                transaction: transaction.payload, renewalInfo: renewal))
    }

    /// A new purchase's transaction, its ids the next ones.
    mutating func newPurchase(
        _ productId: String, type: ProductType, at date: Timestamp, price: Int64, currency: String,
        expires: Timestamp?, group: String?, quantity: Int
    ) -> JSONObject {
        let id = newId()
        let at = date.milliseconds
        if let expires, expires <= date { problems.append("purchase of \(productId): expires before it starts") }
        return transactionPayload(
            id: id, originalId: id, productId: productId, type: type, purchase: at, originalPurchase: at,
            expires: expires?.milliseconds, group: type == .autoRenewableSubscription ? (group ?? "21000001") : nil,
            price: price, currency: currency, quantity: quantity, reason: .purchase, signed: at)
    }

    private func transactionPayload(
        id: Int64, originalId: Int64, productId: String, type: ProductType, purchase: Int64, originalPurchase: Int64,
        expires: Int64?, group: String?, price: Int64, currency: String, quantity: Int, reason: TransactionReason,
        signed: Int64
    ) -> JSONObject {
        var members: [JSONObject.Member] = [
            .init("transactionId", .string(String(id))),
            .init("originalTransactionId", .string(String(originalId))),
        ]
        if type == .autoRenewableSubscription {
            members.append(.init("webOrderLineItemId", .string(String(id + 5_000_000_000_000_000_000))))
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
            .init("inAppOwnershipType", .string(InAppOwnershipType.purchased.rawValue)),
            .init("signedDate", .number(String(signed))),
            .init("environment", .string(environment.rawValue)),
            .init("transactionReason", .string(reason.rawValue)),
            .init("storefront", currency == "USD" ? "USA" : "FRA"),
            .init("storefrontId", currency == "USD" ? "143441" : "143442"),
            .init("price", .number(String(price))),
            .init("currency", .string(currency)),
        ]
        return JSONObject(members)
    }

    func renewalPayload(_ transaction: Transaction, signed: Int64, autoRenew: Bool) -> JSONObject {
        let payload = transaction.payload
        var members: [JSONObject.Member] = [
            .init("originalTransactionId", payload["originalTransactionId"] ?? .null),
            .init("autoRenewProductId", payload["productId"] ?? .null),
            .init("productId", payload["productId"] ?? .null),
            .init("autoRenewStatus", autoRenew ? 1 : 0),
            .init("isInBillingRetryPeriod", false),
            .init("signedDate", .number(String(signed))),
            .init("environment", .string(environment.rawValue)),
            .init("recentSubscriptionStartDate", payload["originalPurchaseDate"] ?? .null),
            .init("renewalDate", payload["expiresDate"] ?? .null),
            .init("currency", payload["currency"] ?? .null),
            // What the next period costs: after a free trial, the regular price.
            .init("renewalPrice", transaction.regularPrice.map { .number(String($0)) } ?? payload["price"] ?? .null),
        ]
        if let appAccountToken { members.append(.init("appAccountToken", .string(appAccountToken))) }
        var renewal = JSONObject(members)
        // A multiseat subscription renews the seats its purchaser kept, at their average price.
        if let tiers = renewalSeats[transaction.originalTransactionId] {
            renewal["renewalPrice"] = .number(String(Self.averagePrice(tiers)))
            renewal["renewalQuantity"] = .number(String(Self.seatCount(tiers)))
            renewal["multiSeatInfo"] = .object(RenewalMultiSeatInfo(renewalPriceTiers: tiers).json)
        }
        return renewal
    }

    mutating func notification(
        _ type: NotificationType, subtype: NotificationSubtype?, at date: Int64, status: SubscriptionStatus?
    ) -> JSONObject {
        notificationCount += 1
        var data: [JSONObject.Member] = [
            .init("appAppleId", .number(String(appAppleId))),
            .init("bundleId", .string(bundleId)),
            .init("bundleVersion", "1.0"),
            .init("environment", .string(environment.rawValue)),
        ]
        if let status { data.append(.init("status", .number(String(status.rawValue)))) }
        var members: [JSONObject.Member] = [.init("notificationType", .string(type.rawValue))]
        if let subtype { members.append(.init("subtype", .string(subtype.rawValue))) }
        // A version 4 UUID made of the history's first id (16 hex digits) and the notification's
        // number (12): unique across histories with different first ids, and stable.
        let first = Array(String(UInt64(bitPattern: firstTransactionId), radix: 16).leftPadded(16))
        let number = String(notificationCount, radix: 16).leftPadded(12)
        let uuid =
            String(first[0..<8]) + "-" + String(first[8..<12]) + "-4" + String(first[12..<15]) + "-8"
            + String(first[15]) + "00-" + number
        members += [
            .init("notificationUUID", .string(uuid)),
            .init("data", .object(JSONObject(data))),
            .init("version", "2.0"),
            .init("signedDate", .number(String(date))),
        ]
        return JSONObject(members)
    }
}
