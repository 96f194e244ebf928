import Foundation
import Vouch
import VouchReceipts

/// The trust options of the verifying commands, read by one reader into a verifier's
/// `TrustConfiguration`: `vouch verify`, `batch`, `entitlements` and `refunds` for tokens,
/// `vouch receipt verify` (and the receipt lines of `vouch batch`) for receipts.
///
/// Any app's data is accepted unless `--bundle-id`, `--app-apple-id` or `--environment` say
/// otherwise: the commands look at anyone's data.
struct TrustOptions {
    /// How one kind of data declares the options: its embedded root, its environments, the
    /// option that says when chains are validated and the word for the data's own date.
    struct Declarations: Sendable {
        /// `--kind`, where the kind of token may be required.
        let kind: CommandOption?
        let root: CommandOption
        let bundleId: CommandOption
        /// `--app-apple-id`, for tokens.
        let appAppleId: CommandOption?
        let environment: CommandOption
        let environments: [AppStoreEnvironment]
        /// When chains are validated: `--at`, or `--chain-at` where `--at` means another instant.
        let validationTime: CommandOption
        /// The value of ``validationTime`` that names the data's own signed date.
        let signedDate: String
        let xcodeCertificate: CommandOption
        let noStrictX509: CommandOption
    }

    /// The options of the token commands.
    static let tokens = Declarations(
        kind: .value(
            "--kind", "KIND",
            help:
                "Require this kind: transaction, renewal-info, notification,\napp-transaction, realtime-request (default: detected)"
        ),
        root: .value(
            "--root", "FILE", repeatable: true,
            help: "Trust this root certificate (DER or PEM) instead of the\nembedded Apple Root CA - G3"),
        bundleId: .value("--bundle-id", "ID", help: "Require this bundleId"),
        appAppleId: .value("--app-apple-id", "N", help: "Require this appAppleId (checked for Production data)"),
        environment: .value(
            "--environment", "ENV",
            help: "Require Production, Sandbox, Xcode or LocalTesting, or\nany of several (Production,Sandbox)"),
        environments: [.production, .sandbox, .xcode, .localTesting],
        validationTime: .value(
            "--at", "WHEN", help: "Validate the chain at: signed (the payload's signed date,\ndefault), now, or a DATE"),
        signedDate: "signed",
        xcodeCertificate: .value(
            "--xcode-cert", "FILE", repeatable: true, help: "Trust this Xcode StoreKit testing certificate"),
        noStrictX509: .flag(
            "--no-strict-x509",
            help:
                "Relax OpenSSL's RFC 5280 strict checks (needed for Apple's\nown test root, which lacks a subject key identifier)"
        ))

    /// The options of `vouch entitlements` and `vouch refunds`: the token options less `--kind`,
    /// with `--chain-at` for what `--at` means to `vouch batch`.
    static let ledger = Declarations(
        kind: nil, root: tokens.root, bundleId: tokens.bundleId, appAppleId: tokens.appAppleId,
        environment: tokens.environment, environments: tokens.environments,
        validationTime: .value(
            "--chain-at", "WHEN",
            help:
                "Validate chains at: signed (the payload's signed date,\ndefault), now, or a DATE ('vouch batch --at')"),
        signedDate: tokens.signedDate, xcodeCertificate: tokens.xcodeCertificate, noStrictX509: tokens.noStrictX509)

    /// The options of `vouch receipt verify`.
    static let receipts = Declarations(
        kind: nil,
        root: .value(
            "--root", "FILE", repeatable: true,
            help: "Trust this root certificate (DER or PEM) instead of the\nembedded Apple Inc. Root"),
        bundleId: .value("--bundle-id", "ID", help: "Require this bundle id"),
        appAppleId: nil,
        environment: .value(
            "--environment", "ENV",
            help:
                "Require a receipt of Production, Sandbox or Xcode (its\nreceipt type, attribute 0), or any of several\n(Production,Sandbox)"
        ),
        environments: [.production, .sandbox, .xcode],
        validationTime: .value("--at", "WHEN", help: "Validate the chain at: creation (default), now, or a DATE"),
        signedDate: "creation", xcodeCertificate: tokens.xcodeCertificate,
        noStrictX509: .flag("--no-strict-x509", help: "Relax OpenSSL's RFC 5280 strict checks"))

    /// `vouch batch`'s own anchors for its receipt lines; the other token options apply to them.
    static let receiptRoot = CommandOption.value(
        "--receipt-root", "FILE", repeatable: true,
        help: "Trust this root for receipts instead of the embedded Apple\nInc. Root")

    /// The token options as `vouch verify` and `vouch batch` list them.
    static let options: [CommandOption] =
        [tokens.kind!, tokens.root, tokens.bundleId, tokens.appAppleId!, tokens.environment, tokens.validationTime]
        + [tokens.xcodeCertificate, tokens.noStrictX509]

    var configuration = Verifier.Configuration.acceptingAnyApp()
    var kind: PayloadKind?

    /// Reads the token options of `declarations` (``tokens`` unless said otherwise).
    init(_ arguments: ParsedArguments, _ declarations: Declarations = tokens, console: Console) throws {
        if let option = declarations.kind, let text = arguments.value(option.name) {
            kind = try Spelling.choice(text, option: option.name, among: PayloadKind.allCases, name: \.rawValue)
        }
        try Self.read(arguments, declarations, into: &configuration.trust)
    }

    func makeVerifier() throws -> Verifier {
        try Self.make { () throws(ConfigurationError) in try Verifier(configuration: configuration) }
    }

    /// The receipt verifier of `vouch batch`: its own anchors (`--receipt-root`, else the
    /// embedded Apple Inc. Root) and the token options' other trust (`signed` is the receipt's
    /// creation date), but not `--app-apple-id`, which applies to tokens only.
    func makeReceiptVerifier(_ arguments: ParsedArguments) throws -> ReceiptVerifier {
        var receipts = ReceiptVerifier.Configuration.acceptingAnyApp()
        let anchors = try Self.certificates(arguments, Self.receiptRoot) ?? receipts.trustAnchors
        receipts.trust = configuration.trust
        receipts.trustAnchors = anchors
        receipts.appAppleId = nil
        return try Self.make { () throws(ConfigurationError) in try ReceiptVerifier(configuration: receipts) }
    }

    /// A verifier made from what the options say: a configuration mistake is a usage mistake.
    static func make<Made>(_ make: () throws(ConfigurationError) -> Made) throws(UsageError) -> Made {
        do {
            return try make()
        } catch {
            throw UsageError(error.reason)
        }
    }

    /// Reads the options of `declarations` into `trust`: what it trusts and whose data it
    /// accepts (``readTrust(_:_:into:)``), then when and how strictly chains are validated
    /// (``readValidation(_:_:into:)``).
    static func read(
        _ arguments: ParsedArguments, _ declarations: Declarations, into trust: inout TrustConfiguration
    ) throws {
        try readTrust(arguments, declarations, into: &trust)
        try readValidation(arguments, declarations, into: &trust)
    }

    /// The anchors (when `--root` is given: the verifier's own embedded root otherwise), the
    /// Xcode certificates and the app's identity.
    static func readTrust(
        _ arguments: ParsedArguments, _ declarations: Declarations, into trust: inout TrustConfiguration
    ) throws {
        if let roots = try certificates(arguments, declarations.root) { trust.trustAnchors = roots }
        trust.xcodeCertificates = try certificates(arguments, declarations.xcodeCertificate) ?? []
        trust.bundleId = arguments.value(declarations.bundleId.name)
        if let option = declarations.appAppleId, let text = arguments.value(option.name) {
            guard let appAppleId = Int64(text) else {
                throw UsageError("\(option.name) must be an integer; got '\(text)'")
            }
            trust.appAppleId = appAppleId
        }
        if let text = arguments.value(declarations.environment.name) {
            trust.environments = Set(
                try Spelling.choices(
                    text, option: declarations.environment.name, among: declarations.environments, name: \.rawValue))
        }
    }

    /// When chains are validated, and whether OpenSSL's strict checks apply.
    static func readValidation(
        _ arguments: ParsedArguments, _ declarations: Declarations, into trust: inout TrustConfiguration
    ) throws {
        let option = declarations.validationTime
        if let text = arguments.value(option.name) {
            trust.validationTime = try validationTime(text, option: option.name, signedDate: declarations.signedDate)
        }
        if arguments.flag(declarations.noStrictX509.name) {
            trust.strictX509 = false
        }
    }

    /// `signed` (or the data's own word), `now`, or a date.
    static func validationTime(_ text: String, option: String = "--at", signedDate: String = "signed")
        throws(UsageError) -> ValidationTime
    {
        switch text {
        case signedDate: return .signedDate
        case "now": return .now
        default:
            let date = try Spelling.date(text, option: option, alternatives: "'\(signedDate)', 'now' or ")
            return .fixed(Timestamp(date))
        }
    }

    /// Every certificate of the files `option` names (DER or PEM; a PEM file may hold several),
    /// or `nil` when it is not given.
    static func certificates(_ arguments: ParsedArguments, _ option: CommandOption) throws -> [[UInt8]]? {
        let paths = arguments.values(option.name)
        guard !paths.isEmpty else { return nil }
        return try paths.flatMap { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw InputError("cannot read \(option.name) \(path)")
            }
            let certificates = CertificateFile.certificates(in: [UInt8](data))
            guard !certificates.isEmpty else {
                throw UsageError("\(option.name) \(path) holds no DER or PEM certificate")
            }
            return certificates
        }
    }
}
