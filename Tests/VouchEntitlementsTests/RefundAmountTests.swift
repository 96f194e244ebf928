import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchMint

/// Amounts in units of their currency, and the refund summary keyed by Apple's own values with
/// refunds and Family Sharing revocations apart.
struct RefundAmountTests {
    typealias F = LedgerFixtures

    @Test(arguments: [
        (Int128(1_990) * 100_000, "1.99", "1990"),
        (Int128(29_990) * 33_333, "9.9965667", "9996.5667"),
        (Int128(9_990) * 33_333, "3.3299667", "3329.9667"),
        (Int128(30_000) * 100_000, "30", "30000"),
        (Int128(-50_000), "-0.0005", "-0.5"),
        (Int128(1), "0.00000001", "0.00001"),
    ])
    func anAmountIsExactInMilliunitsAndInCurrencyUnits(hundredThousandths: Int128, units: String, milliunits: String) {
        let amount = MilliunitAmount(hundredThousandths: hundredThousandths)
        #expect(amount.description == milliunits)
        #expect(amount.currencyUnitsText == units)
        #expect(amount.currencyUnits == Decimal(string: units, locale: Locale(identifier: "en_US_POSIX")))
        #expect(CurrencyAmount(amount, currency: "USD").description == "\(units) USD")
    }

    /// ISO 4217 minor units: two decimals for USD, none for JPY and VND, three for KWD; half
    /// away from zero; thousands grouped for people only.
    @Test(arguments: [
        (Int128(129_689_9667) * 10, "USD", "129.69", "129.69 USD"),
        (Int128(199_6000) * 10, "USD", "0.20", "0.20 USD"),
        (Int128(5) * 100_000, "USD", "0.01", "0.01 USD"),
        (Int128(-5) * 100_000, "USD", "-0.01", "-0.01 USD"),
        (Int128(4) * 100_000, "USD", "0.00", "0.00 USD"),
        (Int128(1_234_567_000) * 100_000, "USD", "1234567.00", "1,234,567.00 USD"),
        (Int128(49_000_000) * 100_000, "VND", "49000", "49,000 VND"),
        (Int128(490_500) * 100_000, "JPY", "491", "491 JPY"),
        (Int128(63_437_7) * 10_000, "KWD", "63.438", "63.438 KWD"),
        (Int128(63_437_7) * 10_000, "AUD", "63.44", "63.44 AUD"),
        (Int128(1_000) * 100_000, "clf", "1.0000", "1.0000 clf"),
        (Int128(1_990) * 100_000, "", "1.99", "1.99"),
    ])
    func anAmountIsRoundedToItsCurrencysMinorUnitForPeople(
        hundredThousandths: Int128, currency: String, rounded: String, description: String
    ) {
        let amount = CurrencyAmount(MilliunitAmount(hundredThousandths: hundredThousandths), currency: currency)
        #expect(amount.roundedAmount == rounded)
        #expect(amount.roundedDescription == description)
    }

    @Test func minorUnitsFollowISO4217() {
        #expect(CurrencyAmount.minorUnitDigits(of: "USD") == 2)
        #expect(CurrencyAmount.minorUnitDigits(of: "JPY") == 0)
        #expect(CurrencyAmount.minorUnitDigits(of: "KWD") == 3)
        #expect(CurrencyAmount.minorUnitDigits(of: "kwd") == 3)
        #expect(CurrencyAmount.minorUnitDigits(of: "ISK") == 0)
        #expect(CurrencyAmount.minorUnitDigits(of: "XYZ") == 2)
    }

    @Test func theLargestRefundStaysExactInCurrencyUnits() {
        let amount = MilliunitAmount.share(of: .max, percentage: 99_999)
        #expect(amount.currencyUnitsText == "9223279803134407.25924193")
        #expect("\(amount.currencyUnits)" == "9223279803134407.25924193")
    }

    @Test func theSummaryKeepsRefundsAndFamilyRevocationsApartByReasonAndType() throws {
        var history = MintHistory(appAccountToken: F.account)
        let lifetime = history.purchase("com.example.pro.lifetime", type: .nonConsumable, at: F.time(1), price: 29_990)
        let coins = history.purchase("com.example.coins.100", type: .consumable, at: F.time(2), price: 1_990)
        history.refund(lifetime, at: F.time(10), reason: .refundedDueToIssue, type: .refundProrated, percentage: 33_333)
        history.refund(coins, at: F.time(11), reason: .refundedForOtherReason)
        let shared = history.shareWithFamily(lifetime, at: F.time(3))
        history.revokeFamilySharing(shared, at: F.time(5))
        let ledger = try F.ledger(history)
        let revocations = ledger.revocations()
        let refund = try #require(revocations.first { $0.productId == "com.example.coins.100" })
        #expect(refund.refunded?.description == "1.99 USD")
        #expect(refund.refunded?.amount == Decimal(string: "1.99", locale: Locale(identifier: "en_US_POSIX")))
        #expect(refund.priceAmount?.description == "1.99 USD")

        let summary = RevocationSummary(revocations)
        #expect(summary.total.count == 3)
        #expect(summary.refundTotal.count == 2)
        #expect(summary.refundTotal.refunds == 2)
        #expect(summary.refundTotal.refundedAmounts.map(\.description) == ["11.9865667 USD"])
        #expect(summary.familyRevocationTotal.count == 1)
        #expect(summary.familyRevocationTotal.familyRevocations == 1)
        #expect(summary.familyRevocationTotal.refunded.isEmpty)
        #expect(summary.byRevocationReason[.refundedDueToIssue]?.count == 1)
        #expect(summary.byRevocationReason[.refundedForOtherReason]?.refunds == 1)
        #expect(summary.byRevocationType[.refundProrated]?.refundedAmounts.map(\.description) == ["9.9965667 USD"])
        #expect(summary.byRevocationType[.familyRevoke]?.familyRevocations == 1)
        // The string-keyed buckets of the JSON summary count the same.
        #expect(summary.byReason["1"]?.count == 1)
        #expect(summary.byType["FAMILY_REVOKE"]?.count == 1)
    }
}
