public import Vouch

/// The ids of an iOS 6 style transaction receipt (`SKPaymentTransaction.transactionReceipt`),
/// read WITHOUT validation: its signature cannot be checked offline, and Apple's own libraries
/// read it unverified too. What it gives is for calling the App Store Server API (Get
/// Transaction History takes the `transactionId`), never for granting anything.
///
/// The receipt is an old-style (OpenStep) property list of quoted strings,
/// `{ "signature" = "…"; "purchase-info" = "…"; … }`, whose `purchase-info` is the standard
/// base64 of another such list holding `transaction-id`. Both lists are read strictly: quoted
/// keys and values (`\"` and `\\` the only escapes), `=` and `;` in place, no member twice,
/// valid UTF-8, nothing after the closing brace but whitespace; the base64 must be canonical.
public struct LegacyTransactionReceipt: Sendable, Hashable {
    /// `transaction-id` of `purchase-info`: what the App Store Server API takes.
    public let transactionId: String
    /// `original-transaction-id` of `purchase-info`, when present.
    public var originalTransactionId: String? { purchaseInfo["original-transaction-id"]?.stringValue }
    /// `product-id` of `purchase-info`, when present.
    public var productId: String? { purchaseInfo["product-id"]?.stringValue }
    /// `bid` (the bundle id) of `purchase-info`, when present.
    public var bundleId: String? { purchaseInfo["bid"]?.stringValue }
    /// `environment` of the outer list (`Sandbox`; absent in production), when present.
    public let environment: String?
    /// Every member of `purchase-info`, in order, as strings.
    public let purchaseInfo: JSONObject

    /// The characters Apple's `ReceiptUtility` takes for an id or a base64 value; an id made of
    /// others is not one.
    static let idCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)

    /// Reads the receipt's bytes: the property list itself (what the device holds; base64 text
    /// goes through ``ReceiptInput/receipt(in:field:)`` first). Throws
    /// `receipt_not_a_receipt` for anything that is not an old-style
    /// property list, `receipt_malformed_payload` naming what is wrong
    /// with one.
    public init(plist bytes: [UInt8]) throws(VerificationError) {
        guard bytes.first(where: { !OldStylePlist.isSpace($0) }) == UInt8(ascii: "{") else {
            throw VerificationError(
                .receiptNotAReceipt,
                "not an iOS 6 style transaction receipt (an old-style property list beginning with '{')")
        }
        let outer = try OldStylePlist.dictionary(bytes, name: "the receipt")
        guard let purchaseInfo = outer["purchase-info"]?.stringValue else {
            throw VerificationError(.receiptMalformedPayload, "the transaction receipt has no purchase-info")
        }
        guard let inner = Base64.decodeStandard(purchaseInfo.utf8) else {
            throw VerificationError(
                .receiptMalformedPayload, "purchase-info is not canonical, padded standard base64")
        }
        let info = try OldStylePlist.dictionary(inner, name: "purchase-info")
        guard let transactionId = info["transaction-id"]?.stringValue else {
            throw VerificationError(.receiptMalformedPayload, "purchase-info has no transaction-id")
        }
        guard !transactionId.isEmpty, transactionId.utf8.allSatisfy(Self.idCharacters.contains) else {
            throw VerificationError(
                .receiptMalformedPayload, "the transaction-id \"\(transactionId)\" is not a transaction identifier")
        }
        self.transactionId = transactionId
        self.environment = outer["environment"]?.stringValue
        self.purchaseInfo = info
    }

    /// Reads the receipt's base64 text (the form servers receive; line breaks allowed), or a
    /// JSON body holding it, as ``ReceiptInput/receipt(in:field:)`` finds it.
    public init(base64 text: some Collection<UInt8>) throws(VerificationError) {
        try self.init(plist: try ReceiptInput.receipt(in: Array(text)))
    }
}

/// The old-style property lists of transaction receipts: one dictionary of quoted strings.
enum OldStylePlist {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The members of the dictionary `bytes` holds, in order; `name` says which list failed.
    static func dictionary(_ bytes: [UInt8], name: String) throws(VerificationError) -> JSONObject {
        var index = 0
        func fail(_ problem: String) -> VerificationError {
            VerificationError(
                .receiptMalformedPayload, "\(name) is not an old-style property list: \(problem) at byte \(index)")
        }
        func skipSpace() {
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        }
        func expect(_ byte: UInt8, _ what: String) throws(VerificationError) {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw fail("expected \(what)") }
            index += 1
        }
        func quoted(_ what: String) throws(VerificationError) -> String {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a quoted \(what)")
            }
            index += 1
            var text: [UInt8] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "\\")
                    else { throw fail("an escape other than \\\" or \\\\") }
                }
                text.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw fail("an unterminated string") }
            index += 1
            guard let string = String(validating: text, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
            return string
        }
        try expect(UInt8(ascii: "{"), "'{'")
        var members = JSONObject()
        while true {
            skipSpace()
            guard index < bytes.count else { throw fail("no closing '}'") }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            }
            let key = try quoted("key")
            try expect(UInt8(ascii: "="), "'=' after \"\(key)\"")
            let value = try quoted("value of \"\(key)\"")
            try expect(UInt8(ascii: ";"), "';' after the value of \"\(key)\"")
            guard members[key] == nil else { throw fail("\"\(key)\" a second time") }
            members[key] = .string(value)
        }
        skipSpace()
        guard index == bytes.count else { throw fail("bytes after the closing '}'") }
        return members
    }
}
