public import Foundation
internal import VouchOpenSSL

/// A test PKI shaped like the one that signs legacy app receipts: an RSA root (Apple Inc.
/// Root's shape), an RSA intermediate with Apple's WWDR marker 1.2.840.113635.100.6.2.1 and an
/// RSA-2048 leaf "Receipt Signing" with the marker 1.2.840.113635.100.6.11.1; or, in Xcode
/// style, one self-signed RSA "StoreKit" certificate as Xcode's StoreKit testing uses.
///
/// Nothing it signs chains to Apple; a verifier accepts it only with this root (or this Xcode
/// certificate) configured. The keys are for tests only.
public struct MintReceiptAuthority: Sendable {
    /// Apple's three-certificate receipt PKI, or Xcode's one certificate: the styles of
    /// ``MintAuthority``.
    public typealias Style = MintAuthority.Style

    /// Whether this is an App Store receipt PKI or an Xcode certificate.
    public let style: Style
    /// App Store style: leaf, intermediate, root. Xcode style: the one certificate.
    let certificates: [Certificate]
    let keys: [PrivateKey]

    /// The DER certificates, leaf first: leaf, intermediate, root (App Store style) or the one
    /// certificate (Xcode).
    public func certificateChain() throws(MintError) -> [[UInt8]] {
        var result: [[UInt8]] = []
        for certificate in certificates { result.append(certificate.der) }
        return result
    }

    /// The DER certificate a verifier pins as its anchor: the root, or the Xcode certificate.
    public func anchorCertificate() throws(MintError) -> [UInt8] { certificates[certificates.count - 1].der }

    /// Generates the keys and certificates of an App Store style authority.
    public static func generate(_ options: MintReceiptAuthorityOptions) throws(MintError) -> MintReceiptAuthority {
        let chain = try MintPKI.issue(
            MintPKI.Chain(
                root: MintPKI.Tier(
                    subject: [
                        ("CN", "Vouch Mint Root CA"), ("OU", "Vouch Mint Certification Authority"),
                        ("O", "Vouch Mint (test only)"), ("C", "US"),
                    ],
                    key: .rsa(bits: 2048), validity: options.root, serialNumber: 2),
                intermediate: MintPKI.Tier(
                    subject: [
                        ("CN", "Vouch Mint Worldwide Developer Relations Certification Authority"),
                        ("OU", "Vouch Mint Worldwide Developer Relations"), ("O", "Vouch Mint (test only)"),
                        ("C", "US"),
                    ],
                    key: .rsa(bits: 2048), validity: options.intermediate),
                leaf: MintPKI.Tier(
                    subject: [
                        ("CN", "Vouch Mint Mac App Store and iTunes Store Receipt Signing"),
                        ("OU", "Vouch Mint Worldwide Developer Relations"), ("O", "Vouch Mint (test only)"),
                        ("C", "US"),
                    ],
                    key: .rsa(bits: options.leafBits), validity: options.leaf),
                digest: .sha256, intermediatePathLength: nil,
                includeIntermediateMarker: options.includeIntermediateMarker,
                includeLeafMarker: options.includeLeafMarker))
        return MintReceiptAuthority(style: .appStore, certificates: chain.certificates, keys: chain.keys)
    }

    /// A self-signed RSA-2048 certificate named like Xcode's ("StoreKit"), critical EKU
    /// codeSigning as Xcode's has.
    public static func generateXcode(validity: MintValidity) throws(MintError) -> MintReceiptAuthority {
        let (certificate, key) = try MintPKI.issueSelfSigned(
            MintPKI.Tier(
                subject: [("CN", "StoreKit"), ("O", "StoreKit"), ("OU", "StoreKit"), ("C", "US")],
                key: .rsa(bits: 2048), validity: validity, serialNumber: 1),
            digest: .sha256,
            extensions: [
                .init(name: "basicConstraints", value: "critical,CA:TRUE"),
                .init(name: "extendedKeyUsage", value: "critical,codeSigning"),
            ])
        return MintReceiptAuthority(style: .xcode, certificates: [certificate], keys: [key])
    }

    static let appStoreFiles = ["leaf", "intermediate", "root"]

    /// Writes `NAME.der`, `NAME.pem` and `NAME.key.pem` (mode 0600) for each certificate into
    /// `directory`: leaf, intermediate and root, or xcode. Returns the files written.
    @discardableResult
    public func write(to directory: URL) throws(MintError) -> [URL] {
        try MintFiles.createDirectory(directory)
        let names = style == .xcode ? ["xcode"] : Self.appStoreFiles
        var written: [URL] = []
        for (index, name) in names.enumerated() {
            let files: [(String, [UInt8], mode_t)] = [
                ("\(name).der", certificates[index].der, 0o644),
                (
                    "\(name).pem", try MintError.openSSL { () throws(OpenSSLError) in try certificates[index].pem() },
                    0o644
                ),
                (
                    "\(name).key.pem",
                    try MintError.openSSL { () throws(OpenSSLError) in try keys[index].privateKeyPEM() }, 0o600
                ),
            ]
            for (file, bytes, mode) in files {
                let url = directory.appendingPathComponent(file)
                try MintFiles.write(bytes, to: url, mode: mode)
                written.append(url)
            }
        }
        return written
    }

    /// Reads an authority written by ``write(to:)``: the Xcode style when `xcode.der` is there.
    public static func load(from directory: URL) throws(MintError) -> MintReceiptAuthority {
        let xcode = FileManager.default.fileExists(atPath: directory.appendingPathComponent("xcode.der").path)
        let names = xcode ? ["xcode"] : appStoreFiles
        var certificates: [Certificate] = []
        var keys: [PrivateKey] = []
        for name in names {
            guard
                let certificate = Certificate(der: try MintFiles.read(directory.appendingPathComponent("\(name).der")))
            else {
                throw MintError(.invalidInput, "\(name).der is not one DER certificate")
            }
            let pem = try MintFiles.read(directory.appendingPathComponent("\(name).key.pem"))
            guard let key = try MintError.openSSL({ () throws(OpenSSLError) in try PrivateKey.loadRSA(pem: pem) })
            else {
                throw MintError(.invalidInput, "\(name).key.pem is not an unencrypted PEM RSA private key")
            }
            guard certificate.matches(key) else {
                throw MintError(.invalidInput, "\(name).key.pem is not the key of \(name).der")
            }
            certificates.append(certificate)
            keys.append(key)
        }
        return MintReceiptAuthority(style: xcode ? .xcode : .appStore, certificates: certificates, keys: keys)
    }
}

/// What ``MintReceiptAuthority/generate(_:)`` issues, as ``MintAuthorityOptions`` for tokens:
/// validity windows, the two Apple marker extensions, and the leaf's RSA modulus size.
public struct MintReceiptAuthorityOptions: Sendable, Hashable {
    /// The root certificate's validity.
    public var root: MintValidity
    /// The intermediate certificate's validity.
    public var intermediate: MintValidity
    /// The leaf certificate's validity.
    public var leaf: MintValidity
    /// RSA modulus size of the leaf (2048 unless a test needs a weak key).
    public var leafBits = 2048
    /// Whether the leaf carries 1.2.840.113635.100.6.11.1 (receipt signing).
    public var includeLeafMarker = true
    /// Whether the intermediate carries 1.2.840.113635.100.6.2.1 (Apple WWDR intermediate).
    public var includeIntermediateMarker = true

    /// All three certificates valid over `validity`, both markers present, an RSA-2048 leaf.
    public init(validity: MintValidity) {
        root = validity
        intermediate = validity
        leaf = validity
    }
}
