import Foundation
import VouchMint

/// `vouch mint iap-key --out DIR`: an In-App Purchase key for tests, as App Store Connect
/// issues one.
struct MintKeyCommand: Command {
    let path = ["mint", "iap-key"]
    let summary = "Make an In-App Purchase key (.p8) for tests, as App Store Connect issues one"
    let usage = "vouch mint iap-key --out DIR [--key-id ID] [--force]"
    let discussion = """
        Writes to DIR SubscriptionKey_KEYID.p8, a new EC P-256 private key as unencrypted
        PKCS #8 PEM with mode 0600 (the file App Store Connect lets you download once), and
        SubscriptionKey_KEYID.public.pem, its public key. Prints the two files. 'vouch sign'
        signs with the .p8; 'vouch verify --signing-key' checks with either file. Nothing
        Apple runs knows the key: it is for tests only. Files that exist already are kept
        unless --force is given.
        """
    let exitStatus = MintCommands.exitStatus
    let options: [CommandOption] = [
        .value("--out", short: "o", "DIR", help: "Write the files into DIR (created if needed)"),
        .value(
            "--key-id", "ID",
            help: "The key id, letters and digits (default: ten random\nupper-case letters and digits)"),
        .flag("--force", help: "Replace files that exist"),
    ]

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let out = arguments.value("--out"), out != "-" else {
            throw UsageError("mint iap-key writes files: it needs --out DIR")
        }
        if let keyId = arguments.value("--key-id"),
            keyId.isEmpty || !keyId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        {
            throw UsageError("--key-id must be letters and digits, such as 2X9R4HXF34; got '\(keyId)'")
        }
        let key = try MintInAppPurchaseKey.generate(keyId: arguments.value("--key-id"))
        let directory = URL(fileURLWithPath: out, isDirectory: true)
        if !arguments.flag("--force"),
            let existing = key.files(in: directory).first(where: { FileManager.default.fileExists(atPath: $0.path) })
        {
            throw UsageError("\(existing.path) exists; use --force to replace it")
        }
        let files = try key.write(to: directory)
        try console.output.write(files.map { $0.path + "\n" }.joined())
        return ExitCode.success
    }
}
