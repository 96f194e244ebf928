/// Every command and group of `vouch`.
extension CommandRegistry {
    static let vouch = CommandRegistry(
        version: "0.1.0",
        groups: [
            CommandGroup(
                path: [], summary: "", usage: "vouch <command> [options]",
                discussion: """
                    Verify App Store signed data (transactions, renewal info, server notifications,
                    app transactions, retention-messaging requests) offline, against Apple's root.
                    """,
                noun: "command",
                footer: "Run 'vouch help <command>' for a command's options."),
            MintCommands.group,
            ReceiptCommands.group,
            LedgerCommands.group,
            SignCommands.group,
            StripeCommands.group,
        ],
        commands: [
            VerifyCommand(), InspectCommand(), BatchCommand(), EntitlementsCommand(), RefundsCommand(), ReportCommand(),
        ]
            + LedgerCommands.all + ReceiptCommands.all + MintCommands.all + [MintHistoryCommand()]
            + MintReceiptCommands.all + [MintKeyCommand(), MintStripeCommand(), MintStoryCommand()] + SignCommands.all
            + StripeCommands.all)
}
