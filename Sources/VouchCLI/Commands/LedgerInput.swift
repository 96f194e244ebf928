import Foundation
import Vouch
import VouchBatch
import VouchEntitlements
import VouchStripe

/// Reads dumps into an entitlement ledger for `vouch entitlements`, `vouch refunds` and
/// `vouch ledger add`: the inputs `vouch batch` reads (files or standard input, gzip, tokens,
/// receipts and JSON bodies per line, App Store Server API responses), every token and receipt
/// verified with the same trust options and the same cross-checks; a rejected one is counted
/// and reported on stderr, never used.
struct LedgerInput {
    /// The options the commands share with `vouch batch`: its trust options less `--kind`,
    /// with `--chain-at` for what `--at` means there, and its receipt anchors.
    static let options: [CommandOption] =
        [
            .value("--summary-json", "FILE", help: "Also write the summary as JSON to FILE (- for stdout)"),
            InputArguments.jobs,
        ] + InputArguments.options + [
            TrustOptions.ledger.validationTime, TrustOptions.ledger.root, TrustOptions.receiptRoot,
            TrustOptions.ledger.bundleId, TrustOptions.ledger.appAppleId!, TrustOptions.ledger.environment,
            TrustOptions.ledger.xcodeCertificate, TrustOptions.ledger.noStrictX509,
            StripeOptions.secretFile, StripeOptions.tolerance, StripeOptions.accountKey,
        ] + ProgressLine.options

    /// `--db FILE` of `vouch entitlements` and `vouch refunds`: a store to answer from.
    static let store = CommandOption.value(
        "--db", "FILE",
        help: "Answer from this store ('vouch ledger add') too; without\nFILE arguments no input is read")

    /// At most this many rejected lines are reported one by one; all are counted.
    static let reportedRejections = 100

    let command: String
    let batch: BatchVerifier
    let input: InputArguments
    let paths: [String]
    /// The metadata key of a Stripe subscription's account (`--stripe-account-key`).
    let stripeAccountKey: String
    /// Whether a progress line is drawn while reading (``ProgressLine/enabled(_:console:)``).
    let drawsProgress: Bool

    init(command: String, arguments: ParsedArguments, console: Console, readsStandardInput: Bool = true) throws {
        self.command = command
        drawsProgress = try ProgressLine.enabled(arguments, console: console)
        let options = try TrustOptions(arguments, TrustOptions.ledger, console: console)
        input = try InputArguments(arguments)
        var batch = BatchVerifier(verifier: try options.makeVerifier())
        batch.receiptVerifier = try options.makeReceiptVerifier(arguments)
        if let jobs = try InputArguments.jobs(arguments) { batch.jobs = jobs }
        // Without a secret file, a Stripe delivery in the input is rejected and never used.
        if arguments.value("--stripe-secret-file") != nil {
            batch.stripeVerifier = try StripeOptions.verifier(arguments, command: command, at: console.now())
        } else if arguments.value("--tolerance") != nil {
            throw UsageError("--tolerance applies to Stripe deliveries: give --stripe-secret-file too")
        }
        stripeAccountKey = arguments.value("--stripe-account-key") ?? EntitlementLedger.defaultStripeAccountKey
        guard !stripeAccountKey.isEmpty else { throw UsageError("--stripe-account-key must not be empty") }
        self.batch = batch
        paths = arguments.positionals.isEmpty && readsStandardInput ? ["-"] : arguments.positionals
    }

    /// What reading gave.
    struct Reading {
        var summary = BatchSummary()
        var seconds: Double = 0
        /// The inputs read (files and standard input).
        var inputs = 0
    }

    /// Feeds every verified payload and receipt of every input to `ledger`. Every input is
    /// opened before any is read; an input that cannot be read (or a truncated gzip stream) is
    /// an ``InputError``, thrown before anything is printed.
    func read(into ledger: inout EntitlementLedger, console: Console) throws -> Reading {
        try read(
            console: console, deliver: { ledger.add($0, stripeAccountKey: stripeAccountKey) }, stores: false,
            finished: { _, _ in "" })
    }

    /// How much `vouch ledger add` stores in one transaction: at most this many verified
    /// tokens, receipts and deliveries, or, once `timed` of them wait, what was verified in
    /// about this many seconds, and the rest of an input at its end. A small input is stored
    /// whole, however slowly it is read, so its summary counts each transaction once.
    static let batchLimit = (verified: 10_000, timed: 2_000, seconds: 1.0)

    /// Reads each input into batches (``batchLimit``) and hands each batch to `store` as it is
    /// complete, the last one of an input when the input is read whole; then, once every batch
    /// of the input is stored, calls `finished` with the input's name and counts, which returns
    /// the line said on stderr of the input (written past the progress line). `store` runs on
    /// a thread of its own (``BatchWriter``) while the next batch is read, so what is held in
    /// memory is two batches at most, whatever the input's size. An input that cannot be read
    /// throws ``InputError`` once the batches before the failure are stored; a batch that
    /// cannot be stored stops the reading with its error.
    func read(
        console: Console, store: @escaping (EntitlementLedger) throws -> Void,
        finished: (String, BatchSummary) throws -> String
    ) throws -> Reading {
        let writer = BatchWriter(store: store)
        defer { writer.stop() }
        var part = EntitlementLedger.batch()
        var pending = 0
        var started = ContinuousClock.now
        func flush() throws {
            if pending > 0 {
                try writer.submit(part)
                part = EntitlementLedger.batch()
                pending = 0
            }
            started = ContinuousClock.now
        }
        do {
            return try read(
                console: console,
                deliver: {
                    part.add($0, stripeAccountKey: stripeAccountKey)
                    pending += 1
                    if pending >= Self.batchLimit.verified
                        || (pending >= Self.batchLimit.timed
                            && ContinuousClock.now - started >= .seconds(Self.batchLimit.seconds))
                    {
                        try flush()
                    }
                }, stores: true,
                finished: { name, summary in
                    try flush()
                    try writer.drain()
                    return try finished(name, summary)
                })
        } catch {
            // What was handed over is stored before the reading's failure is told; a batch that
            // could not be stored failed first.
            try writer.drain()
            throw error
        }
    }

    private func read(
        console: Console, deliver: (VerifiedInput) throws -> Void, stores: Bool,
        finished: (String, BatchSummary) throws -> String
    ) throws -> Reading {
        let inputs = try console.openInputs(paths)
        defer { for input in inputs where input.owned { close(input.descriptor) } }
        let started = Date()
        let progress = ProgressLine(
            console: console, enabled: drawsProgress, totalBytes: ProgressLine.knownSize(of: inputs.map(\.descriptor)),
            start: started)
        defer { progress.clear() }
        var reading = Reading()
        reading.inputs = inputs.count
        var reported = 0
        // Deliveries read without --stripe-secret-file: said once, at the end, naming the option.
        var deliveriesWithoutSecret = 0
        defer {
            if deliveriesWithoutSecret > 0 {
                progress.diagnose(
                    "vouch \(command): "
                        + Counted.phrase(
                            deliveriesWithoutSecret, "Stripe webhook delivery", "Stripe webhook deliveries")
                        + " rejected, not used: give --stripe-secret-file FILE (the endpoint's signing secrets)"
                        + " to verify them")
            }
        }
        for opened in inputs {
            do {
                let reader = try input.reader(opened)
                let before = reading.summary
                let part = try batch.verify(
                    from: reader,
                    deliver: { result in
                        switch result.result {
                        case .success(let verified):
                            try deliver(verified)
                        case .failure(let error)
                        where result.form == .stripeDelivery && batch.stripeVerifier == nil
                            && error.code == .malformedToken:
                            deliveriesWithoutSecret += 1
                        case .failure(let error):
                            reported += 1
                            if reported <= Self.reportedRejections {
                                let place = "\(opened.name):\(result.line)" + (result.path.map { " \($0)" } ?? "")
                                progress.diagnose(
                                    "vouch \(command): \(place): rejected, not used: \(error.code): \(error.reason)")
                            } else if reported == Self.reportedRejections + 1 {
                                progress.diagnose(
                                    "vouch \(command): further rejected lines are counted only ('vouch batch' lists them all)"
                                )
                            }
                        }
                    },
                    progress: { current in
                        var sofar = before
                        sofar.add(current)
                        progress.update(
                            Counted.results(sofar) + " (\(sofar.verified) verified, \(sofar.rejected) rejected)",
                            count: sofar.lines, bytes: sofar.bytesConsumed)
                    })
                reading.summary.add(part)
                if stores {
                    // The input's last batch, with no count to show as it is stored.
                    progress.show("\(opened.name): storing what verified…")
                    progress.diagnose(try finished(opened.name, part))
                }
                progress.clear()
            } catch let error as InputFailure {
                throw InputError("cannot read \(opened.name): \(error)")
            }
        }
        reading.seconds = Date().timeIntervalSince(started)
        return reading
    }

    /// What an answer was made from: the chains and transactions of the ledger (or the store)
    /// it read, and the payloads of the inputs that said nothing about entitlements.
    struct Totals {
        var chains: Int
        var transactions: Int
        var stripeSubscriptions: Int
        var ignored = 0
        var incomplete = 0

        init(_ ledger: EntitlementLedger) {
            chains = ledger.chainCount
            transactions = ledger.transactionCount
            stripeSubscriptions = ledger.stripeSubscriptionCount
            ignored = ledger.statistics.ignored
            incomplete = ledger.statistics.incomplete
        }

        /// `3 chains, 10 transactions`, and `, 50 Stripe subscriptions` when there are any.
        var description: String {
            Counted.phrase(chains, "chain") + ", " + Counted.phrase(transactions, "transaction")
                + (stripeSubscriptions > 0 ? ", " + Counted.phrase(stripeSubscriptions, "Stripe subscription") : "")
        }

        /// A store's, when no input was read.
        init(_ store: LedgerStore.Statistics) {
            chains = store.chains
            transactions = store.transactions
            stripeSubscriptions = store.stripeSubscriptions
        }
    }

    /// `vouch COMMAND: 1 input, N tokens: V verified, R rejected in S s; C chains, T
    /// transactions, S Stripe subscriptions`, and the rejections by code.
    func describe(_ reading: Reading, ledger: EntitlementLedger) -> String {
        describe(reading, totals: Totals(ledger))
    }

    func describe(_ reading: Reading, totals: Totals) -> String {
        let summary = reading.summary
        var text =
            "vouch \(command): " + Counted.read(inputs: reading.inputs, summary) + " in "
            + String(format: "%.2f s", reading.seconds) + "; " + totals.description
        if !summary.errors.isEmpty {
            text +=
                "\n  rejected by code: "
                + summary.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        if totals.ignored > 0 || totals.incomplete > 0 {
            text +=
                "\n  not about entitlements: \(totals.ignored); lacking a member the rules need: \(totals.incomplete)"
        }
        return text
    }

    /// The input counts as JSON: `{"lines":…,"verified":…,"rejected":…,"errors":{…},"ignored":…,"incomplete":…,"chains":…,"transactions":…}`.
    func inputJSON(_ reading: Reading, ledger: EntitlementLedger) -> JSONValue {
        inputJSON(reading, totals: Totals(ledger))
    }

    func inputJSON(_ reading: Reading, totals: Totals) -> JSONValue {
        let summary = reading.summary
        return .object(
            JSONObject([
                .init("lines", .number(String(summary.lines))),
                .init("verified", .number(String(summary.verified))),
                .init("rejected", .number(String(summary.rejected))),
                .init(
                    "errors",
                    .object(
                        JSONObject(
                            summary.errors.sorted { $0.key < $1.key }.map { .init($0.key, .number(String($0.value))) }))
                ),
                .init("ignored", .number(String(totals.ignored))),
                .init("incomplete", .number(String(totals.incomplete))),
                .init("chains", .number(String(totals.chains))),
                .init("transactions", .number(String(totals.transactions))),
            ]))
    }

    /// Opens the `--db` store (a file, or a PostgreSQL server's `postgresql://` URI)
    /// read-only, answering by `catalog`; `nil` without `--db`.
    static func openStore(_ arguments: ParsedArguments, catalog: ProductCatalog = ProductCatalog()) throws
        -> (any LedgerStoring)?
    {
        let options = try LedgerCommands.options(arguments)
        return try arguments.value(store.name).map { database throws(LedgerError) in
            try LedgerDatabase.open(database, access: .readOnly, catalog: catalog, options: options)
        }
    }

    /// The exit status once the answer is written: 0 when every line verified, 1 otherwise.
    func status(_ reading: Reading) -> Int32 {
        reading.summary.rejected == 0 ? ExitCode.success : ExitCode.rejected
    }

    /// Writes `json` to the `--summary-json` destination, if one was asked for.
    static func writeSummary(_ json: JSONValue, to path: String?, console: Console) throws {
        guard let path else { return }
        let destination = try console.destination(path)
        try destination.write(JSONWriter.encode(json) + [0x0A])
        try destination.close()
    }

    /// An instant: `now`, a date (`2026-02-01`, midnight UTC) or an instant (`2026-02-01T12:00:00Z`).
    static func instant(_ text: String, option: String, console: Console, allowNow: Bool = true) throws(UsageError)
        -> Timestamp
    {
        if allowNow && text == "now" { return Timestamp(console.now()) }
        return Timestamp(try Spelling.date(text, option: option, alternatives: allowNow ? "'now' or " : ""))
    }

    /// Reads the `--tiers` catalog: unreadable is exit 66, not a catalog 65.
    static func catalog(_ path: String?) throws -> ProductCatalog {
        guard let path else { return ProductCatalog() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("cannot read --tiers \(path): \(Console.whyUnreadable(path))")
        }
        do {
            return try ProductCatalog(json: [UInt8](data))
        } catch {
            throw InvalidInputError("--tiers \(path): \(error)")
        }
    }
}

extension Counted {
    /// ``results(total:receipts:deliveries:)`` of a summary.
    static func results(_ summary: BatchSummary) -> String {
        results(total: summary.lines, receipts: summary.receipts, deliveries: summary.deliveries)
    }

    /// `1 input, 21 tokens: 21 verified, 0 rejected`.
    static func read(inputs: Int, _ summary: BatchSummary) -> String {
        phrase(inputs, "input") + ", " + results(summary)
            + ": \(summary.verified) verified, \(summary.rejected) rejected"
    }
}
