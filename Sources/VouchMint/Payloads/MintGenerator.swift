public import Foundation
public import Vouch
public import VouchMintPKI

/// Makes realistic App Store payloads, deterministically from a seed.
///
/// Payload `index` of a run is a pure function of (`seed`, `date`, `index`, `overrides`, the
/// signer's style and signing-certificate validity): the same inputs give the same JSON, item 7
/// does not depend on items 0…6, and ids derived from the index keep every item distinct.
/// Signatures are not part of that promise (ECDSA nonces are random), so a notification's
/// nested tokens differ in their signature segments only.
///
/// Every documented field is set with a plausible value: identifiers in Apple's formats (16
/// digits in the sandbox, 15 in production), product ids and types from a fictional
/// `com.example` app, prices in milliunits of the storefront's currency, dates in UNIX
/// milliseconds (fractional in Xcode style, as Xcode writes them), offers on about a fifth of
/// the subscriptions. Subscription periods are accelerated in the sandbox (a month lasts five
/// minutes) as in Apple's sandbox. The dates of a payload, and of a notification and the tokens
/// it nests, are in order: an original purchase before the purchase, a revocation between the
/// purchase and the signed date, a grace period running when the notification says so.
///
/// Only what is asked for is minted: no transaction is revoked unless ``revokedPercentage``
/// asks, and no notification is a refund or a revocation unless `notificationType` names one.
/// What is refunded (a refund, its request, decline or reversal) was paid for: never a free
/// trial.
///
/// `signedDate` falls within the day before `date`, on the same side of the signing
/// certificate's validity as `date` itself: with a current certificate every token verifies at
/// its signed date, with an expired one none does. It never falls in the certificate's first
/// second (a `date` inside it counts as the next second), where a verifier cannot reuse a
/// validated chain: tokens of an authority minted a moment earlier verify at the cached rate.
///
/// Overrides are applied as ``MintOverride`` describes. Scenario fields (`environment`,
/// `bundleId`, `appAppleId`, `productId`, `type`, `storefront`, `originalTransactionId`,
/// `appTransactionId`, `appAccountToken`, `signedDate`, `notificationType`, `subtype`) steer the
/// generation so that related values agree: `storefront=JPN` prices in yen, `type=Consumable`
/// picks a consumable, `notificationType=REFUND` builds a refund with a revoked transaction,
/// and in a notification `bundleId`, `environment` and `originalTransactionId` reach the nested
/// tokens too. A scenario field the payload would not otherwise contain is added as given,
/// except `storefront` and `type`, which only steer.
///
/// About an existing ``transaction``, notifications, renewal info and real-time requests carry
/// its purchase instead of a simulated one: the payload as it stated itself (signed again, a
/// refund's revocation added, a reversal's removed), its bundle, environment and app. An event
/// the transaction dates is signed when it happens (a purchase notification at the purchase, a
/// renewal or an expiry at its expiry, `GRACE_PERIOD_EXPIRED` when the grace period ends),
/// others in the usual window after the purchase (while an active subscription is active). A
/// renewal is the next period, a new transaction from the expiry at the regular price; an
/// upgrade, a purchase of the next dearer product of the group. Without `notificationType`,
/// events are drawn among those that fit the transaction. An event that cannot be about it (a
/// subscription event about a lifetime purchase, a refund of a free or a shared one, anything
/// but `REFUND_REVERSED` after a revocation, a date before the purchase) throws
/// `MintError` code `invalidInput` saying why; scenario fields the transaction
/// decides (`productId`, `type`, `storefront`, `originalTransactionId`, `appTransactionId`,
/// `appAccountToken`) throw `MintError` code `unsupported`. A transaction minted
/// with it is a statement of it.
public struct MintGenerator: Sendable {
    /// The seed every payload of a run derives from.
    public var seed: UInt64
    /// The instant tokens are signed at or up to a day before.
    public var date: Date
    /// The `--set`/`--unset` changes applied to each payload, in order.
    public var overrides: [MintOverride]
    /// About this percentage (0 to 100) of the transactions minted as ``MintKind/transaction``
    /// are revoked: refunded, or, when shared through Family Sharing, revoked. 0 by default:
    /// nothing is revoked unless asked for (a notification asks with `notificationType`).
    public var revokedPercentage: Int
    /// An existing transaction (its payload) that the notifications, renewal info and
    /// real-time requests are about, instead of a simulated purchase; see ``MintGenerator``.
    public var transaction: JSONObject?

    /// A generator for `seed`, signing at or up to a day before `date`, with `overrides`,
    /// revoking `revokedPercentage` percent of the transactions, about `transaction` when given.
    public init(
        seed: UInt64, date: Date, overrides: [MintOverride] = [], revokedPercentage: Int = 0,
        transaction: JSONObject? = nil
    ) {
        self.seed = seed
        self.date = date
        self.overrides = overrides
        self.revokedPercentage = revokedPercentage
        self.transaction = transaction
    }

    /// A seed from text: a decimal `UInt64` as itself, anything else by its FNV-1a hash.
    public static func seed(_ text: String) -> UInt64 {
        if let value = UInt64(text) { return value }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The payload of item `index`. A notification's nested tokens are signed with `signer`.
    public func payload(_ kind: MintKind, index: Int, signer: MintSigner) throws(MintError) -> JSONObject {
        guard signer.authority.style == .appStore || kind.existsInXcode else {
            throw MintError(.unsupported, "Xcode does not produce \(kind.rawValue) data")
        }
        guard index >= 0 else { throw MintError(.unsupported, "index must not be negative") }
        let existing = try transaction.map { (payload) throws(MintError) in try ExistingTransaction(payload) }
        let scenario = MintScenario(
            overrides: overrides, xcode: signer.authority.style == .xcode, transaction: existing)
        if existing != nil, let field = ExistingTransaction.ownFields.first(where: { scenario[$0] != nil }) {
            throw MintError(.unsupported, "\(field) comes from the existing transaction; it cannot be set too")
        }
        var builder = PayloadBuilder(
            generator: self, index: index, authority: signer.authority, scenario: scenario, existing: existing)
        var payload = try builder.payload(kind)
        if kind == .notification, case .object(var data)? = payload["data"] {
            try signNested(in: &data, scenario: scenario, signer: signer)
            payload["data"] = .object(data)
        }
        for override in scenario.directOverrides(for: kind) {
            try override.apply(to: &payload)
        }
        return payload
    }

    /// Signs the nested payloads a notification's `data` holds as objects, after the
    /// overrides addressed to them (`data.signedTransactionInfo.price`).
    private func signNested(in data: inout JSONObject, scenario: MintScenario, signer: MintSigner) throws(MintError) {
        for member in ["signedTransactionInfo", "signedRenewalInfo"] {
            guard case .object(var nested)? = data[member] else { continue }
            for override in scenario.nestedOverrides(for: member) { try override.apply(to: &nested) }
            data[member] = .string(try signer.sign(payload: nested))
        }
    }

    /// The signed token of item `index`.
    public func token(_ kind: MintKind, index: Int, signer: MintSigner) throws(MintError) -> String {
        try signer.sign(payload: payload(kind, index: index, signer: signer))
    }
}
