import Vouch
internal import VouchMintPKI

/// What a purchase simulation must produce, when the scenario constrains it.
struct PurchaseSpec {
    var types: [String]? = nil
    var reason: TransactionReason? = nil
    var firstPurchase: Bool? = nil
    var revoked: Bool? = nil
    var offer: Bool? = nil
    var expired = false
    /// For an expired subscription: lapsed at least this long before the event (a grace period
    /// that ended)…
    var lapsedSince: Int64 = 0
    /// …and at most this long (a grace period still running).
    var lapsedWithin: Int64? = nil
    /// The subscription is active when the event is signed.
    var active = false
    /// A revocation is reversed.
    var reinstated = false
    /// A new purchase of a dearer product of the group.
    var upgrade = false
    /// The event is the purchase itself (sent when it is made).
    var atPurchase = false
    /// Whether the event is about money paid (a refund, its request, decline or reversal): a
    /// free transaction is never one.
    var paid = false
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
    /// The payload an existing transaction stated, written again (with a new signed date and
    /// its revocation as it now is) instead of one built from these facts.
    var statement: JSONObject? = nil
    /// What a period costs without an offer, when it differs from the catalogue's price.
    var regularPrice: Int64? = nil
    /// The seats of an existing multiseat transaction (`multiSeatInfo`): its periods and their
    /// renewal info carry them.
    var seats: TransactionMultiSeatInfo? = nil

    var isSubscription: Bool { product.type == MintCatalog.autoRenewable }
}

/// The purchase simulation: products, storefronts, identifiers, dates, offers and refunds,
/// each drawn from the item's random stream in a fixed order.
extension PayloadBuilder {
    /// The purchase an item is about: the existing transaction's, or a simulated one.
    mutating func purchase(_ spec: PurchaseSpec, event: String) throws(MintError) -> Purchase {
        if let existing { return try purchase(about: existing, spec, event: event) }
        return purchase(spec)
    }

    mutating func purchase(_ spec: PurchaseSpec) -> Purchase {
        let product = spec.products.map { rng.pick($0) } ?? product(types: spec.types)
        let storefront = storefront()
        let isSubscription = product.type == MintCatalog.autoRenewable
        let period = product.period ?? .month

        let transactionNumber = xcode ? Int64(index) : identifier(lane: 1)
        let familyShared = spec.familyShared ?? (product.type != MintCatalog.consumable && rng.chance(6))
        // Drawn whatever the percentage, so the other choices of an item do not depend on it.
        let revoked = spec.revoked ?? rng.chance(revokedPercentage)
        // Money changes hands in a refund: what is refunded was paid for.
        let paid = spec.paid || (revoked && !familyShared)
        let reason: TransactionReason =
            isSubscription ? (spec.reason ?? (rng.chance(45) ? .renewal : .purchase)) : .purchase
        let first = reason == .purchase && (spec.firstPurchase ?? rng.chance(80))

        var purchaseDate: Int64
        var expiry: Int64? = nil
        if spec.expired && isSubscription {
            let lapse =
                spec.lapsedSince
                + rng.int64(in: 1000...max(1000, spec.lapsedWithin ?? (sandbox ? 600_000 : 5 * Self.day)))
            expiry = signedDate - lapse
            purchaseDate = period.adding(-1, to: signedDate - lapse, sandbox: sandbox)
        } else if revoked {
            purchaseDate = signedDate - rng.int64(in: 3_600_000...(30 * Self.day))
        } else {
            purchaseDate = signedDate - rng.int64(in: 1000...20_000)
        }
        purchaseDate = wholeSeconds(purchaseDate)

        var offer: Offer? = nil
        if isSubscription && (spec.offer ?? rng.chance(20)) {
            offer = makeOffer(first: first, resubscribe: reason == .purchase && !first, free: !paid)
        }
        var price = storefront.prices[min(product.tier, storefront.prices.count - 1)]
        var expiresDate: Int64? = nil
        if isSubscription {
            expiresDate = period.adding(1, to: purchaseDate, sandbox: sandbox)
            switch offer?.discountType {
            case .freeTrial?:
                price = 0
                if let expiry {
                    // A trial that lapsed ran its week up to the expiry.
                    purchaseDate = wholeSeconds(MintCatalog.Period.week.adding(-1, to: expiry, sandbox: sandbox))
                }
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
            // A resubscription starts a new run of renewals; a renewal continues the run that
            // began with the original purchase.
            recentStart = reason == .renewal ? originalPurchaseDate : purchaseDate
        }
        let webOrder: String? = isSubscription ? (xcode ? String(index) : String(identifier(lane: 2))) : nil

        var quantity = 1
        if product.type == MintCatalog.consumable && rng.chance(15) { quantity = rng.int(in: 2...5) }

        var revocation: Revocation? = nil
        if revoked {
            let latest = max(purchaseDate + 1000, signedDate - 1000)
            let date = wholeSeconds(rng.int64(in: (purchaseDate + 1000)...latest))
            revocation = self.revocation(at: date, familyShared: familyShared, isSubscription)
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

    /// A Family Sharing revocation, or a refund: in full, or for a subscription about a third of
    /// the time prorated.
    mutating func revocation(at date: Int64, familyShared: Bool, _ isSubscription: Bool) -> Revocation {
        if familyShared {
            return Revocation(date: date, reason: .refundedForOtherReason, type: .familyRevoke, percentage: nil)
        }
        if isSubscription && rng.chance(35) {
            return Revocation(
                date: date, reason: rng.chance(30) ? .refundedDueToIssue : .refundedForOtherReason,
                type: .refundProrated, percentage: Int64(rng.int(in: 1...99)) * 1000)
        }
        return Revocation(
            date: date, reason: rng.chance(30) ? .refundedDueToIssue : .refundedForOtherReason, type: .refundFull,
            percentage: 100_000)
    }

    /// An offer for a first purchase, a resubscription or a renewal; a free trial only when
    /// `free` allows one (never on a purchase that is refunded).
    mutating func makeOffer(first: Bool, resubscribe: Bool, free: Bool = true) -> Offer {
        let type: OfferType
        if first {
            type = rng.pick(weighted: [(.introductoryOffer, 60), (.offerCode, 25), (.promotionalOffer, 15)])
        } else if resubscribe {
            type = rng.pick(weighted: [(.winBackOffer, 60), (.promotionalOffer, 20), (.offerCode, 20)])
        } else {
            type = rng.pick(weighted: [(.promotionalOffer, 60), (.offerCode, 40)])
        }
        let discount: OfferDiscountType = rng.pick(
            weighted: [(.freeTrial, free ? 45 : 0), (.payAsYouGo, 35), (.payUpFront, 20)])
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
