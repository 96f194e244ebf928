internal import COpenSSL
internal import Foundation

/// Digests, RSA PKCS #1 v1.5 verification and signing, and SignerInfo identifiers, for legacy
/// app receipts (PKCS #7 SignedData).
package enum ReceiptCrypto {
    package enum Digest: Sendable {
        case sha1, sha256
    }

    /// Message digests fetched once: an implicit fetch per call costs more than a short hash.
    private final class Algorithm: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ name: String) { pointer = EVP_MD_fetch(nil, name, nil)! }
    }
    private static let sha1Algorithm = Algorithm("SHA1")
    private static let sha256Algorithm = Algorithm("SHA256")

    /// The digest of the concatenated `segments` of `bytes`.
    package static func hash(_ digest: Digest, of bytes: [UInt8], segments: [Range<Int>]) -> [UInt8] {
        let algorithm = digest == .sha1 ? sha1Algorithm : sha256Algorithm
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestInit_ex(context, algorithm.pointer, nil)
        bytes.withUnsafeBufferPointer { buffer in
            for segment in segments {
                EVP_DigestUpdate(context, buffer.baseAddress! + segment.lowerBound, segment.count)
            }
        }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }

    /// Checks an RSA PKCS #1 v1.5 signature whose recovered block must be exactly `digestInfo`
    /// (OpenSSL compares the whole block when the context has no digest set), so the key's
    /// pooled contexts serve SHA-1 and SHA-256 alike.
    package static func verifyRSA(signature: [UInt8], digestInfo: [UInt8], key: PublicKey) -> Bool {
        let verified = key.withVerificationContext { context -> Bool in
            guard let context else { return false }
            return EVP_PKEY_verify(context, signature, signature.count, digestInfo, digestInfo.count) == 1
        }
        if !verified { OpenSSLError.drain() }
        return verified
    }

    /// An RSA PKCS #1 v1.5 signature of `message` (minting).
    package static func signRSA(_ message: [UInt8], digest: Digest, key: PrivateKey) throws(OpenSSLError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        let initialised = key.withUnsafePointer { pointer in
            EVP_DigestSignInit(context, nil, digest == .sha1 ? EVP_sha1() : EVP_sha256(), nil, pointer)
        }
        guard initialised == 1 else { throw OpenSSLError("EVP_DigestSignInit") }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw OpenSSLError("EVP_DigestSign")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw OpenSSLError("EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }
}

extension PublicKey {
    package var isRSA: Bool { EVP_PKEY_get_base_id(pointer) == EVP_PKEY_RSA }
    package var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }
}

/// A receipt signer's RSA key, ready for PKCS #1 v1.5 verification: for the public exponent
/// 65537 (every Apple and Xcode key) by Montgomery arithmetic on OpenSSL's bignums, without
/// `EVP_PKEY_verify`'s work per call; for any other key through ``ReceiptCrypto/verifyRSA``.
///
/// The verdict is OpenSSL's: `EVP_PKEY_verify` without a digest accepts exactly when the
/// signature is at most the modulus long, is below the modulus as a number, and raised to the
/// exponent gives the block `00 01 FF…FF 00 ‖ digestInfo` (at least eight FF) at the modulus'
/// length, `digestInfo` not empty (`RSA_public_decrypt` with PKCS #1 padding, then the whole
/// recovered data compared). That is what is checked here, the whole block at once.
package final class ReceiptRSAKey: @unchecked Sendable {
    /// The key, for the keys the Montgomery path does not take.
    let key: PublicKey
    /// Owned, read-only once built (so shared by every thread): the modulus, its Montgomery
    /// context, and R^65537 mod n for R the Montgomery radix. `nil` for a key verified by EVP.
    private let modulus: OpaquePointer?
    private let montgomery: OpaquePointer?
    private let correction: OpaquePointer?
    /// The modulus' length in bytes: the length of the recovered block.
    private let size: Int
    /// One bignum context per thread, for every key, freed when the thread ends: a fresh context
    /// allocates its bignums again on every receipt, and a pool shared by the threads would be
    /// one more lock per receipt.
    private static let threadContext: pthread_key_t = {
        var key = pthread_key_t()
        // The destructor runs at thread exit with the thread's context, which this key owns.
        pthread_key_create(&key) { context in BN_CTX_free(context.map(OpaquePointer.init)) }
        return key
    }()

    /// This thread's context, made on first use; `nil` when OpenSSL cannot make one.
    private static func context() -> OpaquePointer? {
        if let context = pthread_getspecific(threadContext) { return OpaquePointer(context) }
        guard let context = BN_CTX_new() else { return nil }
        // Not kept (the key could not be made, or no memory): no context rather than one leaked per call.
        guard pthread_setspecific(threadContext, UnsafeRawPointer(context)) == 0 else {
            BN_CTX_free(context)
            return nil
        }
        return context
    }

    package init(_ key: PublicKey) {
        self.key = key
        var modulus: OpaquePointer? = nil
        var exponent: OpaquePointer? = nil
        // get_bn_param: each BIGNUM is a new one, ours to free (the modulus stays with this object).
        let read =
            EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_RSA
            && EVP_PKEY_get_bn_param(key.pointer, "n", &modulus) == 1
            && EVP_PKEY_get_bn_param(key.pointer, "e", &exponent) == 1
        defer { BN_free(exponent) }
        let prepared = read ? Self.prepare(modulus: modulus!, exponent: exponent!) : nil
        if prepared == nil {
            BN_free(modulus)
            modulus = nil
            ERR_clear_error()
        }
        self.modulus = modulus
        self.montgomery = prepared?.montgomery
        self.correction = prepared?.correction
        self.size = modulus.map { Int((BN_num_bits($0) + 7) / 8) } ?? 0
    }

    deinit {
        BN_MONT_CTX_free(montgomery)
        BN_free(correction)
        BN_free(modulus)
    }

    /// Whether verification takes the Montgomery path (the exponent is 65537).
    package var isPrepared: Bool { montgomery != nil }

    /// The modulus, big-endian, when the key is prepared.
    package var modulusBytes: [UInt8]? {
        guard let modulus, montgomery != nil else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        _ = BN_bn2binpad(modulus, &bytes, Int32(size))
        return bytes
    }

    /// The Montgomery context of `modulus` and R^65537 mod n, when the exponent is 65537 and the
    /// modulus one `RSA_public_decrypt` takes (odd, 2048 to 16,384 bits).
    private static func prepare(
        modulus: OpaquePointer, exponent: OpaquePointer
    ) -> (montgomery: OpaquePointer, correction: OpaquePointer)? {
        let bits = BN_num_bits(modulus)
        guard BN_is_word(exponent, 65537) == 1, BN_is_odd(modulus) == 1, bits >= 2048, bits <= 16384 else {
            return nil
        }
        guard let context = BN_CTX_new() else { return nil }
        defer { BN_CTX_free(context) }
        guard let montgomery = BN_MONT_CTX_new() else { return nil }
        guard BN_MONT_CTX_set(montgomery, modulus, context) == 1, let correction = BN_new() else {
            BN_MONT_CTX_free(montgomery)
            return nil
        }
        // R is 2 to the modulus' width in whole words, as BN_MONT_CTX_set takes it.
        let radixBits = (bits + Int32(BN_BYTES * 8) - 1) / Int32(BN_BYTES * 8) * Int32(BN_BYTES * 8)
        guard BN_set_bit(correction, radixBits) == 1, BN_nnmod(correction, correction, modulus, context) == 1,
            BN_mod_exp(correction, correction, exponent, modulus, context) == 1
        else {
            BN_free(correction)
            BN_MONT_CTX_free(montgomery)
            return nil
        }
        return (montgomery, correction)
    }

    /// Whether `signature` is an RSA PKCS #1 v1.5 signature whose recovered data is exactly
    /// `digestInfo`.
    package func verify(signature: [UInt8], digestInfo: [UInt8]) -> Bool {
        guard let modulus, let montgomery, let correction else {
            return ReceiptCrypto.verifyRSA(signature: signature, digestInfo: digestInfo, key: key)
        }
        // What RSA_public_decrypt and its padding check refuse before any arithmetic, and
        // empty recovered data, which the provider's rsa_verify takes for a failure.
        guard signature.count <= size, !digestInfo.isEmpty, digestInfo.count + 11 <= size else { return false }
        guard let context = Self.context() else {
            return ReceiptCrypto.verifyRSA(signature: signature, digestInfo: digestInfo, key: key)
        }
        // Everything taken from the context is given back before returning.
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        guard let base = BN_CTX_get(context), let power = BN_CTX_get(context),
            BN_bin2bn(signature, Int32(signature.count), base) != nil
        else {
            return ReceiptCrypto.verifyRSA(signature: signature, digestInfo: digestInfo, key: key)
        }
        guard BN_ucmp(base, modulus) < 0 else { return false }
        // Montgomery products of numbers below n stay below n; each takes a factor 1/R:
        // s^(2^16) R^-(2^16 - 1) after the squarings, s^65537 R^-65536 after the product with s,
        // and s^65537 after the product with the correction R^65537.
        var computed = BN_copy(power, base) != nil
        for _ in 0..<16 where computed {
            computed = BN_mod_mul_montgomery(power, power, power, montgomery, context) == 1
        }
        computed =
            computed && BN_mod_mul_montgomery(power, power, base, montgomery, context) == 1
            && BN_mod_mul_montgomery(power, power, correction, montgomery, context) == 1
        guard computed else {
            ERR_clear_error()
            return ReceiptCrypto.verifyRSA(signature: signature, digestInfo: digestInfo, key: key)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * size) { buffer in
            let recovered = UnsafeMutableBufferPointer(rebasing: buffer[..<size])
            let expected = UnsafeMutableBufferPointer(rebasing: buffer[size...])
            guard BN_bn2binpad(power, recovered.baseAddress, Int32(size)) == size else { return false }
            let padding = size - 3 - digestInfo.count
            expected[0] = 0x00
            expected[1] = 0x01
            UnsafeMutableBufferPointer(rebasing: expected[2..<(2 + padding)]).update(repeating: 0xFF)
            expected[2 + padding] = 0x00
            _ = UnsafeMutableBufferPointer(rebasing: expected[(3 + padding)...]).initialize(from: digestInfo)
            return memcmp(recovered.baseAddress!, expected.baseAddress!, size) == 0
        }
    }
}

extension PrivateKey {
    /// A fresh RSA key pair (public exponent 65537 unless told).
    package static func generateRSA(bits: Int, exponent: UInt = 65537) throws(OpenSSLError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw OpenSSLError("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else {
            throw OpenSSLError("EVP_PKEY_CTX_set_rsa_keygen_bits")
        }
        if exponent != 65537 {
            guard let value = BN_new() else { throw OpenSSLError("BN_new") }
            defer { BN_free(value) }
            // set1: the context copies the exponent; `value` stays ours.
            guard BN_set_word(value, exponent) == 1,
                EVP_PKEY_CTX_set1_rsa_keygen_pubexp(context, value) == 1
            else { throw OpenSSLError("EVP_PKEY_CTX_set1_rsa_keygen_pubexp") }
        }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_generate") }
        return PrivateKey(takingRSA: key)
    }

    /// The public half of the key.
    package func publicKey() throws(OpenSSLError) -> PublicKey {
        let der = withUnsafePointer { key -> [UInt8] in
            let length = i2d_PUBKEY(key, nil)
            guard length > 0 else { return [] }
            var der = [UInt8](repeating: 0, count: Int(length))
            der.withUnsafeMutableBufferPointer { buffer in
                var cursor = buffer.baseAddress
                _ = i2d_PUBKEY(key, &cursor)
            }
            return der
        }
        guard let key = PublicKey(subjectPublicKeyInfo: der) else { throw OpenSSLError("i2d_PUBKEY") }
        return key
    }

    /// The raw RSA private-key operation on `block`, as long as the modulus: a "signature" of
    /// any block at all, for testing what verification makes of bad padding.
    package func rawRSA(_ block: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        let signed = withUnsafePointer { key -> [UInt8]? in
            guard let context = EVP_PKEY_CTX_new(key, nil) else { return nil }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1 else {
                return nil
            }
            var length = Int(EVP_PKEY_get_size(key))
            var output = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_sign(context, &output, &length, block, block.count) == 1 else { return nil }
            return Array(output.prefix(length))
        }
        guard let signed else { throw OpenSSLError("EVP_PKEY_sign") }
        return signed
    }

    /// Reads an unencrypted PEM RSA private key; `nil` when it is none.
    package static func loadRSA(pem: [UInt8]) throws(OpenSSLError) -> PrivateKey? {
        let key = try MemoryBIO.reading(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        guard let key else {
            OpenSSLError.drain()
            return nil
        }
        let loaded = PrivateKey(takingRSA: key)
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else { return nil }
        return loaded
    }
}

extension Certificate {
    /// The issuer Name and serial number, DER, as a CMS SignerInfo names its signer.
    package func issuerAndSerialNumber() throws(OpenSSLError) -> (issuer: [UInt8], serial: [UInt8]) {
        try withUnsafePointer { x509 throws(OpenSSLError) in
            // get0/get: both borrow the certificate's own name and serial; the bytes are copied out.
            var pointer: UnsafePointer<UInt8>? = nil
            var length = 0
            guard X509_NAME_get0_der(X509_get_issuer_name(x509), &pointer, &length) == 1, let pointer else {
                throw OpenSSLError("X509_NAME_get0_der")
            }
            let issuer = Array(UnsafeBufferPointer(start: pointer, count: length))
            let serialLength = i2d_ASN1_INTEGER(X509_get0_serialNumber(x509), nil)
            guard serialLength > 0 else { throw OpenSSLError("i2d_ASN1_INTEGER") }
            var serial = [UInt8](repeating: 0, count: Int(serialLength))
            serial.withUnsafeMutableBufferPointer { buffer in
                var cursor = buffer.baseAddress
                _ = i2d_ASN1_INTEGER(X509_get0_serialNumber(x509), &cursor)
            }
            return (issuer, serial)
        }
    }
}
