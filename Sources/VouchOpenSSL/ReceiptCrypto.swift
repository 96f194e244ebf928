internal import COpenSSL

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

extension PrivateKey {
    /// A fresh RSA key pair (public exponent 65537).
    package static func generateRSA(bits: Int) throws(OpenSSLError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw OpenSSLError("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else {
            throw OpenSSLError("EVP_PKEY_CTX_set_rsa_keygen_bits")
        }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_generate") }
        return PrivateKey(takingRSA: key)
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
