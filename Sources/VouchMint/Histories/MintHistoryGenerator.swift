public import Foundation
public import Vouch

/// Coherent per-account histories for many accounts, deterministically from a seed: what
/// `vouch mint history` writes.
///
/// Account `index` is a pure function of (`seed`, `date`, `index`, environment, bundle and app
/// ids). Each subscribes to a monthly plan about four months before `date` and then lives one
/// of these stories, picked by the seed (the story's name is ``story(of:)``):
///
/// | story | what happens |
/// |---|---|
/// | `renewing` | renews every month; active at `date` |
/// | `upgrade` | renews, upgrades to the pro plan in its second month, renews |
/// | `grace-period` | the third renewal fails; in its 16-day billing grace period at `date` |
/// | `expired` | turns auto-renew off; expired two months before `date` |
/// | `refund-reversed` | buys the lifetime product, gets a prorated refund, the refund is reversed |
/// | `family-sharing` | buys the lifetime product, shares it with a family member, who loses it |
/// | `consumables` | buys coin packs, one is refunded; the subscription expires |
/// | `trial` | takes the 14-day trial product, then buys the lifetime product |
///
/// One account in five has no `appAccountToken`; the others get a UUID made from the seed.
/// Transaction ids are the seed's (``MintHistory/firstTransactionId(environment:namespace:account:)``),
/// so histories of two seeds can be fed to one ledger and each account answers as it does alone.
public struct MintHistoryGenerator: Sendable {
    /// The stories, in the order the seed picks from.
    public static let stories = [
        "renewing", "upgrade", "grace-period", "expired", "refund-reversed", "family-sharing", "consumables", "trial",
    ]

    /// What every account is derived from.
    public var seed: UInt64
    /// Histories end at or before this instant.
    public var date: Date
    /// `environment` of every payload.
    public var environment: AppStoreEnvironment
    /// `bundleId` of every payload.
    public var bundleId: String
    /// `appAppleId` of every notification.
    public var appAppleId: Int64

    /// Histories ending at `date`, derived from `seed`.
    public init(
        seed: UInt64, date: Date, environment: AppStoreEnvironment = .production, bundleId: String = "com.example.app",
        appAppleId: Int64 = 1_234_567_890
    ) {
        self.seed = seed
        self.date = date
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
    }

    /// How far back a history reaches from ``date``: every item is signed within this many
    /// milliseconds before it (120 days, and the day an account starts within).
    public static let length: Int64 = 121 * 86_400_000

    /// When the items of every history are signed: from ``length`` before ``date`` (whole
    /// seconds) through it. A signing certificate must be valid over all of it for the tokens
    /// to verify at their signed dates.
    public var signedDates: ClosedRange<Date> {
        let end = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) / 1000 * 1000
        return Date(
            timeIntervalSince1970: TimeInterval(end - Self.length) / 1000)...Date(
                timeIntervalSince1970: TimeInterval(end) / 1000)
    }

    /// The story account `index` lives.
    public func story(of index: Int) -> String {
        var random = SplitMix64(seed: seed, index: UInt64(index))
        return Self.stories[Int(random.next() % UInt64(Self.stories.count))]
    }

    /// The `appAccountToken` of account `index`, or `nil`.
    public func appAccountToken(of index: Int) -> String? {
        var random = SplitMix64(seed: seed, index: UInt64(index))
        _ = random.next()
        guard random.next() % 5 != 0 else { return nil }
        let high = random.next()
        let low = random.next()
        let hex = String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
        let characters = Array(hex)
        // A version 4 UUID: 4 in the version nibble, 8 to b in the variant nibble.
        let variant = "89ab"["89ab".index("89ab".startIndex, offsetBy: Int(low % 4))]
        return String(characters[0..<8]) + "-" + String(characters[8..<12]) + "-4" + String(characters[13..<16]) + "-"
            + String(variant) + String(characters[17..<20]) + "-" + String(characters[20..<32])
    }

    /// The history of account `index`, its steps in the order they happen.
    public func history(_ index: Int) -> MintHistory {
        let day: Int64 = 86_400_000
        let end = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) / 1000 * 1000
        let story = story(of: index)
        var random = SplitMix64(seed: seed, index: UInt64(index) &+ 0x5EED)
        // Each account starts within a day of 120 days before the end (100 for a grace
        // period, so that it is running at the end).
        let start = end - (story == "grace-period" ? 100 : 120) * day + Int64(random.next() % UInt64(day))
        func at(_ milliseconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds) }
        let firstId = MintHistory.firstTransactionId(environment: environment, namespace: seed, account: index)
        var history = MintHistory(
            environment: environment, bundleId: bundleId, appAppleId: appAppleId,
            appAccountToken: appAccountToken(of: index),
            firstTransactionId: firstId)
        let plus = "com.example.plus.monthly"
        let pro = "com.example.pro.monthly"
        let lifetime = "com.example.pro.lifetime"
        let month = 30 * day
        var current = history.purchase(
            plus, type: .autoRenewableSubscription, at: at(start), price: 4_990, expires: at(start + month),
            freeTrial: story == "renewing" && index % 2 == 0)
        func renewals(until limit: Int64, price: Int64) {
            while let expires = current.expiresDate?.milliseconds, expires <= limit {
                current = history.renew(current, until: at(expires + month), price: price)
            }
        }
        switch story {
        case "renewing":
            renewals(until: end, price: 4_990)
        case "upgrade":
            current = history.renew(current, until: at(start + 2 * month), price: 4_990)
            current = history.upgrade(
                current, to: pro, at: at(start + month + 10 * day), until: at(start + 2 * month + 10 * day),
                price: 9_990)
            renewals(until: end, price: 9_990)
        case "grace-period":
            renewals(until: end - month, price: 4_990)
            history.failRenewal(current, graceUntil: current.expiresDate.map { at($0.milliseconds + 16 * day) })
        case "expired":
            current = history.renew(current, until: at(start + 2 * month), price: 4_990)
            history.expire(current)
        case "refund-reversed":
            let bought = history.purchase(lifetime, type: .nonConsumable, at: at(start + 3 * day), price: 29_990)
            history.refund(
                bought, at: at(start + 20 * day), reason: .refundedDueToIssue, type: .refundProrated,
                percentage: 66_667)
            history.expire(current)
            history.reverseRefund(bought, at: at(start + 50 * day))
        case "family-sharing":
            let bought = history.purchase(lifetime, type: .nonConsumable, at: at(start + 2 * day), price: 29_990)
            var member = MintHistory(
                environment: environment, bundleId: bundleId, appAppleId: appAppleId, firstTransactionId: firstId + 50)
            let shared = member.shareWithFamily(bought, at: at(start + 4 * day))
            history.expire(current)
            member.revokeFamilySharing(shared, at: at(start + 60 * day))
            history.append(member)
        case "consumables":
            let coins = history.purchase(
                "com.example.coins.100", type: .consumable, at: at(start + 5 * day), price: 990)
            history.purchase("com.example.coins.100", type: .consumable, at: at(start + 9 * day), price: 990)
            history.refund(coins, at: at(start + 12 * day))
            history.expire(current)
        default:  // trial
            history.expire(current)
            history.purchase("com.example.pro.trial", type: .nonConsumable, at: at(start + 40 * day), price: 0)
            history.purchase(lifetime, type: .nonConsumable, at: at(start + 50 * day), price: 29_990)
        }
        return history
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
