import Foundation
import Vouch
internal import VouchMintPKI

/// What a run's overrides say about the whole scenario, apart from the members they set.
///
/// A few fields steer generation so that related values agree (see ``MintGenerator``);
/// every other override is a literal edit applied to the finished payload, or, addressed as
/// `data.signedTransactionInfo.…` or `data.signedRenewalInfo.…`, to a notification's nested
/// payload before it is signed.
struct MintScenario {
    /// Fields that steer the whole scenario rather than sit at one path.
    static let fields: [String] = [
        "environment", "bundleId", "appAppleId", "productId", "type", "storefront", "originalTransactionId",
        "appTransactionId", "appAccountToken", "signedDate", "notificationType", "subtype",
    ]

    /// Scenario fields that only steer the choices and are never added as members.
    static let steeringOnly: Set<String> = ["storefront", "type"]

    /// The nested tokens of a notification that overrides can reach.
    static let nestedMembers: Set<String> = ["signedTransactionInfo", "signedRenewalInfo"]

    /// Scenario values by field, and the order the fields were first given in.
    let values: [String: JSONValue]
    let order: [String]
    /// The overrides that edit members.
    let literal: [MintOverride]
    /// The environment written into payloads.
    let environment: JSONValue
    /// Sandbox-style identifiers and accelerated periods (anything but Production and Xcode).
    let sandbox: Bool

    /// The scenario of `overrides`; about an existing `transaction`, its bundle and environment
    /// unless the overrides name others.
    init(overrides: [MintOverride], xcode: Bool, transaction: ExistingTransaction? = nil) {
        var values: [String: JSONValue] = [:]
        var order: [String] = []
        var literal: [MintOverride] = []
        for override in overrides {
            if override.path.count == 1, let value = override.value, Self.fields.contains(override.path[0]) {
                if values.updateValue(value, forKey: override.path[0]) == nil { order.append(override.path[0]) }
            } else {
                literal.append(override)
            }
        }
        if let model = transaction?.model {
            if values["bundleId"] == nil, let bundleId = model.bundleId { values["bundleId"] = .string(bundleId) }
            if values["environment"] == nil, let environment = model.environment {
                values["environment"] = .string(environment.rawValue)
            }
        }
        self.values = values
        self.order = order
        self.literal = literal
        let xcodeEnvironment = AppStoreEnvironment.xcode.rawValue
        let sandboxEnvironment = AppStoreEnvironment.sandbox.rawValue
        environment = values["environment"] ?? .string(xcode ? xcodeEnvironment : sandboxEnvironment)
        sandbox = !xcode && environment.stringValue != AppStoreEnvironment.production.rawValue
    }

    subscript(field: String) -> JSONValue? { values[field] }

    /// Whether `override` edits a notification's nested payload rather than the notification.
    static func isNested(_ override: MintOverride) -> Bool {
        override.path.count >= 3 && override.path[0] == "data" && nestedMembers.contains(override.path[1])
    }

    /// The overrides addressed to the nested payload in `member`, with paths relative to it.
    func nestedOverrides(for member: String) -> [MintOverride] {
        literal.filter { Self.isNested($0) && $0.path[1] == member }.map {
            MintOverride(path: Array($0.path.dropFirst(2)), value: $0.value)
        }
    }

    /// The overrides that edit the payload of `kind` itself.
    func directOverrides(for kind: MintKind) -> [MintOverride] {
        literal.filter { !(kind == .notification && Self.isNested($0)) }
    }

    /// When items may be signed, in milliseconds: the day before `date`, on the same side of
    /// the signing certificate's validity as `date`, never in its first second (see
    /// ``MintGenerator``).
    static func signingWindow(at date: Date, validity: MintValidity?) -> ClosedRange<Int64> {
        var anchor = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var low = anchor - PayloadBuilder.day
        if let validity {
            let notBefore = Int64(validity.notBefore.timeIntervalSince1970) * 1000
            let notAfter = Int64(validity.notAfter.timeIntervalSince1970) * 1000 + 999
            if anchor >= notBefore && anchor <= notAfter {
                // Never in the leaf's first second: a verifier keeps a validated chain only for
                // times strictly inside its window, so tokens of a freshly minted authority
                // would all be validated from scratch. Within that second, DATE itself moves
                // to the next one.
                low = max(low, min(notBefore + 1000, notAfter))
                anchor = max(anchor, low)
            } else if anchor > notAfter {
                low = max(low, notAfter + 1)
            }
        }
        return low...anchor
    }

    /// The signed date in milliseconds: drawn from `window`, unless the scenario fixes it.
    func signedDate(in window: ClosedRange<Int64>, rng: inout SplitMix64) -> Int64 {
        let chosen = rng.int64(in: window)
        return values["signedDate"]?.int64Value ?? chosen
    }
}
