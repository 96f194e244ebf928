import Dispatch
import Foundation
import Vouch
import VouchMint

/// `vouch mint ca` and `vouch mint KIND`: an Apple-shaped test PKI and App Store signed data
/// signed by it.
enum MintCommands {
    static let group = CommandGroup(
        path: ["mint"], summary: "Make an Apple-shaped test PKI and signed test data",
        usage: "vouch mint ca|KIND|history|stripe|story [options]",
        discussion: """
            Mints test data shaped like Apple's. Nothing minted chains to Apple: a verifier accepts it
            only when given the minted root (or Xcode certificate) as its trust anchor. The private
            keys are written unencrypted and are for tests only.
            """,
        noun: "kind",
        footer: "Run 'vouch mint ca --help', 'vouch mint KIND --help' or 'vouch mint history --help' for the options.")

    static let all: [any Command] = [MintCACommand()] + MintKind.allCases.map { MintTokensCommand(kind: $0) }

    static let exitStatus = """
        0 success, 64 usage error, 65 invalid input, 66 unreadable input,
        70 OpenSSL failure, 74 output write error.
        """

    static let dateHelp =
        "DATE is 2025-03-01, 2025-03-01T12:30:00Z, 2025-03-01T12:30:00.250Z or with an\noffset such as +02:00 instead of Z."

    /// The authority `--ca DIR` names, read by `load`; a failure names the option, the
    /// directory and why.
    static func authority<Authority>(
        _ directory: String, _ load: (URL) throws(MintError) -> Authority
    ) throws(MintError) -> Authority {
        do {
            return try load(URL(fileURLWithPath: directory, isDirectory: true))
        } catch {
            throw MintError(error.code, "--ca \(directory): \(error.reason)")
        }
    }
}

/// `vouch mint ca --out DIR`.
struct MintCACommand: Command {
    let path = ["mint", "ca"]
    let summary = "Write a root, intermediate and leaf (or an Xcode certificate) with their keys"
    let usage = "vouch mint ca --out DIR [--force] [--xcode] [options]"
    let discussion = """
        Writes to DIR:
          root.der root.pem root.key.pem                 EC P-384, self-signed CA, certSign/cRLSign, SKI
          intermediate.der intermediate.pem intermediate.key.pem
                                                         EC P-384, CA pathlen 0, marker 1.2.840.113635.100.6.2.1
          leaf.der leaf.pem leaf.key.pem                 EC P-256, not a CA, digitalSignature,
                                                         marker 1.2.840.113635.100.6.11.1
        all signed ecdsa-with-SHA384; keys are PKCS #8 PEM with mode 0600. It prints the files.
        --xcode writes xcode.der xcode.pem xcode.key.pem instead: one self-signed P-256
        certificate "StoreKit Testing in Xcode", as Xcode's StoreKit testing uses. Files that
        exist already are kept unless --force is given.

        \(MintCommands.dateHelp)
        """
    let exitStatus = MintCommands.exitStatus
    let options: [CommandOption] = [
        .value("--out", short: "o", "DIR", help: "Write the files into DIR (created if needed)"),
        .flag("--force", help: "Replace the files of an authority already in DIR"),
        .flag("--xcode", help: "Write one Xcode StoreKit testing certificate instead"),
        .value(
            "--not-before", "DATE",
            help:
                "Start of every certificate's validity (default: a year\nbefore now, so past months verify; now with --xcode)"
        ),
        .value(
            "--not-after", "DATE",
            help: "End of every certificate's validity (default: ten years\nlater; one year with --xcode)"),
        .value("--leaf-not-before", "DATE", help: "Start of the leaf's own validity"),
        .value(
            "--leaf-not-after", "DATE",
            help: "End of the leaf's own validity (in the past for an\nexpired leaf under a valid intermediate)"),
        .flag("--no-leaf-oid", help: "Leave the leaf's marker extension out (data a verifier\nmust refuse)"),
        .flag("--no-intermediate-oid", help: "Leave the intermediate's marker extension out"),
    ]

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let out = arguments.value("--out") else { throw UsageError("mint ca needs --out DIR") }
        guard out != "-" else { throw UsageError("mint ca writes files: --out names a directory, not standard output") }
        func date(_ name: String) throws -> Date? {
            try arguments.value(name).map { try Spelling.date($0, option: name) }
        }
        let xcode = arguments.flag("--xcode")
        let now = Date(timeIntervalSince1970: console.now().timeIntervalSince1970.rounded(.down))
        // A year back: data of the past months, such as the four months `mint history` signs up
        // to now, is signed inside the validity. Xcode signs each purchase when it is made.
        let notBefore = try date("--not-before") ?? (xcode ? now : MintDate.adding(years: -1, to: now))
        let notAfter = try date("--not-after") ?? MintDate.adding(years: xcode ? 1 : 10, to: notBefore)
        guard notBefore < notAfter else { throw UsageError("--not-before must be earlier than --not-after") }
        let leafNotBeforeOption = try date("--leaf-not-before")
        let leafNotAfterOption = try date("--leaf-not-after")

        let directory = URL(fileURLWithPath: out, isDirectory: true)
        let style: MintAuthority.Style = xcode ? .xcode : .appStore
        if !arguments.flag("--force") {
            let existing = MintAuthority.files(for: style, in: directory).filter {
                FileManager.default.fileExists(atPath: $0.path)
            }
            if let first = existing.first {
                throw UsageError("\(first.path) exists; use --force to replace the authority in \(out)")
            }
        }

        let authority: MintAuthority
        if xcode {
            guard leafNotBeforeOption == nil, leafNotAfterOption == nil, !arguments.flag("--no-leaf-oid"),
                !arguments.flag("--no-intermediate-oid")
            else { throw UsageError("--xcode makes one certificate: leaf and marker options do not apply") }
            authority = try MintAuthority.generateXcode(
                validity: MintValidity(notBefore: notBefore, notAfter: notAfter))
        } else {
            let year: TimeInterval = 365 * 86_400
            var leafNotBefore = leafNotBeforeOption ?? notBefore
            var leafNotAfter = leafNotAfterOption ?? notAfter
            if leafNotBeforeOption == nil, leafNotBefore >= leafNotAfter {
                leafNotBefore = leafNotAfter.addingTimeInterval(-year)
            }
            if leafNotAfterOption == nil, leafNotAfter <= leafNotBefore {
                leafNotAfter = leafNotBefore.addingTimeInterval(year)
            }
            guard leafNotBefore < leafNotAfter else {
                throw UsageError("--leaf-not-before must be earlier than --leaf-not-after")
            }
            var settings = MintAuthorityOptions(validity: MintValidity(notBefore: notBefore, notAfter: notAfter))
            settings.leaf = MintValidity(notBefore: leafNotBefore, notAfter: leafNotAfter)
            settings.includeLeafMarker = !arguments.flag("--no-leaf-oid")
            settings.includeIntermediateMarker = !arguments.flag("--no-intermediate-oid")
            authority = try MintAuthority.generate(settings)
        }
        let files = try authority.write(to: directory)
        try console.output.write(files.map { $0.path + "\n" }.joined())
        return ExitCode.success
    }
}

/// `vouch mint KIND --ca DIR`: signed tokens, one per line.
struct MintTokensCommand: Command {
    let kind: MintKind

    var path: [String] { ["mint", kind.rawValue] }
    var summary: String {
        switch kind {
        case .transaction: "Sign transactions (JWSTransactionDecodedPayload)"
        case .renewalInfo: "Sign subscription renewal info (JWSRenewalInfoDecodedPayload)"
        case .notification: "Sign server notifications V2 with nested signed tokens"
        case .appTransaction: "Sign app transactions (AppTransaction)"
        case .realtimeRequest: "Sign Retention Messaging real-time requests"
        }
    }
    var usage: String { "vouch mint \(kind.rawValue) --ca DIR [options]" }
    var discussion: String {
        """
        Signs realistic payloads with the leaf key of the CA in DIR (--xcode: the Xcode
        certificate in DIR; Xcode makes no notification or realtime-request data) and prints
        one compact JWS per line. A notification nests a signed transaction and, for
        subscriptions, signed renewal info made with the same chain and consistent ids.
        KIND is \(MintKind.allCases.map(\.rawValue).joined(separator: ", ")).

        --set FIELD=VALUE converts VALUE to the JSON type Apple documents for FIELD:
        transactionId=1001 is the string "1001", price=990 the number 990; a VALUE of the
        wrong type is an error. A JSON string ("123") or null is written as given; a field
        Apple does not document gets VALUE as JSON if it parses, else as text. FIELD may be a
        path: data.status, or data.signedTransactionInfo.price inside a notification's nested
        token. environment, bundleId, appAppleId, productId, type, storefront,
        originalTransactionId, appTransactionId, appAccountToken, signedDate, notificationType
        and subtype steer the whole scenario (storefront=JPN prices in yen,
        notificationType=REFUND makes a refund) and reach nested tokens.

        Nothing is refunded or revoked unless asked: --revoked PERCENT for transactions,
        notificationType=REFUND or REVOKE for notifications; what is refunded was paid for.
        --transaction FILE makes notifications, renewal info or real-time requests about an
        existing transaction: its ids, product, purchase, price and account token are kept,
        and the event follows it in time (a refund after the purchase, a renewal from its
        expiry, an expiry signed when it happens); an event that cannot be about it (a
        renewal of a lifetime purchase, a refund of a free one, a date before the purchase)
        is an error that says why (exit 65).

        Tokens are signed at DATE or up to a day before it, on the same side of the leaf's
        validity as DATE, and never in the leaf's first second.

        \(MintCommands.dateHelp)
        """
    }
    var exitStatus: String { MintCommands.exitStatus }
    var options: [CommandOption] {
        var options: [CommandOption] = [
            .value("--ca", "DIR", help: "The authority written by 'vouch mint ca'"),
            .flag("--xcode", help: "Sign with the Xcode certificate in DIR"),
            .value("--set", "FIELD=VALUE", repeatable: true, help: "Set a payload member (see above)"),
            .value("--unset", "FIELD", repeatable: true, help: "Remove a payload member (a path as for --set)"),
            .value(
                "--payload", "FILE|-",
                help:
                    "Sign this payload instead (- reads stdin); without --set,\n--unset or --tamper its bytes are signed exactly, less\ntrailing whitespace"
            ),
            .value("--count", "N", help: "Mint N distinct tokens (default 1)"),
            .value(
                "--seed", "S",
                help:
                    "A number or any text (default 1); the same seed, date, CA\nand options give the same payloads (ECDSA signatures\ndiffer per run)"
            ),
            .value("--date", "DATE", help: "Sign at DATE or up to a day before it (default: now)"),
        ]
        if kind == .transaction {
            options.append(
                .value(
                    "--revoked", "PERCENT",
                    help:
                        "Revoke about PERCENT% of the transactions: refunds, and\nFamily Sharing revocations of shared ones (default 0)"
                ))
        }
        if Self.aboutTransaction.contains(kind) {
            options.append(
                .value(
                    "--transaction", "FILE|-",
                    help:
                        "Mint data about this transaction (a token, a body holding\none, or its JSON payload; - reads stdin)"
                ))
        }
        options += [
            .value(
                "--tamper", "DEFECT", repeatable: true,
                help:
                    "Write broken tokens instead, each followed by a tab and\nthe error code a verifier must report. DEFECT is\nsignature, payload or header (bad_signature), chain\n(untrusted_chain: a leaf from another root), alg\n(unsupported_algorithm: \"alg\":\"HS256\"), or all. With\n--count N, N tokens per defect"
            ),
            .value(
                "--out", short: "o", "FILE",
                help: "Write the tokens to FILE (- for stdout, the default);\na symbolic link is written through"),
        ]
        return options
    }

    /// The kinds that can be about an existing transaction.
    static let aboutTransaction: Set<MintKind> = [.notification, .renewalInfo, .realtimeRequest]

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let directory = arguments.value("--ca") else { throw UsageError("mint \(kind.rawValue) needs --ca DIR") }
        let xcode = arguments.flag("--xcode")
        if xcode && !kind.existsInXcode {
            throw UsageError(
                "Xcode makes no \(kind.rawValue) data; --xcode applies to transaction, renewal-info and app-transaction"
            )
        }
        var count = 1
        if let text = arguments.value("--count") {
            guard let number = Int(text), number >= 1, number <= 100_000_000 else {
                throw UsageError("--count: \"\(text)\" is not a number from 1 to 100000000")
            }
            count = number
        }
        let date = try arguments.value("--date").map { try Spelling.date($0, option: "--date") }
        var tampers: [MintTamper] = []
        for item in arguments.values("--tamper").flatMap({ $0.split(separator: ",") }) {
            if item == "all" {
                tampers += MintTamper.allCases
            } else if let tamper = MintTamper(rawValue: String(item)) {
                tampers.append(tamper)
            } else {
                throw UsageError(
                    "--tamper: unknown defect \"\(item)\"; expected "
                        + MintTamper.allCases.map(\.rawValue).joined(separator: ", ") + " or all")
            }
        }
        var seen = Set<MintTamper>()
        let chosenTampers = tampers.filter { seen.insert($0).inserted }
        let overrides = try arguments.occurrences(of: ["--set", "--unset"]).map { option throws(MintError) in
            option.name == "--set"
                ? try MintOverride(parsing: option.value)
                : MintOverride(path: try MintOverride.path(option.value), value: nil)
        }
        let payloadSource = arguments.value("--payload")
        if payloadSource != nil && arguments.contains("--count") {
            throw UsageError("--payload signs one given payload; --count does not apply")
        }
        var revokedPercentage = 0
        if kind == .transaction, let text = arguments.value("--revoked") {
            guard let number = Int(text), (0...100).contains(number) else {
                throw UsageError("--revoked: \"\(text)\" is not a percentage from 0 to 100")
            }
            revokedPercentage = number
        }
        let transactionSource = Self.aboutTransaction.contains(kind) ? arguments.value("--transaction") : nil
        if payloadSource != nil && transactionSource != nil {
            throw UsageError("--payload signs one given payload; --transaction does not apply")
        }

        let authority = try MintCommands.authority(directory) { url throws(MintError) in
            try MintAuthority.load(from: url, style: xcode ? .xcode : .appStore)
        }
        let signer = try MintSigner(authority: authority)
        let tamperer = chosenTampers.isEmpty ? nil : try MintTamperer(signer: signer)
        let out = try console.destination(arguments.value("--out"))

        if let source = payloadSource {
            let bytes = try Self.read(source, console: console)
            if overrides.isEmpty && tamperer == nil {
                try out.write(Array((try signer.sign(payloadBytes: bytes) + "\n").utf8))
                try out.close()
                return ExitCode.success
            }
            var payload: JSONObject
            do {
                payload = try StrictJSON.parseObject(bytes)
            } catch {
                throw InvalidInputError("\(source == "-" ? "stdin" : source) is not a JSON object: \(error)")
            }
            for override in overrides { try override.apply(to: &payload) }
            try out.write(
                Array(try Self.line(payload, signer: signer, tamperer: tamperer, tampers: chosenTampers).utf8))
            try out.close()
            return ExitCode.success
        }

        let seed = arguments.value("--seed").map(MintGenerator.seed) ?? 1
        let generator = MintGenerator(
            seed: seed, date: date ?? console.now(), overrides: overrides, revokedPercentage: revokedPercentage,
            transaction: try transactionSource.map { try Self.transaction(Self.read($0, console: console), from: $0) })
        let kind = self.kind
        // Items are independent, so chunks are minted in parallel and written in order.
        try OrderedChunkWriter.write(count: count, chunkSize: 256, to: out) { range in
            var bytes: [UInt8] = []
            for index in range {
                let payload = try generator.payload(kind, index: index, signer: signer)
                bytes += try Self.line(payload, signer: signer, tamperer: tamperer, tampers: chosenTampers).utf8
            }
            return bytes
        }
        try out.close()
        return ExitCode.success
    }

    /// The bytes of FILE (`-`: standard input), less trailing whitespace.
    private static func read(_ source: String, console: Console) throws -> [UInt8] {
        var bytes: [UInt8]
        if source == "-" {
            bytes = try console.readInput(nil, limit: Int.max - 1).bytes
        } else {
            guard let data = FileManager.default.contents(atPath: source) else {
                throw InputError("cannot read \(source)")
            }
            bytes = Array(data)
        }
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D {
            bytes.removeLast()
        }
        return bytes
    }

    /// The transaction payload `--transaction` gives: a JSON object with a `transactionId` as it
    /// is, or the payload of the token the input holds (a bare token, or a body or response
    /// holding one), decoded without verifying it: minting only reads what it states.
    static func transaction(_ bytes: [UInt8], from source: String) throws -> JSONObject {
        let name = source == "-" ? "stdin" : source
        if bytes.first == UInt8(ascii: "{"), let object = try? StrictJSON.parseObject(bytes),
            object["transactionId"] != nil
        {
            return object
        }
        do {
            let token = try SignedInput.token(in: bytes)
            guard let payload = try Inspection(token: String(decoding: token, as: UTF8.self)).payload else {
                throw InvalidInputError("\(name): the token's payload is not a JSON object")
            }
            return payload
        } catch let error as VerificationError {
            throw InvalidInputError("\(name) holds no transaction token or payload: \(error.reason)")
        }
    }

    /// One output line: the token, or for each defect the broken token, a tab and its code.
    private static func line(
        _ payload: JSONObject, signer: MintSigner, tamperer: MintTamperer?, tampers: [MintTamper]
    ) throws(MintError) -> String {
        guard let tamperer else { return try signer.sign(payload: payload) + "\n" }
        var text = ""
        for tamper in tampers {
            text += try tamperer.token(tamper, payload: payload) + "\t" + tamper.expectedErrorCode + "\n"
        }
        return text
    }
}
