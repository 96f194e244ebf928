import Foundation
import Testing
import VouchTestSupport

/// `vouch serve` as its clients meet it: the built binary on a loopback port, spoken to by
/// `curl` and by Python's `http.client` (Serve/serve_client.py). Every server a test starts is
/// stopped by its PID, and every wait is bounded.
@Suite(.serialized) struct ServeCommandTests {
    typealias S = MintStoryCommandTests
    static let token = "test-token-3f9a"

    /// A scratch directory with the story of 10 accounts (`story/`), a token file and a store
    /// path per test.
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-serve-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try! Data("\(token)\n".utf8).write(to: url.appendingPathComponent("tokens"))
        let story = try! VouchBinary.run([
            "mint", "story", "--ca", S.ca, "--stripe-secret-file", S.path("secrets"), "--count", "10", "--date",
            S.date, "--out", url.appendingPathComponent("story").path,
        ])
        precondition(story.status == 0, story.stderr)
        return url
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A running `vouch serve`.
    final class Server {
        let process: Process
        let url: String
        let log: String

        /// Starts `vouch serve --listen 127.0.0.1:PORT` with `arguments` and waits (10 s at
        /// most) for its first line.
        init(_ arguments: [String], port: Int = 0) throws {
            log = ServeCommandTests.path("serve-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process = Process()
            process.executableURL = VouchBinary.url
            process.arguments = ["serve", "--listen", "127.0.0.1:\(port)"] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
            var line: [UInt8] = []
            let descriptor = output.fileHandleForReading.fileDescriptor
            let deadline = Date().addingTimeInterval(10)
            while !line.contains(0x0A), Date() < deadline {
                var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard Glibc.poll(&poll, 1, 100) > 0 else { continue }
                var byte: UInt8 = 0
                guard Glibc.read(descriptor, &byte, 1) == 1 else { break }
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("listening on http://127.0.0.1:") else {
                process.terminate()
                process.waitUntilExit()
                throw TestFailure("vouch serve did not start: '\(text)' \(Self.contents(log))")
            }
            url = String(text.dropFirst("listening on ".count).dropLast())
        }

        var port: Int { Int(url.split(separator: ":").last!)! }

        /// Sends `signal` and waits for the exit (10 s at most, then SIGKILL); the exit status.
        @discardableResult
        func stop(_ signal: Int32 = SIGTERM) -> Int32 {
            if process.isRunning { kill(process.processIdentifier, signal) }
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit { stop(SIGKILL) }

        var logText: String { Self.contents(log) }

        static func contents(_ path: String) -> String {
            (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        }
    }

    /// What a client thread printed, read once it signalled.
    final class Output: @unchecked Sendable {
        var text = ""
    }

    /// `curl`'s status and body for one request (a status of 0 when no response came).
    static func curl(_ arguments: [String]) throws -> (status: Int, body: String) {
        let body = path("curl-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-s", "--max-time", "20", "-o", body, "-w", "%{http_code}"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(atPath: body) }
        return (Int(status) ?? 0, (try? String(contentsOfFile: body, encoding: .utf8)) ?? "")
    }

    /// The code of an error body.
    static func code(_ body: String) -> String? {
        ((try? VouchBinary.object(body))?["error"] as? [String: Any])?["code"] as? String
    }

    /// Runs Serve/serve_client.py with `arguments`; its standard output.
    static func client(_ arguments: [String]) throws -> String {
        try VouchBinary.shell(#"exec python3 Tests/VouchCLITests/Serve/serve_client.py "$@""#, arguments).output
    }

    /// The trust, Stripe and catalog options of the story's data.
    static var storyOptions: [String] {
        [
            "--root", S.root, "--stripe-secret-file", S.path("secrets"), "--tolerance", "none", "--tiers",
            path("story/tiers.json"), "--api-token-file", path("tokens"),
        ]
    }

    static var bearer: [String] { ["-H", "Authorization: Bearer \(token)"] }

    /// One line of the story's App Store file: its first notification and first bare transaction.
    static func storyTokens() throws -> (notification: String, transaction: String) {
        let lines = try String(contentsOfFile: path("story/app-store.jsonl"), encoding: .utf8).split(separator: "\n")
        let notification = try #require(lines.first { $0.hasPrefix("{") })
        let transaction = try #require(lines.first { !$0.hasPrefix("{") })
        return (String(notification), String(transaction))
    }

    @Test func everyEndpointAnswersItsStatusesWithTheLibrarysCodes() throws {
        let server = try Server(["--db", Self.path("statuses.sqlite"), "--max-body", "65536"] + Self.storyOptions)
        let url = server.url
        let (notification, transaction) = try Self.storyTokens()
        let account = UUID().uuidString.lowercased()

        var answer = try Self.curl([url + "/healthz"])
        #expect(answer.status == 200 && answer.body == #"{"status":"ok"}"#)
        answer = try Self.curl([url + "/nowhere"])
        #expect(answer.status == 404 && Self.code(answer.body) == "not_found")
        answer = try Self.curl(["-X", "DELETE", url + "/v1/apple/notifications"])
        #expect(answer.status == 405 && Self.code(answer.body) == "method_not_allowed")
        answer = try Self.curl([url + "/v1/accounts/\(account)/entitlements"])
        #expect(answer.status == 401 && Self.code(answer.body) == "unauthorized")
        answer = try Self.curl([
            "-H", "Authorization: Bearer \(Self.token)x", url + "/v1/accounts/\(account)/entitlements",
        ])
        #expect(answer.status == 401 && Self.code(answer.body) == "unauthorized")
        answer = try Self.curl(Self.bearer + [url + "/v1/accounts/\(account)/entitlements"])
        #expect(answer.status == 200 && answer.body == "[]")
        answer = try Self.curl(Self.bearer + [url + "/v1/accounts/\(account)/entitlements?at=yesterday"])
        #expect(answer.status == 400 && Self.code(answer.body) == "invalid_date")

        // Refused data: 400 with the verifier's code; nothing stored.
        answer = try Self.curl(["-d", #"{"signedPayload":"a.b.c"}"#, url + "/v1/apple/notifications"])
        #expect(answer.status == 400 && Self.code(answer.body) == "bad_base64url", "\(answer)")
        answer = try Self.curl(["-d", #"{"signedPayload":"# + "\"\(transaction)\"}", url + "/v1/apple/notifications"])
        #expect(answer.status == 400 && Self.code(answer.body) == "wrong_kind", "\(answer)")
        answer = try Self.curl(["-H", "Stripe-Signature: t=1,v1=00", "-d", "{}", url + "/v1/stripe/webhook"])
        #expect(answer.status == 400 && Self.code(answer.body)?.hasPrefix("stripe_") == true, "\(answer)")
        answer = try Self.curl(Self.bearer + ["-d", #"{"jws":1}"#, url + "/v1/accounts/\(account)/purchases"])
        #expect(answer.status == 400 && Self.code(answer.body) == "malformed_request")
        answer = try Self.curl(
            Self.bearer + ["-d", #"{"jws":"\#(transaction)"}"#, url + "/v1/accounts/not-a-uuid/purchases"])
        #expect(answer.status == 400 && Self.code(answer.body) == "invalid_account", "\(answer)")

        // Stored: 200; the same notification again is stored once, and still 200.
        for _ in 0..<2 {
            answer = try Self.curl(["-d", notification, url + "/v1/apple/notifications"])
            #expect(answer.status == 200 && answer.body == #"{"status":"stored"}"#, "\(answer)")
        }
        // The body is read as every input is: the notification's token alone is taken too; a body
        // of two tokens is not.
        let object = try JSONSerialization.jsonObject(with: Data(notification.utf8)) as? [String: Any]
        let signedPayload = try #require(object?["signedPayload"] as? String)
        answer = try Self.curl(["-d", signedPayload, url + "/v1/apple/notifications"])
        #expect(answer.status == 200 && answer.body == #"{"status":"stored"}"#, "\(answer)")
        answer = try Self.curl(["--data-binary", signedPayload + "\n" + signedPayload, url + "/v1/apple/notifications"])
        #expect(answer.status == 400 && Self.code(answer.body) == "malformed_token", "\(answer)")
        answer = try Self.curl(
            Self.bearer + ["-d", #"{"jws":"\#(transaction)"}"#, url + "/v1/accounts/\(account)/purchases"])
        #expect(answer.status == 200 && answer.body.hasPrefix("[{\"environment\":\"Sandbox\""), "\(answer)")
        #expect(answer.body.contains(#""appAccountToken":"\#(account)""#))
        // The purchase is that account's: another account gets 409.
        let other = UUID().uuidString.lowercased()
        answer = try Self.curl(
            Self.bearer + ["-d", #"{"jws":"\#(transaction)"}"#, url + "/v1/accounts/\(other)/purchases"])
        #expect(answer.status == 409 && Self.code(answer.body) == "account_conflict", "\(answer)")
        answer = try Self.curl(Self.bearer + [url + "/v1/accounts/\(account)/revocations"])
        #expect(answer.status == 200 && answer.body.hasPrefix("["))

        // A body declared over --max-body is refused before it is read.
        let large = Self.path("large.json")
        try Data(repeating: UInt8(ascii: "a"), count: 200_000).write(to: URL(fileURLWithPath: large))
        answer = try Self.curl(["--data-binary", "@" + large, url + "/v1/apple/notifications"])
        #expect(answer.status == 413 && Self.code(answer.body) == "body_too_large")
        // One sent in chunks of unknown length is cut off as it passes the limit.
        answer = try Self.curl([
            "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + large, url + "/v1/apple/notifications",
        ])
        #expect(answer.status == 0)

        let metrics = try Self.curl([url + "/metrics"])
        #expect(metrics.status == 200)
        #expect(
            metrics.body.contains(#"vouch_serve_requests_total{endpoint="/v1/apple/notifications",status="200"} 3"#))
        #expect(metrics.body.contains(#"vouch_serve_refusals_total{code="account_conflict"} 1"#))
        #expect(metrics.body.contains(#"vouch_serve_refusals_total{code="body_too_large"} 2"#))
        #expect(metrics.body.contains("vouch_serve_duplicate_notifications_total 2"))
        #expect(metrics.body.contains("vouch_serve_build_info{version="))

        #expect(server.stop(SIGTERM) == 0)
        let log = server.logText
        #expect(log.contains(#""path":"/v1/accounts/not-a-uuid/purchases","status":400,"code":"invalid_account""#))
        #expect(!log.contains(Self.token), "a token was logged")
        #expect(!log.contains(transaction), "a body was logged")
        #expect(log.hasSuffix("vouch serve: stopped\n"))
    }

    @Test func aStoryPostedAsTheAppStoreAndStripePostItAnswersTheTiersOfTheLedger() throws {
        let database = Self.path("story.sqlite")
        let server = try Server(["--db", database] + Self.storyOptions)
        let summary = try VouchBinary.object(
            try Self.client(["story", server.url, Self.path("story"), Self.token, "--clients", "4"]))
        #expect(summary["unanswered"] as? Int == 0)
        #expect((summary["answered"] as? [String: Int]) == ["200": summary["deliveries"] as! Int], "\(summary)")

        let expected = [
            "trial": "plus", "payment-retried": "pro", "upgrade": "pro", "refunds": "plus", "no-token": "plus",
        ]
        let accounts = try S.records(try String(contentsOfFile: Self.path("story/accounts.jsonl"), encoding: .utf8))
        #expect(accounts.count == 10)
        for account in accounts {
            let id = try #require(account["account"] as? String)
            let story = try #require(account["story"] as? String)
            let answer = try Self.client([
                "get", server.url, "/v1/accounts/\(id)/entitlements?at=\(S.date)", Self.token,
            ])
            let lines = answer.split(separator: "\n", maxSplits: 1).map(String.init)
            #expect(lines.first == "200")
            // The records of `vouch entitlements --db … --json --account ID --at DATE`, as one array.
            let cli = try VouchBinary.run([
                "entitlements", "--db", database, "--json", "--account", id, "--at", S.date, "--tiers",
                Self.path("story/tiers.json"),
            ])
            #expect(cli.status == 0, "\(cli.stderr)")
            #expect(lines.last == "[" + cli.stdout.split(separator: "\n").joined(separator: ",") + "]", "\(story)")
            let records = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [[String: Any]]
            let tier = records?.first?["tier"] as? [String: Any]
            #expect(tier?["name"] as? String == expected[story], "\(story): \(answer)")
        }
        for account in accounts where account["story"] as? String == "refunds" {
            let id = try #require(account["account"] as? String)
            let answer = try Self.client(["get", server.url, "/v1/accounts/\(id)/revocations", Self.token])
            let body = String(answer.split(separator: "\n", maxSplits: 1).last ?? "")
            let records = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]]
            #expect(Set(records?.compactMap { $0["source"] as? String } ?? []) == ["app_store", "stripe"], "\(body)")
        }
        #expect(server.stop() == 0)
    }

    @Test func aServerKilledUnderLoadAndStartedAgainHoldsWhatLedgerAddStores() throws {
        // 200 accounts' webhooks (notifications and Stripe deliveries), each sent twice, by 8
        // clients that retry until answered 200.
        let story = Self.path("load-story")
        let minted = try VouchBinary.run([
            "mint", "story", "--ca", S.ca, "--stripe-secret-file", S.path("secrets"), "--count", "200", "--seed", "9",
            "--date", S.date, "--out", story,
        ])
        #expect(minted.status == 0, "\(minted.stderr)")
        // The app's own transactions are left out: posted as purchases they are bound to an
        // account, which `vouch ledger add` of the file does not do.
        let appStore = try String(contentsOfFile: story + "/app-store.jsonl", encoding: .utf8).split(separator: "\n")
        try (appStore.filter { $0.hasPrefix("{") }.joined(separator: "\n") + "\n").write(
            toFile: story + "/notifications.jsonl", atomically: true, encoding: .utf8)

        let database = Self.path("load.sqlite")
        var server = try Server(["--db", database, "--threads", "4"] + Self.storyOptions)
        let port = server.port
        let url = server.url
        let output = Output()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            output.text =
                (try? Self.client([
                    "story", url, story, Self.token, "--clients", "8", "--seconds", "120", "--repeat", "2",
                    "--webhooks-only", "1",
                ])) ?? ""
            done.signal()
        }
        // Killed once some deliveries are stored, while the clients keep sending; questions
        // are answered meanwhile.
        var stored = 0
        for _ in 0..<500 where stored < 300 {
            let query = try Self.curl(Self.bearer + [url + "/v1/accounts/x/entitlements"])
            #expect(query.status == 200 && query.body == "[]")
            stored = server.logText.components(separatedBy: #""status":200"#).count - 1
        }
        #expect(server.stop(SIGKILL) == SIGKILL)
        // Queries and deliveries go on against the server started again on the same port.
        server = try Server(["--db", database, "--threads", "4"] + Self.storyOptions, port: port)
        let query = try Self.curl(Self.bearer + [server.url + "/v1/accounts/x/entitlements"])
        #expect(query.status == 200)
        #expect(done.wait(timeout: .now() + 180) == .success)
        let summary = try VouchBinary.object(output.text)
        #expect(summary["unanswered"] as? Int == 0, "\(summary)")
        // The clients met the killed server, and tried again.
        #expect(summary["retries"] as? Int ?? 0 > 0, "\(summary)")
        #expect(server.stop() == 0)

        let reference = Self.path("load-reference.sqlite")
        let added = try VouchBinary.run(
            [
                "ledger", "add", "--db", reference, "--root", S.root, "--stripe-secret-file", S.path("secrets"),
                story + "/notifications.jsonl", story + "/stripe.jsonl",
            ])
        #expect(added.status == 0, "\(added.stderr)")
        let served = try VouchBinary.run(["ledger", "export", "--db", database])
        let expected = try VouchBinary.run(["ledger", "export", "--db", reference])
        #expect(served.status == 0 && expected.status == 0)
        #expect(served.stdout == expected.stdout)
        #expect(!served.stdout.isEmpty)
    }

    @Test func aStalledClientIsCutOffAndHoldsNoOneElseUp() throws {
        let server = try Server(["--db", Self.path("slow.sqlite"), "--timeout", "2", "--threads", "2"])
        let stalled = Output()
        let done = DispatchSemaphore(value: 0)
        let url = server.url
        Thread.detachNewThread {
            stalled.text = (try? Self.client(["slow", url, "30"])) ?? ""
            done.signal()
        }
        usleep(200_000)
        let started = Date()
        for _ in 0..<20 { #expect(try Self.curl([server.url + "/healthz"]).status == 200) }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(done.wait(timeout: .now() + 30) == .success)
        let seconds = Double(stalled.text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99
        #expect(seconds >= 1 && seconds < 10, "\(stalled.text)")
        #expect(server.stop() == 0)
    }

    @Test func aStoreThatCannotBeWrittenIsA500AndTheRetryIsStored() throws {
        let database = Self.path("busy.sqlite")
        let server = try Server(["--db", database, "--busy-timeout", "0"] + Self.storyOptions)
        let (notification, _) = try Self.storyTokens()
        // Another process holds the write lock: the commit cannot run, the sender is told 500.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            "import sqlite3,sys,time\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\nc.execute('BEGIN IMMEDIATE')\nprint('locked',flush=True)\ntime.sleep(float(sys.argv[2]))",
            database, "3",
        ]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        _ = output.fileHandleForReading.availableData
        var answer = try Self.curl(["-d", notification, server.url + "/v1/apple/notifications"])
        #expect(answer.status == 500, "\(answer)")
        #expect(["cannot_write", "store_failure"].contains(Self.code(answer.body) ?? ""), "\(answer)")
        holder.waitUntilExit()
        answer = try Self.curl(["-d", notification, server.url + "/v1/apple/notifications"])
        #expect(answer.status == 200, "\(answer)")
        #expect(server.stop() == 0)
    }

    @Test func withoutTokensOrSecretsTheAccountAndStripeEndpointsAreClosed() throws {
        let server = try Server(["--db", Self.path("closed.sqlite")])
        var answer = try Self.curl(Self.bearer + [server.url + "/v1/accounts/a/entitlements"])
        #expect(answer.status == 401 && answer.body.contains("--api-token-file"))
        answer = try Self.curl(["-H", "Stripe-Signature: t=1,v1=00", "-d", "{}", server.url + "/v1/stripe/webhook"])
        #expect(answer.status == 404 && answer.body.contains("--stripe-secret-file"))
        #expect(server.stop(SIGINT) == 0)
    }

    /// The request threads (`--threads`) run five nice steps below the process, and the thread
    /// that commits keeps the process's priority (Linux, where each thread has its own).
    @Test func requestThreadsRunBelowTheThreadThatCommits() throws {
        let server = try Server(["--db", Self.path("priority.sqlite"), "--threads", "3"])
        // /proc/PID/task/TID/stat: the 19th field is the thread's nice value, after a command
        // name in parentheses that may hold spaces.
        func nice(_ task: String) throws -> Int {
            let stat = try String(
                contentsOfFile: "/proc/\(server.process.processIdentifier)/task/\(task)/stat", encoding: .utf8)
            let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
            return try #require(Int(fields[16]))
        }
        let tasks = try FileManager.default.contentsOfDirectory(
            atPath: "/proc/\(server.process.processIdentifier)/task")
        let process = try nice(String(server.process.processIdentifier))
        let values = try tasks.map(nice)
        #expect(values.filter { $0 == min(process + 5, 19) }.count == 3, "\(values)")
        #expect(values.filter { $0 == process }.count >= 2, "the main thread and the committing thread: \(values)")
        #expect(server.stop() == 0)
    }

    @Test func anAddressInUseIsExit69AndBadOptionsAreUsageErrors() throws {
        let server = try Server(["--db", Self.path("first.sqlite")])
        let second = try VouchBinary.run([
            "serve", "--listen", "127.0.0.1:\(server.port)", "--db", Self.path("second.sqlite"),
        ])
        #expect(second.status == 69 && second.stderr.contains("cannot serve"), "\(second.stderr)")
        #expect(server.stop() == 0)
        for arguments in [
            ["--listen", "nowhere"], ["--threads", "0"], ["--log-format", "xml"], ["--tolerance", "5"],
        ] {
            let result = try VouchBinary.run(["serve"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        let empty = Self.path("empty-tokens")
        try Data("\n  \n".utf8).write(to: URL(fileURLWithPath: empty))
        let noToken = try VouchBinary.run(["serve", "--api-token-file", empty, "--db", Self.path("x.sqlite")])
        #expect(noToken.status == 65 && noToken.stderr.contains("holds no token"))
        // A secret or token with a blank inside is a file written wrong, never a secret.
        let blank = Self.path("blank-secret")
        try Data("whsec_a b\n".utf8).write(to: URL(fileURLWithPath: blank))
        let secret = try VouchBinary.run(["stripe", "verify", "--stripe-secret-file", blank, "-"], input: [])
        #expect(secret.status == 65 && secret.stderr.contains("--stripe-secret-file \(blank): secret 1 holds a blank"))
        let token = try VouchBinary.run(["serve", "--api-token-file", blank, "--db", Self.path("x.sqlite")])
        #expect(token.status == 65 && token.stderr.contains("token 1 holds a blank"), "\(token.stderr)")
    }

    @Test(.postgreSQLServer) func twoServersOnOnePostgreSQLStoreAnswerAsOneSQLiteStore() throws {
        let scratch = try ScratchDatabase("vouch_serve_")
        let database = scratch.url

        // A fleet: two servers on one store, each sent every delivery of the story.
        let first = try Server(["--db", database, "--threads", "2"] + Self.storyOptions)
        let second = try Server(["--db", database, "--threads", "2"] + Self.storyOptions)
        let outputs = [Output(), Output()]
        let done = DispatchSemaphore(value: 0)
        for (server, output) in zip([first, second], outputs) {
            let url = server.url
            Thread.detachNewThread {
                output.text =
                    (try? Self.client(["story", url, Self.path("story"), Self.token, "--clients", "4"])) ?? ""
                done.signal()
            }
        }
        for _ in outputs { #expect(done.wait(timeout: .now() + 120) == .success) }
        for output in outputs {
            let summary = try VouchBinary.object(output.text)
            #expect((summary["answered"] as? [String: Int])?["200"] == summary["deliveries"] as? Int, "\(summary)")
        }
        let sqlite = Self.path("fleet.sqlite")
        let one = try Server(["--db", sqlite] + Self.storyOptions)
        _ = try Self.client(["story", one.url, Self.path("story"), Self.token])
        let accounts = try S.records(try String(contentsOfFile: Self.path("story/accounts.jsonl"), encoding: .utf8))
        for account in accounts {
            let id = try #require(account["account"] as? String)
            let path = "/v1/accounts/\(id)/entitlements?at=\(S.date)"
            let fleet = try Self.client(["get", second.url, path, Self.token])
            #expect(fleet.hasPrefix("200\n[{"))
            #expect(fleet == (try Self.client(["get", first.url, path, Self.token])))
            #expect(fleet == (try Self.client(["get", one.url, path, Self.token])), "\(account)")
        }
        #expect(first.stop() == 0 && second.stop() == 0 && one.stop() == 0)
    }
}
