import Foundation
import Testing
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI
@testable import VouchReceipts

/// `AppReceipt(payload:)`, which keeps attribute values as ranges of the payload and reads text
/// when asked, against the reference decoder it replaced (ReceiptReferenceDecoder.swift): on
/// real, minted and mutated payloads both accept the same ones with the same fields and JSON,
/// and refuse the same ones with the same code and reason.
@Suite struct ReceiptDecoderDifferentialTests {
    /// Decodes `payload` with both; records any difference. Returns whether it decoded.
    @discardableResult
    static func compare(_ payload: [UInt8], _ note: @autoclosure () -> String) -> Bool {
        let reference = Result { () throws(VerificationError) in try ReferenceAppReceipt(payload: payload) }
        let decoded = Result { () throws(VerificationError) in try AppReceipt(payload: payload) }
        switch (reference, decoded) {
        case (.failure(let expected), .failure(let error)):
            #expect(error.code == expected.code && error.reason == expected.reason, "\(note()): \(error.reason)")
            return false
        case (.success(let expected), .success(let receipt)):
            compare(receipt, expected, note())
            return true
        case (.failure(let expected), .success):
            Issue.record("\(note()): accepted what the reference refuses: \(expected.reason)")
            return false
        case (.success, .failure(let error)):
            Issue.record("\(note()): refused what the reference accepts: \(error.reason)")
            return false
        }
    }

    static func compare(_ receipt: AppReceipt, _ expected: ReferenceAppReceipt, _ note: String) {
        #expect(receipt.receiptType == expected.receiptType, "\(note)")
        #expect(receipt.appItemId == expected.appItemId, "\(note)")
        #expect(receipt.bundleId == expected.bundleId, "\(note)")
        #expect(receipt.applicationVersion == expected.applicationVersion, "\(note)")
        #expect(receipt.opaqueValue == expected.opaqueValue, "\(note)")
        #expect(receipt.sha1Hash == expected.sha1Hash, "\(note)")
        #expect(receipt.receiptCreationDate == expected.receiptCreationDate, "\(note)")
        #expect(receipt.originalPurchaseDate == expected.originalPurchaseDate, "\(note)")
        #expect(receipt.originalApplicationVersion == expected.originalApplicationVersion, "\(note)")
        #expect(receipt.receiptExpirationDate == expected.receiptExpirationDate, "\(note)")
        #expect(receipt.preorderDate == expected.preorderDate, "\(note)")
        #expect(receipt.attributes == expected.attributes, "\(note)")
        #expect(receipt.hasReceiptType(.xcode) == (expected.receiptType == .xcode), "\(note)")
        for type in [0, 2, 5, 17, 99] {
            #expect(receipt.attribute(type) == expected.attributes.first { $0.type == type }, "\(note)")
        }
        #expect(receipt.inApp.count == expected.inApp.count, "\(note)")
        for (purchase, reference) in zip(receipt.inApp, expected.inApp) {
            compare(purchase, reference, note)
        }
        // The typed view and the direct writer give the reference's JSON, byte for byte.
        let json = JSONWriter.encode(.object(expected.jsonObject))
        #expect(JSONWriter.encode(.object(receipt.jsonObject)) == json, "\(note)")
        var writer = JSONWriter()
        receipt.writeJSON(into: &writer)
        #expect(writer.bytes == json, "\(note): \(String(decoding: writer.bytes, as: UTF8.self))")
        // Equality and hashing follow the attributes.
        let again = try? AppReceipt(payload: Array(receipt.table.bytes))
        #expect(again == receipt, "\(note)")
        #expect(again?.hashValue == receipt.hashValue, "\(note)")
    }

    static func compare(_ purchase: InAppPurchaseReceipt, _ expected: ReferenceInAppPurchase, _ note: String) {
        #expect(purchase.quantity == expected.quantity, "\(note)")
        #expect(purchase.productId == expected.productId, "\(note)")
        #expect(purchase.transactionId == expected.transactionId, "\(note)")
        #expect(purchase.purchaseDate == expected.purchaseDate, "\(note)")
        #expect(purchase.originalTransactionId == expected.originalTransactionId, "\(note)")
        #expect(purchase.originalPurchaseDate == expected.originalPurchaseDate, "\(note)")
        #expect(purchase.productType == expected.productType, "\(note)")
        #expect(purchase.subscriptionExpirationDate == expected.subscriptionExpirationDate, "\(note)")
        #expect(purchase.webOrderLineItemId == expected.webOrderLineItemId, "\(note)")
        #expect(purchase.cancellationDate == expected.cancellationDate, "\(note)")
        #expect(purchase.isInTrialPeriod == expected.isInTrialPeriod, "\(note)")
        #expect(purchase.isInIntroOfferPeriod == expected.isInIntroOfferPeriod, "\(note)")
        #expect(purchase.promotionalOfferId == expected.promotionalOfferId, "\(note)")
        #expect(purchase.attributes == expected.attributes, "\(note)")
        #expect(JSONWriter.encode(.object(purchase.jsonObject)) == JSONWriter.encode(.object(expected.jsonObject)))
    }

    /// The in-app purchase decoder alone, on the value of an attribute 17 or anything else.
    static func compareInApp(_ value: [UInt8], _ note: @autoclosure () -> String) {
        let reference = Result { () throws(VerificationError) in try ReferenceInAppPurchase(payload: value) }
        let decoded = Result { () throws(VerificationError) in try InAppPurchaseReceipt(payload: value) }
        switch (reference, decoded) {
        case (.failure(let expected), .failure(let error)):
            #expect(error.code == expected.code && error.reason == expected.reason, "\(note()): \(error.reason)")
        case (.success(let expected), .success(let purchase)):
            compare(purchase, expected, note())
            #expect((try? InAppPurchaseReceipt(payload: value)) == purchase)
        default:
            Issue.record("\(note()): the decoders disagree: \(reference) \(decoded)")
        }
    }

    static let created = Date(timeIntervalSince1970: 1_700_000_000)

    /// Minted payloads, App Store and Xcode style, with every typed field and some unknown ones.
    static var mintedPayloads: [[UInt8]] {
        var payloads: [[UInt8]] = []
        for count in [0, 1, 3] {
            var content = MintReceiptContent.sample(receiptCreationDate: created, inAppCount: count, seed: count)
            payloads.append(content.encoded())
            content.xcodeStyle = true
            content.receiptExpirationDate = created.addingTimeInterval(86_400)
            if count > 0 {
                content.inApp[0].cancellationDate = created
                content.inApp[0].promotionalOfferId = "offer \"1\"\\\n\t\u{7F}\u{1} é 🧾"
                content.inApp[0].isInTrialPeriod = true
            }
            content.extraAttributes = [(8, ReceiptDER.ia5String("2023-11-14T22:13:20Z")), (25, [0x02, 0x01, 0x07])]
            payloads.append(content.encoded())
        }
        return payloads
    }

    /// Attribute values of every shape a typed field can meet, good and bad.
    static let values: [[UInt8]] = [
        ReceiptDER.utf8String("plain"), ReceiptDER.utf8String(""), ReceiptDER.utf8String("\"quoted\" \\ back"),
        ReceiptDER.utf8String("line\nbreak\r\ttab\u{0}\u{1F}\u{7F}"), ReceiptDER.utf8String("ünïcødé ✓ 🧾"),
        ReceiptDER.utf8String("Xcode"), ReceiptDER.utf8String("ProductionSandbox"),
        ReceiptDER.utf8String("\u{212A}"),  // KELVIN SIGN: a canonical equivalent of "K"
        ReceiptDER.tlv(0x0C, [0xC3, 0x28]), ReceiptDER.tlv(0x0C, [0xED, 0xA0, 0x80]), ReceiptDER.tlv(0x0C, [0xFF]),
        ReceiptDER.tlv(0x0C, [0xC0, 0xAF]), ReceiptDER.tlv(0x16, [0xC3, 0xA9]), ReceiptDER.tlv(0x16, [0xFF]),
        ReceiptDER.ia5String("2015-09-16T19:48:24Z"), ReceiptDER.ia5String("2015-09-16T19:48:24.5Z"),
        ReceiptDER.ia5String("2015-09-16T19:48:24.123456Z"), ReceiptDER.ia5String("2023-10-19T01:45:36+0300"),
        ReceiptDER.ia5String("2023-10-19T01:45:36-03:30"), ReceiptDER.ia5String("0001-01-01T00:00:00Z"),
        ReceiptDER.ia5String("2024-02-30T00:00:00Z"), ReceiptDER.ia5String("2015-09-16 19:48:24Z"),
        ReceiptDER.ia5String("2015-09-16T19:48:24"), ReceiptDER.ia5String("2015-09-16T19:48:24.Z"),
        ReceiptDER.ia5String(""), ReceiptDER.utf8String("2015-09-16T19:48:24Z"),
        ReceiptDER.integer(0), ReceiptDER.integer(1), ReceiptDER.integer(-1), ReceiptDER.integer(.max),
        ReceiptDER.integer(.min), ReceiptDER.integer(1_000_000_000_123), [0x02, 0x02, 0x00, 0x01], [0x02, 0x00],
        [0x02, 0x02, 0xFF, 0x80], [0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0], [0x02, 0x01],
        [0x24, 0x03, 0x04, 0x01, 0x41], [0x2C, 0x80, 0x04, 0x01, 0x41, 0x00, 0x00], [0x0C, 0x80, 0x00, 0x00],
        [0x0C, 0x81, 0x05, 0x41, 0x41, 0x41, 0x41, 0x41], [0x0C, 0x01, 0x41, 0x00], [0x1F, 0x01, 0x00], [],
        [0x30, 0x00], [0x05, 0x00], [0x04, 0x02, 0x02, 0x01],
    ]

    @Test(.sharedVectors("receipts")) func realPayloadsDecodeAlike() throws {
        var decoded = 0
        for entry in SharedReceipts.real {
            let bytes = try SharedReceipts.bytes("real/\(entry.name)")
            let container = try ReceiptContainer(bytes)
            let payload = container.content.flatMap { bytes[$0] }
            if Self.compare(payload, entry.name) { decoded += 1 }
            let receipt = try AppReceipt(payload: payload)
            for attribute in receipt.attributes where attribute.type == 17 {
                Self.compareInApp(attribute.value, "\(entry.name) in-app")
            }
        }
        #expect(decoded == SharedReceipts.real.count)
    }

    @Test func everyTypedFieldMeetsEveryShapeOfValue() {
        let types = [0, 1, 2, 3, 4, 5, 12, 17, 18, 19, 21, 32, 7]
        let inAppTypes = [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721, 1710]
        var decoded = 0
        for (index, value) in Self.values.enumerated() {
            for type in types {
                var attributes: [(Int, [UInt8])] = [(2, ReceiptDER.utf8String("com.example"))]
                if type != 2 { attributes.append((type, value)) } else { attributes = [(2, value)] }
                let payload = MintReceiptContent.attributeSet(attributes, byType: false)
                if Self.compare(payload, "value \(index) as attribute \(type)") { decoded += 1 }
            }
            for type in inAppTypes {
                let inApp = MintReceiptContent.attributeSet([(type, value)], byType: false)
                Self.compareInApp(inApp, "value \(index) as in-app attribute \(type)")
                let payload = MintReceiptContent.attributeSet(
                    [(2, ReceiptDER.utf8String("com.example")), (17, inApp), (17, inApp)], byType: true)
                if Self.compare(payload, "value \(index) as in-app attribute \(type) twice") { decoded += 1 }
            }
        }
        // Both good and bad values were met.
        #expect(decoded > 100)
        #expect(decoded < Self.values.count * (types.count + inAppTypes.count))
    }

    @Test func oddSetsDecodeAlike() {
        let bundle = ReceiptDER.sequence([
            ReceiptDER.integer(2), ReceiptDER.integer(1), ReceiptDER.octetString(ReceiptDER.utf8String("b")),
        ])
        let unknown = ReceiptDER.sequence([ReceiptDER.integer(7), ReceiptDER.integer(-3), ReceiptDER.octetString([])])
        let inApp = ReceiptDER.set(
            [
                ReceiptDER.sequence([
                    ReceiptDER.integer(1702), ReceiptDER.integer(1), ReceiptDER.octetString(ReceiptDER.utf8String("p")),
                ])
            ], ber: true)
        let purchase = ReceiptDER.sequence([
            ReceiptDER.integer(17), ReceiptDER.integer(1), ReceiptDER.octetString(inApp),
        ])
        let sets: [[UInt8]] = [
            ReceiptDER.set([bundle]), ReceiptDER.set([bundle], ber: true), ReceiptDER.set([bundle, unknown, unknown]),
            ReceiptDER.set(
                [
                    ReceiptDER.sequence(
                        [
                            ReceiptDER.integer(2), ReceiptDER.integer(1),
                            ReceiptDER.octetString(ReceiptDER.utf8String("b")),
                        ], ber: true), purchase,
                ], ber: true),
            ReceiptDER.set([bundle, bundle]), ReceiptDER.set([unknown, bundle, unknown, bundle]),
            ReceiptDER.set([bundle]) + [0],
            ReceiptDER.set([bundle, purchase, purchase]), ReceiptDER.set([]), [], [0x31], [0x31, 0x80], [0x30, 0x00],
            ReceiptDER.set([ReceiptDER.sequence([ReceiptDER.integer(2), ReceiptDER.integer(1)])]),
            ReceiptDER.set([
                ReceiptDER.sequence([
                    ReceiptDER.integer(2), ReceiptDER.integer(1),
                    ReceiptDER.tlv(0x24, ReceiptDER.octetString([0x0C, 0x00])),
                ])
            ]),
            ReceiptDER.set([
                ReceiptDER.sequence([
                    ReceiptDER.integer(2), ReceiptDER.integer(1), ReceiptDER.octetString(ReceiptDER.utf8String("b")),
                    ReceiptDER.null,
                ])
            ]),
            ReceiptDER.set([ReceiptDER.tlv(0x31, bundle)]), ReceiptDER.set([ReceiptDER.integer(2)]),
            ReceiptDER.set([
                ReceiptDER.sequence([
                    [0x02, 0x09, 1, 0, 0, 0, 0, 0, 0, 0, 0], ReceiptDER.integer(1), ReceiptDER.octetString([]),
                ])
            ]),
            Array(repeating: [0x31, 0x80], count: 20).flatMap { $0 } + Array(repeating: 0, count: 40),
        ]
        for (index, set) in sets.enumerated() {
            Self.compare(set, "set \(index)")
            Self.compareInApp(set, "set \(index) as an in-app purchase")
        }
    }

    @Test func mutatedMintedPayloadsDecodeAlike() {
        var random = SeededRandom(seed: 11)
        var decoded = 0
        var refused = 0
        for (number, payload) in Self.mintedPayloads.enumerated() {
            for index in payload.indices {
                var mutated = payload
                mutated[index] ^= UInt8(1 << random.below(8))
                if Self.compare(mutated, "payload \(number), bit flipped in byte \(index)") {
                    decoded += 1
                } else {
                    refused += 1
                }
            }
            for length in 0..<payload.count where length % 3 == 0 || length > payload.count - 8 {
                Self.compare(Array(payload.prefix(length)), "payload \(number) cut to \(length) bytes")
            }
            for _ in 0..<200 {
                var mutated = payload
                mutated.insert(UInt8(truncatingIfNeeded: random.next()), at: random.below(payload.count + 1))
                Self.compare(mutated, "payload \(number) with a byte inserted")
            }
        }
        // Flips land in text (still decoding) as well as in structure (refused).
        #expect(decoded > 100)
        #expect(refused > 100)
    }

    /// Bundle ids and receipt types are compared where they lie, bytes first: the verdict is
    /// the one `String` equality (canonical equivalence) gives.
    @Test func textInThePayloadComparesAsStrings() throws {
        let texts = [
            "com.example", "com.example.", "com.exampl", "Com.example", "caf\u{E9}", "cafe\u{301}", "\u{212A}", "K",
            "k", "", "Xcode", "xcode", "Xcode\u{0}", "\u{1F9FE}",
        ]
        for text in texts {
            let payload = MintReceiptContent.attributeSet(
                [(2, ReceiptDER.utf8String(text)), (0, ReceiptDER.utf8String(text))], byType: true)
            let receipt = try AppReceipt(payload: payload)
            for expected in texts {
                #expect(
                    receipt.table.text(receipt.bundleIdText, equals: expected) == (text == expected),
                    "\(text) \(expected)")
                #expect(receipt.hasReceiptType(ReceiptType(rawValue: expected)) == (text == expected))
            }
        }
    }

    @Test func theExpectedBundleIdIsComparedAsAString() throws {
        let authority = try MintReceiptAuthority.generate(
            .init(
                validity: MintValidity(
                    notBefore: Self.created.addingTimeInterval(-86_400),
                    notAfter: Self.created.addingTimeInterval(86_400))))
        var content = MintReceiptContent.sample(receiptCreationDate: Self.created, inAppCount: 1)
        content.bundleId = "com.caf\u{E9}"
        let receipt = try MintReceiptSigner(authority: authority).sign(content)
        for (expected, accepted) in [
            ("com.caf\u{E9}", true), ("com.cafe\u{301}", true), ("com.cafe", false), ("com.caf\u{E9}.", false),
        ] {
            var configuration = ReceiptVerifier.Configuration(bundleId: expected, environment: .sandbox)
            configuration.trustAnchors = [try authority.anchorCertificate()]
            let rejection = try ReceiptVerifier(configuration: configuration).rejection(receipt)
            #expect(rejection?.code == (accepted ? nil : .wrongBundleId), "\(expected)")
        }
    }

    @Test(.sharedVectors("receipts")) func mutatedRealPayloadsDecodeAlike() throws {
        var random = SeededRandom(seed: 5)
        for entry in SharedReceipts.real {
            let bytes = try SharedReceipts.bytes("real/\(entry.name)")
            let payload = try ReceiptContainer(bytes).content.flatMap { bytes[$0] }
            for _ in 0..<60 {
                var mutated = payload
                let index = random.below(payload.count)
                mutated[index] ^= UInt8(1 << random.below(8))
                Self.compare(mutated, "\(entry.name), bit flipped in byte \(index)")
            }
        }
    }
}
