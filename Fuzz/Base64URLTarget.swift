@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// Base64url (unpadded) and standard base64 (padded) decoding of arbitrary bytes.
///
/// Properties: a decoder accepts one spelling per byte string, so whatever decodes encodes back
/// to the very same text; every byte string survives encoding then decoding; and the SSSE3 block
/// decoder and the group-at-a-time one give the same answer on any bytes.
func fuzzBase64URL(_ input: UnsafeRawBufferPointer) {
    let text = Array(input)
    if let decoded = Base64.decodeURL(text) {
        require(Base64.encodeURL(decoded) == text, "base64url accepted a non-canonical spelling")
    }
    if let decoded = Base64.decodeStandard(text) {
        require(Base64.encodeStandard(decoded) == text, "base64 accepted a non-canonical spelling")
    }
    for standard in [false, true] {
        let vector = text.withUnsafeBufferPointer { Base64.decode($0, standard: standard) }
        let scalar = text.withUnsafeBufferPointer { Base64.decode($0, standard: standard, vector: false) }
        require(vector == scalar, "the vector and the scalar decoders disagree")
    }
    require(Base64.decodeURL(Base64.encodeURL(text)) == text, "base64url round trip")
    require(Base64.decodeStandard(Base64.encodeStandard(text)) == text, "base64 round trip")
}
