/// Every command and group of `vouch`.
extension CommandRegistry {
    static let vouch = CommandRegistry(
        version: "0.1.0",
        groups: [
            CommandGroup(
                path: [], summary: "", usage: "vouch <command> [options]",
                discussion: """
                    Verify App Store signed data (transactions, renewal info, server notifications,
                    app transactions, retention-messaging requests) and legacy app receipts
                    offline, against Apple's roots, and stored Stripe webhook deliveries with their
                    signing secrets; answer who is entitled to what and what was refunded from
                    them, keep them in a ledger file, sign offers and requests, and mint test data.
                    """,
                noun: "command",
                footer: "Run 'vouch help <command>' for a command's options.",
                examples: [
                    "vouch verify signed-transaction.jws",
                    "vouch batch --bundle-id com.example.app tokens.jsonl > records.jsonl",
                    "vouch entitlements --at now --tiers tiers.json notifications.jsonl",
                ]),
            Self.mintGroup,
            ReceiptCommands.group,
            LedgerCommands.group,
            SignCommands.group,
            StripeCommands.group,
        ],
        commands: [
            VerifyCommand(), InspectCommand(), BatchCommand(), EntitlementsCommand(), RefundsCommand(), ReportCommand(),
            ServeCommand(),
        ]
            + LedgerCommands.all + ReceiptCommands.all + MintCommands.all + [MintHistoryCommand()]
            + MintReceiptCommands.all + [MintKeyCommand(), MintStripeCommand(), MintStoryCommand()] + SignCommands.all
            + StripeCommands.all)

    /// `vouch mint`'s group, with the examples its help ends with.
    static let mintGroup: CommandGroup = {
        var group = MintCommands.group
        group.examples = [
            "vouch mint ca --out test-ca",
            "vouch mint history --ca test-ca --count 100 --out history.jsonl",
            "vouch entitlements --root test-ca/root.der history.jsonl",
        ]
        return group
    }()
}
