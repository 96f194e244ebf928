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
/// Two more stories, of a multiseat team plan, are minted when `story` asks for them (the
/// seed never picks them, so each seed's accounts stay as they are):
///
/// | story | what happens |
/// |---|---|
/// | `multiseat` | buys 5 seats with invitations Apple hosts, adds 3 on day 10; two members join (`ASSIGNED`, each an account with its own token); 2 added seats are refunded (`REFUND`, `SEATS`); 4 seats renew from day 30 (`DECREASE_QUANTITY`), one member's with them |
/// | `multiseat-claims` | buys 4 seats with invitations the app hosts; 2 seats renew from day 30 (`DECREASE_QUANTITY`), when the App Store releases two seat claims (`UNCLAIM_SEATS`) |
///
/// One account in five has no `appAccountToken`; the others get a UUID made from the seed.
/// Transaction ids are the seed's (``MintHistory/firstTransactionId(environment:namespace:account:)``),
/// so histories of two seeds can be fed to one ledger and each account answers as it does alone.
public struct MintHistoryGenerator: Sendable {
    /// The stories, in the order the seed picks from.
    public static let stories = [
        "renewing", "upgrade", "grace-period", "expired", "refund-reversed", "family-sharing", "consumables", "trial",
    ]

    /// The stories minted only when `story` names them.
    public static let storiesOnRequest = ["multiseat", "multiseat-claims"]

    /// What every account is derived from.
    public var seed: UInt64
    /// The story every account lives, one of ``stories`` or ``storiesOnRequest``; `nil` picks
    /// one per account from the seed (among ``stories``).
    public var story: String? = nil {
        willSet {
            precondition(
                newValue.map { (Self.stories + Self.storiesOnRequest).contains($0) } ?? true,
                "\(newValue ?? "") is not a story of MintHistoryGenerator")
        }
    }
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
        if let story { return story }
        var random = SplitMix64(seed: seed, index: UInt64(index))
        return Self.stories[Int(random.next() % UInt64(Self.stories.count))]
    }

    /// The `appAccountToken` of account `index`, or `nil`.
    public func appAccountToken(of index: Int) -> String? {
        var random = SplitMix64(seed: seed, index: UInt64(index))
        _ = random.next()
        guard random.next() % 5 != 0 else { return nil }
        return Self.uuid(&random)
    }

    /// The account tokens of the two members of account `index`'s team plan (stories
    /// `multiseat`), and the seat claims of its `multiseat-claims` plan: version 4 UUIDs drawn
    /// from the seed.
    public func seatHolders(of index: Int) -> (members: [String], claims: [String]) {
        var random = SplitMix64(seed: seed, index: UInt64(index) &+ 0x5EA7_0000_0000)
        let uuids = (0..<4).map { _ in Self.uuid(&random) }
        return (Array(uuids[0..<2]), Array(uuids[2..<4]))
    }

    /// A version 4 UUID (lowercase) of the next two numbers of `random`.
    static func uuid(_ random: inout SplitMix64) -> String {
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
        if Self.storiesOnRequest.contains(story) {
            teamPlan(story, of: index, in: &history, from: start, until: end)
            return history
        }
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

extension MintHistoryGenerator {
    /// A multiseat team plan from `start`, renewing monthly through `end`: the purchaser's steps
    /// in `history`, and for `multiseat` each member's history (ids from the account's first id
    /// plus 50 and plus 75) appended after.
    private func teamPlan(
        _ story: String, of index: Int, in history: inout MintHistory, from start: Int64, until end: Int64
    ) {
        let day: Int64 = 86_400_000
        let month = 30 * day
        func at(_ milliseconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds) }
        let holders = seatHolders(of: index)
        let team = "com.example.team.monthly"
        let group = "21000002"
        guard story == "multiseat" else {
            // Invitations the app hosts: members hold claims, not transactions.
            let bought = history.purchaseSeats(
                team, at: at(start), expires: at(start + month), tiers: [MultiSeatPriceTier(price: 9_990, quantity: 4)],
                invitations: .developer, group: group)
            history.reduceRenewalSeats(
                bought, to: [MultiSeatPriceTier(price: 9_990, quantity: 2)], at: at(start + 20 * day))
            var current = history.renew(bought, until: at(start + 2 * month))
            // Two members' claims no longer fit the seats that renewed.
            history.unclaimSeats(holders.claims, of: bought, at: at(start + month))
            while let expires = current.expiresDate?.milliseconds, expires <= end {
                current = history.renew(current, until: at(expires + month))
            }
            return
        }
        var current = history.purchaseSeats(
            team, at: at(start), expires: at(start + month), tiers: [MultiSeatPriceTier(price: 9_990, quantity: 5)],
            invitations: .apple, group: group)
        let added = history.addSeats(
            &current, at: at(start + 10 * day), tiers: [MultiSeatPriceTier(price: 8_990, quantity: 3)])
        var members = holders.members.enumerated().map { number, token in
            MintHistory(
                environment: environment, bundleId: bundleId, appAppleId: appAppleId, appAccountToken: token,
                firstTransactionId: history.firstTransactionId + 50 + 25 * Int64(number))
        }
        var kept = members[0].assignSeat(of: current, at: at(start + 11 * day))
        let left = members[1].assignSeat(of: current, at: at(start + 12 * day))
        history.refundSeats(added, seats: 2, at: at(start + 20 * day))
        history.reduceRenewalSeats(
            current, to: [MultiSeatPriceTier(price: 9_990, quantity: 4)], at: at(start + 25 * day))
        members[1].expire(left)
        current = added
        while let expires = current.expiresDate?.milliseconds, expires <= end {
            current = history.renew(current, until: at(expires + month))
            kept = members[0].renew(kept, until: at(expires + month))
        }
        for member in members { history.append(member) }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
