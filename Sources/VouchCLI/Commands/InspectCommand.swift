import Foundation
import Vouch
import VouchBatch

/// `vouch inspect`: a token decoded without trusting anything.
struct InspectCommand: Command {
    let path = ["inspect"]
    let summary = "Decode a token without trusting it (UNVERIFIED)"
    let usage = "vouch inspect [options] [FILE|-]"
    let discussion = """
        Decodes a token WITHOUT verifying anything, for a look at data that does not verify:
        the header, each x5c certificate (subject, issuer, validity, key, Apple marker
        extensions, SHA-256) and the payload, dates shown as ISO-8601 beside the raw
        milliseconds. A JWS without x5c, which a server signed with its own key (an offer
        signature, a StoreKit request, an API token), shows its claims instead: iat, exp and
        nbf as dates, an Advanced Commerce request decoded. The first line of output is always
        UNVERIFIED.
        (vouch verify checks the app only when told: --bundle-id, --environment.)
        """
    let options = InputArguments.options
    let positionals = Positionals.oneInput
    let exitStatus = "0 decoded, 1 not a decodable JWS, 64 usage error, 66 unreadable input,\n74 output write error."
    let examples = [
        "vouch inspect signed-transaction.jws",
        "vouch inspect --field signedPayload notification.json",
    ]

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        var input = try SingleInput(arguments.input, arguments: try InputArguments(arguments), console: console)
        var decoded = true
        var wroteHeading = false
        func fail(_ error: VerificationError, place: String = "") {
            decoded = false
            console.diagnose("vouch: cannot decode: \(place)\(error.code): \(error.reason)")
        }
        switch try input.start() {
        case .empty:
            fail(
                VerificationError(
                    .malformedToken,
                    "the input is empty: 'vouch inspect' reads a token, or JSON documents holding tokens"))
        case .several(let count):
            fail(
                VerificationError(
                    .malformedToken,
                    "the input holds \(count) lines that are not blank: 'vouch inspect' reads one token, or JSON documents holding tokens"
                ))
        case .unit(let first):
            var next: InputUnit? = first
            while let unit = next {
                if let failure = unit.failure { fail(VerifyCommand.explain(failure.error, form: .jws)) }
                if unit.delivery != nil {
                    fail(VerifyCommand.explain(VerificationError(.malformedToken, ""), form: .stripeDelivery))
                }
                for token in unit.single.map({ [$0] }) ?? unit.groups.flatMap({ $0 }) where unit.failure == nil {
                    let place = token.path.map { "\($0) (line \(token.line)): " } ?? ""
                    let inspection: Inspection
                    do throws(VerificationError) {
                        guard token.form == .jws else {
                            throw VerificationError(
                                .malformedToken,
                                "the input holds a legacy app receipt: 'vouch receipt inspect' reads it")
                        }
                        switch token.content {
                        case .failure(let error): throw error
                        case .token(let bytes):
                            inspection = try Inspection(token: String(decoding: bytes, as: UTF8.self))
                        }
                    } catch {
                        fail(error, place: place)
                        continue
                    }
                    var lines: [String] = []
                    if !wroteHeading {
                        lines.append("UNVERIFIED: decoded without checking the signature, the chain or any claim")
                        wroteHeading = true
                    }
                    if let path = token.path { lines.append("\(path) (line \(token.line)):") }
                    Self.describe(inspection, indent: token.path == nil ? 0 : 1, into: &lines)
                    try console.output.write(lines.joined(separator: "\n") + "\n")
                }
                next = try input.next()
            }
        }
        return decoded ? ExitCode.success : ExitCode.rejected
    }

    static func describe(_ inspection: Inspection, indent: Int, into lines: inout [String]) {
        let pad = String(repeating: "  ", count: indent)
        lines.append("\(pad)header:")
        // x5c is a note, not its base64: the certificates are described below.
        var header = inspection.header
        if header["x5c"] != nil {
            header["x5c"] = nil
            PayloadText.describe(header, indent: indent + 1, into: &lines)
            lines.append(
                "\(pad)  x5c: \(Counted.phrase(inspection.certificates.count, "certificate")), described below")
        } else {
            PayloadText.describe(header, indent: indent + 1, into: &lines)
        }
        for (index, certificate) in inspection.certificates.enumerated() {
            CertificateText.describe(certificate, heading: "certificate x5c[\(index)]:", indent: pad, into: &lines)
        }
        lines.append("\(pad)signature: \(inspection.signatureLength.map { "\($0) bytes" } ?? "not base64url")")
        if inspection.header["x5c"] == nil, let claims = inspection.payload {
            // No chain: a token a server signed with its own key (an offer, a request, an API token).
            lines.append(
                "\(pad)claims (no x5c: signed with a key, not by the App Store; 'vouch verify --signing-key' checks it):"
            )
            KeySignedClaimsText.describe(claims, indent: indent + 1, into: &lines)
        } else if let payload = inspection.payload {
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
