import Foundation
import Testing
import VouchEntitlements
import VouchMint
import VouchTestSupport

/// Four `vouch ledger add` processes share one PostgreSQL ledger while a reader queries it; one
/// writer is killed with SIGKILL and every session of the ledger's database is ended by the
/// server in the middle; the writers that did not finish are run again, and the store then
/// answers as one SQLite store fed the same inputs one after another.
///
/// The test has a database of its own on the test server and ends its sessions with
/// `pg_terminate_backend` instead of restarting the server: other suites use the same server
/// at the same time, and a restart would end their sessions too.
@Suite(.serialized, .postgreSQLServer) struct PostgreSQLLoadCommandTests {
    typealias L = LedgerCommandTests

    /// Minted histories of the accounts `accounts`, one token a line.
    static func input(_ name: String, accounts: Range<Int>) throws -> String {
        let generator = MintHistoryGenerator(seed: 41, date: Date(timeIntervalSince1970: 1_780_272_000))
        let tokens = try accounts.flatMap { try generator.history($0).tokens(signer: L.signer) }
        return try L.file(tokens, name: name)
    }

    @Test func fourWritersAReaderAKilledWriterAndEndedSessionsLeaveTheAnswersOfOneSequentialSQLiteStore() throws {
        let scratch = try ScratchDatabase("vouch_load_")
        let (admin, name, server) = (scratch.admin, scratch.name, scratch.url)

        // Disjoint (0..<60, 60..<120) and overlapping (30..<90, 90..<150 with 60..<120) inputs.
        let ranges = [0..<60, 60..<120, 30..<90, 90..<150]
        let inputs = try ranges.enumerated().map { try Self.input("load-\($0.offset).jsonl", accounts: $0.element) }
        let sequential = LedgerStoreCommandTests.database("load-sequential.sqlite")
        for input in inputs {
            let added = try VouchBinary.run(["ledger", "add", "--db", sequential, "--root", L.root, input])
            #expect(added.status == 0, "\(added.stderr)")
        }

        func writer(_ input: String) throws -> Process {
            let process = Process()
            process.executableURL = VouchBinary.url
            process.arguments = ["ledger", "add", "--db", server, "--jobs", "1", "--root", L.root, input]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        /// Waits for `process` at most until `deadline`, then kills it.
        func finish(_ process: Process, by deadline: Date) {
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        // The store is made before the reader starts: a database without it is not a store.
        let made = try VouchBinary.run([
            "ledger", "add", "--db", server, "--root", L.root, try L.file([], name: "load-none.jsonl"),
        ])
        #expect(made.status == 0, "\(made.stderr)")

        let reader = ReaderLoop(["entitlements", "--db", server, "--json", "--at", "2026-06-01"])
        Thread.detachNewThread { reader.run(times: 300, seconds: 240) }
        var writers = try inputs.map(writer)
        let deadline = Date().addingTimeInterval(240)

        // Once the writers have sessions open, writer 0 is killed, then every session of the
        // ledger's database is ended while the others write.
        var sessions: Int64 = 0
        for _ in 0..<500 where sessions == 0 {
            sessions =
                try admin.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", [.text(name)], phase: .read
                ).integer(0, 0) ?? 0
            if sessions == 0 { usleep(10_000) }
        }
        #expect(sessions > 0)
        usleep(150_000)
        let killedWhileRunning = writers[0].isRunning
        kill(writers[0].processIdentifier, SIGKILL)
        usleep(150_000)
        let ended =
            try admin.query(
                """
                WITH sessions AS MATERIALIZED (
                    SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()
                )
                SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM sessions
                """, [.text(name)], phase: .write
            ).integer(0, 0) ?? 0
        let runningWhenEnded = writers.dropFirst().filter(\.isRunning).count

        for process in writers { finish(process, by: deadline) }
        #expect(killedWhileRunning)
        #expect(writers[0].terminationReason == .uncaughtSignal)
        #expect(ended > 0)
        #expect(runningWhenEnded > 0)
        for process in writers.dropFirst() {
            #expect(process.terminationReason == .exit)
            #expect([0, 74].contains(process.terminationStatus), "\(process.terminationStatus)")
        }

        // The killed writer and every writer that lost its connection, again.
        let rerun = writers.indices.filter {
            writers[$0].terminationReason == .uncaughtSignal || writers[$0].terminationStatus == 74
        }
        #expect(rerun.count >= 2)
        for index in rerun { writers[index] = try writer(inputs[index]) }
        for index in rerun {
            finish(writers[index], by: Date().addingTimeInterval(240))
            #expect(writers[index].terminationReason == .exit)
            #expect(writers[index].terminationStatus == 0)
        }

        reader.stop()
        let statuses = try #require(reader.wait(seconds: 120))
        #expect(statuses.contains(0), "\(statuses)")
        // A reader whose session is ended answers nothing: 66 when it was opening the store,
        // 74 when reading, saying it lost the connection.
        #expect(statuses.allSatisfy { [0, 66, 74].contains($0) }, "\(statuses) \(reader.failures)")
        #expect(reader.failures.allSatisfy { $0.contains("lost the connection") }, "\(reader.failures)")

        let answers = try LedgerWritersCommandTests.answers(server)
        #expect(!answers[0].isEmpty)
        #expect(answers == (try LedgerWritersCommandTests.answers(sequential)))
    }
}

/// Runs the built binary with the same arguments again and again on a thread of its own, each
/// run waited for, until stopped or `times` runs or `seconds` have passed.
private final class ReaderLoop: @unchecked Sendable {
    private let arguments: [String]
    private let condition = NSCondition()
    private var stopped = false
    private var finished = false
    private var statuses: [Int32] = []
    /// What the runs that did not exit 0 printed on stderr.
    private(set) var failures: [String] = []

    init(_ arguments: [String]) { self.arguments = arguments }

    func run(times: Int, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        for _ in 0..<times where Date() < deadline {
            condition.lock()
            let stop = stopped
            condition.unlock()
            if stop { break }
            let result = try? VouchBinary.run(arguments)
            condition.lock()
            statuses.append(result?.status ?? -1)
            if let result, result.status != 0 { failures.append(result.stderr) }
            condition.unlock()
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.unlock()
    }

    /// The exit statuses of the runs, waiting at most `seconds` for the loop to end; `nil` when
    /// it did not end.
    func wait(seconds: Double) -> [Int32]? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) { return nil }
        }
        return statuses
    }
}

/// A database of its own on the test server (other suites use the same server at the same
/// time), dropped with its sessions when the value goes.
final class ScratchDatabase {
    /// A connection to the server's default database, to make and drop this one.
    let admin: PostgreSQLConnection
    let name: String
    /// The database's URI, for `--db`.
    let url: String

    init(_ prefix: String) throws {
        let base = try PostgreSQLServer.url()
        name = prefix + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        admin = try PostgreSQLConnection(base)
        try admin.execute("CREATE DATABASE \(name)", phase: .write)
        var components = try #require(URLComponents(string: base))
        components.path = "/" + name
        url = try #require(components.string)
    }

    deinit {
        try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", phase: .write)
        admin.close()
    }
}
