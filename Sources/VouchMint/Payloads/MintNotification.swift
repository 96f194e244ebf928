import Vouch
internal import VouchMintPKI

/// Server notifications: which event, and the purchase and renewal state behind it.
extension PayloadBuilder {
    struct NotificationScenario {
        var type: NotificationType
        var subtype: NotificationSubtype?
        var weight: Int

        /// Whether the event takes a purchase away (a refund, a Family Sharing revocation).
        var revokes: Bool { type == .refund || type == .revoke }
        /// How errors name it: `REFUND`, `EXPIRED (VOLUNTARY)`.
        var name: String { type.rawValue + (subtype.map { " (\($0.rawValue))" } ?? "") }
    }

    /// The events minted without a `notificationType` override, with their relative weights.
    static let notificationScenarios: [NotificationScenario] = [
        NotificationScenario(type: .subscribed, subtype: .initialBuy, weight: 10),
        NotificationScenario(type: .subscribed, subtype: .resubscribe, weight: 6),
        NotificationScenario(type: .didRenew, subtype: nil, weight: 20),
        NotificationScenario(type: .didRenew, subtype: .billingRecovery, weight: 3),
        NotificationScenario(type: .didChangeRenewalStatus, subtype: .autoRenewDisabled, weight: 8),
        NotificationScenario(type: .didChangeRenewalStatus, subtype: .autoRenewEnabled, weight: 4),
        NotificationScenario(type: .didChangeRenewalPref, subtype: .downgrade, weight: 3),
        NotificationScenario(type: .didChangeRenewalPref, subtype: .upgrade, weight: 2),
        NotificationScenario(type: .offerRedeemed, subtype: .initialBuy, weight: 2),
        NotificationScenario(type: .offerRedeemed, subtype: .resubscribe, weight: 1),
        NotificationScenario(type: .expired, subtype: .voluntary, weight: 6),
        NotificationScenario(type: .expired, subtype: .billingRetry, weight: 2),
        NotificationScenario(type: .didFailToRenew, subtype: nil, weight: 3),
        NotificationScenario(type: .didFailToRenew, subtype: .gracePeriod, weight: 2),
        NotificationScenario(type: .gracePeriodExpired, subtype: nil, weight: 1),
        NotificationScenario(type: .priceIncrease, subtype: .pending, weight: 1),
        NotificationScenario(type: .priceIncrease, subtype: .accepted, weight: 1),
        NotificationScenario(type: .refund, subtype: nil, weight: 5),
        NotificationScenario(type: .refundDeclined, subtype: nil, weight: 1),
        NotificationScenario(type: .refundReversed, subtype: nil, weight: 1),
        NotificationScenario(type: .revoke, subtype: nil, weight: 1),
        NotificationScenario(type: .consumptionRequest, subtype: nil, weight: 3),
        NotificationScenario(type: .oneTimeCharge, subtype: nil, weight: 8),
        NotificationScenario(type: .test, subtype: nil, weight: 2),
    ]

    /// What an event needs of its purchase, and the renewal state and status it reports.
    struct NotificationPlan {
        var spec: PurchaseSpec
        var state: RenewalState?
        var status: SubscriptionStatus?
        /// The renewal info names a cheaper (-1) product for the next period.
        var productChange = 0
    }

    /// The plan of `chosen`, apart from its random choices.
    func notificationPlan(for chosen: NotificationScenario) -> NotificationPlan {
        // The transaction a notification carries is the current one, never superseded.
        var plan = NotificationPlan(
            spec: PurchaseSpec(types: [MintCatalog.autoRenewable], revoked: false, upgraded: false), state: .active,
            status: .active)
        plan.spec.active = true
        let lowest = app.subscriptions.map(\.tier).min()
        let productSteered = scenario["productId"] != nil || scenario["type"] != nil
        switch (chosen.type, chosen.subtype) {
        case (.subscribed, .initialBuy?):
            (plan.spec.reason, plan.spec.firstPurchase, plan.spec.atPurchase) = (.purchase, true, true)
        case (.subscribed, .resubscribe?):
            (plan.spec.reason, plan.spec.firstPurchase, plan.spec.atPurchase) = (.purchase, false, true)
        case (.didRenew, _):
            plan.spec.reason = .renewal
        case (.didChangeRenewalStatus, .autoRenewDisabled?):
            plan.state = .autoRenewOff
        case (.didChangeRenewalPref, .downgrade?):
            // Takes effect at the next renewal: the renewal info names a cheaper product.
            if !productSteered { plan.spec.products = app.subscriptions.filter { $0.tier != lowest } }
            plan.productChange = -1
        case (.didChangeRenewalPref, .upgrade?):
            // Takes effect at once: a new purchase of a dearer product in the same subscription.
            if !productSteered { plan.spec.products = app.subscriptions.filter { $0.tier != lowest } }
            (plan.spec.reason, plan.spec.firstPurchase, plan.spec.upgrade) = (.purchase, false, true)
        case (.offerRedeemed, let subtype):
            (plan.spec.reason, plan.spec.firstPurchase, plan.spec.offer) = (.purchase, subtype == .initialBuy, true)
            plan.spec.atPurchase = true
        case (.expired, .billingRetry?):
            (plan.spec.expired, plan.state, plan.status) = (true, .expiredBillingRetry, .expired)
        case (.expired, _):
            (plan.spec.expired, plan.state, plan.status) = (true, .expiredVoluntary, .expired)
        case (.didFailToRenew, .gracePeriod?):
            (plan.spec.expired, plan.state, plan.status) = (true, .gracePeriod, .billingGracePeriod)
            plan.spec.lapsedWithin = gracePeriod - 1000
        case (.gracePeriodExpired, _):
            // Sent when the grace period after the failed renewal ends.
            (plan.spec.expired, plan.state, plan.status) = (true, .billingRetry, .billingRetry)
            plan.spec.lapsedSince = gracePeriod
        case (.didFailToRenew, _):
            (plan.spec.expired, plan.state, plan.status) = (true, .billingRetry, .billingRetry)
        case (.priceIncrease, _):
            plan.state = .priceIncrease
        case (.refund, _), (.refundReversed, _), (.refundDeclined, _):
            plan.spec.types = nil
            (plan.spec.revoked, plan.spec.familyShared, plan.spec.paid) = (chosen.type == .refund, false, true)
            (plan.spec.reinstated, plan.spec.active) = (chosen.type == .refundReversed, false)
        case (.revoke, _):
            plan.spec.types = [MintCatalog.autoRenewable, MintCatalog.nonConsumable]
            (plan.spec.revoked, plan.spec.familyShared) = (true, true)
        case (.consumptionRequest, _):
            // A refund request: about something paid for.
            plan.spec.types = [MintCatalog.consumable, MintCatalog.nonConsumable]
            (plan.state, plan.status, plan.spec.paid) = (nil, nil, true)
        case (.oneTimeCharge, _):
            plan.spec.types = [MintCatalog.consumable, MintCatalog.nonConsumable, MintCatalog.nonRenewing]
            (plan.state, plan.status, plan.spec.atPurchase) = (nil, nil, true)
        case (.test, _):
            (plan.state, plan.status) = (nil, nil)
        default:
            break
        }
        if plan.spec.expired || plan.spec.revoked == true || plan.state == nil { plan.spec.active = false }
        return plan
    }

    /// A notification whose `data.signedTransactionInfo` and `data.signedRenewalInfo` hold
    /// the payloads to sign, as objects.
    mutating func notificationPayload() throws(MintError) -> JSONObject {
        var chosen: NotificationScenario
        if let type = scenario["notificationType"]?.stringValue.map(NotificationType.init(rawValue:)) {
            let subtype = scenario["subtype"]?.stringValue.map(NotificationSubtype.init(rawValue:))
            var matching = Self.notificationScenarios.filter {
                $0.type == type && (subtype == nil || $0.subtype == subtype)
            }
            if let existing {
                // The subtypes that can be about the transaction, when any can.
                let fitting = matching.filter { candidate in
                    (try? signingWindow(about: existing, notificationPlan(for: candidate).spec, event: "")) != nil
                }
                if !fitting.isEmpty { matching = fitting }
            }
            chosen =
                matching.isEmpty ? NotificationScenario(type: type, subtype: subtype, weight: 1) : rng.pick(matching)
        } else if let existing {
            // Only events that can be about the transaction then; never a refund unless asked.
            var fitting: [NotificationScenario] = []
            var firstMisfit: MintError? = nil
            for candidate in Self.notificationScenarios where !candidate.revokes && candidate.type != .test {
                let spec = notificationPlan(for: candidate).spec
                do {
                    _ = try signingWindow(about: existing, spec, event: candidate.name)
                    fitting.append(candidate)
                } catch {
                    // Why an event about a purchase of its kind does not fit, to say when none does.
                    if firstMisfit == nil && spec.types?.contains(existing.type) != false { firstMisfit = error }
                }
            }
            guard !fitting.isEmpty else {
                throw firstMisfit
                    ?? MintError(.invalidInput, "no notification can be about transaction \(existing.transactionId)")
            }
            chosen = rng.pick(weighted: fitting.map { ($0, $0.weight) })
        } else {
            chosen = rng.pick(weighted: Self.notificationScenarios.map { ($0, $0.weight) })
            if chosen.revokes {
                // Only what is asked for: refunds and revocations come from notificationType.
                chosen = rng.pick(weighted: Self.notificationScenarios.filter { !$0.revokes }.map { ($0, $0.weight) })
            }
        }
        var plan = notificationPlan(for: chosen)
        if chosen.type == .subscribed && chosen.subtype == .initialBuy {
            // Drawn about an existing transaction too, so the other choices do not depend on it.
            let offered = rng.chance(25)
            if existing == nil { plan.spec.offer = offered }
        }
        var consumptionReason: ConsumptionRequestReason? = nil
        if chosen.type == .consumptionRequest {
            consumptionReason = rng.pick(weighted: [
                (.unintendedPurchase, 35), (.fulfillmentIssue, 20), (.unsatisfiedWithPurchase, 30), (.legal, 5),
                (.other, 10),
            ])
        }
        var (state, status) = (plan.state, plan.status)
        var autoRenewProduct: MintCatalog.Product? = nil

        let test = chosen.type == .test
        let production = environment.stringValue == AppStoreEnvironment.production.rawValue
        var data: [String: JSONValue] = [:]
        // Apple's TEST notifications name the app in Production only.
        if !test || production || scenario["appAppleId"] != nil { data["appAppleId"] = appAppleId }
        data["bundleId"] = bundleId
        if !test { data["bundleVersion"] = .string(rng.pick(app.versions)) }
        data["environment"] = environment
        if !test {
            let bought = try purchase(plan.spec, event: chosen.name)
            if bought.isSubscription {
                if plan.productChange != 0 {
                    let ladder = app.subscriptions.sorted { $0.tier < $1.tier }
                    let position = ladder.firstIndex { $0.id == bought.product.id } ?? 0
                    autoRenewProduct = ladder[max(0, min(ladder.count - 1, position + plan.productChange))]
                }
                if bought.revocation != nil {
                    status = .revoked
                } else if status == .active, let expires = bought.expiresDate, expires <= signedDate {
                    status = .expired
                }
            } else {
                (state, status) = (nil, nil)
            }
            data["signedTransactionInfo"] = .object(transactionPayload(bought))
            if let state {
                data["signedRenewalInfo"] = .object(
                    renewalPayload(bought, state: state, autoRenewProduct: autoRenewProduct))
            }
            data["status"] = status.map { Self.number($0.rawValue) }
            data["consumptionRequestReason"] = consumptionReason.map { .string($0.rawValue) }
        }

        var v: [String: JSONValue] = [:]
        v["notificationType"] = scenario["notificationType"] ?? .string(chosen.type.rawValue)
        v["subtype"] = scenario["subtype"] ?? chosen.subtype.map { .string($0.rawValue) }
        v["notificationUUID"] = .string(rng.uuid())
        v["data"] = .object(MintLayout.object(data, order: MintLayout.notificationData))
        v["version"] = "2.0"
        v["signedDate"] = signedDateValue
        return MintLayout.object(v, .notification, style: style)
    }
}
