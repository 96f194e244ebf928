/// Apple's rules for the App Store signing chain, on top of RFC 5280 path validation
/// (which knows nothing of them).
///
/// - Before the signature is checked: the leaf is an X.509 v3 end-entity certificate (not a
///   CA) holding an EC P-256 key, as ES256 requires.
/// - After the path is validated: the leaf carries Apple's receipt-signing marker
///   1.2.840.113635.100.6.11.1 and the intermediate the WWDR marker 1.2.840.113635.100.6.2.1.
enum AppleChainPolicy {
    /// Checks the leaf and returns its public key.
    static func leafKey(of leaf: Certificate) throws(VerificationError) -> PublicKey {
        guard leaf.version == 3 else {
            throw VerificationError(.unsupportedCertificateVersion, "the leaf certificate is X.509 v\(leaf.version); v3 is required")
        }
        guard !leaf.isCA else {
            throw VerificationError(.leafIsCA, "the leaf certificate is a CA certificate")
        }
        guard let key = leaf.publicKey else {
            throw VerificationError(.wrongKeyType, "the leaf certificate's public key cannot be read")
        }
        guard key.isP256 else {
            throw VerificationError(.wrongKeyType, "the leaf key is \(key.summary); ES256 requires EC P-256")
        }
        return key
    }

    static func checkMarkers(leaf: Certificate, intermediate: Certificate) throws(VerificationError) {
        guard intermediate.version == 3 else {
            throw VerificationError(.unsupportedCertificateVersion, "the intermediate certificate is X.509 v\(intermediate.version); v3 is required")
        }
        guard leaf.hasExtension(.appleReceiptSigning) else {
            throw VerificationError(
                .missingMarkerOID,
                "the leaf certificate lacks Apple's receipt-signing extension \(ObjectIdentifier.appleReceiptSigning.dotted)")
        }
        guard intermediate.hasExtension(.appleWWDRIntermediate) else {
            throw VerificationError(
                .missingMarkerOID,
                "the intermediate certificate lacks Apple's WWDR extension \(ObjectIdentifier.appleWWDRIntermediate.dotted)")
        }
    }
}
