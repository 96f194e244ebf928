import Foundation
import Vouch
import VouchBatch
import VouchEntitlements
import VouchServer
import VouchStripe

/// `vouch serve`: the ledger over HTTP, for the App Store's and Stripe's webhooks and a
/// backend's questions.
struct ServeCommand: Command {
    let path = ["serve"]
    let summary = "Serve the ledger over HTTP: webhooks in, entitlements out"
    let usage = "vouch serve [--listen HOST:PORT] [--db FILE|URI] [--api-token-file FILE] [--check-config] [options]"
    let discussion = """
        Runs until SIGTERM or SIGINT, answering on HOST:PORT (loopback by default; TLS is a
        reverse proxy's job). The first line on standard output is 'listening on
        http://HOST:PORT', with the port actually bound. Endpoints (JSON bodies):
          POST /v1/apple/notifications        App Store Server Notifications V2
          POST /v1/stripe/webhook             Stripe deliveries (with --stripe-secret-file)
          POST /v1/accounts/ID/purchases      {"jws":…} or {"receipt":…}, bound to ID
          GET  /v1/accounts/ID/entitlements   ?at=DATE (default now)
          GET  /v1/accounts/ID/revocations
          GET  /healthz, GET /metrics (Prometheus text)
        Everything posted is verified as 'vouch batch' verifies a line and stored in the
        --db store ('vouch ledger add' reads the same file or server); 200 is sent only once
        it is committed, and a delivery sent again is stored once. The account endpoints need
        'Authorization: Bearer TOKEN' with a token of --api-token-file; without the file they
        answer 401. An error is {"error":{"code":…,"reason":…}}: 400 data refused, 401 no
        valid token, 404 no such endpoint, 405 wrong method, 409 account_conflict, 413 body
        over --max-body, 500 the store cannot run (a sender retries), 503 /healthz when the
        store does not answer. One log line per request on stderr (method, path, status,
        code, milliseconds; never a token or a body). GET …/entitlements answers the records
        of 'vouch entitlements --db … --json --account ID --at DATE', as one JSON array.
        See docs/serve.md.
        """
    let exitStatus = """
        0 stopped by SIGTERM or SIGINT (or checked, with --check-config), 64 usage error, 65 a --tiers
        file that is not a catalog or a --db file that is not a Vouch store, 66 a file or the
        store cannot be read or opened, 69 HOST:PORT cannot be listened on, 74 the store
        cannot be written.
        """
    let examples = [
        "vouch serve --db ledger.sqlite --api-token-file tokens.txt --bundle-id com.example.app",
        "vouch serve --listen 127.0.0.1:0 --db ledger.sqlite --stripe-secret-file secrets.txt --tiers tiers.json",
    ]

    var options: [CommandOption] {
        [
            .value("--listen", "HOST:PORT", help: "Listen here (default 127.0.0.1:8080; port 0 takes a\nfree one)"),
            .value(
                "--db", "FILE|URI",
                help: "The ledger: an SQLite file (default vouch.sqlite) or a\npostgresql:// URI"),
            LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
            .value("--tiers", "FILE", help: "A JSON catalog; each account's record then gets its tier"),
            .value(
                "--api-token-file", "FILE",
                help: "Bearer tokens of the account endpoints, one per line"),
            .value("--max-body", "BYTES", help: "The largest body read (default 1048576)"),
            .value("--threads", "N", help: "Threads answering requests (default 8)"),
            .value("--max-connections", "N", help: "Connections held at once (default 1000)"),
            .value("--timeout", "SECONDS", help: "Close a connection idle or stalled this long (default 30)"),
            .value("--log-format", "FORMAT", help: "json (default) or text"),
            .flag(
                "--check-config",
                help: "Read every option and file, open the store, bind the\naddress, then exit 0 without serving"),
            TrustOptions.ledger.validationTime, TrustOptions.ledger.root, TrustOptions.receiptRoot,
            TrustOptions.ledger.bundleId, TrustOptions.ledger.appAppleId!, TrustOptions.ledger.environment,
            TrustOptions.ledger.xcodeCertificate, TrustOptions.ledger.noStrictX509,
            StripeOptions.secretFile,
            .value(
                "--tolerance", "SECONDS|none",
                help: "Refuse Stripe deliveries signed more than SECONDS ago\n(default 300)"),
            StripeOptions.accountKey,
        ]
    }

    /// The default of `--threads`: requests block on verification and the store's commits,
    /// so there are more threads than cores.
    static let defaultThreads = 8

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        var server = HTTPServer.Configuration()
        (server.host, server.port) = try Self.listen(arguments.value("--listen") ?? "127.0.0.1:8080")
        server.threads = try Self.count(arguments, "--threads", default: Self.defaultThreads, range: 1...1024)
        server.maximumConnections = try Self.count(arguments, "--max-connections", default: 1000, range: 1...100_000)
        server.timeoutSeconds = try Self.count(arguments, "--timeout", default: 30, range: 1...86_400)
        server.maximumBody = try Self.count(arguments, "--max-body", default: 1 << 20, range: 1...(64 << 20))

        let trust = try TrustOptions(arguments, TrustOptions.ledger, console: console)
        var verifier = BatchVerifier(verifier: try trust.makeVerifier(), jobs: 1)
        verifier.receiptVerifier = try trust.makeReceiptVerifier(arguments)
        var configuration = LedgerService.Configuration(verifier: verifier)
        configuration.version = CommandRegistry.vouch.version
        configuration.now = console.now
        if let format = arguments.value("--log-format") {
            configuration.logFormat = try Spelling.choice(
                format, option: "--log-format", among: LedgerService.LogFormat.allCases, name: \.rawValue)
        }
        if arguments.value("--stripe-secret-file") != nil {
            var stripe = StripeWebhookVerifier.Configuration(
                secrets: try StripeOptions.secrets(arguments, command: "vouch serve"))
            if let text = arguments.value("--tolerance") { stripe.tolerance = try StripeOptions.tolerance(text) }
            configuration.stripeVerifier = try TrustOptions.make { () throws(ConfigurationError) in
                try StripeWebhookVerifier(configuration: stripe)
            }
        } else if arguments.value("--tolerance") != nil {
            throw UsageError("--tolerance applies to Stripe deliveries: give --stripe-secret-file too")
        }
        configuration.stripeAccountKey =
            arguments.value("--stripe-account-key") ?? EntitlementLedger.defaultStripeAccountKey
        guard !configuration.stripeAccountKey.isEmpty else {
            throw UsageError("--stripe-account-key must not be empty")
        }
        configuration.catalog = try LedgerInput.catalog(arguments.value("--tiers"))
        configuration.includeTier = arguments.value("--tiers") != nil
        configuration.apiTokens = try Self.tokens(arguments.value("--api-token-file"))
        configuration.maximumBody = server.maximumBody

        // The signals that stop the server are taken by sigwait below, never by a handler:
        // blocked before any thread starts, so every thread inherits the mask.
        let checkOnly = arguments.flag("--check-config")
        var stopping = sigset_t()
        sigemptyset(&stopping)
        sigaddset(&stopping, SIGTERM)
        sigaddset(&stopping, SIGINT)
        if !checkOnly { pthread_sigmask(SIG_BLOCK, &stopping, nil) }

        let database = arguments.value("--db") ?? "vouch.sqlite"
        let options = try LedgerCommands.options(arguments)
        let store = try LedgerDatabase.open(
            database, access: .readWrite, catalog: configuration.catalog, options: options)
        var readers: [any LedgerStoring] = []
        do {
            for _ in 0..<server.threads {
                readers.append(
                    try LedgerDatabase.open(
                        database, access: .readOnly, catalog: configuration.catalog, options: options))
            }
        } catch {
            for reader in readers { reader.close() }
            store.close()
            throw error
        }
        let service = LedgerService(configuration, store: store, readers: readers)
        let running: HTTPServer
        do {
            running = try HTTPServer(server, handler: service)
        } catch {
            service.close()
            throw ListenError(message: error.description)
        }
        if checkOnly {
            running.stop(within: 0)
            service.close()
            try console.output.write("checked: would listen on http://\(running.authority)\n")
            return ExitCode.success
        }
        try console.output.write("listening on http://\(running.authority)\n")

        var signal: Int32 = 0
        sigwait(&stopping, &signal)
        console.diagnose(
            "vouch serve: \(signal == SIGINT ? "SIGINT" : "SIGTERM"): finishing \(running.requestsInFlight) request(s) in flight, then stopping"
        )
        running.stop(within: Double(server.timeoutSeconds))
        service.close()
        console.diagnose("vouch serve: stopped")
        return ExitCode.success
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback).
    static func listen(_ text: String) throws(UsageError) -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw UsageError(
                "--listen takes HOST:PORT (127.0.0.1:8080, [::1]:8080, port 0 for a free one); got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    /// A whole number option within `range`.
    static func count(_ arguments: ParsedArguments, _ option: String, default value: Int, range: ClosedRange<Int>)
        throws(UsageError) -> Int
    {
        guard let text = arguments.value(option) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound); got '\(text)'")
        }
        return number
    }

    /// The bearer tokens of `--api-token-file`, none without it.
    static func tokens(_ path: String?) throws -> [String] {
        try path.map { try StripeOptions.lines(of: $0, option: "--api-token-file", holding: "token") } ?? []
    }
}

/// The address of `--listen` cannot be listened on (in use, not this machine's, a privileged
/// port): exit 69.
struct ListenError: Error, ReportableError {
    let message: String
    var report: ErrorReport { .exit(ExitCode.unavailable, "cannot serve: \(message)") }
}
