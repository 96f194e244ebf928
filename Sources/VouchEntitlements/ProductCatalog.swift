internal import Foundation
public import Vouch

/// What the app decides about its products and the signed data cannot say: tiers and their
/// ranks, the trial length of a "free non-consumable trial" product, the length of a
/// non-renewing subscription.
///
/// Read from JSON (`vouch entitlements --tiers FILE`):
///
/// ```json
/// {
///   "tiers": [
///     {"name": "pro", "rank": 20, "products": ["com.example.pro.monthly", "com.example.pro.trial"]},
///     {"name": "plus", "rank": 10, "products": ["com.example.plus.monthly"]}
///   ],
///   "products": {
///     "com.example.pro.trial": {"trialDays": 14},
///     "com.example.pass.month": {"lengthDays": 30}
///   },
///   "refundEndsAccess": ["stripe"]
/// }
/// ```
///
/// Whether a refund ends access is decided per channel. On the App Store a refund revokes the
/// transaction (`revocationDate`), and access ends with it, always. On Stripe a refunded charge
/// leaves the subscription as Stripe keeps it (active until it is canceled), so by default a
/// refund alone does not end access; a channel listed in `refundEndsAccess` ends it from the
/// refund on. Either way an entitlement a refund touched says when (``Entitlement/refundedDate``).
public struct ProductCatalog: Sendable, Equatable {
    /// A named level of service; a higher rank is more service.
    public struct Tier: Sendable, Hashable {
        /// The name answers give.
        public var name: String
        /// Higher is more service; the highest tier an account has wins.
        public var rank: Int
        /// The product ids that grant the tier.
        public var products: [String]

        /// A tier granted by `products`.
        public init(name: String, rank: Int, products: [String]) {
            self.name = name
            self.rank = rank
            self.products = products
        }

        /// The tier as a value (its name and rank).
        public var serviceTier: ServiceTier { ServiceTier(name: name, rank: rank) }
    }

    /// The tiers, in the order given.
    public var tiers: [Tier]
    /// Free non-consumable trial products: days of access from the purchase date.
    public var trialDays: [String: Int]
    /// Non-renewing subscriptions: days of access from the purchase date (unbounded when absent).
    public var lengthDays: [String: Int]
    /// The channels whose refunds end access from the refund on (see above); the App Store's
    /// revocations always do.
    public var refundEndsAccess: Set<EntitlementSource> = []

    /// A catalog from its parts; the default knows no tier, trial or length.
    public init(tiers: [Tier] = [], trialDays: [String: Int] = [:], lengthDays: [String: Int] = [:]) {
        self.tiers = tiers
        self.trialDays = trialDays
        self.lengthDays = lengthDays
    }

    /// The tier named `name`, as a value; `nil` when the catalog has none of that name.
    public func tier(named name: String) -> ServiceTier? {
        tiers.first { $0.name == name }?.serviceTier
    }

    /// The tier a product belongs to; the highest-ranked when it is listed in several.
    public func tier(of productId: String) -> Tier? {
        tiers.filter { $0.products.contains(productId) }.max { ($0.rank, $1.name) < ($1.rank, $0.name) }
    }

    /// The highest rank; then the later end (none is latest); then the transaction id.
    func highestTier(_ entitlements: [Entitlement]) -> TierGrant? {
        var best: TierGrant?
        for entitlement in entitlements {
            guard let tier = tier(of: entitlement.productId) else { continue }
            let candidate = TierGrant(name: tier.name, rank: tier.rank, entitlement: entitlement)
            guard let known = best else {
                best = candidate
                continue
            }
            func order(_ grant: TierGrant) -> (Int, Int64, String) {
                (grant.rank, grant.entitlement.expiresDate?.milliseconds ?? Int64.max, grant.entitlement.transactionId)
            }
            if order(candidate) > order(known) { best = candidate }
        }
        return best
    }

    /// A catalog problem, with the member at fault. Two errors are equal when their codes are
    /// (every one is ``Code/invalidCatalog``); `description` is the reason alone.
    public struct FormatError: CodedError {
        /// A stable identifier of the failure.
        public struct Code: ErrorCode {
            /// The code as text: `invalid_catalog`.
            public let rawValue: String

            /// The catalog is not JSON, or breaks a rule of its form (a member of the wrong
            /// type, an unknown member, a tier defined twice).
            public static let invalidCatalog = Code(rawValue: "invalid_catalog")
        }

        /// What is wrong, for people: the member at fault and what it must be.
        public let reason: String
        init(_ reason: String) { self.reason = reason }

        /// ``Code/invalidCatalog``.
        public var code: Code { .invalidCatalog }
        /// `ErrorCategory.configuration`: a catalog is the app's set-up.
        public var category: ErrorCategory { .configuration }
        /// The ``reason``.
        public var description: String { reason }
    }

    /// Reads the JSON form above. Unknown members are refused, so a misspelt one is not ignored.
    public init(json bytes: some Collection<UInt8>) throws(FormatError) {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(bytes, limits: .init(maximumDepth: 8))
        } catch {
            throw FormatError("not JSON: \(error)")
        }
        guard let root = value.objectValue else { throw FormatError("the catalog must be a JSON object") }
        self.init()
        for member in root.members {
            switch member.name {
            case "tiers":
                guard let list = member.value.arrayValue else { throw FormatError("tiers must be an array") }
                for (index, element) in list.enumerated() {
                    tiers.append(try Self.tier(element, at: "tiers[\(index)]"))
                }
            case "products":
                guard let products = member.value.objectValue else { throw FormatError("products must be an object") }
                for product in products.members {
                    try readProduct(product)
                }
            case "refundEndsAccess":
                let sources = member.value.arrayValue?.compactMap(\.stringValue)
                guard let sources, sources.count == member.value.arrayValue?.count else {
                    throw FormatError("refundEndsAccess must be an array of channel names")
                }
                for source in sources {
                    guard [EntitlementSource.appStore.rawValue, EntitlementSource.stripe.rawValue].contains(source)
                    else {
                        throw FormatError("refundEndsAccess: unknown channel '\(source)' (expected app_store, stripe)")
                    }
                    refundEndsAccess.insert(EntitlementSource(rawValue: source))
                }
            default:
                throw FormatError("unknown member '\(member.name)' (expected tiers, products, refundEndsAccess)")
            }
        }
        var names = Set<String>()
        for tier in tiers where !names.insert(tier.name).inserted {
            throw FormatError("tier '\(tier.name)' is defined twice")
        }
    }

    private static func tier(_ value: JSONValue, at path: String) throws(FormatError) -> Tier {
        guard let object = value.objectValue else { throw FormatError("\(path) must be an object") }
        var name: String?
        var rank: Int?
        var products: [String]?
        for member in object.members {
            switch member.name {
            case "name":
                guard let text = member.value.stringValue, !text.isEmpty else {
                    throw FormatError("\(path).name must be a non-empty string")
                }
                name = text
            case "rank":
                guard let number = member.value.int64Value, let value = Int(exactly: number) else {
                    throw FormatError("\(path).rank must be an integer")
                }
                rank = value
            case "products":
                guard let list = member.value.arrayValue else {
                    throw FormatError("\(path).products must be an array of strings")
                }
                var ids: [String] = []
                for element in list {
                    guard let id = element.stringValue else {
                        throw FormatError("\(path).products must be an array of strings")
                    }
                    ids.append(id)
                }
                products = ids
            default:
                throw FormatError("unknown member '\(member.name)' in \(path) (expected name, rank, products)")
            }
        }
        guard let name, let rank, let products else { throw FormatError("\(path) needs name, rank and products") }
        return Tier(name: name, rank: rank, products: products)
    }

    private mutating func readProduct(_ product: JSONObject.Member) throws(FormatError) {
        let path = "products.\(product.name)"
        guard let object = product.value.objectValue else { throw FormatError("\(path) must be an object") }
        for member in object.members {
            guard member.name == "trialDays" || member.name == "lengthDays" else {
                throw FormatError("unknown member '\(member.name)' in \(path) (expected trialDays, lengthDays)")
            }
            guard let number = member.value.int64Value, let days = Int(exactly: number), days > 0, days <= 36_500 else {
                throw FormatError("\(path).\(member.name) must be a whole number of days from 1 to 36500")
            }
            if member.name == "trialDays" { trialDays[product.name] = days } else { lengthDays[product.name] = days }
        }
    }
}
