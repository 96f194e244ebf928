package import VouchOpenSSL

/// Apple's rules for the App Store signing chain, on top of RFC 5280 path validation
/// (which knows nothing of them).
///
/// - Before the signature is checked: the leaf is an X.509 v3 end-entity certificate (not a
///   CA) holding an EC P-256 key, as ES256 requires.
/// - After the path is validated: the leaf carries Apple's receipt-signing marker
///   1.2.840.113635.100.6.11.1 and the intermediate the WWDR marker 1.2.840.113635.100.6.2.1.
package enum AppleChainPolicy {
    /// The shape of `x5c` (exactly leaf, intermediate, root) and the leaf's rules, before the
    /// signature is checked; the root in `x5c` never takes part in validation.
    package static func signingChain(
        _ certificates: [Certificate]
    ) throws(VerificationError) -> (leaf: Certificate, intermediate: Certificate, key: PublicKey) {
        guard certificates.count == 3 else {
            throw VerificationError(
                .wrongChainLength, "x5c holds \(certificates.count) certificates; exactly 3 are required")
        }
        return (certificates[0], certificates[1], try leafKey(of: certificates[0]))
    }

    /// Checks the leaf and returns its public key.
    package static func leafKey(of leaf: Certificate) throws(VerificationError) -> PublicKey {
        guard leaf.version == 3 else {
            throw VerificationError(
                .unsupportedCertificateVersion, "the leaf certificate is X.509 v\(leaf.version); v3 is required")
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

    /// The intermediate is X.509 v3 (OpenSSL accepts a v1 CA certificate).
    package static func checkIntermediate(_ intermediate: Certificate) throws(VerificationError) {
        guard intermediate.version == 3 else {
            throw VerificationError(
                .unsupportedCertificateVersion,
                "the intermediate certificate is X.509 v\(intermediate.version); v3 is required")
        }
    }

    /// After path validation: the intermediate's version, then Apple's two markers.
    package static func checkMarkers(leaf: Certificate, intermediate: Certificate) throws(VerificationError) {
        try checkIntermediate(intermediate)
        guard leaf.hasExtension(.appleReceiptSigning) else {
            throw VerificationError(
                .missingMarkerOID,
                "the leaf certificate lacks Apple's receipt-signing extension \(ASN1ObjectIdentifier.appleReceiptSigning.dotted)"
            )
        }
        guard intermediate.hasExtension(.appleWWDRIntermediate) else {
            throw VerificationError(
                .missingMarkerOID,
                "the intermediate certificate lacks Apple's WWDR extension \(ASN1ObjectIdentifier.appleWWDRIntermediate.dotted)"
            )
        }
    }
}

extension ASN1ObjectIdentifier {
    /// 1.2.840.113635.100.6.11.1: Apple's Mac App Store receipt signing leaf marker.
    package static let appleReceiptSigning = ASN1ObjectIdentifier("1.2.840.113635.100.6.11.1")
    /// 1.2.840.113635.100.6.2.1: Apple Worldwide Developer Relations intermediate marker.
    package static let appleWWDRIntermediate = ASN1ObjectIdentifier("1.2.840.113635.100.6.2.1")
}
