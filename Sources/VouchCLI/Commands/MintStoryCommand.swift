import Foundation
import Vouch
import VouchMint
import VouchStripe

/// `vouch mint story`: accounts on two channels, the App Store's and Stripe's, written as a
/// server receives them.
struct MintStoryCommand: Command {
    let path = ["mint", "story"]
    let summary = "Sign two-channel account stories: App Store data and Stripe deliveries"
    let usage = "vouch mint story --ca DIR --stripe-secret-file FILE [--count N] [--seed S] [--date DATE] --out DIR"
    let discussion = """
        Writes into the --out directory, for N accounts (default 5), what a server receives
        from both channels, each file in the order it arrives:
          app-store.jsonl   notifications as the App Store POSTs them ({"signedPayload":…})
                            and the transactions the app sends (one JWS per line)
          stripe.jsonl      Stripe webhook deliveries, stored as 'vouch stripe verify'
                            reads them, signed with every secret of FILE
          arrivals.jsonl    one line per delivery, in arrival order:
                            {"at":MS,"time":"…Z","file":"…","line":N,"account":"…"}
          accounts.jsonl    one line per account: its id, story, and ids on each channel
          tiers.json        the catalog for --tiers: plus and pro, App Store and Stripe
        Account i lives story i mod 5: trial (a web trial converted), payment-retried (a
        failed web payment retried), upgrade (web Plus, then Pro bought in the app),
        refunds (Pro refunded by the App Store, a web charge refunded) and no-token (an
        app that sends no appAccountToken). Every story is current at DATE. The App Store
        data is Sandbox and the Stripe events test mode. Feed the files to vouch
        entitlements, vouch refunds or vouch ledger add with --stripe-secret-file FILE and
        --tiers DIR/tiers.json. The same seed and DATE give the same payloads (signatures
        differ per run).

        \(MintCommands.dateHelp)
        """
    var exitStatus: String { MintCommands.exitStatus }

    var options: [CommandOption] {
        [
            .value("--ca", "DIR", help: "The authority written by 'vouch mint ca'"),
            StripeOptions.secretFile,
            .value("--count", "N", help: "Mint the stories of N accounts (default 5, at most 1000)"),
            .value("--seed", "S", help: "A number or any text (default 1)"),
            .value("--date", "DATE", help: "Stories are current at DATE (default: now)"),
            .value("--out", short: "o", "DIR", help: "Write the files into DIR (created if it does not exist)"),
        ]
    }

    /// The files written into the `--out` directory.
    enum File {
        static let appStore = "app-store.jsonl"
        static let stripe = "stripe.jsonl"
        static let arrivals = "arrivals.jsonl"
        static let accounts = "accounts.jsonl"
        static let tiers = "tiers.json"
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        guard let directory = arguments.value("--ca") else { throw UsageError("mint story needs --ca DIR") }
        guard let out = arguments.value("--out"), !out.isEmpty else {
            throw UsageError("mint story needs --out DIR (it writes several files)")
        }
        var count = 5
        if let text = arguments.value("--count") {
            // The files are written in arrival order across accounts, so every delivery is held
            // until the end: the count is bounded to keep that in memory (about 40 KB an account).
            guard let number = Int(text), (1...1_000).contains(number) else {
                throw UsageError("--count: \"\(text)\" is not a number from 1 to 1000")
            }
            count = number
        }
        let stripeSigner = try MintStripeSigner(secrets: try StripeOptions.secrets(arguments, command: "mint story"))
        let date = try arguments.value("--date").map { try Spelling.date($0, option: "--date") } ?? console.now()
        let generator = MintStoryGenerator(seed: arguments.value("--seed").map(MintGenerator.seed) ?? 1, date: date)
        let authority = try MintCommands.authority(directory) { url throws(MintError) in
            try MintAuthority.load(from: url)
        }
        try MintHistoryCommand.check(generator.signedDates, within: authority.signingValidity, directory: directory)
        let signer = try MintSigner(authority: authority)

        var arrivals: [(delivery: MintStory.Delivery, account: String)] = []
        var accounts = ""
        for index in 0..<count {
            let story = generator.story(index)
            for delivery in try story.deliveries(signer: signer, stripeSigner: stripeSigner) {
                arrivals.append((delivery, story.account))
            }
            accounts += JSONWriter.string(.object(Self.record(story, name: generator.story(of: index)))) + "\n"
        }
        // By arrival; accounts in order within an instant (the sort is stable).
        let ordered = arrivals.enumerated().sorted {
            ($0.element.delivery.instant, $0.offset) < ($1.element.delivery.instant, $1.offset)
        }.map(\.element)

        var appStore = ""
        var stripe = ""
        var appStoreLines = 0
        var stripeLines = 0
        var timeline = ""
        for (delivery, account) in ordered {
            let file: String
            let line: Int
            if case .stripe = delivery.content {
                stripe += delivery.received + "\n"
                stripeLines += 1
                (file, line) = (File.stripe, stripeLines)
            } else {
                appStore += delivery.received + "\n"
                appStoreLines += 1
                (file, line) = (File.appStore, appStoreLines)
            }
            let at = delivery.instant.milliseconds
            let record: JSONObject = [
                "at": .number(String(at)), "time": .string(CivilTime(milliseconds: at).iso8601(fraction: true)),
                "file": .string(file), "line": .number(String(line)), "account": .string(account),
            ]
            timeline += JSONWriter.string(.object(record)) + "\n"
        }

        let folder = URL(fileURLWithPath: out, isDirectory: true)
        var isDirectory: ObjCBool = false
        if !(FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory) && isDirectory.boolValue) {
            guard mkdir(out, 0o777) == 0 else { throw WriteError(destination: out, errno: errno) }
        }
        let files = [
            (File.appStore, appStore), (File.stripe, stripe), (File.arrivals, timeline), (File.accounts, accounts),
            (File.tiers, JSONWriter.string(.object(generator.tiers)) + "\n"),
        ]
        for (name, text) in files {
            let path = folder.appendingPathComponent(name).path
            let file = try console.destination(path)
            try file.write(Array(text.utf8))
            try file.close()
            try console.output.write(path + "\n")
        }
        return ExitCode.success
    }

    /// One line of `accounts.jsonl`: the account, its story, and its ids on each channel.
    static func record(_ story: MintStory, name: String) -> JSONObject {
        var originals: [String] = []
        for item in story.appStore.items {
            let payload: JSONObject? =
                switch item {
                case .transaction(let payload): payload
                case .notification(_, let transaction, _): transaction
                case .renewalInfo: nil
                }
            if let original = payload?["originalTransactionId"]?.stringValue, !originals.contains(original) {
                originals.append(original)
            }
        }
        var subscriptions: [String] = []
        for event in story.web.events {
            let object = event.json["data"]?.objectValue?["object"]?.objectValue
            if object?["object"]?.stringValue == "subscription", let id = object?["id"]?.stringValue,
                !subscriptions.contains(id)
            {
                subscriptions.append(id)
            }
        }
        return [
            "account": .string(story.account), "story": .string(name),
            "appAccountToken": story.appStore.appAccountToken.map { .string($0) } ?? .null,
            "originalTransactionIds": .array(originals.map { .string($0) }),
            "customer": subscriptions.isEmpty ? .null : .string(story.web.customer),
            "subscriptions": .array(subscriptions.map { .string($0) }),
        ]
    }
}
