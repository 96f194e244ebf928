import Foundation
import Vouch
internal import VouchMintPKI

/// Builds one item's payload for ``MintGenerator``; every random choice comes from `rng`.
///
/// The jobs are apart: ``MintScenario`` reads the overrides, the purchase simulation
/// (`MintPurchase.swift`) decides what was bought and when, the kind builders here and in
/// `MintNotification.swift` compute each member's value once, and ``MintLayout`` writes the
/// members in the order of the kind and style. The generator signs nested tokens and applies
/// the member overrides.
struct PayloadBuilder {
    static let day: Int64 = 86_400_000

    let xcode: Bool
    let style: MintAuthority.Style
    let index: Int
    var rng: SplitMix64
    /// Per-run offset that keeps the ids of different seeds apart.
    let runOffset: UInt64
    let app: MintCatalog.App
    let scenario: MintScenario
    /// When the item may be signed: the day before the generator's date (see ``MintScenario``).
    let window: ClosedRange<Int64>
    /// The signed date in milliseconds, and how it is written.
    var signedDate: Int64
    var signedDateValue: JSONValue
    /// The existing transaction the item is about, if any.
    let existing: ExistingTransaction?
    /// Xcode writes every date of a token with the same sub-millisecond part.
    let xcodeFraction: Double
    /// The percentage of simulated purchases that are revoked when the kind leaves it open.
    let revokedPercentage: Int

    var environment: JSONValue { scenario.environment }
    var sandbox: Bool { scenario.sandbox }

    init(
        generator: MintGenerator, index: Int, authority: MintAuthority, scenario: MintScenario,
        existing: ExistingTransaction?
    ) {
        self.style = authority.style
        self.xcode = authority.style == .xcode
        self.index = index
        self.existing = existing
        var run = SplitMix64(seed: generator.seed)
        let drawn = run.pick(MintCatalog.apps)
        // The app the existing transaction, the bundle or the product named belongs to, when the
        // catalogue has it, so that product, bundle and prices agree.
        let bundleId = existing?.model.bundleId ?? scenario["bundleId"]?.stringValue
        let productId = existing?.productId ?? scenario["productId"]?.stringValue
        self.app =
            MintCatalog.apps.first { $0.bundleId == bundleId }
            ?? MintCatalog.apps.first { app in app.products.contains { $0.id == productId } } ?? drawn
        self.runOffset = run.next()
        self.rng = SplitMix64(seed: generator.seed, index: UInt64(index))
        self.scenario = scenario
        self.revokedPercentage = min(100, max(0, generator.revokedPercentage))

        window = MintScenario.signingWindow(at: generator.date, validity: authority.signingValidity)
        let chosen = scenario.signedDate(in: window, rng: &rng)
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

    /// The payload of `kind`, scenario fields it lacks added. A notification's nested
    /// payloads are left as objects for the generator to sign.
    mutating func payload(_ kind: MintKind) throws(MintError) -> JSONObject {
        var object: JSONObject
        switch kind {
        case .transaction:
            object = transactionPayload(try purchase(PurchaseSpec(), event: "a transaction"))
        case .renewalInfo:
            var states: [(RenewalState, Int)] = [
                (.active, 65), (.autoRenewOff, 12), (.expiredVoluntary, 8), (.billingRetry, 5), (.gracePeriod, 3),
                (.priceIncrease, 4), (.expiredBillingRetry, 3),
            ]
            if let expires = existing?.expiresDate {
                // The state the existing subscription is in at the end of the window.
                states = states.filter { $0.0.isExpired == (expires <= window.upperBound) }
            }
            let state = rng.pick(weighted: states)
            var spec = PurchaseSpec(types: [MintCatalog.autoRenewable])
            spec.expired = state.isExpired
            spec.active = !state.isExpired
            if state == .gracePeriod { spec.lapsedWithin = gracePeriod - 1000 }
            spec.revoked = false
            object = renewalPayload(try purchase(spec, event: "renewal info"), state: state)
        case .notification:
            object = try notificationPayload()
        case .appTransaction:
            object = appTransactionPayload()
        case .realtimeRequest:
            object = try realtimeRequestPayload()
        }
        if kind != .notification {
            for name in scenario.order where object[name] == nil && !MintScenario.steeringOnly.contains(name) {
                // An app transaction carries its environment as receiptType.
                if kind == .appTransaction && name == "environment" { continue }
                object[name] = scenario[name]
            }
        }
        return object
    }

    // MARK: Values

    func date(_ milliseconds: Int64) -> JSONValue {
        xcode ? .number(String(describing: Double(milliseconds) + xcodeFraction)) : .number(String(milliseconds))
    }

    static func number(_ value: Int64) -> JSONValue { .number(String(value)) }
    static func number(_ value: Int32) -> JSONValue { .number(String(value)) }
    static func number(_ value: Int) -> JSONValue { .number(String(value)) }

    /// How long a billing grace period lasts: 16 days (three minutes in the sandbox).
    var gracePeriod: Int64 { sandbox ? 180_000 : 16 * Self.day }

    /// App Store dates of purchases are whole seconds; Xcode's are not.
    func wholeSeconds(_ milliseconds: Int64) -> Int64 { xcode ? milliseconds : milliseconds / 1000 * 1000 }

    var bundleId: JSONValue { scenario["bundleId"] ?? .string(app.bundleId) }
    var appAppleId: JSONValue { scenario["appAppleId"] ?? Self.number(app.appAppleId) }

    mutating func deviceVerification() -> JSONValue {
        .string(String(decoding: Base64.encodeStandard(rng.bytes(48)), as: UTF8.self))
    }

    /// Xcode's subscription group identifiers are eight hex digits.
    var xcodeGroup: String {
        let hex = String(UInt32(truncatingIfNeeded: app.appAppleId), radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Xcode's device verification value and nonce (derived from the item, not drawn, so
    /// they do not shift the other choices).
    var xcodeDeviceVerification: (value: JSONValue, nonce: JSONValue) {
        var local = SplitMix64(seed: rng.state ^ 0xD0D0, index: UInt64(index))
        let value = JSONValue.string(String(decoding: Base64.encodeStandard(local.bytes(48)), as: UTF8.self))
        return (value, .string(local.uuid()))
    }

    static let revocationMembers = ["revocationReason", "revocationDate", "revocationType", "revocationPercentage"]

    /// The members a revocation sets, its date written by `date`.
    static func add(_ revocation: Revocation, to values: inout [String: JSONValue], date: (Int64) -> JSONValue) {
        values["revocationReason"] = number(revocation.reason.rawValue)
        values["revocationDate"] = date(revocation.date)
        values["revocationType"] = .string(revocation.type.rawValue)
        values["revocationPercentage"] = revocation.percentage.map { number($0) }
    }

    /// The members an offer sets.
    static func add(_ offer: Offer, to values: inout [String: JSONValue]) {
        values["offerType"] = number(offer.type.rawValue)
        values["offerIdentifier"] = offer.identifier.map { .string($0) }
        values["offerDiscountType"] = .string(offer.discountType.rawValue)
        values["offerPeriod"] = .string(offer.period)
    }

    // MARK: Transaction

    func transactionPayload(_ p: Purchase) -> JSONObject {
        if var stated = p.statement {
            // An existing transaction, as it stated itself: signed again, its revocation as it now is.
            stated["signedDate"] = signedDateValue
            for name in Self.revocationMembers { stated[name] = nil }
            if let revocation = p.revocation {
                var added: [String: JSONValue] = [:]
                Self.add(revocation, to: &added, date: date)
                for name in Self.revocationMembers { stated[name] = added[name] }
            }
            return stated
        }
        var v: [String: JSONValue] = [:]
        v["transactionId"] = .string(p.transactionId)
        v["originalTransactionId"] = p.originalTransactionId
        v["webOrderLineItemId"] = p.webOrderLineItemId.map { .string($0) }
        v["bundleId"] = bundleId
        v["productId"] = .string(p.product.id)
        if p.isSubscription {
            v["subscriptionGroupIdentifier"] = .string(xcode ? xcodeGroup : app.subscriptionGroupIdentifier)
        }
        v["purchaseDate"] = date(p.purchaseDate)
        v["originalPurchaseDate"] = date(p.originalPurchaseDate)
        v["expiresDate"] = p.expiresDate.map(date)
        v["quantity"] = Self.number(p.quantity)
        v["type"] = scenario["type"] ?? .string(p.product.type)
        v["appAccountToken"] = p.appAccountToken
        v["inAppOwnershipType"] = .string(p.ownership.rawValue)
        v["signedDate"] = signedDateValue
        if let revocation = p.revocation { Self.add(revocation, to: &v, date: date) }
        // Xcode writes isUpgraded on every subscription, the App Store only when it is true.
        if xcode ? p.isSubscription : p.isUpgraded { v["isUpgraded"] = .bool(p.isUpgraded) }
        if let offer = p.offer { Self.add(offer, to: &v) }
        v["environment"] = environment
        v["transactionReason"] = .string(p.reason.rawValue)
        v["storefront"] = .string(p.storefront.code)
        v["storefrontId"] = .string(p.storefront.id)
        v["price"] = Self.number(p.price)
        v["currency"] = .string(p.storefront.currency)
        v["appTransactionId"] = p.appTransactionId
        v["multiSeatInfo"] = p.seats.map { .object($0.json) }
        if xcode { (v["deviceVerification"], v["deviceVerificationNonce"]) = xcodeDeviceVerification }
        return MintLayout.object(v, .transaction, style: style)
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

    mutating func renewalPayload(
        _ p: Purchase, state: RenewalState, autoRenewProduct: MintCatalog.Product? = nil
    ) -> JSONObject {
        let renewProduct = autoRenewProduct ?? p.product
        let prices = p.storefront.prices
        var renewalPrice: Int64? =
            renewProduct.id == p.product.id
            ? p.regularPrice ?? prices[min(renewProduct.tier, prices.count - 1)]
            : prices[min(renewProduct.tier, prices.count - 1)]
        var expirationIntent: ExpirationIntent? = nil
        var autoRenewStatus = AutoRenewStatus.on
        var billingRetry: Bool? = nil
        var priceIncreaseStatus: PriceIncreaseStatus? = nil
        var graceExpires: Int64? = nil
        let renewalDate = p.expiresDate ?? p.purchaseDate
        switch state {
        case .active:
            break
        case .autoRenewOff:
            autoRenewStatus = .off
            renewalPrice = nil
        case .expiredVoluntary:
            (expirationIntent, autoRenewStatus, billingRetry, renewalPrice) = (.customerCancelled, .off, false, nil)
        case .billingRetry:
            (expirationIntent, billingRetry) = (.billingError, true)
        case .gracePeriod:
            (expirationIntent, billingRetry) = (.billingError, true)
            graceExpires = renewalDate + gracePeriod
        case .expiredBillingRetry:
            (expirationIntent, autoRenewStatus, billingRetry, renewalPrice) = (.billingError, .off, false, nil)
        case .priceIncrease:
            priceIncreaseStatus =
                rng.chance(60) ? .customerConsentedOrWasNotifiedWithoutNeedingConsent : .customerHasNotResponded
            renewalPrice = prices[min(renewProduct.tier + 1, prices.count - 1)]
        }
        var pendingOffer: Offer? = nil
        if state == .active && rng.chance(10) { pendingOffer = makeOffer(first: false, resubscribe: false) }
        let winBack = state == .expiredVoluntary && rng.chance(50)

        var v: [String: JSONValue] = [:]
        v["expirationIntent"] = expirationIntent.map { Self.number($0.rawValue) }
        v["originalTransactionId"] = p.originalTransactionId
        v["autoRenewProductId"] = .string(renewProduct.id)
        v["productId"] = .string(p.product.id)
        v["autoRenewStatus"] = Self.number(autoRenewStatus.rawValue)
        if let renewalPrice {
            v["renewalPrice"] = Self.number(renewalPrice)
            v["currency"] = .string(p.storefront.currency)
        }
        v["isInBillingRetryPeriod"] = billingRetry.map { .bool($0) }
        v["priceIncreaseStatus"] = priceIncreaseStatus.map { Self.number($0.rawValue) }
        v["gracePeriodExpiresDate"] = graceExpires.map(date)
        if let pendingOffer { Self.add(pendingOffer, to: &v) }
        v["signedDate"] = signedDateValue
        v["environment"] = environment
        v["recentSubscriptionStartDate"] = date(p.recentSubscriptionStartDate)
        v["renewalDate"] = date(renewalDate)
        if winBack { v["eligibleWinBackOfferIds"] = .array(app.winBackOffers.map { .string($0) }) }
        v["appTransactionId"] = p.appTransactionId
        v["appAccountToken"] = p.appAccountToken
        // A multiseat subscription renews the seats its transaction states, by price.
        if let tiers = p.seats?.priceTiers, autoRenewStatus == .on {
            v["renewalQuantity"] = Self.number(tiers.reduce(0) { $0 + Int($1.quantity ?? 0) })
            v["multiSeatInfo"] = .object(RenewalMultiSeatInfo(renewalPriceTiers: tiers).json)
        }
        if xcode { (v["deviceVerification"], v["deviceVerificationNonce"]) = xcodeDeviceVerification }
        return MintLayout.object(v, .renewalInfo, style: style)
    }

    // MARK: App transaction and real-time request

    mutating func appTransactionPayload() -> JSONObject {
        var v: [String: JSONValue] = [:]
        v["bundleId"] = bundleId
        v["applicationVersion"] = .string(app.versions[app.versions.count - 1])
        v["originalApplicationVersion"] = .string(app.versions[0])
        v["receiptType"] = environment
        v["receiptCreationDate"] = signedDateValue
        v["requestDate"] = signedDateValue
        if xcode {
            (v["deviceVerification"], v["deviceVerificationNonce"]) = xcodeDeviceVerification
            // Xcode reports the app as bought on 0001-01-01.
            v["originalPurchaseDate"] = .number("-62135769600000")
            return MintLayout.object(v, .appTransaction, style: style)
        }
        let production = environment.stringValue == AppStoreEnvironment.production.rawValue
        let originalPurchase = signedDate - rng.int64(in: Self.day...(3 * 365 * Self.day))
        if production || scenario["appAppleId"] != nil { v["appAppleId"] = appAppleId }
        // The sandbox always reports version external identifier 0.
        v["versionExternalIdentifier"] = Self.number(production ? app.versionExternalIdentifier : 0)
        v["originalPurchaseDate"] = date(originalPurchase)
        v["deviceVerification"] = deviceVerification()
        v["deviceVerificationNonce"] = .string(rng.uuid())
        if rng.chance(5) {
            v["preorderDate"] = date(originalPurchase - rng.int64(in: Self.day...(60 * Self.day)))
        }
        v["appTransactionId"] = appTransactionIdentifier()
        let platforms: [(PurchasePlatform, Int)] = [(.iOS, 85), (.macOS, 7), (.tvOS, 5), (.visionOS, 3)]
        v["originalPlatform"] = .string(rng.pick(weighted: platforms).rawValue)
        return MintLayout.object(v, .appTransaction, style: style)
    }

    mutating func realtimeRequestPayload() throws(MintError) -> JSONObject {
        let bought = try purchase(
            PurchaseSpec(types: [MintCatalog.autoRenewable], revoked: false), event: "a real-time request")
        var v: [String: JSONValue] = [:]
        v["originalTransactionId"] = bought.originalTransactionId
        v["appAppleId"] = appAppleId
        v["productId"] = .string(bought.product.id)
        v["userLocale"] = .string(bought.storefront.locale)
        v["requestIdentifier"] = .string(rng.uuid())
        v["signedDate"] = signedDateValue
        v["environment"] = environment
        return MintLayout.object(v, .realtimeRequest, style: style)
    }
}
