import Foundation
import Vouch
import VouchBatch

/// `vouch receipt verify` and `vouch receipt inspect`: legacy app receipts (PKCS #7).
enum ReceiptCommands {
    static let group = CommandGroup(
        path: ["receipt"], summary: "Verify or inspect a legacy app receipt (PKCS #7)",
        usage: "vouch receipt verify|inspect|transaction-ids [options] [FILE|-]",
        discussion: """
            Legacy App Store app receipts: the PKCS #7 file at appStoreReceiptURL, sent to
            servers as base64 receipt-data. 'verify' checks one offline against the embedded
            Apple Inc. Root; 'inspect' decodes one without trusting it; 'transaction-ids'
            prints the ids the App Store Server API takes.
            """,
        noun: "command",
        footer: "Run 'vouch receipt verify --help' or 'vouch receipt inspect --help' for the options.")

    static let all: [any Command] = [ReceiptVerifyCommand(), ReceiptInspectCommand(), ReceiptTransactionIdsCommand()]

    /// Base64 text of the largest receipt the verifier accepts, with room for a JSON body.
    static let inputLimit = 2 * 1024 * 1024

    static let inputHelp = """
        The input (a file, or standard input for '-' or no FILE) is the DER receipt, its
        base64 text (receipt-data; line breaks allowed), or a JSON body holding that text
        (receipt-data, latest_receipt, or --field).
        """

    /// The receipt verifier of `vouch batch`: its own roots (`--receipt-root`, else the embedded
    /// Apple Inc. Root), and the token options' bundle id, environment, Xcode certificates,
    /// strictness and validation time (`signed` is the receipt's creation date).
    static func batchVerifier(_ arguments: ParsedArguments, options: TrustOptions, console: Console) throws
        -> ReceiptVerifier
    {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        let roots = arguments.values("--receipt-root")
        if !roots.isEmpty {
            configuration.trustAnchors = try roots.flatMap {
                try console.readCertificates($0, option: "--receipt-root")
            }
        }
        configuration.xcodeCertificates = options.configuration.xcodeCertificates
        configuration.bundleId = options.configuration.bundleId
        configuration.environment = options.configuration.environment
        configuration.validationTime = options.configuration.validationTime
        configuration.strictX509 = options.configuration.strictX509
        return try makeVerifier(configuration)
    }

    static func makeVerifier(_ configuration: ReceiptVerifier.Configuration) throws -> ReceiptVerifier {
        do {
            return try ReceiptVerifier(configuration: configuration)
        } catch {
            throw UsageError(error.reason)
        }
    }

    /// The reader options of the receipt commands: `--field`, and lines up to ``inputLimit``.
    static func inputArguments(_ arguments: ParsedArguments) throws(UsageError) -> InputArguments {
        var input = try InputArguments(arguments)
        input.options.maximumLineLength = inputLimit
        return input
    }

    /// The one receipt an input holds: its DER bytes (or, for an input that is no receipt, its
    /// bytes as they are, for the receipt verifier to name what it is), or why there is none.
    static func receipt(in input: inout SingleInput, command: String) throws(InputError) -> Result<
        [UInt8], VerificationError
    > {
        switch try input.start() {
        case .empty:
            return .failure(VerificationError(.receiptNotAReceipt, "the input is empty"))
        case .several(let count):
            return .failure(
                VerificationError(
                    .receiptNotAReceipt,
                    "the input holds \(count) lines that are not blank: '\(command)' reads one receipt; 'vouch batch' verifies a dump of"
                        + " one receipt per line"))
        case .unit(let unit):
            if try input.next() != nil {
                return .failure(
                    VerificationError(
                        .receiptNotAReceipt,
                        "the input holds several documents: '\(command)' reads one receipt; 'vouch batch' verifies them all"
                    ))
            }
            return Result { () throws(VerificationError) in try receiptBytes(of: unit) }
        }
    }

    private static func receiptBytes(of unit: InputUnit) throws(VerificationError) -> [UInt8] {
        if let failure = unit.failure?.error {
            if failure.code == .lineTooLong {
                throw VerificationError(.receiptTooLarge, "the input is larger than \(inputLimit) bytes")
            }
            throw VerificationError(.receiptNotAReceipt, failure.reason)
        }
        let tokens = unit.single.map { [$0] } ?? unit.groups.flatMap { $0 }
        let receipts = tokens.filter { $0.form != .jws }
        let token: InputToken
        if unit.isBareLine, let single = unit.single {
            // A line of text: the receipt's base64, or anything else, which decoding names.
            token = single
        } else if receipts.count == 1 {
            token = receipts[0]
        } else if receipts.isEmpty {
            throw VerificationError(
                .receiptNotAReceipt,
                "the input holds no receipt, only signed tokens (\(tokens.compactMap(\.path).joined(separator: ", "))),"
                    + " which 'vouch verify' reads")
        } else {
            throw VerificationError(
                .receiptNotAReceipt,
                "the input holds \(receipts.count) receipts: one is read here; 'vouch batch' verifies them all")
        }
        switch token.content {
        case .failure(let error) where error.code == .tokenTooLarge:
            throw VerificationError(.receiptTooLarge, error.reason)
        case .failure(let error):
            throw VerificationError(.receiptNotAReceipt, error.reason)
        case .token(let bytes):
            return token.form == .receiptFile ? bytes : try ReceiptInput.receipt(in: bytes)
        }
    }
}

/// `vouch receipt verify`.
struct ReceiptVerifyCommand: Command {
    let path = ["receipt", "verify"]
    let summary = "Verify one legacy app receipt and print its contents"
    let usage = "vouch receipt verify [options] [FILE|-]"
    let discussion = """
        Verifies a legacy App Store app receipt (PKCS #7 SignedData, RSA) offline against the
        embedded Apple Inc. Root and prints its contents.
        \(ReceiptCommands.inputHelp)
        The chain is validated at the receipt's creation date unless --at says otherwise.
        """
    let positionals = Positionals.oneInput
    let exitStatus = """
        0 verified, 1 rejected (code and reason on stderr), 64 usage error,
        66 unreadable input, 74 output write error.
        """

    var options: [CommandOption] {
        [
            .value(
                "--root", "FILE", repeatable: true,
                help: "Trust this root certificate (DER or PEM) instead of the\nembedded Apple Inc. Root"),
            .value("--xcode-cert", "FILE", repeatable: true, help: "Trust this Xcode StoreKit testing certificate"),
            .value("--bundle-id", "ID", help: "Require this bundle id"),
            .value(
                "--environment", "ENV",
                help: "Require a receipt of Production, Sandbox or Xcode (its\nreceipt type, attribute 0)"),
            .value("--app-version", "V", help: "Require this application version"),
            .value("--device-id", "UUID", help: "Check the receipt's hash against this device identifier"),
            .value("--at", "WHEN", help: "Validate the chain at: creation (default), now, or a DATE"),
            .flag("--no-strict-x509", help: "Relax OpenSSL's RFC 5280 strict checks"),
        ] + InputArguments.options + [
            .flag(
                "--json",
                help: "Print one JSON record:\n{\"status\":…,\"kind\":\"receipt\",\"payload\":…[,\"error\":…]}"),
            .value(
                "--format", "FORMAT",
                help:
                    "text (default), json (as --json), or verify-receipt: the\nshape of the old verifyReceipt response"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let format =
            arguments.flag("--json")
            ? "json"
            : try Spelling.choice(
                arguments.value("--format") ?? "text", option: "--format", among: ["text", "json", "verify-receipt"],
                name: { $0 })
        let verifier = try ReceiptCommands.makeVerifier(try configuration(arguments, console: console))
        var input = try SingleInput(
            arguments.input, arguments: try ReceiptCommands.inputArguments(arguments), console: console)
        let bytes = try ReceiptCommands.receipt(in: &input, command: "vouch receipt verify")
        let result = Result { () throws(VerificationError) in try verifier.verify(try bytes.get()) }
        switch (format, result) {
        case ("json", _):
            try console.output.write(VerificationRecord.json(for: result) + [0x0A])
        case ("verify-receipt", .success(let verified)):
            try console.output.write(JSONWriter.encode(.object(verified.receipt.verifyReceiptResponse)) + [0x0A])
        case (_, .success(let verified)):
            try console.output.write(Self.describe(verified))
        default:
            break
        }
        if case .failure(let error) = result {
            console.diagnose("vouch: rejected: \(error.code): \(error.reason)")
            return ExitCode.rejected
        }
        return ExitCode.success
    }

    func configuration(_ arguments: ParsedArguments, console: Console) throws -> ReceiptVerifier.Configuration {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        let roots = arguments.values("--root")
        if !roots.isEmpty {
            configuration.trustAnchors = try roots.flatMap { try console.readCertificates($0, option: "--root") }
        }
        configuration.xcodeCertificates = try arguments.values("--xcode-cert").flatMap {
            try console.readCertificates($0, option: "--xcode-cert")
        }
        configuration.bundleId = arguments.value("--bundle-id")
        if let text = arguments.value("--environment") {
            let known: [AppStoreEnvironment] = [.production, .sandbox, .xcode]
            configuration.environment = try Spelling.choice(
                text, option: "--environment", among: known, name: \.rawValue)
        }
        configuration.applicationVersion = arguments.value("--app-version")
        if let text = arguments.value("--device-id") {
            guard let uuid = UUID(uuidString: text) else {
                throw UsageError(
                    "--device-id must be a UUID such as 956328D9-CC6A-47F4-BE40-6953FB0AB6C7; got '\(text)'")
            }
            configuration.deviceIdentifier = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        }
        if let text = arguments.value("--at") {
            switch text {
            case "creation": configuration.validationTime = .signedDate
            case "now": configuration.validationTime = .now
            default:
                let date = try Spelling.date(text, option: "--at", alternatives: "'creation', 'now' or ")
                configuration.validationTime = .fixed(
                    Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down))))
            }
        }
        if arguments.flag("--no-strict-x509") {
            configuration.strictX509 = false
        }
        return configuration
    }

    static func describe(_ verified: VerifiedReceipt) -> String {
        var lines = ["VERIFIED receipt\(verified.isXcode ? " (Xcode StoreKit testing)" : "")"]
        lines.append("  chain validated at \(verified.validationTime.iso8601)")
        lines.append("  signed by \(verified.signer), \(verified.digestAlgorithm) with RSA")
        lines.append("payload:")
        PayloadText.describe(verified.receipt.jsonObject, indent: 1, into: &lines)
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `vouch receipt inspect`.
struct ReceiptInspectCommand: Command {
    let path = ["receipt", "inspect"]
    let summary = "Decode a receipt without trusting it (UNVERIFIED)"
    let usage = "vouch receipt inspect [options] [FILE|-]"
    let discussion = """
        Decodes a legacy app receipt WITHOUT verifying it, for a look at one that does not
        verify: the container, each certificate (subject, issuer, validity, key, Apple marker
        extensions, SHA-256) and the payload. The first line of output is always UNVERIFIED.
        \(ReceiptCommands.inputHelp)
        """
    let positionals = Positionals.oneInput
    let exitStatus = "0 decoded, 1 not a decodable receipt, 64 usage error, 66 unreadable input, 74 output write error."

    var options: [CommandOption] { InputArguments.options }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        var input = try SingleInput(
            arguments.input, arguments: try ReceiptCommands.inputArguments(arguments), console: console)
        let bytes = try ReceiptCommands.receipt(in: &input, command: "vouch receipt inspect")
        let inspection: ReceiptInspection
        do throws(VerificationError) {
            inspection = try ReceiptInspection(receipt: try bytes.get())
        } catch {
            console.diagnose("vouch: cannot decode: \(error.code): \(error.reason)")
            return ExitCode.rejected
        }
        var lines = ["UNVERIFIED: decoded without checking the signature, the chain or any claim"]
        lines.append(
            "container: PKCS #7 SignedData, \(inspection.digestAlgorithm) with RSA, "
                + "\(inspection.usesIndefiniteLengths ? "BER (indefinite lengths)" : "DER"), signature \(inspection.signatureLength) bytes"
        )
        for (index, certificate) in inspection.certificates.enumerated() {
            lines.append("certificate \(index + 1):")
            guard let certificate else {
                lines.append("  (not a DER certificate)")
                continue
            }
            let when = { (instant: Timestamp?) in instant?.iso8601 ?? "?" }
            lines.append("  subject: \(certificate.subject)")
            lines.append("  issuer: \(certificate.issuer)")
            lines.append("  valid: \(when(certificate.notBefore)) to \(when(certificate.notAfter))")
            lines.append("  key: \(certificate.key)\(certificate.isCA ? ", CA" : "")")
            lines.append(
                "  apple markers: \(certificate.appleMarkers.isEmpty ? "none" : certificate.appleMarkers.joined(separator: ", "))"
            )
            lines.append("  sha256: \(certificate.sha256)")
        }
        switch inspection.receipt {
        case .success(let receipt):
            lines.append("payload:")
            PayloadText.describe(receipt.jsonObject, indent: 1, into: &lines)
        case .failure(let error):
            lines.append("payload: does not decode: \(error.code): \(error.reason)")
        }
        try console.output.write(lines.joined(separator: "\n") + "\n")
        return ExitCode.success
    }
}
