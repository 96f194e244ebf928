import Foundation
import Testing
import VouchTestSupport

/// The payload models, their enum-like types, the payload parser's vocabulary and VouchMint's
/// member types are written by `scripts/generate-models` from `Schemas/payloads.tsv`, the
/// Advanced Commerce request types from `Schemas/advanced-commerce-requests.tsv`, the receipt
/// fields from `Schemas/receipt-fields.tsv` and the ledger's statements (with the export schema's
/// statement members) from `Schemas/ledger-statements.tsv`: the committed files must be what the
/// tables give.
@Suite struct GeneratedModelsTests {
    static let table = "Schemas/payloads.tsv"
    static let requestTable = "Schemas/advanced-commerce-requests.tsv"
    static let receiptTable = "Schemas/receipt-fields.tsv"
    static let statementTable = "Schemas/ledger-statements.tsv"
    static let exportSchema = "Schemas/ledger-export.schema.json"
    static let generatedFolders = [
        "Sources/Vouch/Models/Generated", "Sources/VouchMint/Payloads/Generated",
        "Sources/VouchSigning/AdvancedCommerce/Generated", "Sources/VouchReceipts/Generated",
        "Sources/VouchEntitlements/Channels/AppStore/Generated",
    ]

    /// Runs `scripts/generate-models` with `arguments` under python3: its exit status and
    /// everything it printed. `env` exits with 127 when there is no python3 to run.
    static func generate(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", packageRoot.appendingPathComponent("scripts/generate-models").path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let result = (process.terminationStatus, String(decoding: output, as: UTF8.self))
        if result.0 == 127 {
            Issue.record("python3 is missing: the generated models cannot be checked against their table")
        }
        return result
    }

    /// A copy of the tables and the generated folders in a new temporary package root.
    static func copyOfTheTableAndItsFiles() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-models-\(UUID().uuidString)")
        for path in [table, requestTable, receiptTable, statementTable, exportSchema] + generatedFolders {
            let target = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent(path), to: target)
        }
        return root
    }

    static func appendRow(_ row: String, toTableIn root: URL, table: String = table) throws {
        let url = root.appendingPathComponent(table)
        let text = try String(contentsOf: url, encoding: .utf8)
        try (text + row + "\n").write(to: url, atomically: true, encoding: .utf8)
    }

    @Test func theCommittedFilesAreWhatTheTableGives() throws {
        let result = try Self.generate(["--check"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty, "\(result.output)")
    }

    @Test func aNewTableRowMakesTheFilesStaleUntilTheGeneratorRuns() throws {
        let root = try Self.copyOfTheTableAndItsFiles()
        defer { try? FileManager.default.removeItem(at: root) }
        try Self.appendRow("field\tAppData\tnewMember\tString\tA member added by a test.", toTableIn: root)

        let stale = try Self.generate(["--check", "--root", root.path])
        #expect(stale.status == 1)
        #expect(
            stale.output.split(separator: "\n").prefix(3) == [
                "differs: Sources/Vouch/Models/Generated/AppData.swift",
                "differs: Sources/Vouch/Models/Generated/PayloadVocabulary+Names.swift",
                "differs: Sources/VouchMint/Payloads/Generated/MintFieldType+Documented.swift",
            ])

        let written = try Self.generate(["--root", root.path])
        #expect(written.status == 0, "\(written.output)")
        #expect(try Self.generate(["--check", "--root", root.path]).status == 0)
        let model = try String(
            contentsOf: root.appendingPathComponent("Sources/Vouch/Models/Generated/AppData.swift"), encoding: .utf8)
        #expect(model.contains("    /// A member added by a test.\n    public let newMember: String?\n"))
        #expect(model.contains("        newMember = try fields.string(\"newMember\")\n"))
        #expect(
            model.contains(
                "        signedAppTransactionInfo: String? = nil,\n        newMember: String? = nil\n    ) {"))
        #expect(model.contains("        json.add(\"newMember\", newMember)\n        self.json = json\n"))
    }

    /// Appends `row` to `table` in a copy of the package: the generator must then call `file`
    /// stale, and only it first, and write it anew. What it wrote, for the caller to check.
    static func fileAfterAdding(_ row: String, to table: String, changes file: String) throws -> String {
        let root = try copyOfTheTableAndItsFiles()
        defer { try? FileManager.default.removeItem(at: root) }
        try appendRow(row, toTableIn: root, table: table)
        let stale = try generate(["--check", "--root", root.path])
        #expect(stale.status == 1)
        #expect(stale.output.split(separator: "\n").first.map(String.init) == "differs: \(file)")
        #expect(try generate(["--root", root.path]).status == 0)
        #expect(try generate(["--check", "--root", root.path]).status == 0)
        return try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
    }

    @Test func aNewRequestMemberIsOneRowThatTheGeneratorWritesEverywhere() throws {
        let type = try Self.fileAfterAdding(
            "member\tAdvancedCommerceSKUItem\tnote\tString\toptional\tdescription\tA member added by a test.",
            to: Self.requestTable,
            changes: "Sources/VouchSigning/AdvancedCommerce/Generated/AdvancedCommerceSKUItem.swift")
        #expect(type.contains("    /// A member added by a test.\n    public var note: String?\n"))
        #expect(type.contains("        sku: String,\n        note: String? = nil\n    ) {"))
        #expect(type.contains("        self.note = note\n"))
        #expect(type.contains("        try writer.write(\"note\", note, RequestRules.description)\n"))
        #expect(type.contains("                note: try fields.optional(\"note\"))\n"))
    }

    @Test func aNewReceiptFieldIsOneRowThatTheGeneratorWritesEverywhere() throws {
        let type = try Self.fileAfterAdding(
            "field\tInAppPurchaseReceipt\tofferCodeRefName\t1722\tString\toptional\tA field added by a test.",
            to: Self.receiptTable, changes: "Sources/VouchReceipts/Generated/InAppPurchaseReceipt+Fields.swift")
        #expect(type.contains("    let offerCodeRefNameText: Range<Int>?\n"))
        #expect(
            type.contains(
                "    /// A field added by a test.\n"
                    + "    public var offerCodeRefName: String? { offerCodeRefNameText.map(table.string) }\n"))
        #expect(type.contains("1713, 1719, 1721, 1722]\n"))
        #expect(type.contains("        offerCodeRefNameText = try reader.string(1722)\n"))
        #expect(type.contains("        object.add(\"offerCodeRefName\", offerCodeRefName.map(JSONValue.string))\n"))
        #expect(
            type.contains(
                "            json.key(\"offerCodeRefName\")\n            json.string(offerCodeRefNameText)\n"))
    }

    @Test func aNewStatementMemberIsOneRowThatTheGeneratorWritesEverywhere() throws {
        let root = try Self.copyOfTheTableAndItsFiles()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = "Sources/VouchEntitlements/Channels/AppStore/Generated/TransactionStatement.swift"
        try Self.appendRow(
            "member\tTransactionStatement\tofferIdentifier\tString?\trecord\tpayload.offerIdentifier\tshared"
                + "\tA member added by a test.\tThe offer.",
            toTableIn: root, table: Self.statementTable)
        let stale = try Self.generate(["--check", "--root", root.path])
        #expect(stale.status == 1)
        #expect(stale.output.hasPrefix("differs: \(Self.exportSchema)\ndiffers: \(file)\n"), "\(stale.output)")
        #expect(try Self.generate(["--root", root.path]).status == 0)
        #expect(try Self.generate(["--check", "--root", root.path]).status == 0)

        let type = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        #expect(type.contains("    /// A member added by a test.\n    var offerIdentifier: String?\n"))
        #expect(
            type.contains("        revokedSeatQuantity: Int32? = nil,\n        offerIdentifier: String? = nil\n    ) {")
        )
        #expect(type.contains("            offerIdentifier: payload.offerIdentifier)\n"))
        #expect(type.contains("        offerIdentifier = offerIdentifier.map(shared)\n"))
        #expect(type.contains("            offerIdentifier ?? \"\",\n        ]\n"))
        #expect(type.contains("            offerIdentifier: try fields.optionalString(\"offerIdentifier\"))\n"))
        #expect(type.contains("        members.append(.init(\"offerIdentifier\", text(statement.offerIdentifier)))\n"))

        let schemaText = try Data(contentsOf: root.appendingPathComponent(Self.exportSchema))
        let schema = try #require(try JSONSerialization.jsonObject(with: schemaText) as? [String: Any])
        let statement = try #require((schema["$defs"] as? [String: Any])?["statement"] as? [String: Any])
        #expect((statement["x-member-order"] as? [String])?.suffix(2) == ["revokedSeatQuantity", "offerIdentifier"])
        #expect((statement["required"] as? [String])?.last == "offerIdentifier")
        let property = try #require((statement["properties"] as? [String: Any])?["offerIdentifier"] as? [String: Any])
        #expect(property["type"] as? [String] == ["string", "null"])
        #expect(property["description"] as? String == "The offer.")
    }

    @Test func aFileTheTableDoesNotGiveIsStale() throws {
        let root = try Self.copyOfTheTableAndItsFiles()
        defer { try? FileManager.default.removeItem(at: root) }
        let stray = root.appendingPathComponent("Sources/Vouch/Models/Generated/Removed.swift")
        try "struct Removed {}\n".write(to: stray, atomically: true, encoding: .utf8)

        let stale = try Self.generate(["--check", "--root", root.path])
        #expect(stale.status == 1)
        #expect(stale.output.hasPrefix("not in the table: Sources/Vouch/Models/Generated/Removed.swift\n"))
        #expect(try Self.generate(["--root", root.path]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: stray.path))
    }

    @Test(arguments: [
        ("field\tAppData\tnewMember\tDecimal\tA member.", "unknown type 'Decimal'"),
        ("field\tAppData\tbundleId\tString\tA member.", "AppData already has bundleId"),
        ("value\tSubscriptionStatus\tlater\tsix\tA value.", "SubscriptionStatus values are integers, not 'six'"),
        ("field\tAppData\tstatus\tString\tA member.", "status is string here but integer at"),
        ("member\tAdvancedCommerceSKUItem\tnote\tDecimal\toptional\t-\tA member.", "unknown member type 'Decimal'"),
        ("member\tAdvancedCommerceSKUItem\tnote\tString\tsometimes\t-\tA member.", "is not required, optional"),
        ("member\tAdvancedCommerceSKUItem\tnote\tString\toptional\tshort\tA member.", "'short' is not - or one of"),
        ("member\tAdvancedCommerceSKUItem\tsku:SKU\tString\trequired\t-\tA member.", "already has sku:SKU"),
        ("field\tAppReceipt\tnote\t2\tString\toptional\tA field.", "already has note or attribute 2"),
        ("field\tAppReceipt\tnote\ttwo\tString\toptional\tA field.", "the attribute type 'two' is not a number"),
        ("field\tAppReceipt\tnote\t99\tString\tsometimes\tA field.", "is not optional or required:NAME"),
        (
            "member\tTransactionStatement\tnote\tDecimal?\trecord\tpayload.note\t-\tA member.\t-",
            "'Decimal?' is not a scalar or an optional group"
        ),
        (
            "member\tTransactionStatement\tproductId\tString\trecord\tpayload.productId\t-\tA member.\t-",
            "TransactionStatement already has productId"
        ),
        (
            "member\tTransactionStatement\tnote\tString?\tstored\tpayload.note\t-\tA member.\t-",
            "'stored' is not record or head"
        ),
        (
            "member\tTransactionStatement\tnote\tInt64?\trecord\tpayload.note\tshared\tA member.\t-",
            "only text is shared"
        ),
    ])
    func aTableTheModelsCannotComeFromIsRefused(row: String, message: String) throws {
        let root = try Self.copyOfTheTableAndItsFiles()
        defer { try? FileManager.default.removeItem(at: root) }
        // Statement rows are `member` rows of a statement, request rows the other `member` rows;
        // receipt rows are `field` rows of a receipt type.
        let table =
            row.hasPrefix("member\tTransactionStatement")
            ? Self.statementTable
            : row.hasPrefix("member\t")
                ? Self.requestTable : row.hasPrefix("field\tAppReceipt") ? Self.receiptTable : Self.table
        try Self.appendRow(row, toTableIn: root, table: table)
        let refused = try Self.generate(["--root", root.path])
        #expect(refused.status == 65)
        #expect(refused.output.contains(message), "\(refused.output)")
        #expect(try Self.generate(["--check", "--root", root.path]).status == 65)
    }
}
