@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// Splitting arbitrary bytes as a compact JWS, with a small size limit so that both sides of
/// it are reached.
///
/// Property: the split agrees with a plain count of dots: over the limit is `token_too_large`;
/// otherwise three non-empty segments are located exactly, anything else is `malformed_token`.
func fuzzCompactJWS(_ input: UnsafeRawBufferPointer) {
    let limit = 2048
    let bytes = input.bindMemory(to: UInt8.self)
    let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
    do throws(VerificationError) {
        let jws = try CompactJWS(locatingIn: bytes, maximumSize: limit)
        require(bytes.count <= limit && dots.count == 2, "split accepted \(bytes.count) bytes with \(dots.count) dots")
        require(jws.header == 0..<dots[0], "header range")
        require(jws.payload == dots[0] + 1..<dots[1], "payload range")
        require(jws.signature == dots[1] + 1..<bytes.count, "signature range")
        require(!jws.header.isEmpty && !jws.payload.isEmpty && !jws.signature.isEmpty, "an empty segment")
        require(jws.signingInput == 0..<dots[1], "signing input range")
    } catch {
        if bytes.count > limit {
            require(error.code == .tokenTooLarge, "over the limit, got \(error.code)")
        } else {
            require(error.code == .malformedToken, "under the limit, got \(error.code)")
            let segments = [0] + dots.map { $0 + 1 }
            let ends = dots + [bytes.count]
            require(dots.count != 2 || zip(segments, ends).contains { $0 == $1 }, "a well-shaped token was refused")
        }
    }
}
