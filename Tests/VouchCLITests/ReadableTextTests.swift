import Foundation
import Testing

/// What the commands print for people: prices in units of their currency, the certificates of
/// x5c as a note, an account known only from Stripe as what it is.
@Suite struct ReadableTextTests {
    static let token = VouchBinary.vector("apple-real/real/transaction-production-1.jws")

    @Test func aPriceIsShownInUnitsOfItsCurrencyBesideItsMilliunits() throws {
        let inspected = try VouchBinary.run(["inspect", Self.token])
        #expect(inspected.status == 0)
        #expect(inspected.stdout.contains("\n  price: 49000000 (49,000 VND)\n  currency: \"VND\"\n"))
        let verified = try VouchBinary.run(["verify", "--at", "2026-01-01", Self.token])
        #expect(verified.stdout.contains("\n  price: 49000000 (49,000 VND)\n"), "\(verified.stderr)")
        // JSON keeps the raw value.
        let json = try VouchBinary.run(["verify", "--json", "--at", "2026-01-01", Self.token])
        #expect(json.stdout.contains(#""price":49000000,"currency":"VND""#))
    }

    @Test func inspectShowsX5cAsANoteNotAString() throws {
        let inspected = try VouchBinary.run(["inspect", Self.token])
        #expect(inspected.stdout.contains("header:\n  alg: \"ES256\"\n  x5c: 3 certificates, described below\n"))
        #expect(!inspected.stdout.contains("x5c: \""))
    }

    @Test func anAccountKnownOnlyFromStripeIsNoAppAccountTokenAndHasNoOwnership() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-text-\(UUID().uuidString)")
        try Data("whsec_text\n".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        let minted = try VouchBinary.run([
            "mint", "stripe", "--stripe-secret-file", secret.path, "--count", "1", "--date", "2025-09-01",
            "--story", "renewing",
        ])
        #expect(minted.status == 0, "\(minted.stderr)")
        // Instants within the minted story and at its end: at one of them the account holds its price.
        var entitled = false
        for instant in ["2025-06-15", "2025-09-01"] {
            let answer = try VouchBinary.run(
                ["entitlements", "--stripe-secret-file", secret.path, "--at", instant, "-"],
                input: Array(minted.stdout.utf8))
            #expect(answer.status == 0, "\(answer.stderr)")
            let lines = answer.stdout.split(separator: "\n").map(String.init)
            let account = try #require(lines.first)
            #expect(
                account.range(of: #"^Sandbox account \S+ \(no App Store chain\)$"#, options: .regularExpression) != nil)
            #expect(!answer.stdout.contains("appAccountToken"))
            #expect(!answer.stdout.contains("PURCHASED"))
            #expect(lines.dropFirst().allSatisfy { $0.contains("  stripe sub_") || $0 == "  no entitlements" })
            entitled = entitled || answer.stdout.contains("  active  until ")
        }
        #expect(entitled)
    }
}
