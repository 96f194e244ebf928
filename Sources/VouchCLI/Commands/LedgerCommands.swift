import Foundation
import Vouch
import VouchBatch
import VouchEntitlements

/// `vouch ledger add|stats|check|export`: the entitlement ledger kept in an SQLite file.
enum LedgerCommands {
    static let group = CommandGroup(
        path: ["ledger"], summary: "Keep verified App Store and Stripe data in a ledger file (SQLite)",
        usage: "vouch ledger add|stats|check|export --db FILE [options]",
        discussion: """
            A ledger file keeps what vouch entitlements and vouch refunds need, so that they
            answer without reading and verifying every token again: each transaction's merged
            statements, each chain's renewal info, and the notifications seen. Only verified
            data goes in (vouch ledger add); vouch entitlements --db and vouch refunds --db
            answer from it, alone or with more inputs. One writer and any number of readers
            may use a file at once. --db postgresql://… (or postgres://…, with libpq's
            parameters and PG* environment variables) names a PostgreSQL database instead,
            which any number of writers on any number of hosts may share.
            """,
        noun: "command",
        footer:
            "Run 'vouch ledger add --help', 'vouch ledger stats --help', 'vouch ledger check --help' or "
            + "'vouch ledger export --help'.",
        examples: [
            "vouch ledger add --db ledger.sqlite notifications.jsonl",
            "vouch entitlements --db ledger.sqlite --at now",
            "vouch ledger stats --db ledger.sqlite",
        ])

    static let all: [any Command] = [
        LedgerAddCommand(), LedgerStatsCommand(), LedgerCheckCommand(), LedgerExportCommand(),
    ]

    /// `--db FILE`, required by every ledger command.
    static let database = CommandOption.value(
        "--db", "FILE", help: "The ledger file, or a PostgreSQL server (postgresql://…)")

    /// `--busy-timeout SECONDS`, on every command that opens a ledger file.
    static let busyTimeout = CommandOption.value(
        "--busy-timeout", "SECONDS",
        help: "Wait up to SECONDS for the write lock another process\nholds (default 60)")

    /// `--memory-map MIB`, beside `--busy-timeout`: how much of a ledger file is read through a
    /// memory map (``LedgerStore/Options/memoryMapBytes``).
    static let memoryMap = CommandOption.value(
        "--memory-map", "MIB",
        help: "Read up to MIB of a ledger file through a memory map\n(default 0: none; a file on a local disk only)")

    /// The store's options the command line sets: `--busy-timeout` (60 seconds, longer than any
    /// batch of `vouch ledger add` holds the lock) and `--memory-map`.
    static func options(_ arguments: ParsedArguments) throws(UsageError) -> LedgerStore.Options {
        var options = LedgerStore.Options(busyTimeout: .seconds(60))
        if let text = arguments.value(busyTimeout.name) {
            guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
                throw UsageError("--busy-timeout takes a number of seconds from 0 to 86400, not '\(text)'")
            }
            options.busyTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let text = arguments.value(memoryMap.name) {
            guard let mebibytes = Int(text), mebibytes >= 0, mebibytes <= 1_048_576 else {
                throw UsageError("--memory-map takes a whole number of MiB from 0 to 1048576, not '\(text)'")
            }
            options.memoryMapBytes = mebibytes << 20
        }
        return options
    }

    static func path(_ arguments: ParsedArguments, command: String) throws(UsageError) -> String {
        guard let path = arguments.value(database.name) else { throw UsageError("\(command) needs --db FILE") }
        guard path != "-" else { throw UsageError("--db names a file, not standard input") }
        return path
    }
}

/// `vouch ledger add --db FILE [inputs…]`.
struct LedgerAddCommand: Command {
    let path = ["ledger", "add"]
    let summary = "Verify inputs and store what verified, in batches of one transaction each"
    let usage = "vouch ledger add --db FILE [options] [FILE ...|-]"
    let discussion = """
        Verifies every token and receipt of the inputs as 'vouch entitlements' does (files in
        order, or standard input for '-' or no FILE; gzip; tokens, receipts and JSON bodies per
        line; App Store Server API responses) and stores what verified in the ledger file,
        made when it does not exist. What verified is stored in batches, each one transaction:
        every 10,000 verified tokens (receipts, deliveries) or, past 2,000, about a second, and the rest of
        an input at its end, so memory stays flat and the write lock is held about a second at
        most. A run that is stopped keeps the batches stored before, and running it again
        completes it (what is stored already changes nothing). A writer waits for another
        one's batch up to --busy-timeout. A rejected token is reported on
        stderr and never stored. Notifications are remembered by notificationUUID; one read
        again counts as a duplicate (the same signedDate) or a retry (signed anew). The
        store's statistics count each input once: an input stored before (a rerun, a repeat)
        counts nothing again.

        For each input a line goes to stderr: its tokens (receipts, deliveries), verified and
        rejected, and what it changed in the file; a summary at the end; while reading, a
        progress line when stderr is a terminal and CI is not set (--progress, --no-progress).
        """
    let positionals = Positionals.any
    let exitStatus = """
        0 every token verified, 1 some token rejected (what verified is stored),
        64 usage error, 65 the file is not a Vouch store or is of a newer schema or damaged,
        66 an input cannot be read or is truncated (the batches before the failure are stored),
        or the server cannot be reached,
        74 the file cannot be written, or the connection to the server was lost (what was not
        committed is not kept; running the add again completes it).
        """
    let examples = [
        "vouch ledger add --db ledger.sqlite notifications-*.jsonl.gz",
        "vouch ledger add --db ledger.sqlite --stripe-secret-file secrets.txt stripe.jsonl",
    ]

    var options: [CommandOption] {
        [LedgerCommands.database, LedgerCommands.busyTimeout, LedgerCommands.memoryMap] + LedgerInput.options
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let file = try LedgerCommands.path(arguments, command: "ledger add")
        let input = try LedgerInput(command: "ledger add", arguments: arguments, console: console)
        let store = try LedgerDatabase.open(file, access: .readWrite, options: LedgerCommands.options(arguments))
        // Closed here, not whenever the last reference goes: closing checkpoints the log into
        // the file before the command returns.
        defer { store.close() }
        var total = LedgerStore.Change()
        var change = LedgerStore.Change()
        let reading = try input.read(
            console: console,
            store: { part in change = change + (try store.add(contentsOf: part)) },
            finished: { name, summary in
                defer {
                    total = total + change
                    change = LedgerStore.Change()
                }
                return "vouch ledger add: \(name): \(Counted.results(summary)): \(summary.verified) verified, "
                    + "\(summary.rejected) rejected; stored \(Self.describe(change))"
            })
        let statistics = try store.statistics()
        let summary = reading.summary
        let seconds = String(format: "%.2f s", reading.seconds)
        var text = "vouch ledger add: " + Counted.read(inputs: reading.inputs, summary)
        text += " in \(seconds); stored \(Self.describe(total))"
        text += "\n  \(store.database): " + Counted.phrase(statistics.accounts, "account") + ", "
        text += LedgerInput.Totals(statistics).description
        if !summary.errors.isEmpty {
            let codes = summary.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            text += "\n  rejected by code: " + codes.joined(separator: ", ")
        }
        console.diagnose(text)
        try LedgerInput.writeSummary(
            .object(
                JSONObject([
                    .init("input", input.inputJSON(reading, totals: .init(statistics))),
                    .init("stored", Self.json(total)),
                    .init("store", LedgerStatsCommand.json(statistics, path: store.database)),
                ])), to: arguments.value("--summary-json"), console: console)
        return input.status(reading)
    }

    static func describe(_ change: LedgerStore.Change) -> String {
        "\(change.newTransactions) new and \(change.changedTransactions) changed transactions, "
            + Counted.phrase(change.renewalInfos, "renewal info") + "; notifications \(change.newNotifications) new, "
            + Counted.phrase(change.duplicateNotifications, "duplicate") + ", "
            + Counted.phrase(change.retriedNotifications, "retry", "retries")
            + (change.otherRecords > 0 ? "; " + Counted.phrase(change.otherRecords, "Stripe record") : "")
    }

    static func json(_ change: LedgerStore.Change) -> JSONValue {
        .object(
            JSONObject([
                .init("newTransactions", .number(String(change.newTransactions))),
                .init("changedTransactions", .number(String(change.changedTransactions))),
                .init("renewalInfos", .number(String(change.renewalInfos))),
                .init("newNotifications", .number(String(change.newNotifications))),
                .init("duplicateNotifications", .number(String(change.duplicateNotifications))),
                .init("retriedNotifications", .number(String(change.retriedNotifications))),
                .init("otherRecords", .number(String(change.otherRecords))),
            ]))
    }
}

/// `vouch ledger stats --db FILE`.
struct LedgerStatsCommand: Command {
    let path = ["ledger", "stats"]
    let summary = "What a ledger file holds"
    let usage = "vouch ledger stats --db FILE [--json]"
    let discussion = """
        Prints what the ledger file holds: accounts, transaction chains, transactions, renewal
        infos and accounts named by callers; the statements, notifications and receipts read
        into it, each input counted once however often it was added (a rerun after a stopped
        run counts as one run), with retries (notifications signed anew; each delivery is held
        once, so duplicates is 0); the latest signed date of its data, its size and schema
        version. It counts records without reading them, so it does not check them
        ("recordsChecked": false): 'vouch ledger check' does.

        With --json, one object:
          {"path":…,"schemaVersion":…,"bytes":…,"accounts":…,"chains":…,"transactions":…,
           "renewalInfos":…,"claims":…,"statements":…,"notifications":…,"duplicates":…,
           "retries":…,"receipts":…,"ignored":…,"incomplete":…,"lastSignedDate":…|null,
           "lastSigned":…|null,"recordsChecked":false}
        """
    let exitStatus = """
        0 success, 64 usage error, 65 the file is not a Vouch store or is of a newer schema or
        damaged, 66 the file cannot be read, 74 output write error.
        """
    let examples = [
        "vouch ledger stats --db ledger.sqlite",
        "vouch ledger stats --db ledger.sqlite --json",
    ]

    var options: [CommandOption] {
        [
            LedgerCommands.database, LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
            .flag("--json", help: "One JSON object (default: readable text)"),
        ]
    }

    /// What checks the records it counted: `vouch ledger check`, named with the file's path;
    /// for a server, with the same `--db` (the store's name holds neither the password nor the
    /// URI's options, such as the schema).
    static func checkNote(_ store: any LedgerStoring) -> String {
        LedgerDatabase.isServer(store.database)
            ? "records not checked; run vouch ledger check with the same --db"
            : "records not checked; run vouch ledger check --db \(store.database)"
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let file = try LedgerCommands.path(arguments, command: "ledger stats")
        let store = try LedgerDatabase.open(file, access: .readOnly, options: LedgerCommands.options(arguments))
        let statistics = try store.statistics()
        if arguments.flag("--json") {
            try console.output.write(JSONWriter.encode(Self.json(statistics, path: store.database)) + [0x0A])
            return ExitCode.success
        }
        let fed = statistics.fed
        let deliveries = statistics.deliveries
        try console.output.write(
            """
            \(store.database): Vouch ledger, \(Self.kind(store))schema \(statistics.schemaVersion), \(statistics.bytes) bytes\(Self.sizeNote(store))
              accounts \(statistics.accounts), chains \(statistics.chains), transactions \(statistics.transactions), renewal infos \(statistics.renewalInfos), accounts named by callers \(statistics.claims)
              statements read \(statistics.statements) (transactions \(fed.transactions), renewal infos \(fed.renewalInfos)), receipts \(fed.receipts), not about entitlements \(fed.ignored), incomplete \(fed.incomplete)
              notifications \(deliveries.notifications) (read \(fed.notifications) times: \(deliveries.duplicates) duplicates, \(deliveries.retries) retries)
              Stripe subscriptions \(statistics.stripeSubscriptions), refunded Stripe charges \(statistics.stripeRefunds), Stripe events read \(fed.stripeEvents), grants \(statistics.grants)
              last signed \(statistics.lastSignedDate?.iso8601 ?? "never")
              \(Self.checkNote(store))

            """)
        return ExitCode.success
    }

    /// The kind of a PostgreSQL store, before its schema ("" for a file, as before).
    static func kind(_ store: any LedgerStoring) -> String {
        store is PostgreSQLLedgerStore ? "PostgreSQL " : ""
    }

    /// What a PostgreSQL store's size is: its tables and indexes on the server, not a file.
    static func sizeNote(_ store: any LedgerStoring) -> String {
        store is PostgreSQLLedgerStore ? " of tables and indexes on the server" : ""
    }

    static func json(_ statistics: LedgerStore.Statistics, path: String) -> JSONValue {
        func number(_ value: Int) -> JSONValue { .number(String(value)) }
        return .object(
            JSONObject([
                .init("path", .string(path)),
                .init("schemaVersion", number(statistics.schemaVersion)),
                .init("bytes", .number(String(statistics.bytes))),
                .init("accounts", number(statistics.accounts)),
                .init("chains", number(statistics.chains)),
                .init("transactions", number(statistics.transactions)),
                .init("renewalInfos", number(statistics.renewalInfos)),
                .init("claims", number(statistics.claims)),
                .init("statements", number(statistics.statements)),
                .init("notifications", number(statistics.deliveries.notifications)),
                .init("duplicates", number(statistics.deliveries.duplicates)),
                .init("retries", number(statistics.deliveries.retries)),
                .init("receipts", number(statistics.fed.receipts)),
                .init("ignored", number(statistics.fed.ignored)),
                .init("incomplete", number(statistics.fed.incomplete)),
                .init("stripeSubscriptions", number(statistics.stripeSubscriptions)),
                .init("stripeRefunds", number(statistics.stripeRefunds)),
                .init("stripeEvents", number(statistics.fed.stripeEvents)),
                .init("grants", number(statistics.grants)),
                .init("lastSignedDate", statistics.lastSignedDate.map { .number(String($0.milliseconds)) } ?? .null),
                .init("lastSigned", statistics.lastSignedDate.map { .string($0.iso8601) } ?? .null),
                .init("recordsChecked", .bool(false)),
            ]))
    }
}

/// `vouch ledger check --db FILE`.
struct LedgerCheckCommand: Command {
    let path = ["ledger", "check"]
    let summary = "Check a ledger: SQLite's integrity check and every record's checksum"
    let usage = "vouch ledger check --db FILE [--json]"
    let discussion = """
        Runs SQLite's integrity check over the ledger file, then reads every record (each
        transaction, renewal info, Stripe subscription, refunded Stripe charge and grant),
        verifying the checksum it was stored with and that it decodes, and every account
        named by a caller and notification delivery, verifying its checksum. Prints one line per
        problem on stdout, naming the record by its table and key, then a summary line; the
        store is not changed. Every answer verifies the checksums of the records it reads as
        well, and refuses a damaged one (exit 65); this command reads them all.

        Given a PostgreSQL server (--db postgresql://…), it reads and verifies every record of
        the store in one snapshot; the server's own pages and indexes are the server's to
        check (pg_amcheck).

        With --json, one object:
          {"path":…,"records":…,"healthy":true|false,
           "problems":[{"table":…|null,"key":…|null,"reason":…},…]}
        """
    let exitStatus = """
        0 the store and every record are whole, 64 usage error, 65 something is wrong (listed),
        or the store is not a Vouch store or is of a newer schema, 66 the file cannot be read,
        or the server cannot be reached, 74 output write error or the connection to the
        server was lost.
        """
    let examples = [
        "vouch ledger check --db ledger.sqlite",
        "vouch ledger check --db ledger.sqlite --json",
        "vouch ledger check --db postgresql://vouch@db.internal/entitlements",
    ]

    var options: [CommandOption] {
        [
            LedgerCommands.database, LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
            .flag("--json", help: "One JSON object (default: readable text)"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let file = try LedgerCommands.path(arguments, command: "ledger check")
        let store = try LedgerDatabase.open(file, access: .readOnly, options: LedgerCommands.options(arguments))
        let report = try store.check()
        // A server is named as the store names it: never with a password.
        let name = store.database
        if arguments.flag("--json") {
            let problems = report.problems.map { problem -> JSONValue in
                .object(
                    JSONObject([
                        .init("table", problem.table.map(JSONValue.string) ?? .null),
                        .init("key", problem.key.map(JSONValue.string) ?? .null),
                        .init("reason", .string(problem.reason)),
                    ]))
            }
            let object = JSONValue.object(
                JSONObject([
                    .init("path", .string(name)),
                    .init("records", .number(String(report.records))),
                    .init("healthy", .bool(report.isHealthy)),
                    .init("problems", .array(problems)),
                ]))
            try console.output.write(JSONWriter.encode(object) + [0x0A])
        } else {
            var text = ""
            for problem in report.problems {
                text += "\(name): "
                if let table = problem.table { text += table + (problem.key.map { " " + $0 } ?? "") + ": " }
                text += problem.reason + "\n"
            }
            let whole =
                LedgerDatabase.isServer(file)
                ? "every record is whole (the server checks its own data: pg_amcheck)"
                : "the file and every record are whole"
            text +=
                "\(name): " + Counted.phrase(report.records, "record") + " read; "
                + (report.isHealthy ? whole : Counted.phrase(report.problems.count, "problem")) + "\n"
            try console.output.write(Array(text.utf8))
        }
        return report.isHealthy ? ExitCode.success : ExitCode.invalidInput
    }
}

/// `vouch ledger export --db FILE`.
struct LedgerExportCommand: Command {
    let path = ["ledger", "export"]
    let summary = "Write a ledger file's records as JSON Lines"
    let usage = "vouch ledger export --db FILE [--out FILE]"
    let discussion = """
        Writes every record of the ledger file as one JSON object per line, for a warehouse
        or Spark (Schemas/ledger-export.schema.json): each transaction with its merged
        statements ("kind":"transaction": the statement in force, the newest signed and
        receipt statements, the newest revocation, the reversal's date), each chain's renewal
        info ("kind":"renewalInfo") and each account named by a caller ("kind":"accountClaim"),
        then each Stripe subscription ("kind":"stripeSubscription": the newest subscription
        object, payment and Checkout session its events stated), each refunded Stripe charge
        ("kind":"stripeRefund") and each grant of a server's own source ("kind":"grant"), in a
        stable order. The export is for reading only: a ledger takes signed data alone.
        """
    let exitStatus = """
        0 success, 64 usage error, 65 the file is not a Vouch store or is of a newer schema or
        damaged, 66 the file cannot be read, 74 output write error.
        """
    let examples = [
        "vouch ledger export --db ledger.sqlite --out ledger.jsonl",
        "vouch ledger export --db ledger.sqlite | gzip > ledger.jsonl.gz",
    ]

    var options: [CommandOption] {
        [
            LedgerCommands.database, LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
            .value("--out", short: "o", "FILE", help: "Write to FILE (- for stdout, the default)"),
        ]
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let file = try LedgerCommands.path(arguments, command: "ledger export")
        let store = try LedgerDatabase.open(file, access: .readOnly, options: LedgerCommands.options(arguments))
        let out = try console.destination(arguments.value("--out"))
        var bytes: [UInt8] = []
        try store.export { record in
            bytes += record
            bytes.append(0x0A)
            if bytes.count >= 64 * 1024 {
                try out.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        if !bytes.isEmpty { try out.write(bytes) }
        try out.close()
        return ExitCode.success
    }
}
