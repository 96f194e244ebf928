import Vouch

/// The fictional apps, products and storefronts minted payloads are drawn from.
///
/// Storefront codes, their App Store storefront identifiers and currencies are real, and prices
/// are typical App Store price points in each currency, in milliunits (1.99 AUD is 1990).
/// Bundle and product identifiers live under `com.example`, so minted data is never mistaken
/// for a real app's.
enum MintCatalog {
    static let autoRenewable = ProductType.autoRenewableSubscription.rawValue
    static let nonRenewing = ProductType.nonRenewingSubscription.rawValue
    static let consumable = ProductType.consumable.rawValue
    static let nonConsumable = ProductType.nonConsumable.rawValue

    /// A subscription duration as ISO 8601 (`P1M`) with its accelerated sandbox length.
    struct Period: Equatable {
        var iso: String
        var months: Int
        var days: Int
        /// How long the sandbox makes it last, in milliseconds.
        var sandboxMilliseconds: Int64

        static let week = Period(iso: "P1W", months: 0, days: 7, sandboxMilliseconds: 180_000)
        static let month = Period(iso: "P1M", months: 1, days: 0, sandboxMilliseconds: 300_000)
        static let quarter = Period(iso: "P3M", months: 3, days: 0, sandboxMilliseconds: 900_000)
        static let halfYear = Period(iso: "P6M", months: 6, days: 0, sandboxMilliseconds: 1_800_000)
        static let year = Period(iso: "P1Y", months: 12, days: 0, sandboxMilliseconds: 3_600_000)

        /// `start` plus `count` periods; the sandbox uses its accelerated lengths.
        func adding(_ count: Int, to start: Int64, sandbox: Bool) -> Int64 {
            if sandbox { return start + Int64(count) * sandboxMilliseconds }
            if months > 0 { return CivilTime.adding(months: Int64(months * count), to: start) }
            return start + Int64(count * days) * 86_400_000
        }
    }

    struct Product {
        var id: String
        var type: String
        var period: Period?
        /// Index into ``Storefront/prices``.
        var tier: Int
    }

    struct App {
        var bundleId: String
        var appAppleId: Int64
        var versions: [String]
        var versionExternalIdentifier: Int64
        var subscriptionGroupIdentifier: String
        var products: [Product]
        var offerCodes: [String]
        var promotionalOffers: [String]
        var winBackOffers: [String]

        var subscriptions: [Product] { products.filter { $0.type == MintCatalog.autoRenewable } }
    }

    struct Storefront {
        var code: String
        var id: String
        var currency: String
        var locale: String
        /// Six price points, in milliunits of `currency`, from about 0.99 to 99.99 USD.
        var prices: [Int64]
    }

    static let apps: [App] = [
        app("com.example.birdwatch", 6_449_120_931, ["40", "41", "42"], 860_318_775, "21420871", "pro"),
        app("com.example.recipebox", 1_672_310_458, ["3.2.0", "3.3.0"], 851_204_377, "20938475", "chef"),
        app("com.example.trailmap", 6_502_774_119, ["118", "121"], 863_990_012, "21577302", "explorer"),
        app("com.example.focusnotes", 1_590_026_843, ["7", "8", "9"], 848_775_190, "20611958", "plus"),
    ]

    private static func app(
        _ bundleId: String, _ appAppleId: Int64, _ versions: [String], _ versionExternalIdentifier: Int64,
        _ group: String, _ tierName: String
    ) -> App {
        App(
            bundleId: bundleId, appAppleId: appAppleId, versions: versions,
            versionExternalIdentifier: versionExternalIdentifier, subscriptionGroupIdentifier: group,
            products: [
                Product(id: "\(bundleId).\(tierName).weekly", type: autoRenewable, period: .week, tier: 1),
                Product(id: "\(bundleId).\(tierName).monthly", type: autoRenewable, period: .month, tier: 2),
                Product(id: "\(bundleId).\(tierName).quarterly", type: autoRenewable, period: .quarter, tier: 3),
                Product(id: "\(bundleId).\(tierName).yearly", type: autoRenewable, period: .year, tier: 4),
                Product(id: "\(bundleId).coins.100", type: consumable, period: nil, tier: 0),
                Product(id: "\(bundleId).coins.1200", type: consumable, period: nil, tier: 3),
                Product(id: "\(bundleId).lifetime", type: nonConsumable, period: nil, tier: 5),
                Product(id: "\(bundleId).theme.pack", type: nonConsumable, period: nil, tier: 1),
                Product(id: "\(bundleId).season.pass", type: nonRenewing, period: .halfYear, tier: 3),
            ],
            offerCodes: ["SPRING\(tierName.uppercased())", "WELCOME30"],
            promotionalOffers: ["\(tierName).promo.halfoff", "\(tierName).promo.comeback"],
            winBackOffers: ["\(tierName).winback.firstmonth", "\(tierName).winback.halfyear"])
    }

    static let storefronts: [Storefront] = [
        Storefront(
            code: "USA", id: "143441", currency: "USD", locale: "en-US", prices: [990, 1990, 4990, 9990, 39990, 99990]),
        Storefront(
            code: "FRA", id: "143442", currency: "EUR", locale: "fr-FR", prices: [990, 1990, 4990, 9990, 39990, 99990]),
        Storefront(
            code: "DEU", id: "143443", currency: "EUR", locale: "de-DE", prices: [990, 1990, 4990, 9990, 39990, 99990]),
        Storefront(
            code: "GBR", id: "143444", currency: "GBP", locale: "en-GB", prices: [990, 1990, 4990, 9990, 39990, 99990]),
        Storefront(
            code: "ITA", id: "143450", currency: "EUR", locale: "it-IT", prices: [990, 1990, 4990, 9990, 39990, 99990]),
        Storefront(
            code: "ESP", id: "143454", currency: "EUR", locale: "es-ES", prices: [990, 1990, 4990, 9990, 39990, 99990]),
        Storefront(
            code: "CAN", id: "143455", currency: "CAD", locale: "en-CA",
            prices: [1390, 2790, 6990, 13990, 54990, 139990]),
        Storefront(
            code: "SWE", id: "143456", currency: "SEK", locale: "sv-SE",
            prices: [12000, 22000, 55000, 110000, 449000, 1_090_000]),
        Storefront(
            code: "CHE", id: "143459", currency: "CHF", locale: "de-CH",
            prices: [1000, 2000, 5000, 10000, 40000, 100000]),
        Storefront(
            code: "AUS", id: "143460", currency: "AUD", locale: "en-AU",
            prices: [1490, 2990, 7990, 14990, 59990, 149990]),
        Storefront(
            code: "JPN", id: "143462", currency: "JPY", locale: "ja-JP",
            prices: [160000, 300000, 800000, 1_500_000, 6_000_000, 15_000_000]),
        Storefront(
            code: "CHN", id: "143465", currency: "CNY", locale: "zh-CN",
            prices: [6000, 12000, 38000, 68000, 268000, 648000]),
        Storefront(
            code: "KOR", id: "143466", currency: "KRW", locale: "ko-KR",
            prices: [1_500_000, 3_000_000, 7_500_000, 14_000_000, 59_000_000, 149_000_000]),
        Storefront(
            code: "IND", id: "143467", currency: "INR", locale: "hi-IN",
            prices: [99000, 199000, 449000, 899000, 3_499_000, 8_999_000]),
        Storefront(
            code: "MEX", id: "143468", currency: "MXN", locale: "es-MX",
            prices: [19000, 39000, 99000, 199000, 799000, 1_999_000]),
        Storefront(
            code: "TWN", id: "143470", currency: "TWD", locale: "zh-TW",
            prices: [30000, 60000, 150000, 300000, 1_190_000, 2_990_000]),
        Storefront(
            code: "VNM", id: "143471", currency: "VND", locale: "vi-VN",
            prices: [25_000_000, 49_000_000, 129_000_000, 249_000_000, 999_000_000, 2_490_000_000]),
        Storefront(
            code: "TUR", id: "143480", currency: "TRY", locale: "tr-TR",
            prices: [49990, 99990, 249990, 499990, 1_999_990, 4_999_990]),
        Storefront(
            code: "BRA", id: "143503", currency: "BRL", locale: "pt-BR",
            prices: [5900, 11900, 27900, 54900, 219900, 549900]),
    ]

    static func storefront(code: String) -> Storefront? {
        storefronts.first { $0.code == code }
    }
}
