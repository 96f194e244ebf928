import Testing
import Vouch

@testable import VouchEntitlements

/// The packed form of App Store records (``PackedRecord``): every member reads back as it was
/// written, a member added last reads as nil in a record packed before it, and bytes that are
/// not one whole record are refused with ``RecordFormatError``.
struct PackedRecordTests {
    /// `write` packed, then read by `read`.
    func roundTrip<Value>(
        _ write: (inout PackedRecord.Writer) -> Void,
        _ read: (inout PackedRecord.Reader) throws(RecordFormatError) -> Value
    ) throws -> Value {
        var writer = PackedRecord.Writer()
        write(&writer)
        return try writer.bytes.withUnsafeBytes { bytes throws(RecordFormatError) in
            var reader = PackedRecord.Reader(bytes)
            let value = try read(&reader)
            guard reader.isAtEnd else { throw RecordFormatError(reason: "bytes left") }
            return value
        }
    }

    /// The reason `bytes` are refused with, read by `read`.
    func refusal(_ bytes: [UInt8], _ read: (inout PackedRecord.Reader) throws(RecordFormatError) -> Void) -> String? {
        bytes.withUnsafeBytes { bytes in
            var reader = PackedRecord.Reader(bytes)
            do throws(RecordFormatError) {
                try read(&reader)
                return nil
            } catch {
                return error.reason
            }
        }
    }

    @Test(arguments: [
        Int64.min, Int64.min + 1, -1_000_000_000_000, -64, -1, 0, 1, 63, 64, 1_780_272_000_000, Int64.max,
    ])
    func everyIntegerReadsBackAsItWas(value: Int64) throws {
        #expect(
            try roundTrip({ $0.integer(value) }, { reader throws(RecordFormatError) in try reader.integer() }) == value)
        #expect(
            try roundTrip(
                { $0.integer(Optional(value)) }, { reader throws(RecordFormatError) in try reader.optionalInteger() })
                == value)
    }

    @Test func textBooleansAndAbsentValuesReadBackAsTheyWere() throws {
        for text in ["", "com.example.coins.100", "Ünïcödé ✓", String(repeating: "x", count: 300)] + PackedRecord.words
        {
            #expect(try roundTrip({ $0.text(text) }, { reader throws(RecordFormatError) in try reader.text() }) == text)
        }
        #expect(
            try roundTrip({ $0.text(String?.none) }, { reader throws(RecordFormatError) in try reader.optionalText() })
                == nil)
        #expect(
            try roundTrip(
                { $0.integer(Int32?.none) }, { reader throws(RecordFormatError) in try reader.optionalInt32() }) == nil)
        #expect(try roundTrip({ $0.bool(true) }, { reader throws(RecordFormatError) in try reader.bool() }) == true)
        #expect(try roundTrip({ $0.bool(false) }, { reader throws(RecordFormatError) in try reader.bool() }) == false)
    }

    /// Texts read back as written, ASCII or not, at every length around the eight bytes the
    /// ASCII check reads at a time; a byte of 0x80 or more anywhere makes a text not ASCII, and
    /// one that is not UTF-8 there is refused.
    @Test func textsOfEveryLengthReadBackAsWritten() throws {
        let text: (inout PackedRecord.Reader) throws(RecordFormatError) -> String = { try $0.text() }
        for length in 0...20 {
            let ascii = String(repeating: "a", count: length)
            #expect(try roundTrip({ $0.text(ascii) }, text) == ascii)
            #expect(Array(ascii.utf8).withUnsafeBytes { PackedRecord.Reader.isASCII($0) })
            for position in 0..<length {
                var bytes = Array(ascii.utf8)
                bytes[position] = 0x80
                #expect(!bytes.withUnsafeBytes { PackedRecord.Reader.isASCII($0) })
                #expect(
                    refusal([UInt8(length * 2)] + bytes, { reader throws(RecordFormatError) in _ = try reader.text() })
                        == "a packed record holds text that is not UTF-8")
                var characters = Array(ascii)
                characters[position] = "é"
                let accented = String(characters)
                #expect(try roundTrip({ $0.text(accented) }, text) == accented)
            }
        }
    }

    @Test func bytesThatAreNotWholeMembersAreRefused() {
        let integer: (inout PackedRecord.Reader) throws(RecordFormatError) -> Void = { _ = try $0.integer() }
        let text: (inout PackedRecord.Reader) throws(RecordFormatError) -> Void = { _ = try $0.text() }
        #expect(refusal([], integer) == "a packed record ends inside its numbers")
        #expect(refusal([0x80], integer) == "a packed record ends inside its numbers")
        #expect(
            refusal([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], integer)
                == "a packed record holds a number of over 64 bits")
        #expect(refusal([6, 0x61], text) == "a packed record ends inside its text")
        #expect(refusal([4, 0xC3, 0x28], text) == "a packed record holds text that is not UTF-8")
        let unknownWord = UInt8(PackedRecord.words.count * 2 + 1)
        #expect(
            refusal([unknownWord], text) == "a packed record names word \(PackedRecord.words.count), which is not one")
        // A word takes one byte; any other text its length and bytes.
        var writer = PackedRecord.Writer()
        writer.text("Auto-Renewable Subscription")
        writer.text("PURCHASED ")
        #expect(writer.bytes.count == 1 + 1 + 10)
        #expect(
            refusal([2], { reader throws(RecordFormatError) in _ = try reader.bool() })
                == "a packed record holds 2 where a Boolean belongs")
        #expect(
            refusal([4], { reader throws(RecordFormatError) in _ = try reader.optionalText() })
                == "a packed record holds 4 where a presence belongs")
        #expect(
            refusal([0x80, 0x80, 0x80, 0x80, 0x10], { reader throws(RecordFormatError) in _ = try reader.int32() })
                == "a packed record holds 2147483648 where a 32-bit number belongs")
        #expect(
            refusal(
                [2, 0, 0],
                { reader throws(RecordFormatError) in
                    _ = try reader.nested { reader throws(RecordFormatError) in try reader.integer() }
                })
                == "a packed record holds bytes after the members of a statement")
        #expect(
            refusal(
                [3, 0],
                { reader throws(RecordFormatError) in
                    _ = try reader.nested { reader throws(RecordFormatError) in try reader.integer() }
                })
                == "a packed record ends inside its statements")
    }

    /// A statement with every member set, as a transaction record holds it.
    static let statement = TransactionStatement(
        signedDate: 1_780_000_000_123, environment: "Sandbox", transactionId: "2000000123456789",
        originalTransactionId: "2000000000000001", productId: "com.example.pro.yearly",
        type: "Auto-Renewable Subscription", subscriptionGroupIdentifier: "21000001", purchaseDate: 1_779_000_000_000,
        expiresDate: 1_810_536_000_000, isUpgraded: true, ownership: "FAMILY_SHARED",
        appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
        revocation: RevocationFacts(date: 1_780_100_000_000, reason: 1, type: "REFUND_PRORATED", percentage: 25_000),
        price: 59_990, currency: "EUR", quantity: 3, isFreeTrial: true, additionalTransactionReason: "SEAT_ADDITION",
        invitationManagement: "DEVELOPER", revokedSeatQuantity: 2)

    @Test func aTransactionWithEveryMemberReadsBackAsTheSameRecord() throws {
        var receipt = Self.statement
        receipt.signedDate -= 5_000
        receipt.revocation = nil
        let revocation = try #require(Self.statement.revocation)
        let cancellation = (signedDate: Int64(1_780_000_000_000), date: Int64(1_779_990_000_000))
        let newest = (signedDate: Self.statement.signedDate, facts: revocation)
        let made = TransactionRecord(
            signed: Self.statement, receipt: receipt, receiptCancellation: cancellation, newestRevocation: newest,
            reversalNotified: 1_780_200_000_000, newestSeatRefund: .init(signedDate: 1_780_000_000_123, count: 2))
        let record = try #require(made)
        let packed = AppStoreRecord.packed(record)
        #expect(packed.first == StoredBody.packed)
        let read = try packed.withUnsafeBytes { bytes throws(RecordFormatError) in try AppStoreRecord(packed: bytes) }
        guard case .transaction(let back) = read else { throw RecordFormatError(reason: "not a transaction") }
        #expect(back == record)
        #expect(read.body == AppStoreRecord.transaction(record).body)
        #expect(packed.count * 3 < read.body.utf8.count, "\(packed.count) bytes packed of \(read.body.utf8.count)")

        let key = AppStoreChannel.RenewalKey(environment: "Sandbox", originalTransactionId: "2000000000000001")
        let renewal = RenewalStatement(
            signedDate: 1_780_000_000_000, isInBillingRetryPeriod: true, gracePeriodExpiresDate: 1_781_000_000_000,
            productId: "com.example.pro.monthly", appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        let renewalRead = try AppStoreRecord.packed(renewal, key: key).withUnsafeBytes {
            bytes throws(RecordFormatError) in try AppStoreRecord(packed: bytes)
        }
        #expect(renewalRead.body == AppStoreRecord.renewal(key, renewal).body)
    }

    /// A statement packed before its last member was added (Schemas/ledger-statements.tsv adds
    /// members last) reads that member as nil.
    @Test func aStatementPackedWithoutItsLastMemberReadsItAsNil() throws {
        var inner = PackedRecord.Writer()
        inner.write(Self.statement)
        // The last member, `revokedSeatQuantity` 2: a presence byte and one byte of number.
        let older = Array(inner.bytes.dropLast(2))
        var writer = PackedRecord.Writer()
        writer.varint(UInt64(older.count))
        for byte in older { writer.byte(byte) }
        let read = try writer.bytes.withUnsafeBytes { bytes throws(RecordFormatError) in
            var reader = PackedRecord.Reader(bytes)
            return try reader.nested { reader throws(RecordFormatError) in
                try TransactionStatement(
                    packed: &reader, environment: "Sandbox", transactionId: "2000000123456789",
                    originalTransactionId: "2000000000000001", ownership: "FAMILY_SHARED")
            }
        }
        var expected = Self.statement
        expected.revokedSeatQuantity = nil
        #expect(read == expected)
    }
}
