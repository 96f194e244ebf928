import Foundation
import Testing
import Vouch
import VouchMint
import VouchSigning
import VouchTestSupport

/// The examples of `docs/signing.md`, one per creator and one verifying, taken from the page at
/// test time, compiled together with `swiftc` against the modules this run built
/// (``CompiledExample``), run with a minted key, and their output checked with that key.
@Suite(.serialized) struct SigningPageExampleTests {
    static let page = "docs/signing.md"
    static let examples = [
        "signing-promotional-offer", "signing-promotional-offer-v2", "signing-introductory-offer",
        "signing-advanced-commerce", "signing-api-token", "signing-verify",
    ]

    /// One program of every example: their imports first, each example's body in a function of
    /// its own (so their names do not clash), called in order.
    static func program() throws -> String {
        var imports: [String] = []
        var bodies: [String] = []
        for (index, name) in examples.enumerated() {
            let lines = try CompiledExample.block(name, in: page).split(
                separator: "\n", omittingEmptySubsequences: false)
            for line in lines where line.hasPrefix("import ") && !imports.contains(String(line)) {
                imports.append(String(line))
            }
            let body = lines.filter { !$0.hasPrefix("import ") }.map { "    " + $0 }.joined(separator: "\n")
            bodies.append("func example\(index)() throws {\n\(body)\n}\n")
        }
        let calls = examples.indices.map { "try example\($0)()" }.joined(separator: "\n")
        return (imports + [""] + bodies + [calls, ""]).joined(separator: "\n")
    }

    @Test func everyExampleCompilesRunsAndSignsWithTheKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-signing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestKeys.minted.write(to: folder)
        let executable = try CompiledExample.compile(
            try Self.program(), linking: ["VouchSigning", "Vouch", "VouchOpenSSL"], in: folder)
        let result = try Subprocess.run([executable.path], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 7, "\(result.stdout)")

        // Version 1: the JSON the app gets; the signature holds over the text of its fields.
        let offer = try StrictJSON.parseObject(Array(lines[0].utf8))
        let text = ["bundleId", "keyId", "productId", "offerId", "appAccountToken", "nonce"].map {
            offer[$0]?.stringValue ?? ""
        }
        let signedText = (text + [JSONWriter.string(offer["timestamp"]!)]).joined(separator: "\u{2063}")
        #expect(offer["appAccountToken"] == "8e4a1b2c-0000-4000-8000-00000000abcd")
        let signature = try #require(Base64.decodeStandard((offer["signature"]?.stringValue ?? "").utf8))
        #expect(TestKeys.publicKey.isValidSignature(signature, of: Array(signedText.utf8)))

        // The JWS: each verifies with the key, for its audience.
        for (line, audience) in zip(
            lines[1...4],
            ["promotional-offer", "introductory-offer-eligibility", "advanced-commerce-api", "appstoreconnect-v1"])
        {
            let verified = try TestKeys.publicKey.verify(line, bundleId: "com.example.app")
            #expect(verified.claims["aud"]?.stringValue == audience)
            #expect(verified.header["kid"] == "2X9R4HXF34")
        }
        #expect(lines[5] == "appstoreconnect-v1")
        #expect(lines[6] == "token_expired")
    }
}
