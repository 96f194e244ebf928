import Foundation
import Testing
import Vouch
import VouchMint
import VouchStripe

/// The published record format (`Schemas/verification-record.schema.json` and the Spark DDL in
/// `Schemas/verification-record.ddl` and `docs/records.md`) against records the built binary writes.
struct RecordSchemaTests {
    static let schema = try! StrictJSON.parseObject(
        Data(contentsOf: VouchBinary.packageRoot.appendingPathComponent("Schemas/verification-record.schema.json")))
    static let ddl = try! String(
        contentsOf: VouchBinary.packageRoot.appendingPathComponent("Schemas/verification-record.ddl"), encoding: .utf8
    ).trimmingCharacters(in: .whitespacesAndNewlines)

    static let memberOrder = (schema["x-member-order"]?.arrayValue ?? []).compactMap { $0.stringValue }

    /// Records of every shape: verified and rejected, bare lines, one-line objects, responses,
    /// echoed members, a nested failure, full and selected payloads, and `vouch verify --json`.
    static func records() throws -> [String] {
        let transaction = try VouchBinary.text("apple-real/real/transaction-sandbox-13.jws")
        let renewal = try VouchBinary.text("apple-real/real/renewalInfo-sandbox-9.jws")
        let notification = try VouchBinary.text("apple-real/real/notification-sandbox-21.jws")
        var nested = Array(notification)
        nested[nested.count - 5] = nested[nested.count - 5] == "A" ? "B" : "A"
        let input =
            [
                transaction, "", "garbage", #"{"id":1,"signedPayload":"\#(notification)"}"#,
                #"{"id":"x","environment":"Sandbox","data":[{"lastTransactions":[{"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)x"}]}]}"#,
                "[\n\"\(transaction)\",\n\"\(String(nested))\"\n]", "{\"a\":", "[1]",
            ].joined(separator: "\n") + "\n"
        var records: [String] = []
        for arguments in [
            ["--echo", "id"], ["--payload", "none"], ["--payload", "notificationType,data.bundleId"],
            ["--no-line-number"],
        ] {
            let result = try VouchBinary.run(["batch"] + arguments + ["-"], input: Array(input.utf8))
            #expect(result.status == 1)
            records += result.stdout.split(separator: "\n").map(String.init)
        }
        records += try stripeRecords()
        for body in [notification, #"{"signedTransactions":["\#(transaction)","x"]}"#] {
            records += try VouchBinary.run(["verify", "--json", "-"], input: Array(body.utf8)).stdout.split(
                separator: "\n"
            ).map(String.init)
        }
        return records
    }

    /// `vouch stripe verify` records: verified, tampered, not a delivery, blank.
    static func stripeRecords() throws -> [String] {
        let secrets = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-schema-stripe-\(getpid())")
        try Data("whsec_schema\n".utf8).write(to: secrets)
        let signer = try MintStripeSigner(secrets: ["whsec_schema"])
        let subscription = MintStripe(seed: 1, date: Date(timeIntervalSince1970: 1_756_684_800)).subscription(0)
        var input = Array(try subscription.events.map { try signer.delivery($0).storedJSON + [0x0A] }.joined())
        input += try signer.tampered(.body, subscription.events[0]).storedJSON + Array("\nnot a delivery\n\n".utf8)
        var records: [String] = []
        for arguments in [[], ["--payload", "none"], ["--payload", "type,data.object.id"], ["--no-line-number"]] {
            let result = try VouchBinary.run(
                ["stripe", "verify", "--stripe-secret-file", secrets.path] + arguments + ["-"], input: Array(input))
            #expect(result.status == 1)
            records += result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(records.contains { $0.contains(#""status":"verified","kind":"stripe_event""#) })
        #expect(records.contains { $0.contains(#""status":"rejected","kind":"stripe_event""#) })
        return records
    }

    @Test func everyRecordFollowsTheSchemaAndItsMemberOrder() throws {
        let order = Self.memberOrder
        let records = try Self.records()
        #expect(records.count > 40)
        var seen = Set<String>()
        for record in records {
            let object = try StrictJSON.parseObject(Array(record.utf8))
            let problems = Self.validate(.object(object), against: .object(Self.schema), at: "record")
            #expect(problems.isEmpty, "\(problems) in \(record)")
            let names = object.members.map(\.name)
            #expect(names == order.filter(names.contains), "members out of order: \(record)")
            seen.formUnion(names)
            #expect((object["status"] == "rejected") == (object["error"] != nil))
        }
        // Each member of the schema appears in some record.
        #expect(seen == Set(order))
    }

    /// A token's or a Stripe delivery's every code is one the schema allows.
    @Test func theSchemaListsEveryCodeARecordOfATokenOrStripeDeliveryCanCarry() throws {
        let properties = Self.schema["properties"]?.objectValue
        let error = properties?["error"]?.objectValue?["properties"]?.objectValue
        let allowed = Set((error?["code"]?.objectValue?["enum"]?.arrayValue ?? []).compactMap(\.stringValue))
        let codes = (VerificationError.Code.all + VerificationError.Code.stripeCodes).map(\.rawValue)
            .filter { $0 != VerificationError.Code.internalError.rawValue }
        #expect(codes.filter { !allowed.contains($0) } == [])
    }

    @Test func theSparkDDLNamesTheSchemasMembersInOrderWithMatchingTypes() throws {
        let fields = Self.topLevelFields(Self.ddl)
        let order = Self.memberOrder
        #expect(fields.map(\.name) == order)
        let types = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.type) })
        #expect(types["line"] == "BIGINT")
        #expect(types["document"] == "BIGINT")
        #expect(types["path"] == "STRING")
        #expect(types["echo"] == "MAP<STRING, STRING>")
        #expect(types["status"] == "STRING")
        #expect(types["kind"] == "STRING")
        #expect(types["payload"] == "STRING")  // any object: Spark keeps its JSON text
        let error = try #require(Self.schema["properties"]?.objectValue?["error"]?.objectValue)
        let nested = try #require(error["properties"]?.objectValue?["nested"]?.objectValue)
        let errorNames = error["properties"]!.objectValue!.members.map(\.name)
        let nestedNames = nested["properties"]!.objectValue!.members.map(\.name)
        #expect(
            types["error"] == "STRUCT<"
                + errorNames.map {
                    $0 == "nested"
                        ? "nested: STRUCT<" + nestedNames.map { "\($0): STRING" }.joined(separator: ", ") + ">"
                        : "\($0): STRING"
                }.joined(separator: ", ") + ">")
        let readme = try String(
            contentsOf: VouchBinary.packageRoot.appendingPathComponent("docs/records.md"), encoding: .utf8)
        #expect(readme.contains(Self.ddl))
    }

    /// `name TYPE` pairs split at commas outside angle brackets.
    static func topLevelFields(_ ddl: String) -> [(name: String, type: String)] {
        var fields: [String] = []
        var current = ""
        var depth = 0
        for character in ddl {
            if character == "<" { depth += 1 }
            if character == ">" { depth -= 1 }
            if character == ",", depth == 0 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields.map { field in
            let trimmed = field.trimmingCharacters(in: .whitespaces)
            let space = trimmed.firstIndex(of: " ")!
            return (String(trimmed[..<space]), String(trimmed[trimmed.index(after: space)...]))
        }
    }

    /// The JSON Schema keywords the published schemas use: type, enum, const, properties,
    /// required, additionalProperties (false, or a schema of the other members), items,
    /// pattern, minimum, oneOf, and `$ref` to `#/$defs/NAME` of `root` (the whole schema;
    /// `schema` itself when not given).
    static func validate(_ value: JSONValue, against schema: JSONValue, at path: String, root: JSONValue? = nil)
        -> [String]
    {
        guard let rules = schema.objectValue else { return [] }
        let root = root ?? schema
        var problems: [String] = []
        if let reference = rules["$ref"]?.stringValue {
            let name = reference.hasPrefix("#/$defs/") ? String(reference.dropFirst("#/$defs/".count)) : ""
            if let target = root.objectValue?["$defs"]?.objectValue?[name] {
                problems += validate(value, against: target, at: path, root: root)
            } else {
                problems.append("\(path): \(reference) does not resolve")
            }
        }
        if let options = rules["oneOf"]?.arrayValue {
            let matching = options.filter { validate(value, against: $0, at: path, root: root).isEmpty }.count
            if matching != 1 { problems.append("\(path): matches \(matching) of its oneOf schemas, not one") }
        }
        if let constant = rules["const"], constant != value {
            problems.append("\(path): \(JSONWriter.string(value)) is not \(JSONWriter.string(constant))")
        }
        if let type = rules["type"] {
            let allowed = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
            let actual: String
            switch value {
            case .null: actual = "null"
            case .bool: actual = "boolean"
            case .number(let text): actual = Int64(text) != nil ? "integer" : "number"
            case .string: actual = "string"
            case .array: actual = "array"
            case .object: actual = "object"
            }
            if !allowed.contains(actual), !(actual == "integer" && allowed.contains("number")) {
                problems.append("\(path): \(actual) is not \(allowed)")
            }
        }
        if let options = rules["enum"]?.arrayValue, !options.contains(value) {
            problems.append("\(path): \(JSONWriter.string(value)) is not one of the enum")
        }
        if let minimum = rules["minimum"]?.int64Value, let number = value.int64Value, number < minimum {
            problems.append("\(path): \(number) < \(minimum)")
        }
        if let pattern = rules["pattern"]?.stringValue, let text = value.stringValue,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            problems.append("\(path): \"\(text)\" does not match \(pattern)")
        }
        if let items = rules["items"], let elements = value.arrayValue {
            for (index, element) in elements.enumerated() {
                problems += validate(element, against: items, at: "\(path)[\(index)]", root: root)
            }
        }
        if let object = value.objectValue {
            let properties = rules["properties"]?.objectValue
            for name in rules["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                problems.append("\(path): \(name) is missing")
            }
            for member in object.members {
                if let rule = properties?[member.name] {
                    problems += validate(member.value, against: rule, at: "\(path).\(member.name)", root: root)
                } else if rules["additionalProperties"] == .bool(false) {
                    problems.append("\(path): \(member.name) is not allowed")
                } else if let rule = rules["additionalProperties"], rule.objectValue != nil {
                    problems += validate(member.value, against: rule, at: "\(path).\(member.name)", root: root)
                }
            }
        }
        return problems
    }
}
