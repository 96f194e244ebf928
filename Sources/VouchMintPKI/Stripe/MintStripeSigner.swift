internal import Foundation
public import Vouch
internal import VouchOpenSSL
public import VouchStripe

/// Signs minted Stripe events as an endpoint receives them: the body indented as Stripe
/// writes it, the `Stripe-Signature` header with one `v1` per secret (as Stripe signs with
/// every secret of an endpoint while one is rolled), and in test mode a `v0` of another
/// scheme, which a verifier ignores.
public struct MintStripeSigner: Sendable {
    /// The endpoint secrets, each giving one `v1`.
    public let secrets: [String]
    private let keys: [HMACSHA256]
    /// The key of test mode's `v0` signatures (a scheme nobody verifies).
    private let otherScheme: HMACSHA256

    /// A signer with `secrets` (at least one, none empty).
    public init(secrets: [String]) throws(MintError) {
        guard !secrets.isEmpty, !secrets.contains(where: \.isEmpty) else {
            throw MintError(.invalidInput, "give at least one Stripe secret, none empty")
        }
        self.secrets = secrets
        keys = try secrets.map { secret throws(MintError) in
            try MintError.openSSL { () throws(OpenSSLError) in try HMACSHA256(key: Array(secret.utf8)) }
        }
        otherScheme = try MintError.openSSL { () throws(OpenSSLError) in
            try HMACSHA256(key: Array("v0:\(secrets[0])".utf8))
        }
    }

    /// The delivery of `event` (a Stripe event object) created at `created` (seconds since
    /// 1970), signed two seconds after it or at `signedAt` (a retry, days later, is signed anew).
    public func delivery(event: JSONObject, created: Int64, signedAt: Int64? = nil) throws(MintError)
        -> StripeDelivery
    {
        try delivery(body: Self.body(event), signedAt: signedAt ?? created + 2, livemode: Self.livemode(event))
    }

    /// `body` signed at `signedAt` with every secret.
    public func delivery(body: [UInt8], signedAt: Int64, livemode: Bool = false) throws(MintError) -> StripeDelivery {
        let time = Array(String(signedAt).utf8)
        var header = "t=\(signedAt)"
        for key in keys { header += ",v1=" + (try Self.sign(time, body, key)) }
        if !livemode { header += ",v0=" + (try Self.sign(time, body, otherScheme)) }
        return StripeDelivery(signature: header, body: body)
    }

    /// A broken delivery of `event` (a Stripe event object created at `created`, seconds since
    /// 1970): what a verifier given ``secrets`` must refuse with `defect`'s
    /// ``MintStripeDefect/expectedErrorCode``.
    public func tampered(_ defect: MintStripeDefect, event: JSONObject, created: Int64, signedAt: Int64? = nil)
        throws(MintError) -> StripeDelivery
    {
        let time = signedAt ?? created + 2
        let livemode = Self.livemode(event)
        switch defect {
        case .body:
            var delivery = try delivery(event: event, created: created, signedAt: time)
            // The last digit of `created`: still an event, no longer the signed bytes.
            let created = Array("\"created\": ".utf8)
            if let start = delivery.body.firstRange(of: created)?.upperBound,
                let digit = delivery.body[start...].firstIndex(where: { !(0x30...0x39).contains($0) })
            {
                delivery.body[digit - 1] = delivery.body[digit - 1] == 0x30 ? 0x31 : 0x30
            }
            return delivery
        case .secret:
            let other = try MintStripeSigner(secrets: secrets.map { $0 + "-other" })
            return try other.delivery(event: event, created: created, signedAt: time)
        case .timestamp:
            var delivery = try delivery(event: event, created: created, signedAt: time)
            delivery.signature = delivery.signature.replacingOccurrences(of: "t=\(time)", with: "t=\(time + 1)")
            return delivery
        case .noV1:
            let body = Self.body(event)
            let signature = try Self.sign(Array(String(time).utf8), body, otherScheme)
            return StripeDelivery(signature: "t=\(time),v0=\(signature)", body: body)
        case .header:
            var delivery = try delivery(event: event, created: created, signedAt: time)
            delivery.signature = delivery.signature.replacingOccurrences(of: "t=\(time)", with: "t=\(time)s")
            return delivery
        case .notJSON:
            return try delivery(body: Array("<html>not json</html>".utf8), signedAt: time, livemode: livemode)
        case .notEvent:
            let object = event["data"]?.objectValue?["object"] ?? .object([:])
            var writer = JSONWriter()
            writer.write(object, indent: 2)
            return try delivery(body: writer.bytes, signedAt: time, livemode: livemode)
        }
    }

    /// The body as Stripe sends it: indented by two spaces.
    static func body(_ event: JSONObject) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 8192)
        writer.write(.object(event), indent: 2)
        return writer.bytes
    }

    static func livemode(_ event: JSONObject) -> Bool { event["livemode"]?.boolValue ?? false }

    static func sign(_ time: [UInt8], _ body: [UInt8], _ key: HMACSHA256) throws(MintError) -> String {
        let signature = body.withUnsafeBytes {
            StripeSignatureHeader.signature(timestampText: time, body: $0, key: key)
        }
        guard let signature else { throw MintError(.openSSLFailure, "OpenSSL could not compute HMAC-SHA256") }
        return String(decoding: signature, as: UTF8.self)
    }
}

/// A defect of a minted Stripe delivery, and the code a verifier must reject it with.
public enum MintStripeDefect: String, Sendable, CaseIterable {
    /// One byte of the body changed after signing.
    case body
    /// Signed with other secrets.
    case secret
    /// The header's timestamp changed after signing.
    case timestamp
    /// Only a signature of another scheme (`v0`).
    case noV1 = "no-v1"
    /// A timestamp that is not a number.
    case header
    /// A correctly signed body that is not JSON.
    case notJSON = "not-json"
    /// A correctly signed JSON body that is not an event (the event's object alone).
    case notEvent = "not-event"

    /// The error code a verifier must report.
    public var expectedErrorCode: String {
        switch self {
        case .body, .secret, .timestamp: VerificationError.Code.stripeBadSignature.rawValue
        case .noV1: VerificationError.Code.stripeNoSignature.rawValue
        case .header: VerificationError.Code.stripeMalformedHeader.rawValue
        case .notJSON: VerificationError.Code.stripeBadBodyJSON.rawValue
        case .notEvent: VerificationError.Code.stripeNotAnEvent.rawValue
        }
    }
}
