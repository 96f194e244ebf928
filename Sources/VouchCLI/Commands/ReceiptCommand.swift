import Foundation
import Vouch
import VouchBatch
import VouchReceipts

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
        footer: "Run 'vouch receipt verify --help' or 'vouch receipt inspect --help' for the options.",
        examples: [
            "vouch receipt verify --bundle-id com.example.app receipt.der",
            "vouch receipt inspect receipt.der",
            "vouch receipt transaction-ids receipt.der",
        ])

    static let all: [any Command] = [ReceiptVerifyCommand(), ReceiptInspectCommand(), ReceiptTransactionIdsCommand()]

    /// Base64 text of the largest receipt the verifier accepts, with room for a JSON body.
    static let inputLimit = 2 * 1024 * 1024

    static let inputHelp = """
        The input (a file, or standard input for '-' or no FILE) is the DER receipt, its
        base64 text (receipt-data; line breaks allowed), or a JSON body holding that text
        (receipt-data, latest_receipt, or --field).
        """

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
            if let extra = try input.next() {
                if extra.exceedsInputLimit, let failure = extra.failure {
                    return .failure(VerificationError(.receiptTooLarge, failure.error.reason))
                }
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
            if unit.exceedsInputLimit { throw VerificationError(.receiptTooLarge, failure.reason) }
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
        embedded Apple Inc. Root and prints its contents: the receipt's fields and each
        purchase (inApp), productType by name; the attributes Apple does not document
        (otherAttributes, base64) are counted, and --json prints them.
        \(ReceiptCommands.inputHelp)
        The chain is validated at the receipt's creation date unless --at says otherwise.
        """
    let positionals = Positionals.oneInput
    let exitStatus = """
        0 verified, 1 rejected (code and reason on stderr), 64 usage error,
        66 unreadable input, 74 output write error.
        """
    let examples = [
        "vouch receipt verify --bundle-id com.example.app receipt.der",
        "vouch receipt verify --json body.json",
        "vouch receipt verify --format verify-receipt receipt-data.txt",
    ]

    var options: [CommandOption] {
        let trust = TrustOptions.receipts
        return [
            trust.root, trust.xcodeCertificate, trust.bundleId, trust.environment,
            .value("--app-version", "V", help: "Require this application version"),
            .value("--device-id", "UUID", help: "Check the receipt's hash against this device identifier"),
            trust.validationTime, trust.noStrictX509,
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
        let configuration = try configuration(arguments)
        let verifier = try TrustOptions.make { () throws(ConfigurationError) in
            try ReceiptVerifier(configuration: configuration)
        }
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

    /// The receipt options: the trust options (the receipt's own, `--app-version` and
    /// `--device-id` read between what it trusts and when it is validated).
    func configuration(_ arguments: ParsedArguments) throws -> ReceiptVerifier.Configuration {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        try TrustOptions.readTrust(arguments, TrustOptions.receipts, into: &configuration.trust)
        configuration.applicationVersion = arguments.value("--app-version")
        if let text = arguments.value("--device-id") {
            guard let uuid = UUID(uuidString: text) else {
                throw UsageError(
                    "--device-id must be a UUID such as 956328D9-CC6A-47F4-BE40-6953FB0AB6C7; got '\(text)'")
            }
            configuration.deviceIdentifier = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        }
        try TrustOptions.readValidation(arguments, TrustOptions.receipts, into: &configuration.trust)
        return configuration
    }

    static func describe(_ verified: VerifiedReceipt) -> String {
        var lines = ["VERIFIED receipt\(verified.isXcode ? " (Xcode StoreKit testing)" : "")"]
        lines.append("  chain validated at \(verified.validationTime.iso8601)")
        lines.append("  signed by \(verified.signer), \(verified.digestAlgorithm) with RSA")
        let payload = verified.receipt.jsonObject
        lines.append("payload:")
        PayloadText.describe(payload, indent: 1, omitting: ["otherAttributes"], into: &lines)
        let raw = payload["otherAttributes"]?.arrayValue?.count ?? 0
        let purchases = payload["inApp"]?.arrayValue ?? []
        let rawInPurchases = purchases.reduce(0) { $0 + ($1.objectValue?["otherAttributes"]?.arrayValue?.count ?? 0) }
        if raw + rawInPurchases > 0 {
            lines.append(
                "  otherAttributes: \(raw) of the receipt, \(rawInPurchases) of its purchases, raw"
                    + " (--json shows them)")
        }
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
    let examples = [
        "vouch receipt inspect receipt.der",
        "vouch receipt inspect --field latest_receipt body.json",
    ]

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
            CertificateText.describe(certificate, heading: "certificate \(index + 1):", indent: "", into: &lines)
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
