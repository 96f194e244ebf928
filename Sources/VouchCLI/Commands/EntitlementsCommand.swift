import Foundation
import Vouch
import VouchEntitlements

/// `vouch entitlements`: who may use what at an instant, from verified dumps.
enum EntitlementsCommand {
    static let usage = """
        Usage: vouch entitlements [--at WHEN] [--tiers FILE] [--account ID]... [--json] [options] [FILE ...|-]

        Verifies every line of the inputs as 'vouch batch' does (files in order, or standard
        input for '-' or no FILE; gzip; a bare JWS or a JSON body per line) and prints, for each
        account, what it is entitled to at WHEN, by StoreKit's currentEntitlements rules applied
        to the signed data: non-consumables not revoked; the latest transaction of each
        subscription chain before its expiresDate, or in billing retry before its
        gracePeriodExpiresDate; the latest of each non-renewing subscription; no consumables.
        The newest signedDate about a transaction wins. An account is the appAccountToken, or
        else the originalTransactionId chain; environments never mix. A rejected line is
        reported on stderr and not used.

        Options:
          --at WHEN              The instant: now (default), a date such as 2026-02-01
                                 (midnight UTC) or an ISO-8601 instant
          --tiers FILE           A JSON catalog of tiers (name, rank, products), trial days of
                                 free trial products and lengths of non-renewing subscriptions;
                                 each record then gets the account's highest tier
          --account ID           Only this account: an appAccountToken or any of its
                                 originalTransactionIds; repeatable
          --json                 One JSON record per account (default: readable text):
                                 {"environment":…,"appAccountToken":…|null,"originalTransactionIds":[…],
                                  "at":…,"entitlements":[{"productId":…,"type":…,"subscriptionGroupIdentifier":…,
                                  "state":"active|grace_period|trial|non_renewing","expiresDate":…,"expires":…,
                                  "ownership":…,"transactionId":…,"originalTransactionId":…,"purchaseDate":…}]
                                  [,"tier":{"name":…,"rank":…,"productId":…,"state":…,"expiresDate":…,
                                  "expires":…,"transactionId":…}|null]}
        \(LedgerInput.optionsHelp)
          -h, --help             Show this help

        Accounts come in a stable order: Production, Sandbox, Xcode, LocalTesting; accounts with
        an appAccountToken by token, then the others by originalTransactionId. The same tokens
        in any order or split across any files give the same bytes. A summary goes to stderr.

        Exit status: 0 every line verified, 1 some line rejected (the answer is still printed,
        from the verified lines), 64 usage error, 66 an input cannot be read or is truncated
        (nothing printed), 74 output write error.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words, valued: LedgerInput.valued.union(["--at", "--tiers", "--account"]), flags: LedgerInput.flags.union(["--json"]))
        let instant = try LedgerInput.instant(arguments.value("--at") ?? "now", option: "--at")
        let catalog = try LedgerInput.catalog(arguments.value("--tiers"))
        let input = try LedgerInput(command: "entitlements", arguments: arguments)

        var ledger = EntitlementLedger(catalog: catalog)
        let reading = try input.read(into: &ledger)

        var answers: [AccountEntitlements]
        let wanted = arguments.values("--account")
        if wanted.isEmpty {
            answers = ledger.entitlements(at: instant)
        } else {
            let accounts = Set(wanted.flatMap { ledger.accounts(matching: $0) })
            answers = accounts.sorted().compactMap { ledger.entitlements(of: $0, at: instant) }
            for id in wanted where ledger.accounts(matching: id).isEmpty {
                Output.error("vouch entitlements: no account \(id) in the input")
            }
        }

        let includeTier = arguments.value("--tiers") != nil
        var writer = JSONWriter(reservingCapacity: 64 * 1024)
        var text = ""
        for answer in answers {
            if arguments.flag("--json") {
                writer.write(answer.json(at: instant, includeTier: includeTier))
                writer.raw("\n")
            } else {
                text += describe(answer, includeTier: includeTier)
            }
            if writer.bytes.count + text.utf8.count >= 64 * 1024 {
                try write(writer.bytes + Array(text.utf8))
                writer.reset()
                text = ""
            }
        }
        try write(writer.bytes + Array(text.utf8))

        Output.error(input.describe(reading, ledger: ledger) + "\n  \(answers.count) accounts at \(instant.iso8601)")
        try LedgerInput.writeSummary(.object(JSONObject([
            .init("input", input.inputJSON(reading, ledger: ledger)),
            .init("at", .number(String(instant.milliseconds))),
            .init("accounts", .number(String(answers.count))),
            .init("entitled", .number(String(answers.filter { !$0.entitlements.isEmpty }.count))),
        ])), to: arguments.value("--summary-json"))
        return input.status(reading)
    }

    static func write(_ bytes: [UInt8]) throws {
        guard bytes.isEmpty || Output.write(bytes: bytes, to: .standardOutput) else {
            throw WriteError("cannot write the output: \(String(cString: strerror(errno)))")
        }
    }

    /// Readable text: the account, then one line per entitlement.
    static func describe(_ answer: AccountEntitlements, includeTier: Bool) -> String {
        let account = answer.account
        var lines = [
            "\(account.environment.rawValue) "
                + (account.appAccountToken.map { "appAccountToken \($0)" } ?? "originalTransactionId \(account.originalTransactionId ?? "")")
                + (account.appAccountToken == nil ? "" : " (chains \(answer.originalTransactionIds.joined(separator: ", ")))")
        ]
        if includeTier {
            if let tier = answer.tier {
                lines.append("  tier \(tier.name) (rank \(tier.rank)) until \(tier.entitlement.expiresDate?.iso8601 ?? "no end")"
                    + " from \(tier.entitlement.productId), transaction \(tier.entitlement.transactionId)")
            } else {
                lines.append("  no tier")
            }
        }
        if answer.entitlements.isEmpty { lines.append("  no entitlements") }
        for entitlement in answer.entitlements {
            lines.append("  \(entitlement.productId)  \(entitlement.state.rawValue)  until \(entitlement.expiresDate?.iso8601 ?? "no end")"
                + "  \(entitlement.ownership.rawValue)  transaction \(entitlement.transactionId)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
