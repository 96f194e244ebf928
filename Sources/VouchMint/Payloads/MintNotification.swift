import Vouch

/// Server notifications: which event, and the purchase and renewal state behind it.
extension PayloadBuilder {
    struct NotificationScenario {
        var type: NotificationType
        var subtype: NotificationSubtype?
        var weight: Int
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

    /// A notification whose `data.signedTransactionInfo` and `data.signedRenewalInfo` hold
    /// the payloads to sign, as objects.
    mutating func notificationPayload() -> JSONObject {
        let chosen: NotificationScenario
        if let type = scenario["notificationType"]?.stringValue.map(NotificationType.init(rawValue:)) {
            let subtype = scenario["subtype"]?.stringValue.map(NotificationSubtype.init(rawValue:))
            let matching = Self.notificationScenarios.filter {
                $0.type == type && (subtype == nil || $0.subtype == subtype)
            }
            chosen =
                matching.isEmpty ? NotificationScenario(type: type, subtype: subtype, weight: 1) : rng.pick(matching)
        } else {
            chosen = rng.pick(weighted: Self.notificationScenarios.map { ($0, $0.weight) })
        }
        // The transaction a notification carries is the current one, never superseded.
        var spec = PurchaseSpec(types: [MintCatalog.autoRenewable], revoked: false, upgraded: false)
        var state: RenewalState? = .active
        var status: SubscriptionStatus? = .active
        var autoRenewProduct: MintCatalog.Product? = nil
        var consumptionReason: ConsumptionRequestReason? = nil
        var productChange = 0
        let lowest = app.subscriptions.map(\.tier).min()
        let productSteered = scenario["productId"] != nil || scenario["type"] != nil
        switch (chosen.type, chosen.subtype) {
        case (.subscribed, .initialBuy?):
            (spec.reason, spec.firstPurchase, spec.offer) = (.purchase, true, rng.chance(25))
        case (.subscribed, .resubscribe?):
            (spec.reason, spec.firstPurchase) = (.purchase, false)
        case (.didRenew, _):
            spec.reason = .renewal
        case (.didChangeRenewalStatus, .autoRenewDisabled?):
            state = .autoRenewOff
        case (.didChangeRenewalPref, .downgrade?):
            // Takes effect at the next renewal: the renewal info names a cheaper product.
            if !productSteered { spec.products = app.subscriptions.filter { $0.tier != lowest } }
            productChange = -1
        case (.didChangeRenewalPref, .upgrade?):
            // Takes effect at once: a new purchase of a dearer product in the same subscription.
            if !productSteered { spec.products = app.subscriptions.filter { $0.tier != lowest } }
            (spec.reason, spec.firstPurchase) = (.purchase, false)
        case (.offerRedeemed, let subtype):
            (spec.reason, spec.firstPurchase, spec.offer) = (.purchase, subtype == .initialBuy, true)
        case (.expired, .billingRetry?):
            (spec.expired, state, status) = (true, .expiredBillingRetry, .expired)
        case (.expired, _):
            (spec.expired, state, status) = (true, .expiredVoluntary, .expired)
        case (.didFailToRenew, .gracePeriod?):
            (spec.expired, state, status) = (true, .gracePeriod, .billingGracePeriod)
        case (.didFailToRenew, _), (.gracePeriodExpired, _):
            (spec.expired, state, status) = (true, .billingRetry, .billingRetry)
        case (.priceIncrease, _):
            state = .priceIncrease
        case (.refund, _), (.refundReversed, _), (.refundDeclined, _):
            spec.types = nil
            (spec.revoked, spec.familyShared) = (chosen.type == .refund, false)
        case (.revoke, _):
            spec.types = [MintCatalog.autoRenewable, MintCatalog.nonConsumable]
            (spec.revoked, spec.familyShared) = (true, true)
        case (.consumptionRequest, _):
            spec.types = [MintCatalog.consumable, MintCatalog.nonConsumable]
            (state, status) = (nil, nil)
            consumptionReason = rng.pick(weighted: [
                (.unintendedPurchase, 35), (.fulfillmentIssue, 20), (.unsatisfiedWithPurchase, 30), (.legal, 5),
                (.other, 10),
            ])
        case (.oneTimeCharge, _):
            spec.types = [MintCatalog.consumable, MintCatalog.nonConsumable, MintCatalog.nonRenewing]
            (state, status) = (nil, nil)
        case (.test, _):
            (state, status) = (nil, nil)
        default:
            break
        }

        let test = chosen.type == .test
        var data: [String: JSONValue] = [:]
        if !test || scenario["appAppleId"] != nil { data["appAppleId"] = appAppleId }
        data["bundleId"] = bundleId
        if !test { data["bundleVersion"] = .string(rng.pick(app.versions)) }
        data["environment"] = environment
        if !test {
            let bought = purchase(spec)
            if bought.isSubscription {
                if productChange != 0 {
                    let ladder = app.subscriptions.sorted { $0.tier < $1.tier }
                    let position = ladder.firstIndex { $0.id == bought.product.id } ?? 0
                    autoRenewProduct = ladder[max(0, min(ladder.count - 1, position + productChange))]
                }
                if bought.revocation != nil { status = .revoked }
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
