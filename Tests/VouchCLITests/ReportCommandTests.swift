import Foundation
import Testing
import Vouch
import VouchEntitlements
import VouchTestSupport

/// `vouch report` on data minted by the built binary (`vouch mint ca`, `mint history`,
/// `mint stripe`): its embedded figures follow the published schema and agree with
/// `vouch entitlements` and `vouch refunds` on the same data; the page is whole in itself and
/// renders in a real browser.
@Suite(.serialized) struct ReportCommandTests {
    static let secret = "whsec_report_test"
    static let from = "2026-02-01"
    static let to = "2026-06-15"

    /// Minted inputs in a scratch directory: the test CA, App Store histories of 40 accounts
    /// and 8 Stripe subscriptions ending at ``to``, the secret and a tier catalog naming
    /// products of both channels.
    struct Minted {
        let directory: URL
        let root: String
        let secrets: String
        let tiers: String
        let inputs: [String]

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        /// The trust, Stripe and tier options every command is given.
        var options: [String] { ["--root", root, "--stripe-secret-file", secrets, "--tiers", tiers] }
    }

    static func mint() throws -> Minted {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func run(_ arguments: [String]) throws {
            let result = try VouchBinary.run(arguments)
            guard result.status == 0 else {
                throw TestFailure("vouch \(arguments.joined(separator: " ")): \(result.stderr)")
            }
        }
        try run(["mint", "ca", "--out", path("ca"), "--not-before", "2020-01-01", "--not-after", "2045-01-01"])
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: path("secrets")))
        try run([
            "mint", "history", "--ca", path("ca"), "--count", "40", "--seed", "5", "--date", to, "--out",
            path("history.jwsl"),
        ])
        try run([
            "mint", "stripe", "--stripe-secret-file", path("secrets"), "--count", "8", "--seed", "3", "--date", to,
            "--out", path("stripe.jsonl"),
        ])
        let stripe = try String(contentsOfFile: path("stripe.jsonl"), encoding: .utf8)
        let prices = Set(
            stripe.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init).filter {
                $0.hasPrefix("price_") && $0 != "price_details"
            }
        ).sorted()
        let products = (["com.example.pro.monthly", "com.example.pro.lifetime"] + prices).map { "\"\($0)\"" }
        try Data(
            """
            {"tiers":[{"name":"plus","rank":10,"products":["com.example.plus.monthly"]},
                      {"name":"pro","rank":20,"products":[\(products.joined(separator: ","))]}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: path("tiers.json")))
        return Minted(
            directory: directory, root: path("ca/root.der"), secrets: path("secrets"), tiers: path("tiers.json"),
            inputs: [path("history.jwsl"), path("stripe.jsonl")])
    }

    /// The page's embedded figures.
    static func data(_ page: String) throws -> JSONValue {
        let open = "<script type=\"application/json\" id=\"vouch-report-data\">"
        guard let start = page.range(of: open),
            let end = page.range(of: "</script>", range: start.upperBound..<page.endIndex)
        else { throw TestFailure("no vouch-report-data in the page") }
        return try StrictJSON.parse(Data(page[start.upperBound..<end.lowerBound].utf8))
    }

    static func report(_ minted: Minted, _ extra: [String] = []) throws -> (page: String, result: VouchBinary.Result) {
        let out = minted.path("report-\(UUID().uuidString).html")
        let result = try VouchBinary.run(
            ["report", "--from", from, "--to", to, "--out", out] + minted.options + extra + minted.inputs)
        let page = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (page, result)
    }

    static func counts(_ value: JSONValue?) -> [Int] {
        (value?.arrayValue ?? []).compactMap { $0.int64Value.map(Int.init) }
    }

    @Test func theEmbeddedFiguresFollowThePublishedSchemaAndItsMemberOrder() throws {
        let minted = try Self.mint()
        let (page, result) = try Self.report(minted)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("report \(Self.from) to \(Self.to): 135 days"), "\(result.stderr)")
        let schema = try StrictJSON.parseObject(
            Data(contentsOf: VouchBinary.packageRoot.appendingPathComponent("Schemas/report.schema.json")))
        let data = try Self.data(page)
        let problems = RecordSchemaTests.validate(data, against: .object(schema), at: "$")
        #expect(problems.isEmpty, "\(problems)")
        let order = (schema["x-member-order"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(data.objectValue?.members.map(\.name) == order)
        let days = data.objectValue?["days"]?.arrayValue ?? []
        #expect(days.count == 135)
        #expect(days.first?.stringValue == Self.from && days.last?.stringValue == Self.to)
        #expect(
            data.objectValue?["months"]?.arrayValue?.compactMap(\.stringValue)
                == ["2026-02", "2026-03", "2026-04", "2026-05", "2026-06"])
        let subscribers = data.objectValue?["subscribers"]?.objectValue
        #expect(Self.counts(subscribers?["total"]).count == 135)
        #expect(
            subscribers?["byTier"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } == ["pro", "plus"])
        #expect(Self.counts(subscribers?["total"]).max() ?? 0 > 0)
    }

    /// On three days, each count equals what `vouch entitlements --json --at DAY` answers on the
    /// same inputs; the refund summary equals `vouch refunds --summary-json`'s.
    @Test func theFiguresAgreeWithEntitlementsAndRefundsOnTheSameData() throws {
        let minted = try Self.mint()
        let (page, result) = try Self.report(minted)
        #expect(result.status == 0, "\(result.stderr)")
        let data = try #require(try Self.data(page).objectValue)
        let days = (data["days"]?.arrayValue ?? []).compactMap(\.stringValue)
        let subscribers = try #require(data["subscribers"]?.objectValue)
        var stripeSeen = false
        for day in ["2026-02-20", "2026-04-20", Self.to] {
            let index = try #require(days.firstIndex(of: day))
            let answer = try VouchBinary.run(["entitlements", "--json", "--at", day] + minted.options + minted.inputs)
            #expect(answer.status == 0, "\(answer.stderr)")
            let records = try answer.stdout.split(separator: "\n").map { try VouchBinary.object(String($0)) }
            var tiers: [String: Int] = [:]
            var channels: [String: Int] = [:]
            var total = 0
            for record in records {
                if let tier = (record["tier"] as? [String: Any])?["name"] as? String { tiers[tier, default: 0] += 1 }
                let subscriptions = (record["entitlements"] as? [[String: Any]] ?? []).filter {
                    $0["type"] as? String == "Auto-Renewable Subscription"
                }
                if !subscriptions.isEmpty { total += 1 }
                for source in Set(subscriptions.compactMap { $0["source"] as? String }) {
                    channels[source, default: 0] += 1
                }
            }
            #expect(Self.counts(subscribers["total"])[index] == total, "\(day)")
            for entry in subscribers["byTier"]?.arrayValue ?? [] {
                let name = entry.objectValue?["name"]?.stringValue ?? ""
                #expect(Self.counts(entry.objectValue?["counts"])[index] == tiers[name] ?? 0, "\(day) \(name)")
            }
            for entry in subscribers["byChannel"]?.arrayValue ?? [] {
                let source = entry.objectValue?["source"]?.stringValue ?? ""
                #expect(Self.counts(entry.objectValue?["counts"])[index] == channels[source] ?? 0, "\(day) \(source)")
            }
            stripeSeen = stripeSeen || (channels["stripe"] ?? 0) > 0
            #expect(total > 0, "\(day)")
        }
        #expect(stripeSeen, "no Stripe subscriber on the days compared")

        // Every revocation of the minted data is dated before --to, so --since --from selects
        // the same ones.
        let summaryPath = minted.path("refunds.json")
        let refunds = try VouchBinary.run(
            ["refunds", "--since", Self.from, "--summary-json", summaryPath] + minted.options.dropLast(2)
                + minted.inputs)
        #expect(refunds.status == 0, "\(refunds.stderr)")
        let expected = try StrictJSON.parseObject(Data(contentsOf: URL(fileURLWithPath: summaryPath)))
        let summary = try #require(data["refunds"]?.objectValue?["summary"]?.objectValue)
        let compared = expected.members.filter { !["input", "since"].contains($0.name) }
        #expect(summary.members == compared)
        #expect((summary["revocations"]?.int64Value ?? 0) > 0)
        // The months' summaries add up to the period's.
        let monthly = (data["refunds"]?.objectValue?["byMonth"]?.arrayValue ?? []).compactMap {
            $0.objectValue?["revocations"]?.int64Value
        }
        #expect(monthly.reduce(0, +) == summary["revocations"]?.int64Value)
    }

    /// From a ledger file that `vouch ledger add` filled with the same inputs, the same figures.
    @Test func aLedgerFileGivesTheSameFiguresAsItsInputs() throws {
        let minted = try Self.mint()
        let db = minted.path("ledger.sqlite")
        let added = try VouchBinary.run(
            ["ledger", "add", "--db", db, "--root", minted.root, "--stripe-secret-file", minted.secrets]
                + minted.inputs)
        #expect(added.status == 0, "\(added.stderr)")
        let (page, result) = try Self.report(minted)
        #expect(result.status == 0, "\(result.stderr)")
        let out = minted.path("stored.html")
        let stored = try VouchBinary.run(
            ["report", "--db", db, "--tiers", minted.tiers, "--from", Self.from, "--to", Self.to, "--out", out])
        #expect(stored.status == 0, "\(stored.stderr)")
        let fromInputs = try #require(try Self.data(page).objectValue)
        let fromStore = try #require(try Self.data(String(contentsOfFile: out, encoding: .utf8)).objectValue)
        #expect(fromStore.members.map(\.name) == fromInputs.members.map(\.name))
        for member in fromInputs.members where member.name != "input" {
            #expect(fromStore[member.name] == member.value, "\(member.name)")
        }
    }

    @Test func thePageNeedsNothingFromElsewhere() throws {
        let minted = try Self.mint()
        let (page, result) = try Self.report(minted)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        for reference in ["http://", "https://", "<link", "<script src", " src=", "url(", "@import", "<iframe"] {
            #expect(!page.contains(reference), "the page holds \(reference)")
        }
        #expect(page.components(separatedBy: "<script").count == 2, "one script element: the data")
        for id in [
            "chart-subscribers-by-tier", "chart-subscribers-by-channel", "chart-activity", "chart-refunds-by-product",
            "chart-refunds-by-reason", "chart-refund-rate", "chart-top-products",
        ] {
            #expect(page.contains("<svg id=\"\(id)\""), "\(id)")
        }
        #expect(page.contains("viewBox=\"0 0 "))
        #expect(page.contains("<title>"))
    }

    /// The page writes each refunded total as `CurrencyAmount` describes it.
    @Test func amountsAreWrittenAsCurrencyAmountWritesThem() throws {
        let minted = try Self.mint()
        let (page, _) = try Self.report(minted)
        let data = try Self.data(page)
        let refunded = try #require(
            data.objectValue?["refunds"]?.objectValue?["summary"]?.objectValue?["refunded"]?.objectValue)
        #expect(!refunded.members.isEmpty)
        for member in refunded.members {
            // Milliunits with up to five decimals, as exact 1/100000 milliunits.
            guard case .number(let text) = member.value else { throw TestFailure("\(member.name) is not a number") }
            let parts = text.split(separator: ".", maxSplits: 1)
            let fraction = parts.count > 1 ? String(parts[1]) : ""
            let whole = try #require(Int128(String(parts[0])))
            let part = try #require(Int128(fraction.padding(toLength: 5, withPad: "0", startingAt: 0)))
            let amount = CurrencyAmount(
                MilliunitAmount(hundredThousandths: whole * 100_000 + part), currency: member.name)
            #expect(page.contains("<b>\(amount.description)</b>"), "\(amount)")
        }
    }

    @Test func aPeriodThatEndsBeforeItStartsOrAMissingOutIsAUsageError() throws {
        let missing = try VouchBinary.run(["report", "--from", "2026-05-01", "--to", "2026-05-01"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("Error: report needs --out FILE.html"))
        let reversed = try VouchBinary.run(["report", "--out", "-", "--from", "2026-05-02", "--to", "2026-05-01"])
        #expect(reversed.status == 64)
        #expect(reversed.stderr.contains("Error: --from must not be after --to"))
        let long = try VouchBinary.run(["report", "--out", "-", "--from", "2000-01-01", "--to", "2026-05-01"])
        #expect(long.status == 64)
        #expect(long.stderr.contains("longer than 3660 days"))
    }

    @Test func anInputThatCannotBeReadIsExit66AndWritesNoPage() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vouch-report-\(UUID().uuidString).html")
        let result = try VouchBinary.run(["report", "--out", out.path, "/nonexistent/input.jwsl"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("Error: cannot read /nonexistent/input.jwsl"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// Where Debian's chromium is installed or apt-get can install it (CI runs as root).
    static let browserAvailable: Bool = {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        func has(_ tool: String) -> Bool {
            paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
        let available = has("chromium") || has("chromium-browser") || (has("apt-get") && geteuid() == 0)
        if !available {
            FileHandle.standardError.write(
                Data(
                    "skipped: the browser test of vouch report needs Debian's chromium package or root with apt-get\n"
                        .utf8))
        }
        return available
    }()

    /// `scripts/report-browser-test` renders the page at 400 and 1400 px and checks the
    /// screenshots' sizes, the charts in the DOM and a silent console.
    @Test(.enabled(if: browserAvailable, "needs Debian's chromium package, or root with apt-get to install it"))
    func thePageRendersInHeadlessChromiumAtANarrowAndAWideSize() throws {
        let minted = try Self.mint()
        let out = minted.path("page.html")
        let result = try VouchBinary.run(
            ["report", "--from", Self.from, "--to", Self.to, "--out", out] + minted.options + minted.inputs)
        #expect(result.status == 0, "\(result.stderr)")
        let process = Process()
        process.executableURL = VouchBinary.packageRoot.appendingPathComponent("scripts/report-browser-test")
        process.arguments = [out, minted.path("browser")]
        let log = minted.path("browser.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("report-browser-test: 2 screenshots, 7 charts, no console message"), "\(text)")
        for width in [400, 1400] {
            #expect(FileManager.default.fileExists(atPath: minted.path("browser/report-\(width).png")))
        }
    }
}
