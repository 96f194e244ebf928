import Foundation
import Vouch

/// `vouch inspect`: a token decoded without trusting anything.
struct InspectCommand: Command {
    let path = ["inspect"]
    let summary = "Decode a token without trusting it (UNVERIFIED)"
    let usage = "vouch inspect [options] [FILE|-]"
    let discussion = """
        Decodes a token WITHOUT verifying anything, for a look at data that does not verify:
        the header, each x5c certificate (subject, issuer, validity, key, Apple marker
        extensions, SHA-256) and the payload, dates shown as ISO-8601 beside the raw
        milliseconds. The first line of output is always UNVERIFIED.
        (vouch verify checks the app only when told: --bundle-id, --environment.)
        """
    let options: [CommandOption] = [.value("--field", "NAME", help: "In JSON input, read the token from this member")]
    let positionals = Positionals.oneInput
    let exitStatus = "0 decoded, 1 not a decodable JWS, 64 usage error, 66 unreadable input,\n74 output write error."

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let (bytes, complete) = try console.readInput(arguments.input, limit: VerifyCommand.inputLimit)
        let lines: [String]
        do throws(VerificationError) {
            guard complete else {
                throw VerificationError(.tokenTooLarge, "the input is larger than \(VerifyCommand.inputLimit) bytes")
            }
            let token = try SignedInput.token(in: bytes, field: arguments.value("--field"))
            let inspection = try Inspection(token: String(decoding: token, as: UTF8.self))
            var text = ["UNVERIFIED: decoded without checking the signature, the chain or any claim"]
            Self.describe(inspection, indent: 0, into: &text)
            lines = text
        } catch {
            console.diagnose("vouch: cannot decode: \(error.code): \(error.reason)")
            return ExitCode.rejected
        }
        try console.output.write(lines.joined(separator: "\n") + "\n")
        return ExitCode.success
    }

    static func describe(_ inspection: Inspection, indent: Int, into lines: inout [String]) {
        let pad = String(repeating: "  ", count: indent)
        lines.append("\(pad)header:")
        var header = inspection.header
        header["x5c"] = header["x5c"].map { _ in .string("(\(inspection.certificates.count) certificates, below)") }
        PayloadText.describe(header, indent: indent + 1, into: &lines)
        for (index, certificate) in inspection.certificates.enumerated() {
            CertificateText.describe(certificate, heading: "certificate x5c[\(index)]:", indent: pad, into: &lines)
        }
        lines.append("\(pad)signature: \(inspection.signatureLength.map { "\($0) bytes" } ?? "not base64url")")
        if let payload = inspection.payload {
            lines.append("\(pad)payload\(inspection.kind.map { " (\($0))" } ?? ""):")
            PayloadText.describe(payload, indent: indent + 1, into: &lines)
        } else {
            lines.append("\(pad)payload: not a base64url JSON object")
        }
        for (field, nested) in inspection.nested {
            lines.append("\(pad)nested \(field):")
            describe(nested, indent: indent + 1, into: &lines)
        }
    }
}
