import Vouch
internal import VouchMintPKI

/// An existing transaction that minted data is about (``MintGenerator/transaction``): the
/// payload as stated, kept member for member in what is minted about it, read through Vouch's
/// one transaction model.
struct ExistingTransaction {
    let payload: JSONObject
    let model: JWSTransactionDecodedPayload

    /// Reads `payload`, which must name its transaction, product, type and purchase date.
    init(_ payload: JSONObject) throws(MintError) {
        do {
            model = try JWSTransactionDecodedPayload(json: payload)
        } catch {
            throw MintError(.invalidInput, "the transaction is not a transaction payload: \(error)")
        }
        guard model.transactionId != nil, model.productId != nil, model.type != nil, model.purchaseDate != nil else {
            throw MintError(.invalidInput, "the transaction needs a transactionId, productId, type and purchaseDate")
        }
        self.payload = payload
    }

    // Present, as the initialiser checked.
    var transactionId: String { model.transactionId ?? "" }
    var productId: String { model.productId ?? "" }
    var type: String { model.type?.rawValue ?? "" }
    var purchaseDate: Int64 { model.purchaseDate?.milliseconds ?? 0 }
    var expiresDate: Int64? { model.expiresDate?.milliseconds }
    var isSubscription: Bool { type == MintCatalog.autoRenewable }

    /// The scenario fields the transaction decides, which overrides must leave alone.
    static let ownFields = [
        "productId", "type", "storefront", "originalTransactionId", "appTransactionId", "appAccountToken",
    ]
}

/// What an event about an existing transaction needs of it, and when it is signed.
extension PayloadBuilder {
    /// The purchase the existing transaction states, changed as the event of `spec` changes it:
    /// a refund or a Family Sharing revocation adds its revocation, a reversal removes it, a
    /// renewal is the next period and an upgrade a purchase of the next dearer product. Sets the
    /// signed date, in the window the event allows.
    mutating func purchase(about existing: ExistingTransaction, _ spec: PurchaseSpec, event: String) throws(MintError)
        -> Purchase
    {
        let window = try signingWindow(about: existing, spec, event: event)
        settleSignedDate(in: window)
        var bought = statedPurchase(existing)
        if spec.reinstated {
            bought.revocation = nil
        } else if spec.revoked == true {
            let latest = max(bought.purchaseDate + 1000, signedDate)
            let date = wholeSeconds(rng.int64(in: (bought.purchaseDate + 1000)...latest))
            bought.revocation = revocation(at: date, familyShared: spec.familyShared == true, bought.isSubscription)
        } else if spec.reason == .renewal {
            bought = renewal(after: bought)
        } else if spec.upgrade {
            bought = try upgrade(from: bought, event: event)
        }
        return bought
    }

    /// When an event about `existing` may be signed, or why it cannot be about it at all.
    ///
    /// An event the transaction dates (a renewal at its expiry, an expiry, a grace period that
    /// ends) is signed when it happens, up to a minute later; any other is signed in the
    /// generator's window after the purchase (and, for an active subscription, before its
    /// expiry). A signed date the scenario fixes must fall in that window too.
    func signingWindow(about existing: ExistingTransaction, _ spec: PurchaseSpec, event: String) throws(MintError)
        -> ClosedRange<Int64>
    {
        let id = existing.transactionId
        let time = { (milliseconds: Int64) in CivilTime(milliseconds: milliseconds).iso8601(fraction: false) }
        if let types = spec.types, !types.contains(existing.type) {
            throw MintError(
                .invalidInput,
                "\(event) is about \(types.joined(separator: " or ")) purchases; transaction \(id) is \(existing.type)")
        }
        let model = existing.model
        if let revoked = model.revocationDate, !spec.reinstated {
            throw MintError(
                .invalidInput,
                "transaction \(id) was revoked at \(time(revoked.milliseconds)); only a reversal (REFUND_REVERSED) "
                    + "follows a revocation")
        }
        if spec.reinstated && model.revocationDate == nil {
            throw MintError(.invalidInput, "transaction \(id) was not revoked: \(event) has nothing to reverse")
        }
        let shared = model.inAppOwnershipType == .familyShared
        if spec.revoked == true && spec.familyShared == true && !shared {
            throw MintError(.invalidInput, "\(event) revokes Family Sharing; transaction \(id) was not shared")
        }
        if spec.paid || spec.revoked == true && spec.familyShared != true {
            if shared {
                throw MintError(
                    .invalidInput, "transaction \(id) is a family member's: it is revoked (REVOKE), never refunded")
            }
            if (model.price ?? 0) <= 0 {
                throw MintError(.invalidInput, "transaction \(id) was free: nothing was paid, so \(event) cannot be")
            }
        }
        if spec.atPurchase || spec.offer == true {
            let first = model.transactionReason != .renewal && model.originalTransactionId == existing.transactionId
            if model.transactionReason == .renewal || spec.firstPurchase.map({ $0 != first }) == true {
                let what =
                    model.transactionReason == .renewal ? "a renewal" : first ? "a first purchase" : "a resubscription"
                throw MintError(.invalidInput, "\(event) is not about \(what) such as transaction \(id)")
            }
            if spec.offer == true && model.offerType == nil {
                throw MintError(.invalidInput, "\(event) is about an offer; transaction \(id) has none")
            }
        }
        let needsExpiry = spec.expired || spec.reason == .renewal || spec.upgrade || spec.active
        let expires = existing.expiresDate
        if needsExpiry && (!existing.isSubscription || expires == nil) {
            throw MintError(.invalidInput, "\(event) is about a subscription; transaction \(id) has no expiresDate")
        }
        if spec.upgrade && statedPurchase(existing).product.period == nil {
            throw MintError(.invalidInput, "\(event): \(existing.productId) is not a subscription of \(bundleId)")
        }

        let latest = time(window.upperBound)
        // After the purchase, and a reversal after the revocation it reverses.
        var low = max(
            window.lowerBound, (spec.reinstated ? model.revocationDate.map { $0.milliseconds + 1000 } : nil) ?? 0,
            existing.purchaseDate + 1000)
        var high = window.upperBound
        if spec.atPurchase || spec.expired || spec.reason == .renewal {
            // Signed when it happens: at the purchase, at the expiry, or when the grace period
            // after the expiry ends.
            low = spec.atPurchase ? existing.purchaseDate : (expires ?? 0) + spec.lapsedSince
            high = min(high, low + min(59_000, (spec.lapsedWithin ?? 60_000) - 1000))
            guard low <= window.upperBound else {
                throw MintError(
                    .invalidInput, "\(event) about transaction \(id) happens at \(time(low)), after \(latest)")
            }
        } else if existing.purchaseDate + 1000 > window.upperBound {
            throw MintError(
                .invalidInput, "transaction \(id) was bought at \(time(existing.purchaseDate)), after \(latest)")
        } else if let expires, spec.active {
            high = min(high, expires - 1000)
            guard low <= high else {
                throw MintError(
                    .invalidInput,
                    "\(event) is about an active subscription; transaction \(id) expired at \(time(expires)), "
                        + "before the notification's time (\(time(low)) to \(latest))")
            }
        }
        guard low <= high else {
            throw MintError(.invalidInput, "\(event) about transaction \(id) cannot be signed by \(latest)")
        }
        if let fixed = scenario["signedDate"]?.int64Value {
            guard (low...high).contains(fixed) else {
                throw MintError(
                    .invalidInput,
                    "\(event) about transaction \(id) is signed from \(time(low)) to \(time(high)); signedDate "
                        + "\(fixed) is not")
            }
            (low, high) = (fixed, fixed)
        }
        return low...high
    }

    /// Draws the signed date from `window` (a date the scenario fixes is the window).
    mutating func settleSignedDate(in window: ClosedRange<Int64>) {
        signedDate = rng.int64(in: window)
        if scenario["signedDate"] == nil {
            signedDateValue =
                xcode ? .number(String(describing: Double(signedDate) + xcodeFraction)) : Self.number(signedDate)
        }
    }

    /// The purchase as the existing transaction states it, with its payload kept as the statement.
    func statedPurchase(_ existing: ExistingTransaction) -> Purchase {
        let model = existing.model
        let product =
            app.products.first { $0.id == existing.productId }
            ?? MintCatalog.Product(id: existing.productId, type: existing.type, period: nil, tier: 0)
        let price = model.price ?? 0
        var storefront =
            model.storefront.flatMap(MintCatalog.storefront(code:))
            ?? MintCatalog.Storefront(
                code: model.storefront ?? "USA", id: model.storefrontId ?? "143441", currency: model.currency ?? "USD",
                locale: "en-US", prices: [])
        if storefront.currency != model.currency ?? storefront.currency || storefront.prices.isEmpty {
            // Prices of its own: every renewal costs what it cost.
            storefront.currency = model.currency ?? storefront.currency
            storefront.prices = Array(repeating: price, count: 6)
        }
        var offer: Offer? = nil
        if let type = model.offerType, let discount = model.offerDiscountType {
            offer = Offer(
                type: type, identifier: model.offerIdentifier, discountType: discount, period: model.offerPeriod ?? "")
        }
        let regular = offer == nil ? price : storefront.prices[min(product.tier, storefront.prices.count - 1)]
        return Purchase(
            product: product, storefront: storefront, transactionId: existing.transactionId,
            originalTransactionId: existing.payload["originalTransactionId"] ?? .string(existing.transactionId),
            webOrderLineItemId: model.webOrderLineItemId, purchaseDate: existing.purchaseDate,
            originalPurchaseDate: model.originalPurchaseDate?.milliseconds ?? existing.purchaseDate,
            expiresDate: existing.expiresDate,
            recentSubscriptionStartDate: model.originalPurchaseDate?.milliseconds ?? existing.purchaseDate,
            quantity: Int(model.quantity ?? 1), ownership: model.inAppOwnershipType ?? .purchased,
            reason: model.transactionReason ?? .purchase, price: price, offer: offer,
            revocation: nil, isUpgraded: model.isUpgraded ?? false,
            appAccountToken: existing.payload["appAccountToken"],
            appTransactionId: existing.payload["appTransactionId"],
            statement: existing.payload, regularPrice: regular, seats: model.multiSeatInfo)
    }

    /// The next period of `previous`: a new transaction from its expiry, at the regular price.
    mutating func renewal(after previous: Purchase) -> Purchase {
        var next = previous
        let start = previous.expiresDate ?? previous.purchaseDate
        next.transactionId = successor(of: previous.transactionId)
        if let order = previous.webOrderLineItemId { next.webOrderLineItemId = successor(of: order) }
        next.purchaseDate = start
        next.expiresDate = length(of: previous).map { start + $0 }
        next.reason = .renewal
        next.offer = nil
        next.price = previous.regularPrice ?? previous.price
        next.isUpgraded = false
        next.statement = nil
        // The next period is one transaction of the seats that renew: no seat of it refunded yet.
        next.seats = previous.seats.map {
            TransactionMultiSeatInfo(invitationManagement: $0.invitationManagement, priceTiers: $0.priceTiers)
        }
        return next
    }

    /// A purchase of the next dearer product of the group, starting at the signed date; the
    /// subscription keeps its original transaction.
    mutating func upgrade(from current: Purchase, event: String) throws(MintError) -> Purchase {
        let ladder = app.subscriptions.sorted { $0.tier < $1.tier }
        guard let position = ladder.firstIndex(where: { $0.id == current.product.id }), position + 1 < ladder.count
        else {
            throw MintError(.invalidInput, "\(event): \(current.product.id) has no dearer product in its group")
        }
        var next = current
        next.product = ladder[position + 1]
        next.transactionId = successor(of: current.transactionId)
        if let order = current.webOrderLineItemId { next.webOrderLineItemId = successor(of: order) }
        next.purchaseDate = wholeSeconds(max(current.purchaseDate + 1000, signedDate - rng.int64(in: 1000...20_000)))
        next.expiresDate = next.product.period.map { $0.adding(1, to: next.purchaseDate, sandbox: sandbox) }
        next.recentSubscriptionStartDate = next.purchaseDate
        next.reason = .purchase
        next.offer = nil
        next.price = current.storefront.prices[min(next.product.tier, current.storefront.prices.count - 1)]
        next.regularPrice = next.price
        next.statement = nil
        return next
    }

    /// How long a period of `purchase`'s subscription lasts: the product's period, or as long
    /// as the stated one.
    func length(of purchase: Purchase) -> Int64? {
        if let period = purchase.product.period {
            return period.adding(1, to: purchase.expiresDate ?? purchase.purchaseDate, sandbox: sandbox)
                - (purchase.expiresDate ?? purchase.purchaseDate)
        }
        return purchase.expiresDate.map { $0 - purchase.purchaseDate }
    }

    /// An identifier after `id`, as the App Store numbers later transactions: greater, of the
    /// same length where it can be.
    mutating func successor(of id: String) -> String {
        guard let number = Int64(id), number < Int64.max - 64 else { return id + "1" }
        return String(number + 1 + Int64(rng.below(16)))
    }
}
