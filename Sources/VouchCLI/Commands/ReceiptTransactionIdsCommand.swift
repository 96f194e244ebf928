import Foundation
import Vouch
import VouchBatch
import VouchReceipts

/// `vouch receipt transaction-ids`: the transaction ids of an old receipt, for the App Store
/// Server API (Get Transaction History takes any of them).
struct ReceiptTransactionIdsCommand: Command {
    let path = ["receipt", "transaction-ids"]
    let summary = "Print the transaction ids of a receipt, for the App Store Server API"
    let usage = "vouch receipt transaction-ids [--unverified] [options] [FILE|-]"
    let discussion = """
        Prints one line per in-app purchase of a verified app receipt: transactionId,
        originalTransactionId and productId, tab-separated, after a VERIFIED line. The
        receipt is verified as 'vouch receipt verify' does, with the same options.
        \(ReceiptCommands.inputHelp)
        With --unverified, nothing is verified and the first line says UNVERIFIED: an app
        receipt is only decoded, and an iOS 6 style transaction receipt
        (SKPaymentTransaction.transactionReceipt: an old-style property list, or its base64)
        gives the transaction-id of its purchase-info, which cannot be verified offline at
        all. Such ids are for calling the App Store Server API, which answers with signed
        data; never grant anything on them.
        """
    let positionals = Positionals.oneInput
    let exitStatus = """
        0 ids printed, 1 rejected or not readable as a receipt (code and reason on stderr),
        64 usage error, 66 unreadable input, 74 output write error.
        """
    let examples = [
        "vouch receipt transaction-ids --bundle-id com.example.app receipt.der",
        "vouch receipt transaction-ids --unverified --json transaction-receipt.plist",
    ]

    /// The verification options, as `vouch receipt verify` declares them.
    static let verificationOptions = ReceiptVerifyCommand().options.filter {
        !["--json", "--format"].contains($0.name) && !InputArguments.options.contains($0)
    }

    var options: [CommandOption] {
        Self.verificationOptions + InputArguments.options + [
            .flag(
                "--unverified",
                help: "Read the ids without verifying anything (an iOS 6\ntransaction receipt can only be read so)"),
            .flag(
                "--json",
                help:
                    "Print one JSON object:\n{\"status\":…,\"kind\":…,\"transactions\":[{\"transactionId\":…,…}][,\"error\":…]}"
            ),
        ]
    }

    /// The ids of one purchase.
    struct Purchase {
        var transactionId: String?
        var originalTransactionId: String?
        var productId: String?
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let unverified = arguments.flag("--unverified")
        if unverified, let option = Self.verificationOptions.first(where: { arguments.contains($0.name) }) {
            throw UsageError("--unverified verifies nothing: \(option.name) does not apply")
        }
        var verifier: ReceiptVerifier? = nil
        if !unverified {
            let configuration = try ReceiptVerifyCommand().configuration(arguments)
            verifier = try TrustOptions.make { () throws(ConfigurationError) in
                try ReceiptVerifier(configuration: configuration)
            }
        }
        var input = try SingleInput(
            arguments.input, arguments: try ReceiptCommands.inputArguments(arguments), console: console)
        let bytes = try ReceiptCommands.receipt(in: &input, command: "vouch receipt transaction-ids")
        let kind: String
        let result: Result<[Purchase], VerificationError>
        if let verifier {
            kind = "receipt"
            result = Result { () throws(VerificationError) in
                do throws(VerificationError) {
                    return Self.purchases(of: try verifier.verify(try bytes.get()).receipt)
                } catch {
                    guard error.code == .receiptNotAReceipt, error.reason.contains("iOS 6") else { throw error }
                    throw VerificationError(
                        error.code,
                        error.reason + "; it cannot be verified offline: --unverified reads its transaction id")
                }
            }
        } else if case .success(let receipt) = bytes,
            receipt.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) != 0x30
        {
            kind = "transaction-receipt"
            result = Result { () throws(VerificationError) in
                let transaction = try LegacyTransactionReceipt(plist: receipt)
                return [
                    Purchase(
                        transactionId: transaction.transactionId,
                        originalTransactionId: transaction.originalTransactionId, productId: transaction.productId)
                ]
            }
        } else {
            kind = "receipt"
            result = Result { () throws(VerificationError) in
                Self.purchases(of: try ReceiptInspection(receipt: try bytes.get()).receipt.get())
            }
        }
        if arguments.flag("--json") {
            try console.output.write(
                JSONWriter.encode(.object(Self.record(result, kind: kind, unverified: unverified))) + [0x0A])
        } else if case .success(let purchases) = result {
            var lines = [
                unverified
                    ? "UNVERIFIED: \(kind == "receipt" ? "an app receipt decoded" : "an iOS 6 style transaction receipt read") without checking anything; use the ids only to ask the App Store Server API"
                    : "VERIFIED app receipt: \(purchases.count) in-app purchases"
            ]
            for purchase in purchases {
                lines.append(
                    [purchase.transactionId, purchase.originalTransactionId, purchase.productId].map { $0 ?? "-" }
                        .joined(separator: "\t"))
            }
            try console.output.write(lines.joined(separator: "\n") + "\n")
        }
        if case .failure(let error) = result {
            console.diagnose("vouch: rejected: \(error.code): \(error.reason)")
            return ExitCode.rejected
        }
        return ExitCode.success
    }

    static func purchases(of receipt: AppReceipt) -> [Purchase] {
        receipt.inApp.map {
            Purchase(
                transactionId: $0.transactionId, originalTransactionId: $0.originalTransactionId,
                productId: $0.productId)
        }
    }

    /// `{"status":"verified"|"unverified"|"rejected","kind":…,"transactions":[…][,"error":…]}`.
    static func record(_ result: Result<[Purchase], VerificationError>, kind: String, unverified: Bool) -> JSONObject {
        switch result {
        case .success(let purchases):
            let transactions = purchases.map { purchase -> JSONValue in
                var object = JSONObject()
                for (name, value) in [
                    ("transactionId", purchase.transactionId),
                    ("originalTransactionId", purchase.originalTransactionId),
                    ("productId", purchase.productId),
                ] {
                    if let value { object.members.append(.init(name, .string(value))) }
                }
                return .object(object)
            }
            return JSONObject([
                .init("status", .string(unverified ? "unverified" : "verified")), .init("kind", .string(kind)),
                .init("transactions", .array(transactions)),
            ])
        case .failure(let error):
            return JSONObject([
                .init("status", "rejected"), .init("kind", .string(kind)), .init("transactions", .null),
                .init("error", ["code": .string(error.code.rawValue), "reason": .string(error.reason)]),
            ])
        }
    }
}
