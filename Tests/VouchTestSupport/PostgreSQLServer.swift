import Foundation
public import Testing

/// The PostgreSQL server the tests that need one use: the one `VOUCH_TEST_POSTGRESQL` names
/// (a connection string with a role allowed to create tables), as `scripts/with-postgresql`
/// starts it for the command it runs. Every test that needs it carries `.postgreSQLServer`.
public enum PostgreSQLServer {
    /// The connection string of the test server; `nil` when none was given.
    public static let connectionString: String? = {
        guard let value = ProcessInfo.processInfo.environment["VOUCH_TEST_POSTGRESQL"], !value.isEmpty else {
            return nil
        }
        return value
    }()

    /// The connection string of the test server, or a failure saying none was given.
    public static func url() throws -> String {
        guard let connectionString else { throw TestFailure(skipReason) }
        return connectionString
    }

    /// Why the tests that need a server are skipped, and how to run them.
    public static let skipReason =
        "needs a PostgreSQL server: run scripts/with-postgresql swift test …, or set "
        + "VOUCH_TEST_POSTGRESQL=postgresql://… (CONTRIBUTING.md)"
}

extension Trait where Self == ConditionTrait {
    /// Runs the test (or every test of the suite) only when a PostgreSQL server is given by
    /// `VOUCH_TEST_POSTGRESQL`; otherwise it is reported as skipped, saying how to get one.
    public static var postgreSQLServer: Self {
        .enabled(if: PostgreSQLServer.connectionString != nil, Comment(rawValue: PostgreSQLServer.skipReason))
    }
}
