package import VouchOpenSSL

/// A compact JWS signed with a known ES256 key instead of an App Store certificate chain: what
/// a server signs for StoreKit (promotional offers, introductory offer eligibility, Advanced
/// Commerce in-app requests) and the App Store Server API's bearer token. Verified with the
/// key the caller names, so `x5c` is neither needed nor read.
///
/// The checks, in order: the size bound, three segments, the header as every token's (canonical
/// base64url, a strict JSON object, `alg` ES256, no `crit`, a `kid` that is a string), the
/// 64-byte `r‖s` signature over the received `header.payload` with the key, the claims as a
/// strict JSON object, then the time claims (NumericDate seconds) at the validation instant:
/// `exp` must be after it, `nbf` and `iat` not after it; and `bid` when a bundle id is expected.
package struct KeySignedToken: Sendable {
    /// The protected header, as signed.
    package let header: JSONObject
    /// The claims (payload), as signed.
    package let claims: JSONObject
    /// The instant the time claims were checked at.
    package let validationTime: Timestamp

    /// Verifies `token` with `key`.
    ///
    /// - Parameters:
    ///   - time: the validation instant: ``ValidationTime/signedDate`` is the token's `iat`
    ///     (the current time when it has none), ``ValidationTime/now`` is `now`.
    ///   - now: the current time, read once by the caller.
    ///   - bundleId: the `bid` the claims must carry; `nil` checks none.
    package init(
        verifying token: some Collection<UInt8>, key: PublicKey, at time: ValidationTime, now: Timestamp,
        bundleId: String? = nil, maximumSize: Int = 64 * 1024
    ) throws(VerificationError) {
        let bytes = Array(token)
        let (header, payloadBytes) = try bytes.withUnsafeBufferPointer {
            bytes throws(VerificationError) -> (JSONObject, [UInt8]) in
            let jws = try CompactJWS(locatingIn: bytes, maximumSize: maximumSize)
            let header = try ProtectedHeader.decode(segment: UnsafeBufferPointer(rebasing: bytes[jws.header]))
            if let kid = header["kid"], kid.stringValue == nil {
                throw VerificationError(.badHeaderJSON, "kid is not a string")
            }
            do throws(VerificationError) {
                return (header, try Engine.checkSignature(of: jws, in: bytes, key: key))
            } catch {
                guard error.code == .badSignature else { throw error }
                throw VerificationError(.badSignature, "the ES256 signature does not verify with the given key")
            }
        }
        let claims: JSONObject
        do throws(StrictJSON.ParseError) {
            claims = try StrictJSON.parseObject(payloadBytes, limits: .init(maximumDepth: 32))
        } catch {
            throw VerificationError(error.isNestingTooDeep ? .jsonTooDeep : .badPayloadJSON, "claims: \(error)")
        }
        let issuedAt = try Self.numericDate("iat", in: claims)
        let instant: Timestamp
        switch time {
        case .signedDate: instant = issuedAt ?? now
        case .now: instant = now
        case .fixed(let fixed): instant = fixed
        }
        if let expiry = try Self.numericDate("exp", in: claims), instant >= expiry {
            throw VerificationError(
                .tokenExpired, "exp is \(expiry.iso8601): the token had expired at \(instant.iso8601)")
        }
        if let notBefore = try Self.numericDate("nbf", in: claims), instant < notBefore {
            throw VerificationError(
                .tokenNotYetValid, "nbf is \(notBefore.iso8601): the token was not yet valid at \(instant.iso8601)")
        }
        if let issuedAt, instant < issuedAt {
            throw VerificationError(
                .tokenNotYetValid, "iat is \(issuedAt.iso8601): the token was not yet issued at \(instant.iso8601)")
        }
        if let bundleId {
            guard let bid = claims["bid"] else {
                throw VerificationError(.wrongBundleId, "the claims have no bid; \"\(bundleId)\" is required")
            }
            guard bid.stringValue == bundleId else {
                throw VerificationError(
                    .wrongBundleId, "bid is \(JSONWriter.string(bid)), not \"\(bundleId)\"")
            }
        }
        self.header = header
        self.claims = claims
        self.validationTime = instant
    }

    /// A NumericDate claim (RFC 7519: seconds since 1970, a fraction allowed) as the instant it
    /// names, to the millisecond; `nil` when absent.
    static func numericDate(_ name: String, in claims: JSONObject) throws(VerificationError) -> Timestamp? {
        guard let value = claims[name] else { return nil }
        guard case .number(let text) = value, let seconds = Double(text), seconds.isFinite else {
            throw VerificationError(.badPayloadJSON, "\(name) is not a number of seconds")
        }
        let milliseconds = (seconds * 1000).rounded(.down)
        guard milliseconds > -0x1p63, milliseconds < 0x1p63 else {
            throw VerificationError(.badPayloadJSON, "\(name) is out of range")
        }
        return Timestamp(milliseconds: Int64(milliseconds))
    }
}
