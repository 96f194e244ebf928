public import Foundation
public import Vouch

/// Who an account is: its `appAccountToken` when the app set one, otherwise the
/// `originalTransactionId` of its one chain. Environments never share an account.
public struct AccountKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The environment of every statement about the account.
    public let environment: AppStoreEnvironment
    /// The lowercased `appAccountToken`, or `nil` for an account known by its chain.
    public let appAccountToken: String?
    /// The chain's `originalTransactionId` when there is no ``appAccountToken``.
    public let originalTransactionId: String?

    init(environment: String, appAccountToken: String?, originalTransactionId: String) {
        self.environment = AppStoreEnvironment(rawValue: environment)
        self.appAccountToken = appAccountToken
        self.originalTransactionId = appAccountToken == nil ? originalTransactionId : nil
    }

    /// The account the app knows as `appAccountToken` in `environment`.
    public init(environment: AppStoreEnvironment, appAccountToken: UUID) {
        self.init(
            environment: environment.rawValue, appAccountToken: EntitlementLedger.token(appAccountToken),
            originalTransactionId: "")
    }

    /// The account whose `appAccountToken` is `appAccountToken` in `environment`: a UUID in any
    /// case, or a server's own account id (a Stripe metadata value, a grant's account) as it is.
    public init(environment: AppStoreEnvironment, appAccountToken: String) {
        self.init(
            environment: environment.rawValue, appAccountToken: Self.token(appAccountToken), originalTransactionId: "")
    }

    /// An account id as the ledger keeps it: a UUID in lower case, as Apple writes
    /// `appAccountToken`; any other id as it is. What is a UUID is what Foundation's
    /// `UUID(uuidString:)` accepts; the 8-4-4-4-12 hexadecimal form, which it always accepts,
    /// is told from its bytes first, sparing every lookup by token Foundation's parse.
    static func token(_ text: String) -> String {
        switch hyphenatedHex(text) {
        case .some(let upper): return upper ? text.lowercased() : text
        case nil: return UUID(uuidString: text) != nil ? text.lowercased() : text
        }
    }

    /// Whether `text` is 36 bytes of hexadecimal digits with hyphens at 8, 13, 18 and 23 (`nil`
    /// when it is not), and whether a digit is in upper case.
    static func hyphenatedHex(_ text: String) -> Bool? {
        var text = text
        return text.withUTF8 { bytes -> Bool? in
            guard bytes.count == 36 else { return nil }
            var upper = false
            for (index, byte) in bytes.enumerated() {
                switch (index, byte) {
                case (8, UInt8(ascii: "-")), (13, UInt8(ascii: "-")), (18, UInt8(ascii: "-")), (23, UInt8(ascii: "-")):
                    continue
                case (8, _), (13, _), (18, _), (23, _): return nil
                case (_, UInt8(ascii: "0")...UInt8(ascii: "9")), (_, UInt8(ascii: "a")...UInt8(ascii: "f")): continue
                case (_, UInt8(ascii: "A")...UInt8(ascii: "F")): upper = true
                default: return nil
                }
            }
            return upper
        }
    }

    /// The account known by its chain `originalTransactionId` in `environment` (a chain whose
    /// data names no `appAccountToken`).
    public init(environment: AppStoreEnvironment, originalTransactionId: String) {
        self.init(environment: environment.rawValue, appAccountToken: nil, originalTransactionId: originalTransactionId)
    }

    /// ``appAccountToken`` as a UUID, or `nil` for an account known by its chain (or a token
    /// that is not a UUID).
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }

    /// Environments in a fixed order (Production, Sandbox, Xcode, LocalTesting, then others by
    /// name), then accounts with a token by token, then accounts known by their chain.
    public static func < (lhs: AccountKey, rhs: AccountKey) -> Bool {
        let left = (
            environmentRank(lhs.environment), lhs.environment.rawValue, lhs.appAccountToken == nil ? 1 : 0,
            lhs.appAccountToken ?? lhs.originalTransactionId ?? ""
        )
        let right = (
            environmentRank(rhs.environment), rhs.environment.rawValue, rhs.appAccountToken == nil ? 1 : 0,
            rhs.appAccountToken ?? rhs.originalTransactionId ?? ""
        )
        return left < right
    }

    private static func environmentRank(_ environment: AppStoreEnvironment) -> Int {
        AppStoreEnvironment.knownValues.firstIndex(of: environment) ?? AppStoreEnvironment.knownValues.count
    }

    public var description: String {
        "\(environment.rawValue)/" + (appAccountToken ?? "originalTransactionId:\(originalTransactionId ?? "")")
    }
}

/// One thing an account may use at an instant, and the transaction that grants it.
public struct Entitlement: Sendable, Hashable {
    /// Why the account has the product at the instant.
    public enum State: String, Sendable, Hashable {
        /// A paid subscription period, or a non-consumable.
        case active
        /// The subscription expired and Apple is retrying the payment inside its billing grace period.
        case gracePeriod = "grace_period"
        /// A free trial: a subscription's introductory free trial, or a trial product of the catalog.
        case trial
        /// A non-renewing subscription (its length is the catalog's; unbounded when not given).
        case nonRenewing = "non_renewing"
        /// A Stripe subscription whose renewal payment failed while Stripe retries it
        /// (`past_due`): access stays until the period's end.
        case pastDue = "past_due"
    }

    /// The product (`productId`) of the granting transaction.
    public let productId: String
    /// The product type (`type`) of the granting transaction.
    public let type: ProductType
    /// The subscription group of an auto-renewable subscription.
    public let subscriptionGroupIdentifier: String?
    /// Why the account has the product.
    public let state: State
    /// When access ends: the subscription's `expiresDate` (or `gracePeriodExpiresDate` in a grace
    /// period), the end of a trial or of a non-renewing subscription's length; `nil` when it
    /// does not end.
    public let expiresDate: Timestamp?
    /// `PURCHASED`, `FAMILY_SHARED` for a family member's access, or `ASSIGNED` for a member of a
    /// multiseat subscription whose seat the group purchaser gave them.
    public let ownership: InAppOwnershipType
    /// The granting transaction.
    public let transactionId: String
    /// The chain of the granting transaction.
    public let originalTransactionId: String
    /// When the granting transaction was purchased (for a grant of another channel, when it
    /// starts).
    public let purchaseDate: Timestamp
    /// Where the grant comes from: ``EntitlementSource/appStore`` for App Store data,
    /// ``EntitlementSource/stripe`` for a Stripe subscription (``transactionId`` and
    /// ``originalTransactionId`` are then its subscription id, ``productId`` its price or
    /// product), or a source of the server's own (``EntitlementGrant``).
    public internal(set) var source: EntitlementSource = .appStore
    /// For a multiseat subscription: the seats of the period, the `quantity` of each of its
    /// transactions not revoked at the instant less its `revokedSeatQuantity` (never below 0);
    /// `nil` for any other entitlement.
    public internal(set) var seats: Int? = nil
    /// For a multiseat subscription: who hosts the invitations to its seats (`APPLE`: each
    /// member has an `ASSIGNED` transaction of their own; `DEVELOPER`: the app assigns them).
    public internal(set) var invitationManagement: InvitationManagement? = nil
    /// When a refund last touched what grants it, at or before the instant: a Stripe charge of
    /// the subscription refunded (which ends access only when the catalog says so,
    /// ``ProductCatalog/refundEndsAccess``), an App Store refund since reversed, or seats of a
    /// multiseat subscription refunded; `nil` when none did.
    public internal(set) var refundedDate: Timestamp? = nil
    /// For a Stripe subscription: its id (``transactionId`` adds `/INDEX` for one item of
    /// several) and whether it is of live mode (Production) or test mode (Sandbox); `nil` for
    /// every other entitlement.
    public internal(set) var stripeSubscription: StripeSubscriptionReference? = nil
}

/// Which Stripe subscription grants an entitlement: Stripe's own id and mode, not an App Store
/// transaction.
public struct StripeSubscriptionReference: Sendable, Hashable {
    /// The subscription's id (`sub_…`).
    public let id: String
    /// Whether it is of live mode (`true`) or test mode.
    public let livemode: Bool
}

/// A level of service, as a value: its name and rank. Tiers order by rank (higher is more
/// service), then by name, so the highest of several is their `max()`.
public struct ServiceTier: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The tier's name in the catalog.
    public let name: String
    /// The tier's rank in the catalog (higher is more service).
    public let rank: Int

    /// A tier named `name` of rank `rank`.
    public init(name: String, rank: Int) {
        self.name = name
        self.rank = rank
    }

    public static func < (lhs: ServiceTier, rhs: ServiceTier) -> Bool { (lhs.rank, lhs.name) < (rhs.rank, rhs.name) }

    /// The name.
    public var description: String { name }
}

/// The highest tier an account has at an instant, with what grants it.
public struct TierGrant: Sendable, Hashable {
    /// The tier's name in the catalog.
    public let name: String
    /// The tier's rank in the catalog (higher is more service).
    public let rank: Int
    /// The entitlement that grants the tier (its product, transaction and end).
    public let entitlement: Entitlement

    /// The tier as a value (``name`` and ``rank``).
    public var tier: ServiceTier { ServiceTier(name: name, rank: rank) }
}

/// The entitlements of one account at one instant.
public struct AccountEntitlements: Sendable, Hashable {
    /// Whose entitlements these are.
    public let account: AccountKey
    /// Every chain of the account (both keys are given, so either can be joined).
    public let originalTransactionIds: [String]
    /// Ordered by ownership (`PURCHASED` first), then product and transaction.
    public let entitlements: [Entitlement]
    /// The highest-ranked tier among the entitlements, by the ledger's catalog; `nil` when none
    /// maps to a tier.
    public let tier: TierGrant?
}
