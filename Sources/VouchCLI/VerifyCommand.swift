import Foundation
import Vouch

enum VerifyCommand {
    static let usage = """
        Usage: vouch verify [options] [FILE|-]

        Verifies one App Store signed token and prints its payload. The input (a file, or
        standard input for '-' or no FILE) is a bare compact JWS or a JSON body holding one
        (signedPayload, signedTransactionInfo, signedRenewalInfo, signedTransaction,
        signedAppTransactionInfo). Nested tokens of a notification are verified too and shown
        inline.

        Options:
          --kind KIND            Require this kind: transaction, renewal-info, notification,
                                 app-transaction, realtime-request (default: detected)
          --root FILE            Trust this root certificate (DER or PEM) instead of the
                                 embedded Apple Root CA - G3; repeatable
          --bundle-id ID         Require this bundleId
          --app-apple-id N       Require this appAppleId (checked for Production data)
          --environment ENV      Require Production, Sandbox, Xcode or LocalTesting
          --at WHEN              Validate the chain at: signed (the payload's signed date,
                                 default), now, or an ISO-8601 instant
          --xcode-cert FILE      Trust this Xcode StoreKit testing certificate; repeatable
          --no-strict-x509       Relax OpenSSL's RFC 5280 strict checks (needed for Apple's
                                 own test root, which lacks a subject key identifier)
          --field NAME           In JSON input, read the token from this member
          --json                 Print one JSON record:
                                 {"status":…,"kind":…,"payload":…[,"error":…]}
          -h, --help             Show this help

        Exit status: 0 verified, 1 rejected (code and reason on stderr), 64 usage error,
        66 unreadable input.
        """

    static let valued: Set<String> = [
        "--kind", "--root", "--bundle-id", "--app-apple-id", "--environment", "--at", "--xcode-cert", "--field",
    ]
    static let flags: Set<String> = ["--json", "--no-strict-x509"]

    /// Reads at most this much input; a token is far smaller (see maximumTokenSize).
    static let inputLimit = 1024 * 1024

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, valued: valued, flags: flags)
        let input = try arguments.singleInput()
        let options = try TrustOptions(arguments)
        let verifier = try options.makeVerifier()
        let (bytes, complete) = try Output.readInput(input, limit: inputLimit)

        let result: Result<VerifiedPayload, VerificationError>
        if !complete {
            result = .failure(VerificationError(.tokenTooLarge, "the input is larger than \(inputLimit) bytes"))
        } else {
            result = Result { () throws(VerificationError) in
                let token = try SignedInput.token(in: bytes, field: arguments.value("--field"))
                return try verifier.verify(bytes: token, as: options.kind)
            }
        }

        if arguments.flag("--json") {
            Output.write(bytes: VerificationRecord.json(for: result, kind: options.kind) + [0x0A], to: .standardOutput)
        }
        switch result {
        case .success(let verified):
            if !arguments.flag("--json") {
                Output.write(describe(verified), to: .standardOutput)
            }
            return ExitCode.verified
        case .failure(let error):
            Output.error("vouch: rejected: \(error.code): \(error.reason)")
            return ExitCode.rejected
        }
    }

    static func describe(_ verified: VerifiedPayload) -> String {
        var lines = ["VERIFIED \(verified.kind)"]
        lines.append("  chain validated at \(Timestamp(milliseconds: verified.validationTime).iso8601)")
        lines.append("  signing certificate SHA-256 \(verified.signingCertificateSHA256.hexString)")
        if !verified.nested.isEmpty {
            lines.append("  nested tokens verified: \(verified.nested.map(\.field).joined(separator: ", "))")
        }
        lines.append("payload:")
        Output.describe(verified.expandedPayload, indent: 1, into: &lines)
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The trust and claim options shared by the verifying commands.
struct TrustOptions {
    var configuration = Verifier.Configuration()
    var kind: PayloadKind?

    init(_ arguments: Arguments) throws {
        if let kind = arguments.value("--kind") {
            guard let parsed = PayloadKind(rawValue: kind) else {
                throw UsageError(
                    "--kind must be one of \(PayloadKind.allCases.map(\.rawValue).joined(separator: ", ")); got '\(kind)'")
            }
            self.kind = parsed
        }
        let roots = arguments.values("--root")
        if !roots.isEmpty {
            configuration.trustAnchors = try roots.flatMap { try Output.readCertificates($0, option: "--root") }
        }
        configuration.xcodeCertificates = try arguments.values("--xcode-cert").flatMap {
            try Output.readCertificates($0, option: "--xcode-cert")
        }
        configuration.bundleId = arguments.value("--bundle-id")
        if let text = arguments.value("--app-apple-id") {
            guard let appAppleId = Int64(text) else { throw UsageError("--app-apple-id must be an integer; got '\(text)'") }
            configuration.appAppleId = appAppleId
        }
        if let text = arguments.value("--environment") {
            let known: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
            guard let environment = known.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
                throw UsageError("--environment must be Production, Sandbox, Xcode or LocalTesting; got '\(text)'")
            }
            configuration.environment = environment
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
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let plain = ISO8601DateFormatter()
            guard let date = formatter.date(from: text) ?? plain.date(from: text) else {
                throw UsageError("--at must be 'signed', 'now' or an ISO-8601 instant such as 2025-01-31T12:00:00Z; got '\(text)'")
            }
            return .fixed(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
        }
    }
}
