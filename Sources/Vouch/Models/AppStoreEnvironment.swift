/// The server environment that signed the data: `environment` in transactions, renewal info and
/// notifications, `receiptType` in app transactions.
public struct AppStoreEnvironment: PayloadEnum {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The production environment.
    public static let production = Self(rawValue: "Production")
    /// The sandbox environment.
    public static let sandbox = Self(rawValue: "Sandbox")
    /// StoreKit testing in Xcode; signed by a local certificate, never by Apple's PKI.
    public static let xcode = Self(rawValue: "Xcode")
    /// Used by Apple's libraries for unit tests.
    public static let localTesting = Self(rawValue: "LocalTesting")

    public static let knownValues: [Self] = [.production, .sandbox, .xcode, .localTesting]
    public static let knownNames: [Self: String] = [
        .production: "production",
        .sandbox: "sandbox",
        .xcode: "xcode",
        .localTesting: "localTesting",
    ]
}
