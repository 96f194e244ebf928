public import Foundation
public import Vouch

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
/// the subscriptions and revocations on about one transaction in twenty. Subscription periods
/// are accelerated in the sandbox (a month lasts five minutes) as in Apple's sandbox.
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
public struct MintGenerator: Sendable {
    /// The seed every payload of a run derives from.
    public var seed: UInt64
    /// The instant tokens are signed at or up to a day before.
    public var date: Date
    /// The `--set`/`--unset` changes applied to each payload, in order.
    public var overrides: [MintOverride]

    /// A generator for `seed`, signing at or up to a day before `date`, with `overrides`.
    public init(seed: UInt64, date: Date, overrides: [MintOverride] = []) {
        self.seed = seed
        self.date = date
        self.overrides = overrides
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
        let scenario = MintScenario(overrides: overrides, xcode: signer.authority.style == .xcode)
        var builder = PayloadBuilder(generator: self, index: index, authority: signer.authority, scenario: scenario)
        var payload = builder.payload(kind)
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
