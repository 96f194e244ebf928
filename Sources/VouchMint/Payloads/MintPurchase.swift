import Vouch

/// What a purchase simulation must produce, when the scenario constrains it.
struct PurchaseSpec {
    var types: [String]? = nil
    var reason: TransactionReason? = nil
    var firstPurchase: Bool? = nil
    var revoked: Bool? = nil
    var offer: Bool? = nil
    var expired = false
    var familyShared: Bool? = nil
    var upgraded: Bool? = nil
    /// The products to choose among, when narrower than `types`.
    var products: [MintCatalog.Product]? = nil
}

struct Offer {
    var type: OfferType
    var identifier: String?
    var discountType: OfferDiscountType
    var period: String
}

struct Revocation {
    var date: Int64
    var reason: RevocationReason
    var type: RevocationType
    var percentage: Int64?
}

/// One simulated purchase, shared by the transaction and renewal info of a notification.
struct Purchase {
    var product: MintCatalog.Product
    var storefront: MintCatalog.Storefront
    var transactionId: String
    var originalTransactionId: JSONValue
    var webOrderLineItemId: String?
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64?
    var recentSubscriptionStartDate: Int64
    var quantity: Int
    var ownership: InAppOwnershipType
    var reason: TransactionReason
    var price: Int64
    var offer: Offer?
    var revocation: Revocation?
    var isUpgraded: Bool
    var appAccountToken: JSONValue?
    var appTransactionId: JSONValue?

    var isSubscription: Bool { product.type == MintCatalog.autoRenewable }
}

/// The purchase simulation: products, storefronts, identifiers, dates, offers and refunds,
/// each drawn from the item's random stream in a fixed order.
extension PayloadBuilder {
    mutating func purchase(_ spec: PurchaseSpec) -> Purchase {
        let product = spec.products.map { rng.pick($0) } ?? product(types: spec.types)
        let storefront = storefront()
        let isSubscription = product.type == MintCatalog.autoRenewable
        let period = product.period ?? .month

        let transactionNumber = xcode ? Int64(index) : identifier(lane: 1)
        let familyShared = spec.familyShared ?? (product.type != MintCatalog.consumable && rng.chance(6))
        let revoked = spec.revoked ?? rng.chance(5)
        let reason: TransactionReason =
            isSubscription ? (spec.reason ?? (rng.chance(45) ? .renewal : .purchase)) : .purchase
        let first = reason == .purchase && (spec.firstPurchase ?? rng.chance(80))

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
            offer = makeOffer(first: first, resubscribe: reason == .purchase && !first)
        }
        var price = storefront.prices[min(product.tier, storefront.prices.count - 1)]
        var expiresDate: Int64? = nil
        if isSubscription {
            expiresDate = period.adding(1, to: purchaseDate, sandbox: sandbox)
            switch offer?.discountType {
            case .freeTrial?:
                price = 0
                expiresDate = MintCatalog.Period.week.adding(1, to: purchaseDate, sandbox: sandbox)
            case .payAsYouGo?, .payUpFront?:
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
            originalNumber =
                xcode
                ? max(0, transactionNumber - Int64(renewals))
                : transactionNumber - Int64(renewals) * 16 - Int64(rng.below(16))
            // A resubscription starts a new run of renewals; a renewal continues the old one.
            recentStart = reason == .renewal ? originalPurchaseDate - 1000 : purchaseDate
        }
        let webOrder: String? = isSubscription ? (xcode ? String(index) : String(identifier(lane: 2))) : nil

        var quantity = 1
        if product.type == MintCatalog.consumable && rng.chance(15) { quantity = rng.int(in: 2...5) }

        var revocation: Revocation? = nil
        if revoked {
            let latest = max(purchaseDate + 1000, signedDate - 1000)
            let date = wholeSeconds(rng.int64(in: (purchaseDate + 1000)...latest))
            if familyShared {
                revocation = Revocation(
                    date: date, reason: .refundedForOtherReason, type: .familyRevoke, percentage: nil)
            } else if isSubscription && rng.chance(35) {
                revocation = Revocation(
                    date: date, reason: rng.chance(30) ? .refundedDueToIssue : .refundedForOtherReason,
                    type: .refundProrated, percentage: Int64(rng.int(in: 1...99)) * 1000)
            } else {
                revocation = Revocation(
                    date: date, reason: rng.chance(30) ? .refundedDueToIssue : .refundedForOtherReason,
                    type: .refundFull,
                    percentage: 100_000)
            }
        }

        var token: JSONValue? = scenario["appAccountToken"]
        if token == nil && rng.chance(30) { token = .string(rng.uuid()) }
        var appTransaction: JSONValue? = .none
        if !xcode && (scenario["appTransactionId"] != nil || rng.chance(85)) {
            appTransaction = appTransactionIdentifier()
        }

        return Purchase(
            product: product, storefront: storefront, transactionId: String(transactionNumber),
            originalTransactionId: scenario["originalTransactionId"] ?? .string(String(originalNumber)),
            webOrderLineItemId: webOrder, purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate, recentSubscriptionStartDate: recentStart, quantity: quantity,
            ownership: familyShared ? .familyShared : .purchased, reason: reason, price: price, offer: offer,
            revocation: revocation, isUpgraded: isSubscription && (spec.upgraded ?? rng.chance(3)),
            appAccountToken: token,
            appTransactionId: appTransaction)
    }

    mutating func makeOffer(first: Bool, resubscribe: Bool) -> Offer {
        let type: OfferType
        if first {
            type = rng.pick(weighted: [(.introductoryOffer, 60), (.offerCode, 25), (.promotionalOffer, 15)])
        } else if resubscribe {
            type = rng.pick(weighted: [(.winBackOffer, 60), (.promotionalOffer, 20), (.offerCode, 20)])
        } else {
            type = rng.pick(weighted: [(.promotionalOffer, 60), (.offerCode, 40)])
        }
        let discount: OfferDiscountType = rng.pick(weighted: [(.freeTrial, 45), (.payAsYouGo, 35), (.payUpFront, 20)])
        let periods: [MintCatalog.Period] = [.month, .quarter, .halfYear]
        let period = discount == .freeTrial ? MintCatalog.Period.week.iso : rng.pick(periods).iso
        let identifier: String?
        switch type {
        case .promotionalOffer: identifier = rng.pick(app.promotionalOffers)
        case .offerCode: identifier = rng.pick(app.offerCodes)
        case .winBackOffer: identifier = rng.pick(app.winBackOffers)
        default: identifier = nil
        }
        return Offer(type: type, identifier: identifier, discountType: discount, period: period)
    }

    // MARK: Choices

    /// A 16-digit sandbox or 15-digit production identifier, increasing with the index and
    /// distinct for every index; `lane` separates kinds of identifier.
    mutating func identifier(lane: UInt64) -> Int64 {
        let offset = Int64(SplitMix64.mix(runOffset ^ lane) % 1_000_000_000_000)
        let base: Int64 = sandbox ? 2_000_000_000_000_000 : 440_000_000_000_000
        return base + offset + Int64(index) * 16 + Int64(rng.below(16))
    }

    mutating func appTransactionIdentifier() -> JSONValue {
        if let value = scenario["appTransactionId"] { return value }
        let offset = Int64(SplitMix64.mix(runOffset ^ 0xA77) % 100_000_000_000_000)
        return .string(String(704_000_000_000_000_000 + offset + Int64(index) * 64 + Int64(rng.below(64))))
    }

    mutating func storefront() -> MintCatalog.Storefront {
        if let code = scenario["storefront"]?.stringValue {
            if let known = MintCatalog.storefront(code: code) { return known }
            var custom = MintCatalog.storefronts[0]
            custom.code = code
            return custom
        }
        if xcode { return MintCatalog.storefronts[0] }
        return rng.chance(35) ? MintCatalog.storefronts[0] : rng.pick(MintCatalog.storefronts)
    }

    mutating func product(types: [String]?) -> MintCatalog.Product {
        let wanted = scenario["type"]?.stringValue.map { [$0] } ?? types
        if let id = scenario["productId"]?.stringValue {
            if let known = app.products.first(where: { $0.id == id }) { return known }
            var custom = product(among: wanted)
            custom.id = id
            return custom
        }
        return product(among: wanted)
    }

    private mutating func product(among types: [String]?) -> MintCatalog.Product {
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
}
