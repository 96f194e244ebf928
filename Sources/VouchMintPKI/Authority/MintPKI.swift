internal import Foundation
internal import VouchOpenSSL

/// The one builder of VouchMint's test PKIs: a chain shaped like Apple's (root, intermediate,
/// leaf, each with the extensions Apple uses and the two marker OIDs) or a single self-signed
/// certificate like Xcode's, with EC keys (the chain that signs tokens) or RSA keys (the chain
/// that signs receipts).
enum MintPKI {
    /// A key to generate: EC on a curve, or RSA of a modulus size.
    enum Key {
        case ec(Curve)
        case rsa(bits: Int)

        func generate() throws(MintError) -> PrivateKey {
            try MintError.openSSL { () throws(OpenSSLError) in
                switch self {
                case .ec(let curve): try PrivateKey.generate(curve)
                case .rsa(let bits): try PrivateKey.generateRSA(bits: bits)
                }
            }
        }
    }

    /// One certificate of a chain: its name, key, validity and serial number (random when `nil`).
    struct Tier {
        var subject: [(field: String, value: String)]
        var key: Key
        var validity: MintValidity
        var serialNumber: UInt64? = nil
    }

    /// What differs between Apple's chains: the three certificates, the signature digest, the
    /// intermediate's path length constraint and whether each marker is present.
    struct Chain {
        var root: Tier
        var intermediate: Tier
        var leaf: Tier
        var digest: CertificateProfile.Digest
        var intermediatePathLength: Int?
        var includeIntermediateMarker = true
        var includeLeafMarker = true
    }

    static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    /// Issues `chain` with fresh keys: the root self-signed (SKI, critical CA and
    /// certSign/cRLSign), the intermediate a CA (AKI, SKI, marker 1.2.840.113635.100.6.2.1), the
    /// leaf not a CA (digitalSignature, AKI, SKI, marker 1.2.840.113635.100.6.11.1); the markers
    /// non-critical with an ASN.1 NULL value. Returns leaf, intermediate, root, and their keys.
    static func issue(_ chain: Chain) throws(MintError) -> (certificates: [Certificate], keys: [PrivateKey]) {
        let rootKey = try chain.root.key.generate()
        let intermediateKey = try chain.intermediate.key.generate()
        let leafKey = try chain.leaf.key.generate()

        let root = try issue(
            chain.root, digest: chain.digest,
            extensions: [
                .init(name: "subjectKeyIdentifier", value: "hash"),
                .init(name: "basicConstraints", value: "critical,CA:TRUE"),
                .init(name: "keyUsage", value: "critical,keyCertSign,cRLSign"),
            ],
            key: rootKey, issuer: nil, issuerKey: rootKey)

        var intermediateExtensions: [CertificateProfile.Extension] = [
            .init(
                name: "basicConstraints",
                value: "critical,CA:TRUE" + (chain.intermediatePathLength.map { ",pathlen:\($0)" } ?? "")),
            .init(name: "authorityKeyIdentifier", value: "keyid:always"),
            .init(name: "subjectKeyIdentifier", value: "hash"),
            .init(name: "keyUsage", value: "critical,keyCertSign,cRLSign"),
        ]
        if chain.includeIntermediateMarker {
            intermediateExtensions.append(.init(name: intermediateMarkerOID, value: "DER:05:00"))
        }
        let intermediate = try issue(
            chain.intermediate, digest: chain.digest, extensions: intermediateExtensions, key: intermediateKey,
            issuer: root, issuerKey: rootKey)

        var leafExtensions: [CertificateProfile.Extension] = [
            .init(name: "basicConstraints", value: "critical,CA:FALSE"),
            .init(name: "authorityKeyIdentifier", value: "keyid:always"),
            .init(name: "subjectKeyIdentifier", value: "hash"),
            .init(name: "keyUsage", value: "critical,digitalSignature"),
        ]
        if chain.includeLeafMarker {
            leafExtensions.append(.init(name: leafMarkerOID, value: "DER:05:00"))
        }
        let leaf = try issue(
            chain.leaf, digest: chain.digest, extensions: leafExtensions, key: leafKey, issuer: intermediate,
            issuerKey: intermediateKey)

        return ([leaf, intermediate, root], [leafKey, intermediateKey, rootKey])
    }

    /// Issues one self-signed certificate with a fresh key, as Xcode's StoreKit testing signs.
    static func issueSelfSigned(
        _ tier: Tier, digest: CertificateProfile.Digest, extensions: [CertificateProfile.Extension]
    ) throws(MintError) -> (certificate: Certificate, key: PrivateKey) {
        let key = try tier.key.generate()
        let certificate = try issue(
            tier, digest: digest, extensions: extensions, key: key, issuer: nil, issuerKey: key)
        return (certificate, key)
    }

    private static func issue(
        _ tier: Tier, digest: CertificateProfile.Digest, extensions: [CertificateProfile.Extension],
        key: PrivateKey, issuer: Certificate?, issuerKey: PrivateKey
    ) throws(MintError) -> Certificate {
        try MintError.openSSL { () throws(OpenSSLError) in
            try Certificate.issue(
                CertificateProfile(
                    subject: tier.subject, notBefore: tier.validity.notBefore, notAfter: tier.validity.notAfter,
                    serialNumber: tier.serialNumber, extensions: extensions, digest: digest),
                subjectKey: key, issuer: issuer, issuerKey: issuerKey)
        }
    }
}
