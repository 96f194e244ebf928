import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI
@testable import VouchReceipts

/// Vouch against `openssl cms -verify` on minted receipts, good and broken: they agree wherever
/// OpenSSL checks something, and Vouch alone refuses what OpenSSL lets through.
@Suite(.serialized) struct ReceiptDifferentialTests {
    static let created = Date(timeIntervalSince1970: 1_700_000_000)
    static let authority = try! MintReceiptAuthority.generate(
        .init(
            validity: MintValidity(
                notBefore: Date(timeIntervalSince1970: 1_600_000_000),
                notAfter: Date(timeIntervalSince1970: 1_800_000_000))))
    static let signer = MintReceiptSigner(authority: authority)
    static let content = MintReceiptContent.sample(receiptCreationDate: created, inAppCount: 3)
    static let opensslPath = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `openssl cms -verify` with the minted root as the only CA, at the creation date.
    static func openssl(_ receipt: [UInt8]) throws -> (verified: Bool, content: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-cms-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("receipt.der")
        let root = directory.appendingPathComponent("root.pem")
        let output = directory.appendingPathComponent("content.der")
        try Data(receipt).write(to: input)
        let base64 = String(decoding: Base64.encodeStandard(try authority.anchorCertificate()), as: UTF8.self)
        let body = stride(from: 0, to: base64.count, by: 64).map { start in
            String(base64.dropFirst(start).prefix(64))
        }.joined(separator: "\n")
        let rootPEM = "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
        try Data(rootPEM.utf8).write(to: root)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(opensslPath))
        process.arguments = [
            "cms", "-verify", "-inform", "DER", "-in", input.path, "-CAfile", root.path, "-purpose", "any",
            "-attime", String(Int(created.timeIntervalSince1970)), "-binary", "-out", output.path,
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let content = (try? Data(contentsOf: output)).map { [UInt8]($0) } ?? []
        return (process.terminationStatus == 0, content)
    }

    static func vouch(_ receipt: [UInt8]) throws -> VerificationError? {
        var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
        configuration.trustAnchors = [try authority.anchorCertificate()]
        return try ReceiptVerifier(configuration: configuration).rejection(receipt)
    }

    @Test(arguments: MintReceiptSigner.Digest.allCases, [false, true])
    func goodReceiptsVerifyInBothAndYieldTheSameContent(digest: MintReceiptSigner.Digest, ber: Bool) throws {
        guard Self.opensslPath != nil else {
            print("Skipping the openssl differential: no openssl binary")
            return
        }
        let payload = Self.content.encoded()
        let receipt = try Self.signer.sign(payload: payload, digest: digest, ber: ber)
        let openssl = try Self.openssl(receipt)
        #expect(openssl.verified)
        #expect(openssl.content == payload)
        #expect(try Self.vouch(receipt) == nil)
    }

    /// OpenSSL's verdict per defect; Vouch refuses every one with the defect's code.
    static let opensslAccepts: [MintReceiptDefect: Bool] = [
        .payload: false, .signature: false, .md5: false, .noCertificates: false, .noIntermediate: false,
        // What only Vouch refuses: bytes after the DER, a second (identical) SignerInfo, signed
        // content not of type id-data, a certificate off the path, and payloads that are not
        // well-formed receipts (OpenSSL verifies bytes, not what they say).
        .trailing: true, .twoSigners: true, .contentType: true, .extraCertificate: true, .duplicateAttribute: true,
        .notAttributes: true,
    ]

    @Test(arguments: MintReceiptDefect.allCases)
    func brokenReceiptsGetTheExpectedVerdictFromEach(defect: MintReceiptDefect) throws {
        guard Self.opensslPath != nil else { return }
        let receipt = try Self.signer.sign(Self.content, defect: defect)
        guard let accepts = Self.opensslAccepts[defect] else {
            Issue.record("no OpenSSL verdict recorded for \(defect)")
            return
        }
        #expect(try Self.openssl(receipt).verified == accepts)
        #expect(try Self.vouch(receipt)?.code.rawValue == defect.expectedCode)
    }
}
