import Foundation
import Vouch
import VouchBatch

/// `vouch verify`: one token, its payload printed.
struct VerifyCommand: Command {
    let path = ["verify"]
    let summary = "Verify the signed tokens of one input (a token, a body, a response)"
    let usage = "vouch verify [options] [FILE|-]"
    let discussion = """
        Verifies App Store signed tokens and prints their payloads. The input (a file, or
        standard input for '-' or no FILE) is a bare compact JWS, or JSON: a body holding one
        (signedPayload, signedTransactionInfo, signedRenewalInfo, signedTransaction,
        signedAppTransactionInfo), an App Store Server API response, an array, or several
        documents in a row, every token of which is verified and named by its JSON path.
        Nested tokens of a notification are verified too and shown inline. Data of any app is
        accepted unless --bundle-id/--environment say which.
        With --signing-key, the tokens are JWS a server signed with its own key ('vouch sign'),
        verified with that key instead of Apple's chain: the signature and alg, then exp, nbf
        and iat at the --at instant (default now), and bid with --bundle-id.
        """
    let positionals = Positionals.oneInput
    let exitStatus = """
        0 every token verified, 1 any rejected (code and reason on stderr), 64 usage error,
        66 unreadable input, 74 output write error.
        """
    let examples = [
        "vouch verify signed-transaction.jws",
        "vouch verify --bundle-id com.example.app --environment Production --json notification.json",
        "vouch verify --signing-key key.pem --bundle-id com.example.app offer.jws",
    ]

    var options: [CommandOption] {
        TrustOptions.options + InputArguments.options + [
            .flag(
                "--json",
                help: "Print one JSON record per token:\n{\"status\":…,\"kind\":…,\"payload\":…[,\"error\":…]}"),
            SigningKeyVerification.option,
        ]
    }

    /// The longest bare token read (a token is far smaller: see maximumTokenSize).
    static let inputLimit = InputOptions.defaultMaximumLineLength

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        if arguments.contains("--signing-key") { return try SigningKeyVerification.run(arguments, console: console) }
        let options = try TrustOptions(arguments, console: console)
        let verifier = try options.makeVerifier()
        let json = arguments.flag("--json")
        var input = try SingleInput(arguments.input, arguments: try InputArguments(arguments), console: console)
        let format = RecordFormat(numbers: .whereNew, kind: options.kind)
        var allVerified = true

        func reject(_ error: VerificationError, place: String = "") throws {
            allVerified = false
            if json {
                try console.output.write(VerificationRecord.json(for: .failure(error), kind: options.kind) + [0x0A])
            }
            console.diagnose("vouch: rejected: \(place)\(error.code): \(error.reason)")
        }

        switch try input.start() {
        case .empty:
            try reject(
                VerificationError(
                    .malformedToken,
                    "the input is empty: 'vouch verify' reads a token, or JSON documents holding tokens"))
        case .several(let count):
            try reject(
                VerificationError(
                    .malformedToken,
                    "the input holds \(count) lines that are not blank: 'vouch verify' reads one token, or JSON documents holding tokens;"
                        + " 'vouch batch' verifies a dump of one token per line"))
        case .unit(let first):
            var next: InputUnit? = first
            // Stripe deliveries are for 'vouch stripe verify': said once, with their count.
            var deliveries = 0
            defer {
                if deliveries > 0 {
                    console.diagnose(
                        "vouch: rejected: malformed_token: the input holds "
                            + Counted.phrase(deliveries, "Stripe webhook delivery", "Stripe webhook deliveries")
                            + ": 'vouch stripe verify --stripe-secret-file FILE' verifies "
                            + (deliveries == 1 ? "it" : "them"))
                }
            }
            while let unit = next {
                for var result in unit.verify(with: verifier, kind: options.kind) {
                    result.result = result.result.mapError { Self.explain($0, form: result.form) }
                    if result.form == .stripeDelivery, case .failure(let error) = result.result,
                        error.code == .malformedToken
                    {
                        deliveries += 1
                        allVerified = false
                        if json { try console.output.write(format.record(result)) }
                        continue
                    }
                    let place = result.path.map { "\($0) (line \(result.line)): " } ?? ""
                    switch result.result {
                    case .success(.payload(let verified)):
                        try console.output.write(
                            json ? format.record(result) : Array((place + Self.describe(verified)).utf8))
                    case .success(.receipt), .success(.stripeEvent), .failure:
                        if json { try console.output.write(format.record(result)) }
                        if case .failure(let error) = result.result {
                            allVerified = false
                            console.diagnose("vouch: rejected: \(place)\(error.code): \(error.reason)")
                        }
                    }
                }
                next = try input.next()
            }
        }
        return allVerified ? ExitCode.success : ExitCode.rejected
    }

    /// What `vouch verify` says of an input it does not verify: a receipt is for `vouch receipt
    /// verify`, a Stripe delivery for `vouch stripe verify`; a bare line over the limit is too
    /// large a token.
    static func explain(_ error: VerificationError, form: InputToken.Form) -> VerificationError {
        if form == .receipt || form == .receiptFile, error.code == .malformedToken {
            return VerificationError(
                .malformedToken, "the input holds a legacy app receipt: 'vouch receipt verify' reads it")
        }
        if form == .stripeDelivery, error.code == .malformedToken {
            return VerificationError(
                .malformedToken, "the input holds a Stripe webhook delivery: 'vouch stripe verify' reads it")
        }
        if error.code == .lineTooLong {
            return VerificationError(.tokenTooLarge, "the input is larger than \(inputLimit) bytes")
        }
        return error
    }

    static func describe(_ verified: VerifiedPayload) -> String {
        var lines = ["VERIFIED \(verified.kind)"]
        lines.append("  chain validated at \(verified.validationTime.iso8601)")
        lines.append("  signing certificate SHA-256 \(verified.signingCertificateSHA256.hexString)")
        if !verified.nested.isEmpty {
            lines.append("  nested tokens verified: \(verified.nested.map(\.field.path).joined(separator: ", "))")
        }
        lines.append("payload:")
        PayloadText.describe(verified.expandedPayload, indent: 1, into: &lines)
        return lines.joined(separator: "\n") + "\n"
    }
}
