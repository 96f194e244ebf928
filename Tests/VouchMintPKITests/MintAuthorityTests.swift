import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMintPKI

@Suite struct MintAuthorityTests {
    typealias Support = MintTestSupport

    /// `openssl verify -x509_strict` of the written chain at `date`.
    private func verify(_ directory: URL, at date: String) throws -> (status: Int32, output: String) {
        let seconds = Int(MintDate.parse(date)!.timeIntervalSince1970)
        return try Support.openssl(
            [
                "verify", "-x509_strict", "-attime", String(seconds), "-CAfile", "root.pem", "-untrusted",
                "intermediate.pem",
                "leaf.pem",
            ], in: directory)
    }

    private func text(_ file: URL) throws -> String {
        let result = try Support.openssl(["x509", "-in", file.path, "-noout", "-text"])
        #expect(result.status == 0)
        return result.output
    }

    @Test func chainPassesOpenSSLStrictVerificationInsideItsWindow() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            let result = try verify(directory, at: "2025-06-01T00:00:00Z")
            #expect(result.status == 0)
            #expect(result.output == "leaf.pem: OK\n")
        }
    }

    @Test func markerOIDsAppearWhereApplePutsThem() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            let leaf = try text(directory.appendingPathComponent("leaf.pem"))
            let intermediate = try text(directory.appendingPathComponent("intermediate.pem"))
            let root = try text(directory.appendingPathComponent("root.pem"))

            #expect(leaf.contains("1.2.840.113635.100.6.11.1: \n"))
            #expect(!leaf.contains("1.2.840.113635.100.6.11.1: critical"))
            #expect(!leaf.contains("1.2.840.113635.100.6.2.1"))
            #expect(intermediate.contains("1.2.840.113635.100.6.2.1: \n"))
            #expect(!intermediate.contains("1.2.840.113635.100.6.11.1"))
            #expect(!root.contains("1.2.840.113635.100.6"))
        }
    }

    @Test func certificatesCarryApplesKeysAlgorithmsAndExtensions() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            let leaf = try text(directory.appendingPathComponent("leaf.pem"))
            let intermediate = try text(directory.appendingPathComponent("intermediate.pem"))
            let root = try text(directory.appendingPathComponent("root.pem"))

            #expect(root.contains("NIST CURVE: P-384"))
            #expect(root.contains("X509v3 Basic Constraints: critical\n                CA:TRUE\n"))
            #expect(root.contains("X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign\n"))
            #expect(root.contains("X509v3 Subject Key Identifier"))
            #expect(!root.contains("X509v3 Authority Key Identifier"))

            #expect(intermediate.contains("NIST CURVE: P-384"))
            #expect(intermediate.contains("X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:0\n"))
            #expect(intermediate.contains("X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign\n"))
            #expect(intermediate.contains("X509v3 Authority Key Identifier"))

            #expect(leaf.contains("NIST CURVE: P-256"))
            #expect(leaf.contains("X509v3 Basic Constraints: critical\n                CA:FALSE\n"))
            #expect(leaf.contains("X509v3 Key Usage: critical\n                Digital Signature\n"))
            #expect(leaf.contains("X509v3 Subject Key Identifier"))
            #expect(leaf.contains("Version: 3 (0x2)"))

            for certificate in [leaf, intermediate, root] {
                #expect(certificate.components(separatedBy: "Signature Algorithm: ecdsa-with-SHA384").count == 3)
            }
        }
    }

    @Test func markerExtensionsHoldAnASN1Null() throws {
        let der = try Support.authority.certificateChain()[0]
        // OID 1.2.840.113635.100.6.11.1, then OCTET STRING { NULL }, no critical flag.
        let marker: [UInt8] = [
            0x06, 0x0A, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x0B, 0x01, 0x04, 0x02, 0x05, 0x00,
        ]
        #expect(der.indices.contains { Array(der[$0...].prefix(marker.count)) == marker })
    }

    @Test func expiredLeafFailsOpenSSLVerificationWithAnExpiryError() throws {
        var options = MintAuthorityOptions(validity: Support.validity)
        options.leaf = MintValidity(notBefore: MintDate.parse("2020-01-01")!, notAfter: MintDate.parse("2021-01-01")!)
        try Support.withTemporaryDirectory { directory in
            try MintAuthority.generate(options).write(to: directory)

            let result = try verify(directory, at: "2025-06-01T00:00:00Z")
            #expect(result.status != 0)
            #expect(result.output.contains("error 10 at 0 depth lookup: certificate has expired"))
            #expect(try verify(directory, at: "2020-06-01T00:00:00Z").status == 0)
        }
    }

    @Test func notYetValidLeafFailsOpenSSLVerification() throws {
        var options = MintAuthorityOptions(validity: Support.validity)
        options.leaf = MintValidity(notBefore: MintDate.parse("2030-01-01")!, notAfter: MintDate.parse("2031-01-01")!)
        try Support.withTemporaryDirectory { directory in
            try MintAuthority.generate(options).write(to: directory)

            let result = try verify(directory, at: "2025-06-01T00:00:00Z")
            #expect(result.status != 0)
            #expect(result.output.contains("error 9 at 0 depth lookup: certificate is not yet valid"))
        }
    }

    @Test func omittedMarkersAreAbsentButTheChainStillVerifies() throws {
        var options = MintAuthorityOptions(validity: Support.validity)
        options.includeLeafMarker = false
        options.includeIntermediateMarker = false
        try Support.withTemporaryDirectory { directory in
            try MintAuthority.generate(options).write(to: directory)

            #expect(!(try text(directory.appendingPathComponent("leaf.pem"))).contains("113635"))
            #expect(!(try text(directory.appendingPathComponent("intermediate.pem"))).contains("113635"))
            // OpenSSL knows nothing of Apple's markers: only an Apple policy check can refuse this chain.
            #expect(try verify(directory, at: "2025-06-01T00:00:00Z").status == 0)
        }
    }

    @Test func writesEveryFileWithPrivateKeysReadableOnlyByTheOwner() throws {
        try Support.withTemporaryDirectory { directory in
            let written = try Support.authority.write(to: directory)
            #expect(
                written.map(\.lastPathComponent) == [
                    "root.der", "root.pem", "root.key.pem", "intermediate.der", "intermediate.pem",
                    "intermediate.key.pem",
                    "leaf.der", "leaf.pem", "leaf.key.pem",
                ])
            for file in written {
                let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
                let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
                #expect(
                    mode == (file.lastPathComponent.hasSuffix(".key.pem") ? 0o600 : 0o644), "\(file.lastPathComponent)")
            }
            let key = try String(contentsOf: directory.appendingPathComponent("leaf.key.pem"), encoding: .utf8)
            #expect(key.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            let pem = try String(contentsOf: directory.appendingPathComponent("root.pem"), encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
            let der = try Data(contentsOf: directory.appendingPathComponent("root.der"))
            #expect(Array(der) == (try Support.authority.anchorCertificate()))
        }
    }

    @Test func keyFilesMatchTheirCertificatesForOpenSSL() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            for name in ["leaf", "intermediate", "root"] {
                let certificateKey = try Support.openssl(
                    ["x509", "-in", "\(name).pem", "-noout", "-pubkey"], in: directory)
                let privateKey = try Support.openssl(["pkey", "-in", "\(name).key.pem", "-pubout"], in: directory)
                #expect(certificateKey.status == 0 && privateKey.status == 0)
                #expect(certificateKey.output == privateKey.output, "\(name)")
            }
        }
    }

    @Test func loadReadsBackTheWrittenChainAndValidity() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            let loaded = try MintAuthority.load(from: directory)
            #expect(loaded.style == .appStore)
            #expect(try loaded.certificateChain() == (try Support.authority.certificateChain()))
            #expect(loaded.signingValidity == Support.validity)
            #expect(loaded.keys.allSatisfy { $0 != nil })
        }
    }

    @Test func loadRefusesAKeyThatIsNotTheLeafs() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            try Support.withTemporaryDirectory { other in
                try MintAuthority.generate(MintAuthorityOptions(validity: Support.validity)).write(to: other)
                try FileManager.default.removeItem(at: directory.appendingPathComponent("leaf.key.pem"))
                try FileManager.default.copyItem(
                    at: other.appendingPathComponent("leaf.key.pem"),
                    to: directory.appendingPathComponent("leaf.key.pem"))

                let error = #expect(throws: MintError.self) { try MintAuthority.load(from: directory) }
                #expect(error?.code == .invalidInput)
                #expect(error?.reason.contains("does not belong to") == true)
            }
        }
    }

    @Test func loadRefusesAKeyFileThatHoldsNoKey() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            let keyFile = directory.appendingPathComponent("leaf.key.pem")
            for content in ["", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"] {
                try Data(content.utf8).write(to: keyFile)
                let error = #expect(throws: MintError.self) { try MintAuthority.load(from: directory) }
                #expect(error?.code == .invalidInput)
                #expect(error?.reason.hasPrefix(keyFile.path) == true)
            }
        }
    }

    @Test func loadRefusesACertificateWithTrailingBytes() throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            let file = directory.appendingPathComponent("intermediate.der")
            try (Data(contentsOf: file) + Data([0x00])).write(to: file)

            let error = #expect(throws: MintError.self) { try MintAuthority.load(from: directory) }
            #expect(error?.code == .invalidInput)
            #expect(error?.reason.contains("intermediate.der is not one DER certificate") == true)
        }
    }

    @Test func loadReportsAMissingDirectoryAsUnreadable() throws {
        try Support.withTemporaryDirectory { base in
            let missing = base.appendingPathComponent("absent")
            let error = #expect(throws: MintError.self) { try MintAuthority.load(from: missing) }
            #expect(error?.code == .unreadableInput)
        }
    }

    @Test func xcodeCertificateLooksLikeXcodes() throws {
        try Support.withTemporaryDirectory { directory in
            let written = try Support.xcodeAuthority.write(to: directory)
            #expect(written.map(\.lastPathComponent) == ["xcode.der", "xcode.pem", "xcode.key.pem"])
            let certificate = try text(directory.appendingPathComponent("xcode.pem"))
            #expect(certificate.contains("Serial Number: 1 (0x1)"))
            #expect(certificate.contains("Issuer: CN = StoreKit Testing in Xcode, O = StoreKit Testing in Xcode\n"))
            #expect(certificate.contains("Subject: CN = StoreKit Testing in Xcode, O = StoreKit Testing in Xcode\n"))
            #expect(certificate.contains("NIST CURVE: P-256"))
            #expect(certificate.contains("X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:0\n"))
            #expect(certificate.contains("X509v3 Key Usage: critical\n                Digital Signature\n"))
            #expect(certificate.contains("email:StoreKit Testing in Xcode"))
            #expect(certificate.contains("Signature Algorithm: ecdsa-with-SHA256"))

            let loaded = try MintAuthority.load(from: directory, style: .xcode)
            #expect(try loaded.certificateChain() == (try Support.xcodeAuthority.certificateChain()))
        }
    }

    @Test func aReceiptAuthorityIsIssuedAndReadAsATokenAuthorityIs() throws {
        var options = MintReceiptAuthorityOptions(validity: Support.validity)
        #expect(options.root == Support.validity && options.intermediate == Support.validity)
        options.leaf = MintValidity(notBefore: MintDate.parse("2024-01-01")!, notAfter: MintDate.parse("2026-01-01")!)
        let authority = try MintReceiptAuthority.generateXcode(validity: Support.validity)
        #expect(authority.style == MintAuthority.Style.xcode)
        #expect(try authority.certificateChain() == [try authority.anchorCertificate()])
        try Support.withTemporaryDirectory { directory in
            let issued = try MintReceiptAuthority.generate(options)
            try issued.write(to: directory)
            let leaf = try text(directory.appendingPathComponent("leaf.pem"))
            #expect(leaf.contains("Not After : Jan  1 00:00:00 2026 GMT"))
            let root = try text(directory.appendingPathComponent("root.pem"))
            #expect(root.contains("Not After : Jan  1 00:00:00 2045 GMT"))
            #expect(try issued.certificateChain().last == (try issued.anchorCertificate()))
        }
    }
}
