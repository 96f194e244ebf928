import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Minted histories, verified for real with the minted root as the only anchor.
enum LedgerFixtures {
    static let validity = MintValidity(
        notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2045-01-01")!)
    static let authority: MintAuthority = try! MintAuthority.generate(MintAuthorityOptions(validity: validity))
    static let signer: MintSigner = try! MintSigner(authority: authority)
    static let verifier: Verifier = {
        // The ledger keeps environments apart itself: the verifier accepts every environment of the app.
        var configuration = Verifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try! authority.anchorCertificate()]
        configuration.bundleId = "com.example.app"
        return try! Verifier(configuration: configuration)
    }()

    /// 2026-01-01T00:00:00Z.
    static let start: Int64 = 1_767_225_600_000
    static let dayLength: Int64 = 86_400_000

    /// Midnight UTC of day `n` after ``start`` (day 0 is 2026-01-01), plus `hours`.
    static func day(_ n: Int64, hours: Int64 = 0) -> Int64 { start + n * dayLength + hours * 3_600_000 }

    static func at(_ milliseconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds) }

    /// ``day(_:hours:)`` as a `Timestamp`, as `MintHistory` takes it.
    static func time(_ n: Int64, hours: Int64 = 0) -> Timestamp { at(day(n, hours: hours)) }

    /// Signs and verifies every item of the histories, in order.
    static func verified(_ histories: MintHistory...) throws -> [VerifiedPayload] {
        try histories.flatMap { try $0.tokens(signer: signer) }.map { try verifier.verify($0) }
    }

    static func tokens(_ histories: MintHistory...) throws -> [String] {
        try histories.flatMap { try $0.tokens(signer: signer) }
    }

    static func ledger(_ payloads: [VerifiedPayload], catalog: ProductCatalog = ProductCatalog()) -> EntitlementLedger {
        var ledger = EntitlementLedger(catalog: catalog)
        for payload in payloads { ledger.add(payload) }
        return ledger
    }

    static func ledger(_ histories: MintHistory..., catalog: ProductCatalog = ProductCatalog()) throws
        -> EntitlementLedger
    {
        var ledger = EntitlementLedger(catalog: catalog)
        for history in histories {
            for token in try history.tokens(signer: signer) { ledger.add(try verifier.verify(token)) }
        }
        return ledger
    }

    /// Every account's entitlements at `instant` as the CLI prints them (JSON Lines).
    static func output(_ ledger: EntitlementLedger, at instant: Int64, tiers: Bool = false) -> String {
        ledger.entitlements(at: at(instant)).map {
            JSONWriter.string($0.json(at: at(instant), includeTier: tiers)) + "\n"
        }
        .joined()
    }

    /// The entitlements of the only account whose token or chain is `id`, at `instant`.
    static func entitlements(_ ledger: EntitlementLedger, _ id: String, at instant: Int64) throws -> AccountEntitlements
    {
        let accounts = ledger.accounts(matching: id)
        try #require(accounts.count == 1, "accounts matching \(id): \(accounts)")
        return try #require(ledger.entitlements(of: accounts[0], at: at(instant)))
    }

    static let account = "7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b"
    static let otherAccount = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9"
}
