internal import Foundation

/// A stored ledger, in an SQLite file (``LedgerStore``) or on a PostgreSQL server
/// (``PostgreSQLLedgerStore``): the questions and writes of every ledger, and what a store
/// adds to them, so that a caller holds either through one type.
public protocol LedgerStoring: AnyObject, LedgerReading, LedgerWriting
where Failure == LedgerError, Addition == LedgerStore.Change {
    /// The store as messages name it: a file's path, or a server's address without a password.
    var database: String { get }
    /// Adds everything `ledger` holds in one transaction: stored whole or not at all.
    @discardableResult
    func add(contentsOf ledger: EntitlementLedger) throws(LedgerError) -> LedgerStore.Change
    /// Every account, in a stable order.
    func accounts() throws(LedgerError) -> [AccountKey]
    /// Everything the store holds, as one ledger answering by the store's catalog.
    func ledger() throws(LedgerError) -> EntitlementLedger
    /// What the store holds and was fed.
    func statistics() throws(LedgerError) -> LedgerStore.Statistics
    /// Reads every record, verifying its checksum and that it decodes, and every claim and
    /// delivery, verifying its checksum (an SQLite file's integrity check first); what is wrong
    /// is reported, not thrown.
    func check() throws(LedgerError) -> LedgerStore.CheckReport
    /// Writes every record the store holds, one JSON object per call, in a stable order.
    func export(_ write: ([UInt8]) throws -> Void) throws
    /// Closes the store; later calls are ``LedgerError/Code/cannotOpen``.
    func close()
}

/// Opens a stored ledger by what names it.
public enum LedgerDatabase {
    /// Opens the store `database` names: a PostgreSQL server for a `postgresql://` or
    /// `postgres://` URI (``PostgreSQLLedgerStore``), otherwise an SQLite file's path
    /// (``LedgerStore``, opened with `options`).
    public static func open(
        _ database: String, access: LedgerStore.Access = .readWrite, catalog: ProductCatalog = ProductCatalog(),
        options: LedgerStore.Options = LedgerStore.Options()
    ) throws(LedgerError) -> any LedgerStoring {
        if isServer(database) { return try PostgreSQLLedgerStore(database, access: access, catalog: catalog) }
        return try LedgerStore(path: database, access: access, catalog: catalog, options: options)
    }

    /// Whether `database` names a PostgreSQL server rather than a file: a `postgresql://` or
    /// `postgres://` URI.
    public static func isServer(_ database: String) -> Bool {
        PostgreSQLConnection.isConnectionURI(database)
    }
}

extension LedgerStore: LedgerStoring {
    /// The file's path.
    public var database: String { path }
}

extension PostgreSQLLedgerStore: LedgerStoring {
    /// The server and database (``target``), without a password.
    public var database: String { target }
}
