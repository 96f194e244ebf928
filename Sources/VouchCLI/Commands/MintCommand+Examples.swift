/// The command lines the help of each `vouch mint` command ends with.
extension MintCACommand {
    var examples: [String] {
        [
            "vouch mint ca --out test-ca",
            "vouch mint ca --out test-xcode --xcode",
            "vouch mint ca --out expired-ca --not-before 2020-01-01 --not-after 2021-01-01",
        ]
    }
}

extension MintTokensCommand {
    var examples: [String] {
        let kind = path.joined(separator: " ")
        return [
            "vouch \(kind) --ca test-ca",
            "vouch \(kind) --ca test-ca --count 1000 --seed 7 --out tokens.jsonl",
            "vouch \(kind) --ca test-ca --tamper signature",
        ]
    }
}

extension MintHistoryCommand {
    var examples: [String] {
        [
            "vouch mint history --ca test-ca --count 100 --out history.jsonl",
            "vouch mint history --ca test-ca --count 10 --seed 7 --date 2026-02-01 --environment Sandbox",
        ]
    }
}

extension MintKeyCommand {
    var examples: [String] {
        [
            "vouch mint iap-key --out test-key",
            "vouch mint iap-key --out test-key --key-id ABC123DEFG --force",
        ]
    }
}

extension MintReceiptCACommand {
    var examples: [String] {
        [
            "vouch mint receipt-ca --out receipt-ca",
            "vouch mint receipt-ca --out receipt-xcode --xcode",
        ]
    }
}

extension MintReceiptCommand {
    var examples: [String] {
        [
            "vouch mint receipt --ca receipt-ca --out receipt.der",
            "vouch mint receipt --ca receipt-ca --in-app 3 --base64",
            "vouch mint receipt --ca receipt-ca --count 100 --seed 5 --out receipts.txt",
        ]
    }
}

extension MintStripeCommand {
    var examples: [String] {
        [
            "vouch mint stripe --stripe-secret-file secrets.txt --count 50 --out deliveries.jsonl",
            "vouch mint stripe --stripe-secret-file secrets.txt --story renewing --seed 7",
        ]
    }
}

extension MintStoryCommand {
    var examples: [String] {
        [
            "vouch mint story --ca test-ca --stripe-secret-file secrets.txt --out story",
            "vouch mint story --ca test-ca --stripe-secret-file secrets.txt --count 100 --seed 7 --date 2026-02-01 --out story",
            "vouch mint story --ca test-ca --stripe-secret-file secrets.txt --seed run-2 --out story-2",
        ]
    }
}
