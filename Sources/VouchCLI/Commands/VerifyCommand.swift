import Foundation
import Vouch
import VouchBatch

/// `vouch verify`: one token, its payload printed.
struct VerifyCommand: Command {
    let path = ["verify"]
    let summary = "Verify one signed token and print its payload"
    let usage = "vouch verify [options] [FILE|-]"
    let discussion = """
        Verifies App Store signed tokens and prints their payloads. The input (a file, or
        standard input for '-' or no FILE) is a bare compact JWS, or JSON: a body holding one
        (signedPayload, signedTransactionInfo, signedRenewalInfo, signedTransaction,
        signedAppTransactionInfo), an App Store Server API response, an array, or several
        documents in a row, every token of which is verified and named by its JSON path.
        Nested tokens of a notification are verified too and shown inline. Data of any app is
        accepted unless --bundle-id/--environment say which.
        """
    let positionals = Positionals.oneInput
    let exitStatus = """
        0 every token verified, 1 any rejected (code and reason on stderr), 64 usage error,
        66 unreadable input, 74 output write error.
        """

    var options: [CommandOption] {
        TrustOptions.options + DocumentArguments.options + [
            .flag(
                "--json",
                help: "Print one JSON record per token:\n{\"status\":…,\"kind\":…,\"payload\":…[,\"error\":…]}")
        ]
    }

    /// Reads at most this much input; a token is far smaller (see maximumTokenSize).
    static let inputLimit = 1024 * 1024

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let options = try TrustOptions(arguments, console: console)
        let verifier = try options.makeVerifier()
        let documents = try DocumentArguments(arguments)
        let (bytes, complete): ([UInt8], Bool)
        switch try VerifyDocuments.open(
            arguments.input, limit: Self.inputLimit, options: documents.options, console: console)
        {
        case .documents(let reader):
            return try VerifyDocuments.run(
                reader, verifier: verifier, kind: options.kind, json: arguments.flag("--json"), console: console)
        case .token(let read, let whole):
            (bytes, complete) = (read, whole)
        }

        let result: Result<VerifiedPayload, VerificationError>
        if !complete {
            result = .failure(VerificationError(.tokenTooLarge, "the input is larger than \(Self.inputLimit) bytes"))
        } else {
            result = Result { () throws(VerificationError) in
                let token = try SignedInput.token(in: bytes, field: arguments.value("--field"))
                return try verifier.verify(bytes: token, as: options.kind)
            }
        }

        if arguments.flag("--json") {
            try console.output.write(VerificationRecord.json(for: result, kind: options.kind) + [0x0A])
        }
        switch result {
        case .success(let verified):
            if !arguments.flag("--json") {
                try console.output.write(Self.describe(verified))
            }
            return ExitCode.success
        case .failure(let error):
            console.diagnose("vouch: rejected: \(error.code): \(error.reason)")
            return ExitCode.rejected
        }
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
