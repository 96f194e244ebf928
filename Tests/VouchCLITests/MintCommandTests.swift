import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchCLI
@testable import VouchMint
@testable import VouchMintPKI

@Suite struct MintCommandTests {
    typealias Support = MintTestSupport

    struct Result {
        var status: Int32
        var output: String
        var errors: String
        var lines: [Substring] { output.split(separator: "\n") }
    }

    /// Runs `vouch mint ARGUMENTS` in-process, `input` as standard input, the clock at
    /// ``MintTestSupport/signingDate``.
    private func mint(_ arguments: [String], input: String = "") -> Result {
        vouch(["mint"] + arguments, input: input)
    }

    /// Runs `vouch ARGUMENTS` in-process, as ``mint(_:input:)`` does.
    private func vouch(_ arguments: [String], input: String = "") -> Result {
        let output = MemorySink()
        let errors = MemorySink()
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return Result(status: -1, output: "", errors: "no pipe") }
        let bytes = Array(input.utf8)
        _ = bytes.withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        close(descriptors[1])
        defer { close(descriptors[0]) }
        let console = Console(
            output: output, error: errors, inputDescriptor: descriptors[0], errorIsTerminal: false,
            now: { Support.signingDate })
        let status = CommandRegistry.vouch.run(arguments, console: console)
        return Result(status: status, output: output.text, errors: errors.text)
    }

    /// Runs `body` with a directory holding the suite's App Store and Xcode authorities.
    private func withCA(_ body: (String) throws -> Void) throws {
        try Support.withTemporaryDirectory { directory in
            try Support.authority.write(to: directory)
            try Support.xcodeAuthority.write(to: directory)
            try body(directory.path)
        }
    }

    /// A usage error: `Error: MESSAGE…`, one usage line, where to read more; exit 64.
    private func expectUsageError(
        _ result: Result, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 64, sourceLocation: sourceLocation)
        #expect(result.output.isEmpty, sourceLocation: sourceLocation)
        #expect(result.errors.hasPrefix("Error: \(message)"), "\(result.errors)", sourceLocation: sourceLocation)
        let lines = result.errors.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines.last == "", "\(result.errors)", sourceLocation: sourceLocation)
        #expect(lines.dropFirst().first?.hasPrefix("Usage: vouch mint ") == true, sourceLocation: sourceLocation)
        #expect(lines.dropFirst(2).first?.hasPrefix("See 'vouch mint") == true, sourceLocation: sourceLocation)
        #expect(lines.dropFirst(2).first?.hasSuffix(" --help'.") == true, sourceLocation: sourceLocation)
    }

    // MARK: Usage

    @Test func helpPrintsTheUsageOnStandardOutput() {
        let registry = CommandRegistry.vouch
        let expected: [([String], String)] = [
            (["--help"], registry.help(for: MintCommands.group)),
            (["transaction", "--help"], registry.help(for: MintTokensCommand(kind: .transaction))),
            (["ca", "-h"], registry.help(for: MintCACommand())),
        ]
        for (arguments, help) in expected {
            let result = mint(arguments)
            #expect(result.status == 0)
            #expect(result.output == help)
            #expect(result.errors.isEmpty)
        }
    }

    @Test func mintAloneBehavesLikeVouchAlone() {
        let result = mint([])
        #expect(result.status == 64)
        #expect(result.output.isEmpty)
        #expect(result.errors == CommandRegistry.vouch.help(for: MintCommands.group))
    }

    @Test func usageErrorsExitWith64AndPrintTheUsageOnStandardError() {
        expectUsageError(mint(["bogus", "--ca", "x"]), "unknown kind \"bogus\"")
        expectUsageError(mint(["transaction", "--ca"]), "--ca needs a value")
        expectUsageError(mint(["transaction"]), "mint transaction needs --ca DIR")
        expectUsageError(mint(["ca"]), "mint ca needs --out DIR")
        expectUsageError(mint(["ca", "--out", "x", "--count", "3"]), "--count does not apply to mint ca")
        expectUsageError(mint(["ca", "--out", "x", "--seed", "3"]), "--seed does not apply to mint ca")
        expectUsageError(mint(["transaction", "--ca", "x", "--no-leaf-oid"]), "--no-leaf-oid applies to mint ca")
        expectUsageError(mint(["transaction", "--ca", "x", "--count", "0"]), "--count: \"0\" is not a number")
        expectUsageError(
            mint(["transaction", "--ca", "x", "--date", "2025-02-30"]), "--date: \"2025-02-30\" is not a date")
        expectUsageError(
            mint(["transaction", "--ca", "x", "--tamper", "nonsense"]), "--tamper: unknown defect \"nonsense\"")
        expectUsageError(mint(["transaction", "--ca", "x", "--set", "price"]), "expected FIELD=VALUE")
        expectUsageError(mint(["transaction", "--ca", "x", "--frobnicate"]), "unknown option --frobnicate")
        expectUsageError(
            mint(["transaction", "--ca", "x", "--payload", "-", "--count", "2"]), "--payload signs one given payload")
        expectUsageError(mint(["notification", "--ca", "x", "--xcode"]), "Xcode makes no notification data")
    }

    @Test func unreadableInputsExitWith66() throws {
        try withCA { ca in
            let missing = mint(["transaction", "--ca", "/nonexistent/vouch-mint"])
            #expect(missing.status == 66)
            #expect(missing.errors == "Error: --ca /nonexistent/vouch-mint: /nonexistent/vouch-mint does not exist\n")
            let payload = mint(["transaction", "--ca", ca, "--payload", "/nonexistent/payload.json"])
            #expect(payload.status == 66)
            #expect(payload.errors == "Error: cannot read /nonexistent/payload.json\n")
        }
    }

    @Test func aPayloadThatMustBeJSONButIsNotExitsWith65() throws {
        try withCA { ca in
            let result = mint(["transaction", "--ca", ca, "--payload", "-", "--set", "a=1"], input: "not json")
            #expect(result.status == 65)
            #expect(result.errors.hasPrefix("Error: stdin is not a JSON object"))
        }
    }

    // MARK: ca

    @Test func caWritesTheChainAndPrintsTheFiles() throws {
        try Support.withTemporaryDirectory { directory in
            let out = directory.appendingPathComponent("ca").path
            let result = mint(["ca", "--out", out, "--not-before", "2020-01-01", "--not-after=2045-01-01"])
            #expect(result.status == 0)
            #expect(result.errors.isEmpty)
            #expect(
                result.lines.map { $0.split(separator: "/").last! } == [
                    "root.der", "root.pem", "root.key.pem", "intermediate.der", "intermediate.pem",
                    "intermediate.key.pem",
                    "leaf.der", "leaf.pem", "leaf.key.pem",
                ])
            let verified = try Support.openssl(
                [
                    "verify", "-x509_strict", "-attime", String(Int(Support.signingDate.timeIntervalSince1970)),
                    "-CAfile",
                    "root.pem", "-untrusted", "intermediate.pem", "leaf.pem",
                ], in: URL(fileURLWithPath: out))
            #expect(verified.output == "leaf.pem: OK\n")
            let authority = try MintAuthority.load(from: URL(fileURLWithPath: out))
            #expect(authority.signingValidity == Support.validity)
        }
    }

    @Test func caDefaultsToAYearBeforeNowAndTenYearsFromThere() throws {
        try Support.withTemporaryDirectory { directory in
            #expect(mint(["ca", "--out", directory.path]).status == 0)
            let validity = try #require(try MintAuthority.load(from: directory).signingValidity)
            #expect(validity.notBefore == MintDate.parse("2024-06-01T12:00:00Z"))
            #expect(validity.notAfter == MintDate.parse("2034-06-01T12:00:00Z"))
        }
    }

    @Test func historiesMintedWithTheDefaultsVerifyUnderACAMintedWithTheDefaults() throws {
        try Support.withTemporaryDirectory { directory in
            #expect(mint(["ca", "--out", directory.path]).status == 0)
            let result = mint(["history", "--ca", directory.path, "--count", "16"])
            #expect(result.status == 0, "\(result.errors)")
            var configuration = Verifier.Configuration.acceptingAnyApp()
            configuration.trustAnchors = [try MintAuthority.load(from: directory).anchorCertificate()]
            let verifier = try Verifier(configuration: configuration)
            #expect(result.lines.count > 40)
            for line in result.lines { #expect(verifier.rejection(String(line)) == nil) }
        }
    }

    @Test func caMakesAnExpiredLeafUnderAValidIntermediate() throws {
        try Support.withTemporaryDirectory { directory in
            let result = mint(["ca", "--out", directory.path, "--leaf-not-after", "2021-01-01"])
            #expect(result.status == 0)
            let validity = try #require(try MintAuthority.load(from: directory).signingValidity)
            #expect(validity.notAfter == MintDate.parse("2021-01-01"))
            #expect(validity.notBefore == MintDate.parse("2020-01-02"))
            let text = try Support.openssl(["x509", "-in", "intermediate.pem", "-noout", "-enddate"], in: directory)
            #expect(text.output == "notAfter=Jun  1 12:00:00 2034 GMT\n")
        }
    }

    @Test func caLeavesOutTheMarkersWhenAsked() throws {
        try Support.withTemporaryDirectory { directory in
            #expect(mint(["ca", "--out", directory.path, "--no-leaf-oid"]).status == 0)
            let leaf = try Support.openssl(["x509", "-in", "leaf.pem", "-noout", "-text"], in: directory)
            let intermediate = try Support.openssl(
                ["x509", "-in", "intermediate.pem", "-noout", "-text"], in: directory)
            #expect(!leaf.output.contains("1.2.840.113635.100.6.11.1"))
            #expect(intermediate.output.contains("1.2.840.113635.100.6.2.1"))
        }
    }

    @Test func caXcodeWritesOneCertificate() throws {
        try Support.withTemporaryDirectory { directory in
            let result = mint(["ca", "--xcode", "--out", directory.path])
            #expect(result.status == 0)
            #expect(result.lines.map { $0.split(separator: "/").last! } == ["xcode.der", "xcode.pem", "xcode.key.pem"])
            let validity = try #require(try MintAuthority.load(from: directory, style: .xcode).signingValidity)
            #expect(validity.notBefore == Support.signingDate)
            #expect(validity.notAfter == MintDate.parse("2026-06-01T12:00:00Z"))
        }
    }

    // MARK: Tokens

    @Test func countMintsDistinctVerifiableTokensOnePerLineInGeneratorOrder() throws {
        try withCA { ca in
            let arguments = [
                "transaction", "--ca", ca, "--count", "600", "--seed", "7", "--date", "2025-06-01T12:00:00Z",
            ]
            let result = mint(arguments)
            #expect(result.status == 0)
            #expect(result.errors.isEmpty)
            let tokens = try result.lines.map { try Support.Token(String($0)) }
            #expect(tokens.count == 600)
            let generator = MintGenerator(seed: 7, date: Support.signingDate)
            for index in [0, 1, 255, 256, 257, 511, 599] {
                #expect(
                    tokens[index].payload == (try generator.payload(.transaction, index: index, signer: Support.signer))
                )
            }
            #expect(Set(tokens.map(\.payloadBytes)).count == 600)
            for token in tokens.prefix(20) { #expect(try token.signatureVerifies) }

            let again = mint(arguments)
            #expect(try again.lines.map { try Support.Token(String($0)).payloadBytes } == tokens.map(\.payloadBytes))
        }
    }

    @Test func textSeedsAndSettingsApply() throws {
        try withCA { ca in
            let result = mint([
                "renewal-info", "--ca", ca, "--seed", "alice", "--count", "3", "--set",
                "environment=Production", "--unset", "appTransactionId",
            ])
            #expect(result.status == 0)
            let generator = MintGenerator(
                seed: MintGenerator.seed("alice"), date: Support.signingDate,
                overrides: [
                    MintOverride(path: ["environment"], value: "Production"),
                    MintOverride(path: ["appTransactionId"], value: nil),
                ])
            for (index, line) in result.lines.enumerated() {
                let payload = try Support.Token(String(line)).payload
                #expect(payload["environment"] == "Production")
                #expect(payload["appTransactionId"] == nil)
                #expect(payload == (try generator.payload(.renewalInfo, index: index, signer: Support.signer)))
            }
        }
    }

    @Test func tamperWritesEachTokenWithATabAndItsExpectedCode() throws {
        try withCA { ca in
            let result = mint(["transaction", "--ca", ca, "--count", "2", "--tamper", "all"])
            #expect(result.status == 0)
            let rows = result.lines.map { $0.split(separator: "\t") }
            #expect(rows.count == 10)
            #expect(rows.allSatisfy { $0.count == 2 })
            #expect(
                rows.map { String($0[1]) } == [
                    "bad_signature", "bad_signature", "bad_signature", "untrusted_chain", "unsupported_algorithm",
                    "bad_signature", "bad_signature", "bad_signature", "untrusted_chain", "unsupported_algorithm",
                ])
            let algorithm = try Support.Token(String(rows[4][0]))
            #expect(algorithm.header["alg"] == "HS256")
            let chosen = mint(["transaction", "--ca", ca, "--tamper", "chain,alg", "--tamper", "chain"])
            #expect(chosen.lines.map { $0.split(separator: "\t")[1] } == ["untrusted_chain", "unsupported_algorithm"])
        }
    }

    @Test func aPayloadFileIsSignedByteForByte() throws {
        try withCA { ca in
            try Support.withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("payload.json")
                try Data("{\"b\" : 2, \"a\":1}\n\n".utf8).write(to: file)
                let result = mint(["notification", "--ca", ca, "--payload", file.path])
                #expect(result.status == 0)
                let token = try Support.Token(String(try #require(result.lines.first)))
                #expect(String(decoding: token.payloadBytes, as: UTF8.self) == "{\"b\" : 2, \"a\":1}")
                #expect(try token.signatureVerifies)
            }
        }
    }

    @Test func aPayloadFromStandardInputTakesSettings() throws {
        try withCA { ca in
            let result = mint(
                ["transaction", "--ca", ca, "--payload", "-", "--set", "price=990", "--unset", "drop"],
                input: "{\"drop\":true,\"price\":1}")
            #expect(result.status == 0)
            let token = try Support.Token(String(try #require(result.lines.first)))
            #expect(String(decoding: token.payloadBytes, as: UTF8.self) == "{\"price\":990}")
        }
    }

    @Test func xcodeTokensCarryXcodesHeader() throws {
        try withCA { ca in
            let result = mint(["app-transaction", "--xcode", "--ca", ca])
            #expect(result.status == 0)
            let token = try Support.Token(String(try #require(result.lines.first)))
            #expect(token.header["kid"] == "Apple_Xcode_Key")
            #expect(try token.chain == [try Support.xcodeAuthority.anchorCertificate()])
            #expect(token.payload["receiptType"] == "Xcode")
            #expect(try token.signatureVerifies)
        }
    }

    @Test func outWritesTheTokensToAFile() throws {
        try withCA { ca in
            try Support.withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("tokens.txt")
                let result = mint(["realtime-request", "--ca", ca, "--count", "3", "--out", file.path])
                #expect(result.status == 0)
                #expect(result.output.isEmpty)
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                #expect(lines.count == 3)
                #expect(try Support.Token(String(lines[2])).payload["requestIdentifier"] != nil)
            }
        }
    }

    @Test func outTreatsADashAsStandardOutputAndWritesThroughASymbolicLink() throws {
        try withCA { ca in
            try Support.withTemporaryDirectory { directory in
                let dash = mint(["transaction", "--ca", ca, "--count", "2", "--out", "-"])
                #expect(dash.status == 0)
                #expect(dash.lines.count == 2)
                let target = directory.appendingPathComponent("target.txt")
                let link = directory.appendingPathComponent("link.txt")
                try Data("old\n".utf8).write(to: target)
                try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
                let result = mint(["transaction", "--ca", ca, "--count", "2", "-o", link.path])
                #expect(result.status == 0)
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
                #expect(try String(contentsOf: target, encoding: .utf8).split(separator: "\n").count == 2)
            }
        }
    }

    @Test func caRefusesToReplaceAnAuthorityWithoutForce() throws {
        try Support.withTemporaryDirectory { directory in
            #expect(mint(["ca", "--out", directory.path]).status == 0)
            let key = try Data(contentsOf: directory.appendingPathComponent("leaf.key.pem"))
            let again = mint(["ca", "--out", directory.path])
            expectUsageError(again, "\(directory.appendingPathComponent("root.der").path) exists; use --force")
            #expect(try Data(contentsOf: directory.appendingPathComponent("leaf.key.pem")) == key)
            let forced = mint(["ca", "--out", directory.path, "--force"])
            #expect(forced.status == 0)
            #expect(forced.lines.count == 9)
            #expect(try Data(contentsOf: directory.appendingPathComponent("leaf.key.pem")) != key)
            // An Xcode certificate beside it is a different set of files.
            #expect(mint(["ca", "--xcode", "--out", directory.path]).status == 0)
        }
    }

    @Test func setConvertsTheValueToTheFieldsDocumentedType() throws {
        try withCA { ca in
            let result = mint([
                "transaction", "--ca", ca, "--set", "transactionId=1001", "--set", "price=990", "--set",
                "isUpgraded=true",
                "--set", "quantity=\"7\"",
            ])
            #expect(result.status == 0, "\(result.errors)")
            let token = String(try #require(result.lines.first))
            let payload = try Support.Token(token).payload
            #expect(payload["transactionId"] == .string("1001"))
            #expect(payload["price"] == .number("990"))
            #expect(payload["isUpgraded"] == true)
            #expect(payload["quantity"] == .string("7"))
        }
    }

    @Test func aSetTransactionIdOfDigitsVerifies() throws {
        try withCA { ca in
            let result = mint([
                "transaction", "--ca", ca, "--set", "transactionId=1001", "--set", "originalTransactionId=1000",
            ])
            let token = String(try #require(result.lines.first))
            var configuration = Verifier.Configuration.acceptingAnyApp()
            configuration.trustAnchors = [try Support.authority.anchorCertificate()]
            let verified = try Verifier(configuration: configuration).verify(token)
            #expect(verified.payload["transactionId"] == "1001")
            #expect(verified.payload["originalTransactionId"] == "1000")
        }
    }

    @Test func aSetValueOfTheWrongTypeIsAUsageErrorThatSaysSo() throws {
        try withCA { ca in
            expectUsageError(
                mint(["transaction", "--ca", ca, "--set", "price=cheap"]),
                "price is an integer in Apple's documentation; \"cheap\" is not")
            expectUsageError(
                mint(["notification", "--ca", ca, "--set", "data.status=1.5"]),
                "data.status is an integer in Apple's documentation; \"1.5\" is not")
            expectUsageError(
                mint(["renewal-info", "--ca", ca, "--set", "isInBillingRetryPeriod=yes"]),
                "isInBillingRetryPeriod is true or false in Apple's documentation; \"yes\" is not")
        }
    }

    // MARK: Only what is asked for, about what exists

    @Test func revokedAsksForRevocationsWhichAreOtherwiseLeftOut() throws {
        try withCA { ca in
            func revoked(_ extra: [String]) throws -> Int {
                let result = mint(["transaction", "--ca", ca, "--count", "400", "--seed", "5"] + extra)
                #expect(result.status == 0, "\(result.errors)")
                return try result.lines.filter { try Support.Token(String($0)).payload["revocationDate"] != nil }.count
            }
            let unasked = try revoked([])
            let asked = try revoked(["--revoked", "5"])
            #expect(unasked == 0)
            #expect((10...40).contains(asked))
            expectUsageError(
                mint(["transaction", "--ca", ca, "--revoked", "101"]), "--revoked: \"101\" is not a percentage")
            expectUsageError(
                mint(["notification", "--ca", ca, "--revoked", "5"]), "--revoked applies to mint transaction")
        }
    }

    @Test func aNotificationAboutAnExistingTransactionCarriesItsPurchase() throws {
        try withCA { ca in
            try Support.withTemporaryDirectory { directory in
                let bought = mint([
                    "transaction", "--ca", ca, "--date", "2025-05-01", "--set", "environment=Production", "--set",
                    "productId=com.example.birdwatch.lifetime", "--set",
                    "appAccountToken=7f0a4c2e-3b5d-4e6f-8a9b-0c1d2e3f4a5b",
                ])
                let token = String(try #require(bought.lines.first))
                let purchase = try Support.Token(token).payload
                let file = directory.appendingPathComponent("bought.jws")
                try Data((#"{"signedTransaction":"\#(token)"}"# + "\n").utf8).write(to: file)
                let payloadFile = directory.appendingPathComponent("bought.json")
                try Data(JSONWriter.string(.object(purchase)).utf8).write(to: payloadFile)
                for (source, input) in [(file.path, ""), ("-", token), (payloadFile.path, "")] {
                    let result = mint(
                        ["notification", "--ca", ca, "--transaction", source, "--set", "notificationType=REFUND"],
                        input: input)
                    #expect(result.status == 0, "\(result.errors)")
                    let outer = try Support.Token(String(try #require(result.lines.first))).payload
                    let data = try #require(outer["data"]?.objectValue)
                    let refunded = try Support.Token(try #require(data["signedTransactionInfo"]?.stringValue)).payload
                    for name in [
                        "transactionId", "purchaseDate", "price", "currency", "appAccountToken", "environment",
                    ] {
                        #expect(refunded[name] == purchase[name], "\(source): \(name)")
                    }
                    let revoked = try #require(refunded["revocationDate"]?.int64Value)
                    #expect(revoked > (try #require(purchase["purchaseDate"]?.int64Value)))
                    #expect(data["environment"] == "Production" && data["bundleId"] == "com.example.birdwatch")
                }
                let early = mint(["notification", "--ca", ca, "--transaction", file.path, "--date", "2025-04-01"])
                #expect(early.status == 65)
                #expect(early.errors.contains("was bought at 2025-"))
                expectUsageError(
                    mint(["notification", "--ca", ca, "--transaction", file.path, "--payload", file.path]),
                    "--payload signs one given payload; --transaction does not apply")
                let unreadable = mint(["notification", "--ca", ca, "--transaction", "/nonexistent/bought.jws"])
                #expect(unreadable.status == 66)
                let garbage = mint(["notification", "--ca", ca, "--transaction", "-"], input: "not a token")
                #expect(garbage.status == 65)
                #expect(garbage.errors.hasPrefix("Error: stdin holds no transaction token or payload"))
            }
        }
    }

    @Test func aProductionTestNotificationPassesAProductionVerifierThatNamesTheApp() throws {
        try withCA { ca in
            try Support.withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("test.jws").path
                let minted = mint([
                    "notification", "--ca", ca, "--set", "environment=Production", "--set", "notificationType=TEST",
                    "--set", "bundleId=com.example.birdwatch", "--out", file,
                ])
                #expect(minted.status == 0)
                let verified = vouch([
                    "verify", "--root", ca + "/root.der", "--environment", "Production", "--bundle-id",
                    "com.example.birdwatch", "--app-apple-id", "6449120931", file,
                ])
                #expect(verified.status == 0, "\(verified.errors)")
                #expect(verified.output.contains("TEST"))
            }
        }
    }
}
