import Foundation
import Vouch
import VouchMint

/// `vouch mint receipt-ca` and `vouch mint receipt`: an Apple-Inc-shaped RSA test PKI and
/// legacy app receipts signed by it.
enum MintReceiptCommands {
    static let all: [any Command] = [MintReceiptCACommand(), MintReceiptCommand()]
}

/// `vouch mint receipt-ca --out DIR`.
struct MintReceiptCACommand: Command {
    let path = ["mint", "receipt-ca"]
    let summary = "Make an RSA test PKI shaped like the one that signs app receipts"
    let usage = "vouch mint receipt-ca --out DIR [options]"
    let discussion = """
        Writes to DIR leaf, intermediate and root (.der, .pem, .key.pem with mode 0600):
        an RSA-2048 root; an intermediate with marker 1.2.840.113635.100.6.2.1; an RSA-2048
        leaf "Receipt Signing", not a CA, with marker 1.2.840.113635.100.6.11.1; all signed
        sha256WithRSAEncryption. --xcode writes xcode.* instead: one self-signed RSA-2048
        "StoreKit" certificate, as Xcode's StoreKit testing uses. Nothing chains to Apple:
        verify with --root DIR/root.der (or --xcode-cert DIR/xcode.der).

        \(MintCommands.dateHelp)
        """
    let exitStatus = MintCommands.exitStatus

    var options: [CommandOption] {
        [
            .value("--out", short: "o", "DIR", help: "Write the files into DIR (created if needed)"),
            .flag("--xcode", help: "One self-signed \"StoreKit\" certificate instead"),
            .value("--not-before", "DATE", help: "Validity of every certificate (default: now)"),
            .value("--not-after", "DATE", help: "Validity of every certificate (default: ten years on)"),
            .value("--leaf-not-before", "DATE", help: "The leaf's own validity"),
            .value("--leaf-not-after", "DATE", help: "The leaf's own validity"),
            .value("--leaf-bits", "N", help: "RSA modulus size of the leaf (default 2048)"),
            .flag("--no-leaf-oid", help: "Leave the leaf's marker out (a chain a verifier must refuse)"),
            .flag("--no-intermediate-oid", help: "Leave the intermediate's marker out"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let out = arguments.value("--out"), out != "-" else {
            throw UsageError("mint receipt-ca needs --out DIR")
        }
        func date(_ name: String) throws -> Date? {
            try arguments.value(name).map { try Spelling.date($0, option: name) }
        }
        let notBefore =
            try date("--not-before") ?? Date(timeIntervalSince1970: console.now().timeIntervalSince1970.rounded(.down))
        let notAfter = try date("--not-after") ?? MintDate.adding(years: 10, to: notBefore)
        guard notBefore < notAfter else { throw UsageError("--not-before must be earlier than --not-after") }
        let validity = MintValidity(notBefore: notBefore, notAfter: notAfter)
        let authority: MintReceiptAuthority
        if arguments.flag("--xcode") {
            authority = try MintReceiptAuthority.generateXcode(validity: validity)
        } else {
            var options = MintReceiptAuthorityOptions(validity: validity)
            let leafNotBefore = try date("--leaf-not-before") ?? notBefore
            let leafNotAfter = try date("--leaf-not-after") ?? notAfter
            guard leafNotBefore < leafNotAfter else {
                throw UsageError("--leaf-not-before must be earlier than --leaf-not-after")
            }
            options.leaf = MintValidity(notBefore: leafNotBefore, notAfter: leafNotAfter)
            if let text = arguments.value("--leaf-bits") {
                guard let bits = Int(text), (512...8192).contains(bits) else {
                    throw UsageError("--leaf-bits must be 512 to 8192; got '\(text)'")
                }
                options.leafBits = bits
            }
            options.includeLeafMarker = !arguments.flag("--no-leaf-oid")
            options.includeIntermediateMarker = !arguments.flag("--no-intermediate-oid")
            authority = try MintReceiptAuthority.generate(options)
        }
        let files = try authority.write(to: URL(fileURLWithPath: out, isDirectory: true))
        try console.output.write(files.map { $0.path + "\n" }.joined())
        return ExitCode.success
    }
}

/// `vouch mint receipt --ca DIR`.
struct MintReceiptCommand: Command {
    let path = ["mint", "receipt"]
    let summary = "Sign a legacy app receipt with a receipt-ca PKI"
    let usage = "vouch mint receipt --ca DIR [options]"
    let discussion = """
        Signs one receipt with the CA in DIR (made by 'vouch mint receipt-ca'; Xcode style,
        BER, when DIR holds xcode.der) and writes its DER to stdout or --out FILE.
        --count N writes N receipts instead, one base64 line each (a dump for 'vouch
        batch'), with seeds S to S+N-1 and in-app counts 1 to 3 unless --in-app.
        --tamper prints broken receipts instead, one base64 line each followed by a tab and
        the code a verifier must report; DEFECT is payload, signature, trailing, two-signers,
        content-type, md5, no-certificates, no-intermediate, extra-certificate,
        duplicate-attribute, not-attributes, or all.

        \(MintCommands.dateHelp)
        """
    let exitStatus = MintCommands.exitStatus

    var options: [CommandOption] {
        [
            .value("--ca", "DIR", help: "The receipt PKI to sign with"),
            .value(
                "--set", "FIELD=VALUE", repeatable: true,
                help: """
                    receiptType, appItemId, bundleId, applicationVersion,
                    originalApplicationVersion, receiptCreationDate, originalPurchaseDate,
                    receiptExpirationDate (a DATE), productId (every in-app purchase)
                    """),
            .value("--in-app", "N", help: "N in-app purchases (default 1), ids derived from --seed"),
            .value("--seed", "S", help: "A number (default 1)"),
            .value("--date", "DATE", help: "The creation date (default: now)"),
            .value("--digest", "ALG", help: "sha256 (default) or sha1, as Apple's older receipts"),
            .flag("--ber", help: "BER with indefinite lengths, as Xcode writes"),
            .value("--device-id", "UUID", help: "Compute the hash (attribute 5) for this device identifier"),
            .flag("--base64", help: "Print the receipt as one line of base64 (receipt-data)"),
            .value("--count", "N", help: "Print N receipts, one base64 line each"),
            .value("--tamper", "DEFECT", repeatable: true, help: "Print broken receipts with their expected codes"),
            .value("--out", short: "o", "FILE", help: "Write to FILE instead of stdout"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let directory = arguments.value("--ca") else { throw UsageError("mint receipt needs --ca DIR") }
        let authority = try MintCommands.authority(directory) { url throws(MintError) in
            try MintReceiptAuthority.load(from: url)
        }
        let signer = MintReceiptSigner(authority: authority)
        let created =
            try arguments.value("--date").map { try Spelling.date($0, option: "--date") }
            ?? Date(timeIntervalSince1970: console.now().timeIntervalSince1970.rounded(.down))
        var inAppCount: Int? = nil
        if let text = arguments.value("--in-app") {
            guard let count = Int(text), (0...10_000).contains(count) else {
                throw UsageError("--in-app must be 0 to 10000; got '\(text)'")
            }
            inAppCount = count
        }
        var count: Int? = nil
        if let text = arguments.value("--count") {
            guard let number = Int(text), (1...10_000_000).contains(number) else {
                throw UsageError("--count must be 1 to 10000000; got '\(text)'")
            }
            guard arguments.values("--tamper").isEmpty else {
                throw UsageError("--count and --tamper do not go together")
            }
            count = number
        }
        let seedText = arguments.value("--seed") ?? "1"
        guard let seed = Int(seedText) else { throw UsageError("--seed must be a whole number; got '\(seedText)'") }
        var deviceIdentifier: [UInt8]? = nil
        if let text = arguments.value("--device-id") {
            guard let uuid = UUID(uuidString: text) else {
                throw UsageError("--device-id must be a UUID; got '\(text)'")
            }
            deviceIdentifier = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        }
        let assignments = arguments.values("--set")
        func makeContent(seed: Int, inApp: Int) throws -> MintReceiptContent {
            var content = MintReceiptContent.sample(receiptCreationDate: created, inAppCount: inApp, seed: seed)
            if authority.style == .xcode {
                content.xcodeStyle = true
                content.receiptType = "Xcode"
            }
            for assignment in assignments { try Self.apply(assignment, to: &content) }
            if let deviceIdentifier { content.deviceIdentifier = deviceIdentifier }
            return content
        }
        let content = try makeContent(seed: seed, inApp: inAppCount ?? 1)
        let digest = try Spelling.choice(
            arguments.value("--digest") ?? "sha256", option: "--digest", among: MintReceiptSigner.Digest.allCases,
            name: \.rawValue)
        let ber = arguments.flag("--ber") || content.xcodeStyle

        var output: [UInt8]
        let tampers = arguments.values("--tamper")
        if !tampers.isEmpty {
            var defects: [MintReceiptDefect] = []
            for name in tampers {
                if name == "all" {
                    defects += MintReceiptDefect.allCases
                } else {
                    defects.append(
                        try Spelling.choice(
                            name, option: "--tamper", among: MintReceiptDefect.allCases, name: \.rawValue))
                }
            }
            output = []
            for defect in defects where !(authority.style == .xcode && defect == .noIntermediate) {
                let bytes = try signer.sign(content, digest: digest, defect: defect)
                output += Base64.encodeStandard(bytes) + Array("\t\(defect.expectedCode)\n".utf8)
            }
        } else if let count {
            output = []
            for index in 0..<count {
                let minted = try makeContent(seed: seed + index, inApp: inAppCount ?? 1 + index % 3)
                output += Base64.encodeStandard(try signer.sign(payload: minted.encoded(), digest: digest, ber: ber))
                output.append(0x0A)
            }
        } else {
            let bytes = try signer.sign(payload: content.encoded(), digest: digest, ber: ber)
            output = arguments.flag("--base64") ? Base64.encodeStandard(bytes) + [0x0A] : bytes
        }
        let destination = try console.destination(arguments.value("--out"))
        try destination.write(output)
        try destination.close()
        return ExitCode.success
    }

    static func apply(_ assignment: String, to content: inout MintReceiptContent) throws {
        guard let equals = assignment.firstIndex(of: "=") else {
            throw UsageError("--set needs FIELD=VALUE; got '\(assignment)'")
        }
        let field = String(assignment[..<equals])
        let value = String(assignment[assignment.index(after: equals)...])
        func date() throws -> Date { try Spelling.date(value, option: "--set \(field)") }
        switch field {
        case "receiptType": content.receiptType = value
        case "appItemId":
            guard let number = Int64(value) else { throw UsageError("appItemId needs an integer; got '\(value)'") }
            content.appItemId = number
        case "bundleId": content.bundleId = value
        case "applicationVersion": content.applicationVersion = value
        case "originalApplicationVersion": content.originalApplicationVersion = value
        case "receiptCreationDate": content.receiptCreationDate = try date()
        case "originalPurchaseDate": content.originalPurchaseDate = try date()
        case "receiptExpirationDate": content.receiptExpirationDate = try date()
        case "productId":
            for index in content.inApp.indices { content.inApp[index].productId = value }
        default:
            throw UsageError("unknown receipt field '\(field)' for --set")
        }
    }
}
