import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchMint
@testable import VouchMintPKI

/// Keeps the committed corpus in TestVectors/minted honest.
@Suite struct MintVectorTests {
    typealias Support = MintTestSupport

    static let directory = TestVectors.url("minted")

    private func lines(_ name: String) throws -> [String] {
        try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
            .split(separator: "\n").map(String.init)
    }

    private func chain(_ ca: String, style: MintAuthority.Style = .appStore) throws -> [[UInt8]] {
        try MintAuthority.load(from: Self.directory.appendingPathComponent(ca), style: style).certificateChain()
    }

    @Test func committedChainPassesOpenSSLStrictVerification() throws {
        let result = try Support.openssl(
            [
                "verify", "-x509_strict", "-attime", String(Int(Support.signingDate.timeIntervalSince1970)), "-CAfile",
                "ca/root.pem", "-untrusted", "ca/intermediate.pem", "ca/leaf.pem",
            ], in: Self.directory)
        #expect(result.output == "ca/leaf.pem: OK\n")
        let expired = try Support.openssl(
            [
                "verify", "-x509_strict", "-attime", String(Int(Support.signingDate.timeIntervalSince1970)), "-CAfile",
                "ca-expired-leaf/root.pem", "-untrusted", "ca-expired-leaf/intermediate.pem",
                "ca-expired-leaf/leaf.pem",
            ],
            in: Self.directory)
        #expect(expired.output.contains("certificate has expired"))
    }

    @Test(arguments: [
        ("transaction.txt", "ca", 5), ("renewal-info.txt", "ca", 5), ("notification.txt", "ca", 5),
        ("app-transaction.txt", "ca", 5), ("realtime-request.txt", "ca", 5), ("transaction-production.txt", "ca", 3),
        ("expired-leaf-transaction.txt", "ca-expired-leaf", 2),
        ("not-yet-valid-leaf-transaction.txt", "ca-not-yet-valid-leaf", 2),
        ("no-leaf-oid-transaction.txt", "ca-no-leaf-oid", 2),
        ("no-intermediate-oid-transaction.txt", "ca-no-intermediate-oid", 2),
    ])
    func committedTokensAreSignedByTheirCA(file: String, ca: String, count: Int) throws {
        let expected = try chain(ca)
        let tokens = try lines(file)
        #expect(tokens.count == count)
        let latest = Support.milliseconds(Support.signingDate)
        for text in tokens {
            let token = try Support.Token(text)
            #expect(try token.chain == expected)
            #expect(try token.signatureVerifies)
            let signed = try #require((token.payload["signedDate"] ?? token.payload["receiptCreationDate"])?.int64Value)
            #expect(signed <= latest && signed > latest - 86_400_000)
        }
    }

    @Test func committedXcodeTokensAreSignedByTheXcodeCertificate() throws {
        let expected = try chain("xcode", style: .xcode)
        for file in ["xcode-transaction.txt", "xcode-renewal-info.txt", "xcode-app-transaction.txt"] {
            for text in try lines(file) {
                let token = try Support.Token(text)
                #expect(token.header["kid"] == "Apple_Xcode_Key")
                #expect(try token.chain == expected)
                #expect(try token.signatureVerifies)
            }
        }
    }

    @Test(arguments: ["tampered.tsv", "tampered-notification.tsv", "tampered-xcode.tsv"])
    func committedTamperedTokensListTheirCodesInDefectOrder(file: String) throws {
        let rows = try lines(file).map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.map { $0.count } == [2, 2, 2, 2, 2])
        #expect(rows.map { $0[1] } == MintTamper.allCases.map(\.expectedErrorCode))
        for row in rows { _ = try Support.Token(row[0]) }
    }

    @Test func readmeMentionsEveryCommittedFile() throws {
        let readme = try String(contentsOf: Self.directory.appendingPathComponent("README.md"), encoding: .utf8)
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter {
            $0 != "README.md"
        }
        #expect(names.count == 23)
        for name in names {
            #expect(readme.contains("`\(name)") || readme.contains("--out \(name)"), "\(name)")
        }
    }
}
