import Foundation
import Vouch

/// Builds one item's payload for ``MintGenerator``; every random choice comes from `rng`.
struct PayloadBuilder {
    typealias Product = MintCatalog.Product
    typealias Storefront = MintCatalog.Storefront

    /// Fields that steer the whole scenario rather than sit at one path.
    static let scenarioFields: [String] = [
        "environment", "bundleId", "appAppleId", "productId", "type", "storefront", "originalTransactionId",
        "appTransactionId", "appAccountToken", "signedDate", "notificationType", "subtype",
    ]

    /// Scenario fields that only steer the choices and are never added as members.
    static let steeringOnly: Set<String> = ["storefront", "type"]

    static let day: Int64 = 86_400_000

    let signer: MintSigner
    let xcode: Bool
    let index: Int
    var rng: SplitMix64
    /// Per-run offset that keeps the ids of different seeds apart.
    let runOffset: UInt64
    let app: MintCatalog.App
    let scenario: [String: JSONValue]
    let scenarioOrder: [String]
    let literal: [MintOverride]
    let environment: JSONValue
    /// Sandbox-style identifiers and accelerated periods (anything but Production and Xcode).
    let sandbox: Bool
    /// The signed date in milliseconds, and how it is written.
    let signedDate: Int64
    let signedDateValue: JSONValue
    /// Xcode writes every date of a token with the same sub-millisecond part.
    let xcodeFraction: Double

    init(generator: MintGenerator, index: Int, signer: MintSigner) {
        self.signer = signer
        self.xcode = signer.authority.style == .xcode
        self.index = index
        var run = SplitMix64(seed: generator.seed)
        self.app = run.pick(MintCatalog.apps)
        self.runOffset = run.next()
        self.rng = SplitMix64(seed: generator.seed, index: UInt64(index))

        var scenario: [String: JSONValue] = [:]
        var order: [String] = []
        var literal: [MintOverride] = []
        for override in generator.overrides {
            if override.path.count == 1, let value = override.value, Self.scenarioFields.contains(override.path[0]) {
                if scenario.updateValue(value, forKey: override.path[0]) == nil { order.append(override.path[0]) }
            } else {
                literal.append(override)
            }
        }
        self.scenario = scenario
        self.scenarioOrder = order
        self.literal = literal

        let environment = scenario["environment"] ?? .string(xcode ? "Xcode" : "Sandbox")
        self.environment = environment
        self.sandbox = !xcode && environment.stringValue != "Production"

        var anchor = Int64((generator.date.timeIntervalSince1970 * 1000).rounded(.down))
        var low = anchor - Self.day
        if let validity = signer.authority.signingValidity {
            let notBefore = Int64(validity.notBefore.timeIntervalSince1970) * 1000
            let notAfter = Int64(validity.notAfter.timeIntervalSince1970) * 1000 + 999
            if anchor >= notBefore && anchor <= notAfter {
                // Never in the leaf's first second: a verifier keeps a validated chain only for
                // times strictly inside its window, so tokens of a freshly minted authority
                // would all be validated from scratch. Within that second, DATE itself moves
                // to the next one.
                low = max(low, min(notBefore + 1000, notAfter))
                anchor = max(anchor, low)
            } else if anchor > notAfter {
                low = max(low, notAfter + 1)
            }
        }
        var chosen = rng.int64(in: low...anchor)
        if let fixed = scenario["signedDate"]?.int64Value { chosen = fixed }
        self.signedDate = chosen
        self.xcodeFraction = Double(1 + rng.below(9999)) / 10000
        if let value = scenario["signedDate"] {
            self.signedDateValue = value
        } else if xcode {
            self.signedDateValue = .number(String(describing: Double(chosen) + Double(1 + rng.below(9999)) / 10000))
        } else {
            self.signedDateValue = .number(String(chosen))
        }
    }

    // MARK: Kinds

    mutating func payload(_ kind: MintKind) throws(MintError) -> JSONObject {
        var object: JSONObject
        switch kind {
        case .transaction:
            object = transactionPayload(purchase(PurchaseSpec()))
        case .renewalInfo:
            let state = rng.pick(weighted: [
                (RenewalState.active, 65), (.autoRenewOff, 12), (.expiredVoluntary, 8), (.billingRetry, 5),
                (.gracePeriod, 3), (.priceIncrease, 4), (.expiredBillingRetry, 3),
            ])
            var spec = PurchaseSpec(types: [MintCatalog.autoRenewable])
            spec.expired = state.isExpired
            spec.revoked = false
            let bought = purchase(spec)
            object = renewalPayload(bought, state: state)
        case .notification:
            object = try notificationPayload()
        case .appTransaction:
            object = appTransactionPayload()
        case .realtimeRequest:
            object = realtimeRequestPayload()
        }
        if kind != .notification {
            for name in scenarioOrder where object[name] == nil && !Self.steeringOnly.contains(name) {
                // An app transaction carries its environment as receiptType.
                if kind == .appTransaction && name == "environment" { continue }
                object[name] = scenario[name]
            }
        }
        for override in literal where !(kind == .notification && isNested(override)) {
            try override.apply(to: &object)
        }
        return object
    }

    private func isNested(_ override: MintOverride) -> Bool {
        override.path.count >= 3 && override.path[0] == "data"
            && (override.path[1] == "signedTransactionInfo" || override.path[1] == "signedRenewalInfo")
    }

    /// Signs a nested payload after applying the overrides addressed to it.
    private func signNested(_ payload: JSONObject, member: String) throws(MintError) -> JSONValue {
        var payload = payload
        for override in literal where isNested(override) && override.path[1] == member {
            try MintOverride(path: Array(override.path.dropFirst(2)), value: override.value).apply(to: &payload)
        }
        return .string(try signer.sign(payload: payload))
    }

    // MARK: Values

    private func date(_ milliseconds: Int64) -> JSONValue {
        xcode ? .number(String(describing: Double(milliseconds) + xcodeFraction)) : .number(String(milliseconds))
    }

    private static func number(_ value: Int64) -> JSONValue { .number(String(value)) }

    /// App Store dates of purchases are whole seconds; Xcode's are not.
    private func wholeSeconds(_ milliseconds: Int64) -> Int64 { xcode ? milliseconds : milliseconds / 1000 * 1000 }

    private var bundleId: JSONValue { scenario["bundleId"] ?? .string(app.bundleId) }
    private var appAppleId: JSONValue { scenario["appAppleId"] ?? Self.number(app.appAppleId) }

    /// A 16-digit sandbox or 15-digit production identifier, increasing with the index and
    /// distinct for every index; `lane` separates kinds of identifier.
    private mutating func identifier(lane: UInt64) -> Int64 {
        let offset = Int64(SplitMix64.mix(runOffset ^ lane) % 1_000_000_000_000)
        let base: Int64 = sandbox ? 2_000_000_000_000_000 : 440_000_000_000_000
        return base + offset + Int64(index) * 16 + Int64(rng.below(16))
    }

    private mutating func appTransactionIdentifier() -> JSONValue {
        if let value = scenario["appTransactionId"] { return value }
        let offset = Int64(SplitMix64.mix(runOffset ^ 0xA77) % 100_000_000_000_000)
        return .string(String(704_000_000_000_000_000 + offset + Int64(index) * 64 + Int64(rng.below(64))))
    }

    private mutating func deviceVerification() -> JSONValue {
        .string(String(decoding: Base64.encodeStandard(rng.bytes(48)), as: UTF8.self))
    }

    private mutating func storefront() -> Storefront {
        if let code = scenario["storefront"]?.stringValue {
            if let known = MintCatalog.storefront(code: code) { return known }
            var custom = MintCatalog.storefronts[0]
            custom.code = code
            return custom
        }
        if xcode { return MintCatalog.storefronts[0] }
        return rng.chance(35) ? MintCatalog.storefronts[0] : rng.pick(MintCatalog.storefronts)
    }

    private mutating func product(types: [String]?) -> Product {
        let wanted = scenario["type"]?.stringValue.map { [$0] } ?? types
        if let id = scenario["productId"]?.stringValue {
            if let known = app.products.first(where: { $0.id == id }) { return known }
            var custom = product(among: wanted)
            custom.id = id
            return custom
        }
        return product(among: wanted)
    }

    private mutating func product(among types: [String]?) -> Product {
        let type: String
        if let types, !types.isEmpty {
            type = rng.pick(types)
        } else {
            type = rng.pick(weighted: [
                (MintCatalog.autoRenewable, 55), (MintCatalog.consumable, 25), (MintCatalog.nonConsumable, 12),
                (MintCatalog.nonRenewing, 8),
            ])
        }
        let candidates = app.products.filter { $0.type == type }
        if candidates.isEmpty {
            // A type the catalogue does not know: keep the name, price it like a subscription.
            var custom = app.products[1]
            custom.type = type
            return custom
        }
        return rng.pick(candidates)
    }

    // MARK: Purchases

    struct PurchaseSpec {
        var types: [String]? = nil
        var reason: String? = nil
        var firstPurchase: Bool? = nil
        var revoked: Bool? = nil
        var offer: Bool? = nil
        var expired = false
        var familyShared: Bool? = nil
        var upgraded: Bool? = nil
        /// The products to choose among, when narrower than `types`.
        var products: [Product]? = nil
    }

    struct Offer {
        var type: Int
        var identifier: String?
        var discountType: String
        var period: String
    }

    struct Revocation {
        var date: Int64
        var reason: Int
        var type: String
        var percentage: Int64?
    }

    /// One purchase, shared by the transaction and renewal info of a notification.
    struct Purchase {
        var product: Product
        var storefront: Storefront
        var transactionId: String
        var originalTransactionId: JSONValue
        var webOrderLineItemId: String?
        var purchaseDate: Int64
        var originalPurchaseDate: Int64
        var expiresDate: Int64?
        var recentSubscriptionStartDate: Int64
        var quantity: Int
        var ownership: String
        var reason: String
        var price: Int64
        var offer: Offer?
        var revocation: Revocation?
        var isUpgraded: Bool
        var appAccountToken: JSONValue?
        var appTransactionId: JSONValue?

        var isSubscription: Bool { product.type == MintCatalog.autoRenewable }
    }

    mutating func purchase(_ spec: PurchaseSpec) -> Purchase {
        let product = spec.products.map { rng.pick($0) } ?? product(types: spec.types)
        let storefront = storefront()
        let isSubscription = product.type == MintCatalog.autoRenewable
        let period = product.period ?? .month

        let transactionNumber = xcode ? Int64(index) : identifier(lane: 1)
        let familyShared = spec.familyShared ?? (product.type != MintCatalog.consumable && rng.chance(6))
        let revoked = spec.revoked ?? rng.chance(5)
        let reason = isSubscription ? (spec.reason ?? (rng.chance(45) ? "RENEWAL" : "PURCHASE")) : "PURCHASE"
        let first = reason == "PURCHASE" && (spec.firstPurchase ?? rng.chance(80))

        var purchaseDate: Int64
        if spec.expired && isSubscription {
            let expiry = signedDate - rng.int64(in: 1000...(sandbox ? 600_000 : 5 * Self.day))
            purchaseDate = period.adding(-1, to: expiry, sandbox: sandbox)
        } else if revoked {
            purchaseDate = signedDate - rng.int64(in: 3_600_000...(30 * Self.day))
        } else {
            purchaseDate = signedDate - rng.int64(in: 1000...20_000)
        }
        purchaseDate = wholeSeconds(purchaseDate)

        var offer: Offer? = nil
        if isSubscription && (spec.offer ?? rng.chance(20)) {
            offer = makeOffer(first: first, resubscribe: reason == "PURCHASE" && !first)
        }
        var price = storefront.prices[min(product.tier, storefront.prices.count - 1)]
        var expiresDate: Int64? = nil
        if isSubscription {
            expiresDate = period.adding(1, to: purchaseDate, sandbox: sandbox)
            switch offer?.discountType {
            case "FREE_TRIAL":
                price = 0
                expiresDate = MintCatalog.Period.week.adding(1, to: purchaseDate, sandbox: sandbox)
            case "PAY_AS_YOU_GO", "PAY_UP_FRONT":
                price = storefront.prices[max(0, min(product.tier, storefront.prices.count) - 1)]
            default:
                break
            }
        }

        var originalNumber = transactionNumber
        var originalPurchaseDate = purchaseDate
        var recentStart = purchaseDate
        if isSubscription && !first {
            let renewals = rng.int(in: 1...24)
            originalPurchaseDate = wholeSeconds(
                period.adding(-renewals, to: purchaseDate, sandbox: sandbox) - Int64(rng.below(90)) * 1000)
            originalNumber = xcode ? max(0, transactionNumber - Int64(renewals)) : transactionNumber - Int64(renewals) * 16 - Int64(rng.below(16))
            // A resubscription starts a new run of renewals; a renewal continues the old one.
            recentStart = reason == "RENEWAL" ? originalPurchaseDate - 1000 : purchaseDate
        }
        let webOrder: String? =
            isSubscription ? (xcode ? String(index) : String(identifier(lane: 2))) : nil

        var quantity = 1
        if product.type == MintCatalog.consumable && rng.chance(15) { quantity = rng.int(in: 2...5) }

        var revocation: Revocation? = nil
        if revoked {
            let latest = max(purchaseDate + 1000, signedDate - 1000)
            let date = wholeSeconds(rng.int64(in: (purchaseDate + 1000)...latest))
            if familyShared {
                revocation = Revocation(date: date, reason: 0, type: "FAMILY_REVOKE", percentage: nil)
            } else if isSubscription && rng.chance(35) {
                revocation = Revocation(
                    date: date, reason: rng.chance(30) ? 1 : 0, type: "REFUND_PRORATED",
                    percentage: Int64(rng.int(in: 1...99)) * 1000)
            } else {
                revocation = Revocation(date: date, reason: rng.chance(30) ? 1 : 0, type: "REFUND_FULL", percentage: 100_000)
            }
        }

        // JSONValue is nil-literal convertible (to `null`): spell "absent" as `.none`.
        var token: JSONValue? = scenario["appAccountToken"]
        if token == nil && rng.chance(30) { token = .string(rng.uuid()) }
        var appTransaction: JSONValue? = .none
        if !xcode && (scenario["appTransactionId"] != nil || rng.chance(85)) { appTransaction = appTransactionIdentifier() }

        return Purchase(
            product: product, storefront: storefront, transactionId: String(transactionNumber),
            originalTransactionId: scenario["originalTransactionId"] ?? .string(String(originalNumber)),
            webOrderLineItemId: webOrder, purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate, recentSubscriptionStartDate: recentStart, quantity: quantity,
            ownership: familyShared ? "FAMILY_SHARED" : "PURCHASED", reason: reason, price: price, offer: offer,
            revocation: revocation, isUpgraded: isSubscription && (spec.upgraded ?? rng.chance(3)), appAccountToken: token,
            appTransactionId: appTransaction)
    }

    private mutating func makeOffer(first: Bool, resubscribe: Bool) -> Offer {
        let type: Int
        if first {
            type = rng.pick(weighted: [(1, 60), (3, 25), (2, 15)])
        } else if resubscribe {
            type = rng.pick(weighted: [(4, 60), (2, 20), (3, 20)])
        } else {
            type = rng.pick(weighted: [(2, 60), (3, 40)])
        }
        let discount = rng.pick(weighted: [("FREE_TRIAL", 45), ("PAY_AS_YOU_GO", 35), ("PAY_UP_FRONT", 20)])
        let period = discount == "FREE_TRIAL" ? "P1W" : rng.pick(["P1M", "P3M", "P6M"])
        let identifier: String?
        switch type {
        case 2: identifier = rng.pick(app.promotionalOffers)
        case 3: identifier = rng.pick(app.offerCodes)
        case 4: identifier = rng.pick(app.winBackOffers)
        default: identifier = nil
        }
        return Offer(type: type, identifier: identifier, discountType: discount, period: period)
    }

    // MARK: Transaction

    func transactionPayload(_ p: Purchase) -> JSONObject {
        var o = JSONObject()
        if xcode {
            o["inAppOwnershipType"] = .string(p.ownership)
            o["purchaseDate"] = date(p.purchaseDate)
            if p.isSubscription {
                o["subscriptionGroupIdentifier"] = .string(xcodeGroup)
            }
            o["signedDate"] = signedDateValue
            o["originalPurchaseDate"] = date(p.originalPurchaseDate)
            if p.isSubscription { o["isUpgraded"] = .bool(p.isUpgraded) }
            o["deviceVerification"] = xcodeDeviceVerification.0
            if let offer = p.offer {
                o["offerType"] = Self.number(Int64(offer.type))
                if let identifier = offer.identifier { o["offerIdentifier"] = .string(identifier) }
            }
            o["quantity"] = Self.number(Int64(p.quantity))
            o["transactionId"] = .string(p.transactionId)
            o["type"] = scenario["type"] ?? .string(p.product.type)
            o["transactionReason"] = .string(p.reason)
            o["productId"] = .string(p.product.id)
            if let expires = p.expiresDate { o["expiresDate"] = date(expires) }
            if let revocation = p.revocation {
                o["revocationDate"] = date(revocation.date)
                o["revocationReason"] = Self.number(Int64(revocation.reason))
            }
            o["environment"] = environment
            o["storefrontId"] = .string(p.storefront.id)
            o["originalTransactionId"] = p.originalTransactionId
            o["bundleId"] = bundleId
            o["deviceVerificationNonce"] = xcodeDeviceVerification.1
            if let web = p.webOrderLineItemId { o["webOrderLineItemId"] = .string(web) }
            o["storefront"] = .string(p.storefront.code)
            o["price"] = Self.number(p.price)
            o["currency"] = .string(p.storefront.currency)
            if let token = p.appAccountToken { o["appAccountToken"] = token }
            return o
        }
        o["transactionId"] = .string(p.transactionId)
        o["originalTransactionId"] = p.originalTransactionId
        if let web = p.webOrderLineItemId { o["webOrderLineItemId"] = .string(web) }
        o["bundleId"] = bundleId
        o["productId"] = .string(p.product.id)
        if p.isSubscription { o["subscriptionGroupIdentifier"] = .string(app.subscriptionGroupIdentifier) }
        o["purchaseDate"] = date(p.purchaseDate)
        o["originalPurchaseDate"] = date(p.originalPurchaseDate)
        if let expires = p.expiresDate { o["expiresDate"] = date(expires) }
        o["quantity"] = Self.number(Int64(p.quantity))
        o["type"] = scenario["type"] ?? .string(p.product.type)
        if let token = p.appAccountToken { o["appAccountToken"] = token }
        o["inAppOwnershipType"] = .string(p.ownership)
        o["signedDate"] = signedDateValue
        if let revocation = p.revocation {
            o["revocationReason"] = Self.number(Int64(revocation.reason))
            o["revocationDate"] = date(revocation.date)
        }
        if p.isUpgraded { o["isUpgraded"] = true }
        if let offer = p.offer {
            o["offerType"] = Self.number(Int64(offer.type))
            if let identifier = offer.identifier { o["offerIdentifier"] = .string(identifier) }
        }
        o["environment"] = environment
        o["transactionReason"] = .string(p.reason)
        o["storefront"] = .string(p.storefront.code)
        o["storefrontId"] = .string(p.storefront.id)
        o["price"] = Self.number(p.price)
        o["currency"] = .string(p.storefront.currency)
        if let offer = p.offer {
            o["offerDiscountType"] = .string(offer.discountType)
            o["offerPeriod"] = .string(offer.period)
        }
        if let revocation = p.revocation {
            o["revocationType"] = .string(revocation.type)
            if let percentage = revocation.percentage { o["revocationPercentage"] = Self.number(percentage) }
        }
        if let id = p.appTransactionId { o["appTransactionId"] = id }
        return o
    }

    /// Xcode's subscription group identifiers are eight hex digits.
    private var xcodeGroup: String {
        let hex = String(UInt32(truncatingIfNeeded: app.appAppleId), radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Xcode's device verification value and nonce (derived from the item, not drawn, so
    /// they do not shift the other choices).
    private var xcodeDeviceVerification: (JSONValue, JSONValue) {
        var local = SplitMix64(seed: rng.state ^ 0xD0D0, index: UInt64(index))
        let value = JSONValue.string(String(decoding: Base64.encodeStandard(local.bytes(48)), as: UTF8.self))
        return (value, .string(local.uuid()))
    }

    // MARK: Renewal info

    enum RenewalState {
        case active, autoRenewOff, expiredVoluntary, billingRetry, gracePeriod, priceIncrease, expiredBillingRetry

        var isExpired: Bool {
            switch self {
            case .expiredVoluntary, .billingRetry, .gracePeriod, .expiredBillingRetry: return true
            case .active, .autoRenewOff, .priceIncrease: return false
            }
        }
    }

    mutating func renewalPayload(_ p: Purchase, state: RenewalState, autoRenewProduct: Product? = nil) -> JSONObject {
        let renewProduct = autoRenewProduct ?? p.product
        let prices = p.storefront.prices
        var renewalPrice: Int64? = prices[min(renewProduct.tier, prices.count - 1)]
        var o = JSONObject()
        var expirationIntent: Int? = nil
        var autoRenewStatus = 1
        var billingRetry: Bool? = nil
        var priceIncreaseStatus: Int? = nil
        var graceExpires: Int64? = nil
        let renewalDate = p.expiresDate ?? p.purchaseDate
        switch state {
        case .active:
            break
        case .autoRenewOff:
            autoRenewStatus = 0
            renewalPrice = nil
        case .expiredVoluntary:
            (expirationIntent, autoRenewStatus, billingRetry, renewalPrice) = (1, 0, false, nil)
        case .billingRetry:
            (expirationIntent, billingRetry) = (2, true)
        case .gracePeriod:
            (expirationIntent, billingRetry) = (2, true)
            graceExpires = renewalDate + (sandbox ? 180_000 : 16 * Self.day)
        case .expiredBillingRetry:
            (expirationIntent, autoRenewStatus, billingRetry, renewalPrice) = (2, 0, false, nil)
        case .priceIncrease:
            priceIncreaseStatus = rng.chance(60) ? 1 : 0
            renewalPrice = prices[min(renewProduct.tier + 1, prices.count - 1)]
        }
        var pendingOffer: Offer? = nil
        if state == .active && rng.chance(10) { pendingOffer = makeOffer(first: false, resubscribe: false) }
        let winBack = state == .expiredVoluntary && rng.chance(50)

        if xcode {
            o["deviceVerification"] = xcodeDeviceVerification.0
            o["productId"] = .string(p.product.id)
            o["deviceVerificationNonce"] = xcodeDeviceVerification.1
            o["renewalDate"] = date(renewalDate)
            o["originalTransactionId"] = p.originalTransactionId
            o["recentSubscriptionStartDate"] = date(p.recentSubscriptionStartDate)
            o["autoRenewStatus"] = Self.number(Int64(autoRenewStatus))
            if let intent = expirationIntent { o["expirationIntent"] = Self.number(Int64(intent)) }
            if let retry = billingRetry { o["isInBillingRetryPeriod"] = .bool(retry) }
            if let status = priceIncreaseStatus { o["priceIncreaseStatus"] = Self.number(Int64(status)) }
            if let grace = graceExpires { o["gracePeriodExpiresDate"] = date(grace) }
            o["signedDate"] = signedDateValue
            o["environment"] = environment
            o["autoRenewProductId"] = .string(renewProduct.id)
            if let renewalPrice {
                o["renewalPrice"] = Self.number(renewalPrice)
                o["currency"] = .string(p.storefront.currency)
            }
            if let token = p.appAccountToken { o["appAccountToken"] = token }
            return o
        }
        if let intent = expirationIntent { o["expirationIntent"] = Self.number(Int64(intent)) }
        o["originalTransactionId"] = p.originalTransactionId
        o["autoRenewProductId"] = .string(renewProduct.id)
        o["productId"] = .string(p.product.id)
        o["autoRenewStatus"] = Self.number(Int64(autoRenewStatus))
        if let renewalPrice {
            o["renewalPrice"] = Self.number(renewalPrice)
            o["currency"] = .string(p.storefront.currency)
        }
        if let retry = billingRetry { o["isInBillingRetryPeriod"] = .bool(retry) }
        if let status = priceIncreaseStatus { o["priceIncreaseStatus"] = Self.number(Int64(status)) }
        if let grace = graceExpires { o["gracePeriodExpiresDate"] = date(grace) }
        if let offer = pendingOffer {
            o["offerType"] = Self.number(Int64(offer.type))
            if let identifier = offer.identifier { o["offerIdentifier"] = .string(identifier) }
            o["offerDiscountType"] = .string(offer.discountType)
            o["offerPeriod"] = .string(offer.period)
        }
        o["signedDate"] = signedDateValue
        o["environment"] = environment
        o["recentSubscriptionStartDate"] = date(p.recentSubscriptionStartDate)
        o["renewalDate"] = date(renewalDate)
        if winBack { o["eligibleWinBackOfferIds"] = .array(app.winBackOffers.map { .string($0) }) }
        if let id = p.appTransactionId { o["appTransactionId"] = id }
        if let token = p.appAccountToken { o["appAccountToken"] = token }
        return o
    }

    // MARK: Notification

    private struct Scenario {
        var type: String
        var subtype: String?
        var weight: Int
    }

    private static let scenarios: [Scenario] = [
        Scenario(type: "SUBSCRIBED", subtype: "INITIAL_BUY", weight: 10),
        Scenario(type: "SUBSCRIBED", subtype: "RESUBSCRIBE", weight: 6),
        Scenario(type: "DID_RENEW", subtype: nil, weight: 20),
        Scenario(type: "DID_RENEW", subtype: "BILLING_RECOVERY", weight: 3),
        Scenario(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", weight: 8),
        Scenario(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", weight: 4),
        Scenario(type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", weight: 3),
        Scenario(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", weight: 2),
        Scenario(type: "OFFER_REDEEMED", subtype: "INITIAL_BUY", weight: 2),
        Scenario(type: "OFFER_REDEEMED", subtype: "RESUBSCRIBE", weight: 1),
        Scenario(type: "EXPIRED", subtype: "VOLUNTARY", weight: 6),
        Scenario(type: "EXPIRED", subtype: "BILLING_RETRY", weight: 2),
        Scenario(type: "DID_FAIL_TO_RENEW", subtype: nil, weight: 3),
        Scenario(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", weight: 2),
        Scenario(type: "GRACE_PERIOD_EXPIRED", subtype: nil, weight: 1),
        Scenario(type: "PRICE_INCREASE", subtype: "PENDING", weight: 1),
        Scenario(type: "PRICE_INCREASE", subtype: "ACCEPTED", weight: 1),
        Scenario(type: "REFUND", subtype: nil, weight: 5),
        Scenario(type: "REFUND_DECLINED", subtype: nil, weight: 1),
        Scenario(type: "REFUND_REVERSED", subtype: nil, weight: 1),
        Scenario(type: "REVOKE", subtype: nil, weight: 1),
        Scenario(type: "CONSUMPTION_REQUEST", subtype: nil, weight: 3),
        Scenario(type: "ONE_TIME_CHARGE", subtype: nil, weight: 8),
        Scenario(type: "TEST", subtype: nil, weight: 2),
    ]

    mutating func notificationPayload() throws(MintError) -> JSONObject {
        let chosen: Scenario
        if let type = scenario["notificationType"]?.stringValue {
            let subtype = scenario["subtype"]?.stringValue
            let matching = Self.scenarios.filter { $0.type == type && (subtype == nil || $0.subtype == subtype) }
            chosen = matching.isEmpty ? Scenario(type: type, subtype: subtype, weight: 1) : rng.pick(matching)
        } else {
            chosen = rng.pick(weighted: Self.scenarios.map { ($0, $0.weight) })
        }
        let subscriptionOnly = [MintCatalog.autoRenewable]
        // The transaction a notification carries is the current one, never superseded.
        var spec = PurchaseSpec(types: subscriptionOnly, revoked: false, upgraded: false)
        var state: RenewalState? = .active
        var status: Int? = 1
        var autoRenewProduct: Product? = nil
        var consumptionReason: String? = nil
        var productChange = 0
        switch (chosen.type, chosen.subtype) {
        case ("SUBSCRIBED", "INITIAL_BUY"):
            (spec.reason, spec.firstPurchase, spec.offer) = ("PURCHASE", true, rng.chance(25))
        case ("SUBSCRIBED", "RESUBSCRIBE"):
            (spec.reason, spec.firstPurchase) = ("PURCHASE", false)
        case ("DID_RENEW", _):
            spec.reason = "RENEWAL"
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"):
            state = .autoRenewOff
        case ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"):
            // Takes effect at the next renewal: the renewal info names a cheaper product.
            let lowest = app.subscriptions.map(\.tier).min()
            if scenario["productId"] == nil && scenario["type"] == nil {
                spec.products = app.subscriptions.filter { $0.tier != lowest }
            }
            productChange = -1
        case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"):
            // Takes effect at once: a new purchase of a dearer product in the same subscription.
            let lowest = app.subscriptions.map(\.tier).min()
            if scenario["productId"] == nil && scenario["type"] == nil {
                spec.products = app.subscriptions.filter { $0.tier != lowest }
            }
            (spec.reason, spec.firstPurchase) = ("PURCHASE", false)
        case ("OFFER_REDEEMED", let subtype):
            (spec.reason, spec.firstPurchase, spec.offer) = ("PURCHASE", subtype == "INITIAL_BUY", true)
        case ("EXPIRED", "BILLING_RETRY"):
            (spec.expired, state, status) = (true, .expiredBillingRetry, 2)
        case ("EXPIRED", _):
            (spec.expired, state, status) = (true, .expiredVoluntary, 2)
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"):
            (spec.expired, state, status) = (true, .gracePeriod, 4)
        case ("DID_FAIL_TO_RENEW", _), ("GRACE_PERIOD_EXPIRED", _):
            (spec.expired, state, status) = (true, .billingRetry, 3)
        case ("PRICE_INCREASE", _):
            state = .priceIncrease
        case ("REFUND", _), ("REFUND_REVERSED", _), ("REFUND_DECLINED", _):
            let refunded = chosen.type == "REFUND"
            spec.types = nil
            (spec.revoked, spec.familyShared) = (refunded, false)
        case ("REVOKE", _):
            spec.types = [MintCatalog.autoRenewable, MintCatalog.nonConsumable]
            (spec.revoked, spec.familyShared) = (true, true)
        case ("CONSUMPTION_REQUEST", _):
            spec.types = [MintCatalog.consumable, MintCatalog.nonConsumable]
            (state, status) = (nil, nil)
            consumptionReason = rng.pick(weighted: [
                ("UNINTENDED_PURCHASE", 35), ("FULFILLMENT_ISSUE", 20), ("UNSATISFIED_WITH_PURCHASE", 30),
                ("LEGAL", 5), ("OTHER", 10),
            ])
        case ("ONE_TIME_CHARGE", _):
            spec.types = [MintCatalog.consumable, MintCatalog.nonConsumable, MintCatalog.nonRenewing]
            (state, status) = (nil, nil)
        case ("TEST", _):
            (state, status) = (nil, nil)
        default:
            break
        }

        var data = JSONObject()
        if chosen.type != "TEST" || scenario["appAppleId"] != nil { data["appAppleId"] = appAppleId }
        data["bundleId"] = bundleId
        if chosen.type != "TEST" { data["bundleVersion"] = .string(rng.pick(app.versions)) }
        data["environment"] = environment
        if chosen.type != "TEST" {
            let bought = purchase(spec)
            if bought.isSubscription {
                if productChange != 0 {
                    let ladder = app.subscriptions.sorted { $0.tier < $1.tier }
                    let position = ladder.firstIndex { $0.id == bought.product.id } ?? 0
                    autoRenewProduct = ladder[max(0, min(ladder.count - 1, position + productChange))]
                }
                if bought.revocation != nil { status = 5 }
            } else {
                (state, status) = (nil, nil)
            }
            data["signedTransactionInfo"] = try signNested(transactionPayload(bought), member: "signedTransactionInfo")
            if let state {
                let renewal = renewalPayload(bought, state: state, autoRenewProduct: autoRenewProduct)
                data["signedRenewalInfo"] = try signNested(renewal, member: "signedRenewalInfo")
            }
            if let status { data["status"] = Self.number(Int64(status)) }
            if let consumptionReason { data["consumptionRequestReason"] = .string(consumptionReason) }
        }

        var o = JSONObject()
        o["notificationType"] = scenario["notificationType"] ?? .string(chosen.type)
        if let subtype = scenario["subtype"] ?? chosen.subtype.map({ .string($0) }) { o["subtype"] = subtype }
        o["notificationUUID"] = .string(rng.uuid())
        o["data"] = .object(data)
        o["version"] = "2.0"
        o["signedDate"] = signedDateValue
        return o
    }

    // MARK: App transaction and real-time request

    mutating func appTransactionPayload() -> JSONObject {
        var o = JSONObject()
        let originalVersion = app.versions[0]
        let version = app.versions[app.versions.count - 1]
        if xcode {
            o["bundleId"] = bundleId
            o["applicationVersion"] = .string(version)
            o["deviceVerificationNonce"] = xcodeDeviceVerification.1
            o["receiptType"] = environment
            o["receiptCreationDate"] = signedDateValue
            o["deviceVerification"] = xcodeDeviceVerification.0
            o["requestDate"] = signedDateValue
            o["originalApplicationVersion"] = .string(originalVersion)
            // Xcode reports the app as bought on 0001-01-01.
            o["originalPurchaseDate"] = .number("-62135769600000")
            return o
        }
        let production = environment.stringValue == "Production"
        let originalPurchase = signedDate - rng.int64(in: Self.day...(3 * 365 * Self.day))
        o["receiptType"] = environment
        if production || scenario["appAppleId"] != nil { o["appAppleId"] = appAppleId }
        o["bundleId"] = bundleId
        o["applicationVersion"] = .string(version)
        // The sandbox always reports version external identifier 0.
        o["versionExternalIdentifier"] = Self.number(production ? app.versionExternalIdentifier : 0)
        o["receiptCreationDate"] = signedDateValue
        o["requestDate"] = signedDateValue
        o["originalPurchaseDate"] = date(originalPurchase)
        o["originalApplicationVersion"] = .string(originalVersion)
        o["deviceVerification"] = deviceVerification()
        o["deviceVerificationNonce"] = .string(rng.uuid())
        if rng.chance(5) {
            o["preorderDate"] = date(originalPurchase - rng.int64(in: Self.day...(60 * Self.day)))
        }
        o["appTransactionId"] = appTransactionIdentifier()
        o["originalPlatform"] = .string(
            rng.pick(weighted: [("iOS", 85), ("macOS", 7), ("tvOS", 5), ("visionOS", 3)]))
        return o
    }

    mutating func realtimeRequestPayload() -> JSONObject {
        let bought = purchase(PurchaseSpec(types: [MintCatalog.autoRenewable], revoked: false))
        var o = JSONObject()
        o["originalTransactionId"] = bought.originalTransactionId
        o["appAppleId"] = appAppleId
        o["productId"] = .string(bought.product.id)
        o["userLocale"] = .string(bought.storefront.locale)
        o["requestIdentifier"] = .string(rng.uuid())
        o["signedDate"] = signedDateValue
        o["environment"] = environment
        return o
    }
}
