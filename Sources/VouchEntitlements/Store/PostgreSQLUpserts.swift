internal import Foundation

/// Rows a join writes to one PostgreSQL table, each inserted or, when its key is there,
/// replaced (`INSERT … ON CONFLICT … DO UPDATE`).
struct PostgreSQLUpsert: Sendable {
    /// The table.
    let table: String
    /// Its columns as the rows give them, the key's first.
    let columns: [String]
    /// The type of each column's values (`text`, `bigint`, `smallint`).
    let types: [String]
    /// How many of the first columns make the key the rows conflict on.
    let keyCount: Int
    /// What a conflicting row sets: `DO UPDATE SET` and this.
    let update: String

    /// The statement writing rows given as one array per column: one round trip, one
    /// execution, however many rows.
    var sql: String {
        let arrays = types.enumerated().map { "$\($0.offset + 1)::\($0.element)[]" }.joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) SELECT * FROM unnest(\(arrays)) "
            + "ON CONFLICT (\(columns.prefix(keyCount).joined(separator: ", "))) DO UPDATE SET \(update)"
    }
}

/// The writes of a join not sent yet, in the order they were made; of the writes to one table
/// that follow each other, each key once (its last row). ``PostgreSQLTables`` sends them before any other statement and at the
/// end of the join, so the statements reach the server in the order the join made them, with
/// the rows of a table that follow each other sent in one statement.
final class PostgreSQLUpserts {
    /// Rows of one statement at most: a statement's arrays stay a few megabytes.
    static let rowsPerStatement = 1_000

    private struct Pending {
        let upsert: PostgreSQLUpsert
        var rows: [[PostgreSQLConnection.Value]] = []
        var slots: [[PostgreSQLConnection.Value]: Int] = [:]
    }

    private var pending: [Pending] = []

    /// Whether nothing waits to be sent.
    var isEmpty: Bool { pending.isEmpty }

    /// Holds `row` (one value per column of `upsert`) for sending; a row of the same key held
    /// before is replaced, as a second statement would replace it.
    func add(_ row: [PostgreSQLConnection.Value], to upsert: PostgreSQLUpsert) {
        let index: Int
        if let last = pending.indices.last, pending[last].upsert.table == upsert.table {
            index = last
        } else {
            pending.append(Pending(upsert: upsert))
            index = pending.count - 1
        }
        let key = Array(row.prefix(upsert.keyCount))
        if let slot = pending[index].slots[key] {
            pending[index].rows[slot] = row
        } else {
            pending[index].slots[key] = pending[index].rows.count
            pending[index].rows.append(row)
        }
    }

    /// Takes what waits, in order, as statements and their values (one array per column);
    /// nothing waits after.
    func take() -> [(sql: String, values: [PostgreSQLConnection.Value])] {
        defer { pending = [] }
        var statements: [(sql: String, values: [PostgreSQLConnection.Value])] = []
        for table in pending {
            for rows in Self.chunks(table.rows) {
                let values = table.upsert.columns.indices.map { column in
                    PostgreSQLConnection.Value.text(Self.arrayLiteral(rows.map { $0[column] }))
                }
                statements.append((table.upsert.sql, values))
            }
        }
        return statements
    }

    /// `items` in slices of ``rowsPerStatement`` at most, in order: what one statement sends.
    static func chunks<Item>(_ items: [Item]) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: rowsPerStatement).map {
            items[$0..<min($0 + rowsPerStatement, items.count)]
        }
    }

    /// `values` as PostgreSQL's array input: each text quoted (`"` and `\` escaped by `\`), each
    /// integer as digits, `NULL` for SQL NULL.
    static func arrayLiteral(_ values: some Collection<PostgreSQLConnection.Value>) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            switch value {
            case .text(let text):
                literal.append(UInt8(ascii: "\""))
                for byte in text.utf8 {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                    literal.append(byte)
                }
                literal.append(UInt8(ascii: "\""))
            case .integer(let number):
                literal.append(contentsOf: String(number).utf8)
            case .null:
                literal.append(contentsOf: "NULL".utf8)
            case .bytes(let bytes):
                // A bytea element in its hex form, quoted.
                literal.append(contentsOf: "\"\\\\x".utf8)
                for byte in bytes { literal.append(contentsOf: String(format: "%02x", byte).utf8) }
                literal.append(UInt8(ascii: "\""))
            }
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }
}
