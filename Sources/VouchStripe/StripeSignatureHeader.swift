package import Vouch
package import VouchOpenSSL

/// A `Stripe-Signature` header read strictly: `t=TIMESTAMP,v1=SIGNATURE[,v1=SIGNATURE…]`, items
/// of other schemes (`v0=…`) ignored.
///
/// Stricter than Stripe's libraries where they are lenient, never laxer: `t` must appear once,
/// as plain decimal digits without a sign or leading zero (Stripe's libraries read the number
/// and sign its decimal text, so `t=0123` would be checked as `123`), and every item must be
/// `key=value`. Names are compared exactly, as Stripe's libraries do (` v1` is another scheme).
package struct StripeSignatureHeader: Sendable {
    /// The timestamp `t`, in seconds since 1970.
    package var timestamp: Int64
    /// The decimal text of ``timestamp``: the start of the signed text.
    package var timestampText: [UInt8]
    /// Every `v1` value, in order.
    package var signatures: [ArraySlice<UInt8>]

    /// A header longer than this is refused: Stripe's hold a timestamp and a few signatures.
    package static let maximumLength = 8192
    /// A timestamp of more digits than this is refused (the year 33658 has 12).
    static let maximumTimestampDigits = 12

    package init(_ header: some Collection<UInt8>) throws(VerificationError) {
        let bytes = Array(header)
        guard !bytes.isEmpty else {
            throw VerificationError(.stripeMalformedHeader, "the Stripe-Signature header is empty")
        }
        guard bytes.count <= Self.maximumLength else {
            throw VerificationError(
                .stripeMalformedHeader,
                "the Stripe-Signature header is \(bytes.count) bytes; the limit is \(Self.maximumLength)")
        }
        var timestamp: (Int64, [UInt8])? = nil
        var signatures: [ArraySlice<UInt8>] = []
        for item in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else {
                throw VerificationError(
                    .stripeMalformedHeader,
                    "the Stripe-Signature item \"\(Self.text(item))\" is not key=value")
            }
            let key = item[..<equals]
            let value = item[(equals + 1)...]
            if key.elementsEqual("t".utf8) {
                guard timestamp == nil else {
                    throw VerificationError(
                        .stripeMalformedHeader, "the Stripe-Signature header has two timestamps (t)")
                }
                timestamp = try Self.timestamp(value)
            } else if key.elementsEqual("v1".utf8) {
                signatures.append(value)
            }
        }
        guard let timestamp else {
            throw VerificationError(.stripeMalformedHeader, "the Stripe-Signature header has no timestamp (t)")
        }
        guard !signatures.isEmpty else {
            throw VerificationError(
                .stripeNoSignature, "the Stripe-Signature header has no v1 signature (other schemes are not checked)")
        }
        (self.timestamp, self.timestampText) = timestamp
        self.signatures = signatures
    }

    private static func timestamp(_ value: ArraySlice<UInt8>) throws(VerificationError) -> (Int64, [UInt8]) {
        let digits = value.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard digits, !value.isEmpty, value.count <= maximumTimestampDigits,
            value.count == 1 || value.first != UInt8(ascii: "0"), let number = Int64(Self.text(value))
        else {
            throw VerificationError(
                .stripeMalformedHeader,
                "the Stripe-Signature timestamp \"\(Self.text(value))\" is not a number of seconds in plain decimal digits"
            )
        }
        return (number, Array(value))
    }

    private static func text(_ bytes: some Collection<UInt8>) -> String {
        let shown = String(decoding: bytes.prefix(64), as: UTF8.self)
        return bytes.count > 64 ? shown + "…" : shown
    }

    /// The `v1` signature of `body` signed at `timestampText`: the lowercase hexadecimal
    /// HMAC-SHA256 of `timestampText ‖ "." ‖ body`, 64 bytes; `nil` when OpenSSL fails.
    package static func signature(timestampText: [UInt8], body: UnsafeRawBufferPointer, key: HMACSHA256)
        -> [UInt8]?
    {
        let mac = timestampText.withUnsafeBytes { time in
            withUnsafeBytes(of: UInt8(ascii: ".")) { dot in key.authenticate(time, dot, body) }
        }
        guard let mac else { return nil }
        return Array(withUnsafeBytes(of: mac) { $0.hexString }.utf8)
    }
}
