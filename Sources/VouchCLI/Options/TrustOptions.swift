import Foundation
import Vouch

/// The trust and claim options shared by the verifying commands.
struct TrustOptions {
    static let options: [CommandOption] = [
        .value(
            "--kind", "KIND",
            help:
                "Require this kind: transaction, renewal-info, notification,\napp-transaction, realtime-request (default: detected)"
        ),
        .value(
            "--root", "FILE", repeatable: true,
            help: "Trust this root certificate (DER or PEM) instead of the\nembedded Apple Root CA - G3"),
        .value("--bundle-id", "ID", help: "Require this bundleId"),
        .value("--app-apple-id", "N", help: "Require this appAppleId (checked for Production data)"),
        .value("--environment", "ENV", help: "Require Production, Sandbox, Xcode or LocalTesting"),
        .value(
            "--at", "WHEN", help: "Validate the chain at: signed (the payload's signed date,\ndefault), now, or a DATE"),
        .value("--xcode-cert", "FILE", repeatable: true, help: "Trust this Xcode StoreKit testing certificate"),
        .flag(
            "--no-strict-x509",
            help:
                "Relax OpenSSL's RFC 5280 strict checks (needed for Apple's\nown test root, which lacks a subject key identifier)"
        ),
    ]

    /// Any app's data is accepted unless --bundle-id, --app-apple-id or --environment say otherwise.
    var configuration = Verifier.Configuration.acceptingAnyApp()
    var kind: PayloadKind?

    init(_ arguments: ParsedArguments, console: Console) throws {
        if let text = arguments.value("--kind") {
            kind = try Spelling.choice(text, option: "--kind", among: PayloadKind.allCases, name: \.rawValue)
        }
        let roots = arguments.values("--root")
        if !roots.isEmpty {
            configuration.trustAnchors = try roots.flatMap { try console.readCertificates($0, option: "--root") }
        }
        configuration.xcodeCertificates = try arguments.values("--xcode-cert").flatMap {
            try console.readCertificates($0, option: "--xcode-cert")
        }
        configuration.bundleId = arguments.value("--bundle-id")
        if let text = arguments.value("--app-apple-id") {
            guard let appAppleId = Int64(text) else {
                throw UsageError("--app-apple-id must be an integer; got '\(text)'")
            }
            configuration.appAppleId = appAppleId
        }
        if let text = arguments.value("--environment") {
            let known: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
            configuration.environment = try Spelling.choice(
                text, option: "--environment", among: known, name: \.rawValue)
        }
        if let text = arguments.value("--at") {
            configuration.validationTime = try Self.validationTime(text)
        }
        if arguments.flag("--no-strict-x509") {
            configuration.strictX509 = false
        }
    }

    func makeVerifier() throws -> Verifier {
        do {
            return try Verifier(configuration: configuration)
        } catch {
            throw UsageError(error.reason)
        }
    }

    static func validationTime(_ text: String) throws(UsageError) -> ValidationTime {
        switch text {
        case "signed": return .signedDate
        case "now": return .now
        default:
            let date = try Spelling.date(text, option: "--at", alternatives: "'signed', 'now' or ")
            return .fixed(Timestamp(date))
        }
    }
}

extension Console {
    /// Reads a certificate file (DER or PEM; a PEM file may hold several).
    func readCertificates(_ path: String, option: String) throws -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("cannot read \(option) \(path)")
        }
        let certificates = CertificateFile.certificates(in: [UInt8](data))
        guard !certificates.isEmpty else {
            throw UsageError("\(option) \(path) holds no DER or PEM certificate")
        }
        return certificates
    }
}
