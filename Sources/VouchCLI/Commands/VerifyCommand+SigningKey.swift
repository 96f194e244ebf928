import Foundation
import Vouch
import VouchBatch
import VouchSigning

/// `vouch verify --signing-key PUBLIC.pem`: tokens a server signed with its own key (offer
/// signatures, request JWS, API tokens), checked with that key instead of Apple's chain.
enum SigningKeyVerification {
    static let option = CommandOption.value(
        "--signing-key", "FILE",
        help:
            "Verify JWS signed with this EC P-256 key (PEM public key, or\nthe .p8 itself) instead of Apple's chain: signature, alg,\nexp/nbf/iat at --at (default now), bid with --bundle-id"
    )

    /// The verify options that have no meaning for a token signed with a known key.
    static let inapplicable = [
        "--root", "--xcode-cert", "--kind", "--environment", "--app-apple-id", "--no-strict-x509",
    ]

    static func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        if let other = inapplicable.first(where: arguments.contains) {
            throw UsageError("--signing-key verifies with a key, not Apple's chain: \(other) does not apply")
        }
        let key = try readKey(arguments.value("--signing-key") ?? "", console: console)
        var time = ValidationTime.now
        if let text = arguments.value("--at") {
            time = try TrustOptions.validationTime(text)
        }
        let bundleId = arguments.value("--bundle-id")
        let json = arguments.flag("--json")
        var input = try SingleInput(arguments.input, arguments: try InputArguments(arguments), console: console)
        var allVerified = true

        func write(_ result: Result<VerifiedJWS, VerificationError>, token: InputToken?, document: Int = 0) throws {
            let place = token?.path.map { "\($0) (line \(token!.line)): " } ?? ""
            if case .failure(let error) = result {
                allVerified = false
                console.diagnose("vouch: rejected: \(place)\(error.code): \(error.reason)")
            }
            if json {
                try console.output.write(
                    JSONWriter.encode(.object(record(result, token: token, document: document))) + [0x0A])
            } else if case .success(let verified) = result {
                try console.output.write(place + describe(verified))
            }
        }

        switch try input.start() {
        case .empty:
            try write(
                .failure(
                    VerificationError(
                        .malformedToken, "the input is empty: 'vouch verify --signing-key' reads a JWS")), token: nil)
        case .several(let count):
            try write(
                .failure(
                    VerificationError(
                        .malformedToken,
                        "the input holds \(count) lines that are not blank: 'vouch verify --signing-key' reads one JWS, or JSON documents holding them"
                    )), token: nil)
        case .unit(let first):
            var next: InputUnit? = first
            while let unit = next {
                if let failure = unit.failure {
                    try write(.failure(VerifyCommand.explain(failure.error, form: .jws)), token: nil)
                }
                for token in unit.single.map({ [$0] }) ?? unit.groups.flatMap({ $0 }) where unit.failure == nil {
                    let result = Result { () throws(VerificationError) -> VerifiedJWS in
                        guard token.form == .jws else {
                            throw VerificationError(
                                .malformedToken, "the input holds a legacy app receipt: 'vouch receipt verify' reads it"
                            )
                        }
                        switch token.content {
                        case .failure(let error): throw error
                        case .token(let bytes): return try key.verify(bytes: bytes, at: time, bundleId: bundleId)
                        }
                    }
                    try write(result, token: token, document: unit.document)
                }
                next = try input.next()
            }
        }
        return allVerified ? ExitCode.success : ExitCode.rejected
    }

    /// The public key of `--signing-key`.
    static func readKey(_ path: String, console: Console) throws -> SigningPublicKey {
        let (bytes, complete) = try SignCommands.readKeyFile(path, option: "--signing-key", console: console)
        guard complete else {
            throw InvalidInputError(
                "--signing-key \(path) is larger than \(SignCommands.keyLimit) bytes: not a key file")
        }
        do {
            return try SigningPublicKey(pem: bytes)
        } catch {
            guard error.code != .openSSLFailure else { throw error }
            throw InvalidInputError("--signing-key \(path): \(error.code): \(error.reason)")
        }
    }

    /// One record, in the members and order of every verification record: `line`, `document`
    /// and `path` for a token found in a document, `status`, `kind` (`key-signed`), `payload`
    /// (the claims), `error`.
    static func record(_ result: Result<VerifiedJWS, VerificationError>, token: InputToken?, document: Int)
        -> JSONObject
    {
        var record = JSONObject()
        if let token, let path = token.path {
            record.members += [
                .init("line", .number(String(token.line))), .init("document", .number(String(document))),
                .init("path", .string(path)),
            ]
        }
        switch result {
        case .success(let verified):
            record.members += [
                .init("status", "verified"), .init("kind", "key-signed"), .init("payload", .object(verified.claims)),
            ]
        case .failure(let error):
            record.members += [
                .init("status", "rejected"), .init("kind", .null), .init("payload", .null),
                .init("error", ["code": .string(error.code.rawValue), "reason": .string(error.reason)]),
            ]
        }
        return record
    }

    static func describe(_ verified: VerifiedJWS) -> String {
        var lines = ["VERIFIED signed with the given key"]
        lines.append("  claims checked at \(verified.validationTime.iso8601)")
        lines.append("header:")
        PayloadText.describe(verified.header, indent: 1, into: &lines)
        lines.append("claims:")
        KeySignedClaimsText.describe(verified.claims, indent: 1, into: &lines)
        return lines.joined(separator: "\n") + "\n"
    }
}
