internal import Foundation

@testable internal import Vouch
@testable internal import VouchOpenSSL

/// The fixed-key ES256 chunk verifier against OpenSSL's generic `EVP_PKEY_verify`.
///
/// The input is a chunk of 98-byte records: an operation byte, an index byte, a 32-byte digest
/// and a 64-byte `r‖s`. With the operation's high bit clear the record's digest and signature
/// are used as they are; with it set the record starts from a genuine signature of the minted
/// vectors (picked by the index) and applies the operation's low bits with the record's bytes:
/// XOR into the signature or the digest, s → n − s, r → r + n, r or s set to 0, n or n − 1.
///
/// Properties: the chunk's verdicts, and each record's verdict alone, equal EVP's, position by
/// position; a genuine signature, as it is or with s → n − s, verifies.
func fuzzFixedKeyES256(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let recordSize = 98
    var digests: [UInt8] = []
    var signatures: [UInt8] = []
    var mustVerify: [Int] = []
    for start in stride(from: 0, to: bytes.count - recordSize + 1, by: recordSize) {
        let record = Array(bytes[start..<start + recordSize])
        var digest = Array(record[2..<34])
        var signature = Array(record[34..<98])
        if record[0] & 0x80 != 0, !genuineSignatures.isEmpty {
            let genuine = genuineSignatures[Int(record[1]) % genuineSignatures.count]
            let maskDigest = digest
            let maskSignature = signature
            digest = genuine.digest
            signature = genuine.signature
            if record[0] & 0x0f == 0 || record[0] & 0x0f == 3 { mustVerify.append(digests.count / 32) }
            switch record[0] & 0x0f {
            case 0: break
            case 1: signature = zip(signature, maskSignature).map { $0 ^ $1 }
            case 2: digest = zip(digest, maskDigest).map { $0 ^ $1 }
            case 3: signature = Array(signature[0..<32]) + fuzzSubtract(p256Order, Array(signature[32..<64]))
            case 4:
                let (sum, carry) = fuzzAdd(Array(signature[0..<32]), p256Order)
                signature = (carry ? p256Order : sum) + Array(signature[32..<64])
            case 5: signature = [UInt8](repeating: 0, count: 32) + Array(signature[32..<64])
            case 6: signature = Array(signature[0..<32]) + [UInt8](repeating: 0, count: 32)
            case 7: signature = p256Order + Array(signature[32..<64])
            case 8: signature = Array(signature[0..<32]) + p256Order
            case 9:
                signature = fuzzSubtract(p256Order, [UInt8](repeating: 0, count: 31) + [1]) + Array(signature[32..<64])
            case 10:
                signature = Array(signature[0..<32]) + fuzzSubtract(p256Order, [UInt8](repeating: 0, count: 31) + [1])
            case 11: signature = Array(maskSignature[0..<32]) + Array(signature[32..<64])
            default: signature = Array(signature[0..<32]) + Array(maskSignature[32..<64])
            }
        }
        digests += digest
        signatures += signature
    }
    let count = digests.count / 32
    guard count > 0, let fixed = fuzzFixedKey else { return }
    let generic = (0..<count).map { index in
        ES256.verify(
            signature: signatures[64 * index..<64 * index + 64], digest: Array(digests[32 * index..<32 * index + 32]),
            key: fuzzLeafKey)
    }
    let chunk = digests.withUnsafeBytes { digests in
        signatures.withUnsafeBytes { fixed.verify(digests: digests, signatures: $0, count: count) }
    }
    for index in mustVerify { require(generic[index], "genuine signature \(index) rejected") }
    require(chunk == generic, "chunk \(String(describing: chunk)) generic \(generic)")
    for index in 0..<count {
        let alone = fixed.verify(
            digest: Array(digests[32 * index..<32 * index + 32]),
            signature: Array(signatures[64 * index..<64 * index + 64]))
        require(
            alone == generic[index], "record \(index) alone: \(String(describing: alone)), generic \(generic[index])")
    }
}

/// The minted leaf's key, with and without its table.
let fuzzLeafKey: PublicKey = Certificate(derOrPEM: vectorFile("minted/ca/leaf.der"))!.publicKey!
let fuzzFixedKey: FixedKeyES256? = FixedKeyES256(key: fuzzLeafKey)

/// (digest, r‖s) of every token the minted leaf signed in the vectors.
let genuineSignatures: [(digest: [UInt8], signature: [UInt8])] = {
    var pairs: [(digest: [UInt8], signature: [UInt8])] = []
    for name in ["transaction", "renewal-info", "notification", "app-transaction", "realtime-request"] {
        for line in String(decoding: vectorFile("minted/\(name).txt"), as: UTF8.self).split(separator: "\n") {
            let bytes = Array(line.utf8)
            guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")),
                let signature = Base64.decodeURL(bytes[(dot + 1)...]),
                signature.count == 64
            else { continue }
            pairs.append((SHA256Digest.hash(bytes[..<dot]), signature))
        }
    }
    return pairs
}()

let p256Order: [UInt8] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
]

func fuzzAdd(_ a: [UInt8], _ b: [UInt8]) -> (sum: [UInt8], carry: Bool) {
    var sum = [UInt8](repeating: 0, count: 32)
    var carry = 0
    for index in (0..<32).reversed() {
        let total = Int(a[index]) + Int(b[index]) + carry
        sum[index] = UInt8(total & 0xff)
        carry = total >> 8
    }
    return (sum, carry != 0)
}

func fuzzSubtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var difference = [UInt8](repeating: 0, count: 32)
    var borrow = 0
    for index in (0..<32).reversed() {
        let total = Int(a[index]) - Int(b[index]) - borrow
        difference[index] = UInt8((total + 256) & 0xff)
        borrow = total < 0 ? 1 : 0
    }
    return difference
}
