public import Foundation
internal import VouchOpenSSL

/// A validity window, `notBefore` through `notAfter` inclusive, in whole seconds.
public struct MintValidity: Sendable, Hashable {
    /// The first instant of validity.
    public var notBefore: Date
    /// The last instant of validity.
    public var notAfter: Date

    /// The window `notBefore` through `notAfter`.
    public init(notBefore: Date, notAfter: Date) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Whether `date` falls inside the window, both ends included.
    public func contains(_ date: Date) -> Bool { notBefore <= date && date <= notAfter }
}

/// What ``MintAuthority/generate(_:)`` issues: validity windows and whether the two Apple
/// marker extensions are present (leave one out to mint data a verifier must refuse).
public struct MintAuthorityOptions: Sendable, Hashable {
    /// The root certificate's validity.
    public var root: MintValidity
    /// The intermediate certificate's validity.
    public var intermediate: MintValidity
    /// The leaf certificate's validity.
    public var leaf: MintValidity
    /// Whether the leaf carries 1.2.840.113635.100.6.11.1 (App Store receipt signing).
    public var includeLeafMarker: Bool
    /// Whether the intermediate carries 1.2.840.113635.100.6.2.1 (Apple WWDR intermediate).
    public var includeIntermediateMarker: Bool

    /// All three certificates valid over `validity`, both markers present.
    public init(validity: MintValidity) {
        self.root = validity
        self.intermediate = validity
        self.leaf = validity
        self.includeLeafMarker = true
        self.includeIntermediateMarker = true
    }
}

/// A test certificate authority shaped like Apple's App Store signing PKI, or like the single
/// self-signed certificate of StoreKit Testing in Xcode, together with the private keys.
///
/// The App Store style is a P-384 root (self-signed CA, certSign/cRLSign, SKI), a P-384
/// intermediate (CA, path length 0, marker 1.2.840.113635.100.6.2.1) and a P-256 leaf (not a
/// CA, digitalSignature, marker 1.2.840.113635.100.6.11.1), all signed ecdsa-with-SHA384 with
/// the extensions Apple uses (critical basic constraints and key usage, SKI/AKI, the markers
/// non-critical with an ASN.1 NULL value). It passes OpenSSL's `-x509_strict` checks. Nothing
/// it signs chains to Apple: a production verifier trusts it only when told to.
///
/// The keys are for tests only: ``write(to:)`` stores them unencrypted (mode 0600).
public final class MintAuthority: Sendable {
    /// The shape of the authority: Apple's three-certificate chain or Xcode's one certificate.
    public enum Style: String, Sendable {
        /// Leaf, intermediate and root, as the App Store signs.
        case appStore
        /// One self-signed P-256 certificate "StoreKit Testing in Xcode", as Xcode signs.
        case xcode
    }

    /// Whether this is an App Store chain or an Xcode certificate.
    public let style: Style
    /// The certificates in `x5c` order: leaf first.
    let certificates: [Certificate]
    /// The private keys in the same order; only the first (the signing key) is required.
    let keys: [PrivateKey?]

    /// When the signing certificate is valid (read once: every minted item consults it).
    public let signingValidity: MintValidity?

    init(style: Style, certificates: [Certificate], keys: [PrivateKey?]) {
        self.style = style
        self.certificates = certificates
        self.keys = keys
        if let notBefore = certificates[0].notBefore, let notAfter = certificates[0].notAfter {
            signingValidity = MintValidity(
                notBefore: Date(timeIntervalSince1970: TimeInterval(notBefore)),
                notAfter: Date(timeIntervalSince1970: TimeInterval(notAfter)))
        } else {
            signingValidity = nil
        }
    }

    /// The key that signs tokens: the leaf's (App Store) or the single certificate's (Xcode).
    var signingKey: PrivateKey { keys[0]! }

    /// The DER certificates in `x5c` order: leaf, intermediate, root (one for Xcode).
    public func certificateChain() throws(MintError) -> [[UInt8]] {
        var chain: [[UInt8]] = []
        for certificate in certificates { chain.append(certificate.der) }
        return chain
    }

    /// The DER certificate a verifier pins as its anchor: the root, or the Xcode certificate.
    public func anchorCertificate() throws(MintError) -> [UInt8] {
        certificates[certificates.count - 1].der
    }

    // MARK: Generating

    /// Issues a fresh App Store-style chain with new keys.
    public static func generate(_ options: MintAuthorityOptions) throws(MintError) -> MintAuthority {
        let chain = try MintPKI.issue(
            MintPKI.Chain(
                root: MintPKI.Tier(
                    subject: [
                        ("CN", "Vouch Mint Root CA - G3"), ("OU", "Vouch Mint Certification Authority"),
                        ("O", "Vouch Mint (test only)"), ("C", "US"),
                    ],
                    key: .ec(.p384), validity: options.root),
                intermediate: MintPKI.Tier(
                    subject: [
                        ("CN", "Vouch Mint Worldwide Developer Relations Certification Authority"), ("OU", "G6"),
                        ("O", "Vouch Mint (test only)"), ("C", "US"),
                    ],
                    key: .ec(.p384), validity: options.intermediate),
                leaf: MintPKI.Tier(
                    subject: [
                        ("CN", "Vouch Mint App Store Receipt Signing"),
                        ("OU", "Vouch Mint Worldwide Developer Relations"), ("O", "Vouch Mint (test only)"),
                        ("C", "US"),
                    ],
                    key: .ec(.p256), validity: options.leaf),
                digest: .sha384, intermediatePathLength: 0,
                includeIntermediateMarker: options.includeIntermediateMarker,
                includeLeafMarker: options.includeLeafMarker))
        return MintAuthority(style: .appStore, certificates: chain.certificates, keys: chain.keys)
    }

    /// Issues a fresh self-signed certificate like StoreKit Testing in Xcode's: P-256, serial 1,
    /// CN and O "StoreKit Testing in Xcode", critical `CA:TRUE, pathlen:0`, critical
    /// digitalSignature, signed ecdsa-with-SHA256.
    public static func generateXcode(validity: MintValidity) throws(MintError) -> MintAuthority {
        let (certificate, key) = try MintPKI.issueSelfSigned(
            MintPKI.Tier(
                subject: [("CN", "StoreKit Testing in Xcode"), ("O", "StoreKit Testing in Xcode")], key: .ec(.p256),
                validity: validity, serialNumber: 1),
            digest: .sha256,
            extensions: [
                .init(name: "basicConstraints", value: "critical,CA:TRUE,pathlen:0"),
                .init(name: "subjectAltName", value: "email:StoreKit Testing in Xcode"),
                .init(name: "keyUsage", value: "critical,digitalSignature"),
            ])
        return MintAuthority(style: .xcode, certificates: [certificate], keys: [key])
    }

    // MARK: Files

    /// File base names in `x5c` order.
    static func fileNames(for style: Style) -> [String] {
        style == .appStore ? ["leaf", "intermediate", "root"] : ["xcode"]
    }

    /// The files ``write(to:)`` writes into `directory` for `style`.
    public static func files(for style: Style, in directory: URL) -> [URL] {
        fileNames(for: style).reversed().flatMap { name in
            ["\(name).der", "\(name).pem", "\(name).key.pem"].map { directory.appendingPathComponent($0) }
        }
    }

    /// Writes `NAME.der`, `NAME.pem` and `NAME.key.pem` (mode 0600) for each certificate
    /// (`leaf`, `intermediate`, `root`, or `xcode`), creating `directory` if needed and
    /// replacing existing files. Returns the files written, roots first.
    @discardableResult
    public func write(to directory: URL) throws(MintError) -> [URL] {
        try MintFiles.createDirectory(directory)
        var written: [URL] = []
        let names = Self.fileNames(for: style)
        for index in certificates.indices.reversed() {
            let name = names[index]
            let der = directory.appendingPathComponent("\(name).der")
            let pem = directory.appendingPathComponent("\(name).pem")
            try MintFiles.write(certificates[index].der, to: der, mode: 0o644)
            try MintFiles.write(
                try MintError.openSSL { () throws(OpenSSLError) in try certificates[index].pem() }, to: pem, mode: 0o644
            )
            written += [der, pem]
            if let key = keys[index] {
                let keyFile = directory.appendingPathComponent("\(name).key.pem")
                try MintFiles.write(
                    try MintError.openSSL { () throws(OpenSSLError) in try key.privateKeyPEM() }, to: keyFile,
                    mode: 0o600)
                written.append(keyFile)
            }
        }
        return written
    }

    /// Reads an authority written by ``write(to:)``: the DER certificates and the signing key
    /// (`leaf.key.pem` or `xcode.key.pem`; the CA keys are read when present). Checks that the
    /// signing key belongs to the signing certificate and has the expected curve.
    public static func load(from directory: URL, style: Style = .appStore) throws(MintError) -> MintAuthority {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw MintError(.unreadableInput, "\(directory.path) does not exist")
        }
        guard isDirectory.boolValue else {
            throw MintError(.unreadableInput, "\(directory.path) is not a directory")
        }
        var certificates: [Certificate] = []
        var keys: [PrivateKey?] = []
        for (index, name) in fileNames(for: style).enumerated() {
            let derFile = directory.appendingPathComponent("\(name).der")
            guard let certificate = Certificate(der: try MintFiles.read(derFile)) else {
                throw MintError(.invalidInput, "\(derFile.path) is not one DER certificate")
            }
            certificates.append(certificate)
            let keyFile = directory.appendingPathComponent("\(name).key.pem")
            if index == 0 || FileManager.default.fileExists(atPath: keyFile.path) {
                let pem = try MintFiles.read(keyFile)
                guard !pem.isEmpty else { throw MintError(.invalidInput, "\(keyFile.path) is empty") }
                guard let key = try MintError.openSSL({ () throws(OpenSSLError) in try PrivateKey.load(pem: pem) })
                else {
                    throw MintError(.invalidInput, "\(keyFile.path) is not an unencrypted PEM EC private key")
                }
                keys.append(key)
            } else {
                keys.append(nil)
            }
        }
        let signingFile = directory.appendingPathComponent("\(fileNames(for: style)[0])")
        guard keys[0]!.curve == .p256 else {
            throw MintError(.invalidInput, "\(signingFile.path).key.pem is not a P-256 key, which ES256 needs")
        }
        guard certificates[0].matches(keys[0]!) else {
            throw MintError(.invalidInput, "\(signingFile.path).key.pem does not belong to \(signingFile.path).der")
        }
        return MintAuthority(style: style, certificates: certificates, keys: keys)
    }
}
