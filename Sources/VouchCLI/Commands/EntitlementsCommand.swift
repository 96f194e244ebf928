import Foundation
import Vouch
import VouchEntitlements

/// `vouch entitlements`: who may use what at an instant, from verified dumps.
struct EntitlementsCommand: Command {
    let path = ["entitlements"]
    let summary = "Who is entitled to what at an instant, from verified dumps"
    let usage =
        "vouch entitlements [--at WHEN] [--tiers FILE] [--account ID]... [--json] [--db FILE] [options] [FILE ...|-]"
    let discussion = """
        Verifies every line of the inputs as 'vouch batch' does (files in order, or standard
        input for '-' or no FILE; gzip; a bare JWS or a JSON body per line) and prints, for each
        account, what it is entitled to at WHEN, by StoreKit's currentEntitlements rules applied
        to the signed data: non-consumables not revoked; the latest transaction of each
        subscription chain before its expiresDate, or in billing retry before its
        gracePeriodExpiresDate; the latest of each non-renewing subscription; no consumables.
        The newest signedDate about a transaction wins. An account is the appAccountToken, or
        else the originalTransactionId chain; environments never mix. A legacy app receipt's
        in-app purchases count for transactions no signed data names. A rejected line is
        reported on stderr and not used. With --db, the answer includes what the store holds
        ('vouch ledger add'), read without verifying again; with --db and --account but no FILE,
        only those accounts' records are read.

        With --json, one record per account:
          {"environment":…,"appAccountToken":…|null,"originalTransactionIds":[…],"at":…,
           "entitlements":[{"productId":…,"type":…,"subscriptionGroupIdentifier":…,
           "state":"active|grace_period|trial|non_renewing|past_due","expiresDate":…,"expires":…,
           "ownership":…,"transactionId":…,"originalTransactionId":…,"purchaseDate":…,
           "source":"app_store|stripe"}]
           [,"tier":{"name":…,"rank":…,"productId":…,"state":…,"expiresDate":…,"expires":…,
           "transactionId":…,"source":…}|null]}
        Stripe deliveries in the inputs (with --stripe-secret-file) count too: a subscription
        active, trialing or past_due grants its price (or product) until its period's end, to
        the account its metadata names (--stripe-account-key, default account_id) or the
        Checkout session that created it; the tier is the highest from either channel.
        Accounts come in a stable order: Production, Sandbox, Xcode, LocalTesting; accounts
        with an appAccountToken by token, then the others by originalTransactionId. The same
        tokens in any order or split across any files give the same bytes. A summary goes to
        stderr.

        WHEN and DATE are 2026-02-01 (midnight UTC), 2026-02-01T12:30:00Z or with an offset.
        """
    let positionals = Positionals.any
    let exitStatus = """
        0 every line verified, 1 some line rejected (the answer
        from the verified lines is still printed), 64 usage error, 65 a --tiers file that is
        not a catalog or a --db file that is not a Vouch store (or is damaged), 66 an input or
        the store cannot be read or is truncated (nothing printed), 74 output write error.
        """
    let examples = [
        "vouch entitlements --at 2026-02-01 --tiers tiers.json notifications.jsonl",
        "vouch entitlements --db ledger.sqlite --account 7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b --json",
        "vouch entitlements --stripe-secret-file secrets.txt notifications.jsonl stripe.jsonl",
    ]

    var options: [CommandOption] {
        [
            .value("--at", "WHEN", help: "The instant: now (default) or a DATE"),
            .value(
                "--tiers", "FILE",
                help:
                    "A JSON catalog: tiers (name, rank, products), trialDays\nof free trial products, lengthDays of non-renewing\nsubscriptions; each record then gets the highest tier"
            ),
            .value(
                "--account", "ID", repeatable: true,
                help: "Only this account: an appAccountToken or any of its\noriginalTransactionIds"),
            .flag("--json", help: "One JSON record per account (default: readable text)"),
            LedgerInput.store, LedgerCommands.busyTimeout, LedgerCommands.memoryMap,
        ] + LedgerInput.options
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        let instant = try LedgerInput.instant(arguments.value("--at") ?? "now", option: "--at", console: console)
        let store = arguments.value(LedgerInput.store.name)
        let input = try LedgerInput(
            command: "entitlements", arguments: arguments, console: console, readsStandardInput: store == nil)
        let catalog = try LedgerInput.catalog(arguments.value("--tiers"))
        let wanted = arguments.values("--account")

        let answers: [AccountEntitlements]
        let reading: LedgerInput.Reading
        let totals: LedgerInput.Totals
        let stored = try LedgerInput.openStore(arguments, catalog: catalog)
        if let stored, input.paths.isEmpty, !wanted.isEmpty {
            // The accounts asked for, each from its own chains in the store.
            reading = LedgerInput.Reading()
            var accounts = Set<AccountKey>()
            for id in wanted {
                let found = try stored.accounts(matching: id)
                if found.isEmpty { console.diagnose("vouch entitlements: no account \(id) in the store") }
                accounts.formUnion(found)
            }
            answers = try accounts.sorted().compactMap { account throws(LedgerError) in
                try stored.entitlements(of: account, at: instant)
            }
            totals = LedgerInput.Totals(try stored.statistics())
        } else {
            var ledger = try stored?.ledger() ?? EntitlementLedger(catalog: catalog)
            reading = try input.read(into: &ledger, console: console)
            if wanted.isEmpty {
                answers = ledger.entitlements(at: instant)
            } else {
                let accounts = Set(wanted.flatMap { ledger.accounts(matching: $0) })
                answers = accounts.sorted().compactMap { ledger.entitlements(of: $0, at: instant) }
                for id in wanted where ledger.accounts(matching: id).isEmpty {
                    console.diagnose("vouch entitlements: no account \(id) in the input")
                }
            }
            totals = LedgerInput.Totals(ledger)
        }

        let includeTier = arguments.value("--tiers") != nil
        var bytes: [UInt8] = []
        for answer in answers {
            if arguments.flag("--json") {
                bytes += JSONWriter.encode(answer.json(at: instant, includeTier: includeTier)) + [0x0A]
            } else {
                bytes += Array(Self.describe(answer, includeTier: includeTier).utf8)
            }
            if bytes.count >= 64 * 1024 {
                try console.output.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        if !bytes.isEmpty { try console.output.write(bytes) }

        console.diagnose(
            input.describe(reading, totals: totals)
                + "\n  \(Counted.phrase(answers.count, "account")) at \(instant.iso8601)")
        try LedgerInput.writeSummary(
            .object(
                JSONObject([
                    .init("input", input.inputJSON(reading, totals: totals)),
                    .init("at", .number(String(instant.milliseconds))),
                    .init("accounts", .number(String(answers.count))),
                    .init("entitled", .number(String(answers.filter { !$0.entitlements.isEmpty }.count))),
                ])), to: arguments.value("--summary-json"), console: console)
        return input.status(reading)
    }

    /// Readable text: the account, then one line per entitlement. An account with an id but
    /// no App Store chain (one known from Stripe deliveries, or named by a caller) is an
    /// `account`, not an `appAccountToken`.
    static func describe(_ answer: AccountEntitlements, includeTier: Bool) -> String {
        let account = answer.account
        let name: String
        if let id = account.appAccountToken {
            name =
                answer.originalTransactionIds.isEmpty
                ? "account \(id) (no App Store chain)"
                : "appAccountToken \(id) (chains \(answer.originalTransactionIds.joined(separator: ", ")))"
        } else {
            name = "originalTransactionId \(account.originalTransactionId ?? "")"
        }
        var lines = ["\(account.environment.rawValue) " + name]
        if includeTier {
            if let tier = answer.tier {
                lines.append(
                    "  tier \(tier.name) (rank \(tier.rank)) until \(tier.entitlement.expiresDate?.iso8601 ?? "no end")"
                        + " from \(tier.entitlement.productId) (\(tier.entitlement.source), \(tier.entitlement.state.rawValue)),"
                        + " \(Self.grant(tier.entitlement))")
            } else {
                lines.append("  no tier")
            }
        }
        if answer.entitlements.isEmpty { lines.append("  no entitlements") }
        for entitlement in answer.entitlements {
            lines.append(
                "  \(entitlement.productId)  \(entitlement.state.rawValue)  until \(entitlement.expiresDate?.iso8601 ?? "no end")"
                    // Ownership (PURCHASED, FAMILY_SHARED) is the App Store's; Stripe has none.
                    + (entitlement.source == .appStore ? "  \(entitlement.ownership.rawValue)" : "")
                    + "  \(Self.grant(entitlement))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `transaction ID` for the App Store, `SOURCE ID` for another source.
    static func grant(_ entitlement: Entitlement) -> String {
        (entitlement.source == .appStore ? "transaction" : entitlement.source.rawValue)
            + " \(entitlement.transactionId)"
    }
}
