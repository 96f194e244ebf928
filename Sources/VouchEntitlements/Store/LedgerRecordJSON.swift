internal import Vouch

// The ledger's records as JSON: what the store keeps for each transaction, each chain's renewal
// info and each account claim, and what `vouch ledger export` writes (one object per line,
// published as Schemas/ledger-export.schema.json). One writer and one reader, so a stored
// record reads back as the record that was written, and the export is what the store holds.

enum LedgerRecordJSON {
    /// `channel` of every App Store record.
    static let appStore = "app_store"

    /// `channel` of every Stripe record.
    static let stripe = EntitlementSource.stripe.rawValue

    /// Every channel's record codec; a channel registers its own here.
    static let codecs: [any LedgerRecordCodec.Type] = [
        AppStoreRecordCodec.self, StripeRecordCodec.self, GrantRecordCodec.self,
    ]

    static func number(_ value: Int64) -> JSONValue { .number(String(value)) }

    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// Reads a record any channel's codec wrote, by its `kind` and `channel`.
    static func read(_ bytes: [UInt8]) throws(RecordFormatError) -> any StoredRecord {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(bytes, limits: .init(maximumDepth: 4))
        } catch {
            throw RecordFormatError(reason: "not a JSON object: \(error)")
        }
        let fields = Fields(object: object, path: "record")
        let kind = try fields.string("kind")
        let channel = try fields.string("channel")
        guard let codec = codecs.first(where: { $0.reads(kind: kind, channel: channel) }) else {
            throw RecordFormatError(reason: "unknown kind \(kind) of channel \(channel)")
        }
        return try codec.read(fields, kind: kind)
    }

    /// The members of a stored object, read by the models' reader (``PayloadFields``): a
    /// member the record cannot do without must be there, and any error names its path.
    struct Fields {
        let fields: PayloadFields
        let path: String

        init(object: JSONObject, path: String) {
            fields = PayloadFields(object)
            self.path = path
        }

        private func read<Value>(_ body: (PayloadFields) throws(PayloadFieldError) -> Value?) throws(RecordFormatError)
            -> Value?
        {
            do {
                return try body(fields)
            } catch {
                throw RecordFormatError(reason: "\(path).\(error)")
            }
        }

        private func required<Value>(_ value: Value?, _ name: StaticString) throws(RecordFormatError) -> Value {
            guard let value else { throw RecordFormatError(reason: "\(path).\(name) is missing") }
            return value
        }

        func string(_ name: StaticString) throws(RecordFormatError) -> String {
            try required(try optionalString(name), name)
        }

        func optionalString(_ name: StaticString) throws(RecordFormatError) -> String? {
            try read { fields throws(PayloadFieldError) in try fields.string(name) }
        }

        func integer(_ name: StaticString) throws(RecordFormatError) -> Int64 {
            try required(try optionalInteger(name), name)
        }

        func optionalInteger(_ name: StaticString) throws(RecordFormatError) -> Int64? {
            try read { fields throws(PayloadFieldError) in try fields.int64(name) }
        }

        func optionalInt32(_ name: StaticString) throws(RecordFormatError) -> Int32? {
            try read { fields throws(PayloadFieldError) in try fields.int32(name) }
        }

        func int32(_ name: StaticString) throws(RecordFormatError) -> Int32 {
            try required(try optionalInt32(name), name)
        }

        func bool(_ name: StaticString) throws(RecordFormatError) -> Bool {
            try required(try read { fields throws(PayloadFieldError) in try fields.bool(name) }, name)
        }

        /// A nested array (empty when absent).
        func array(_ name: String) throws(RecordFormatError) -> [JSONValue] {
            guard let value = fields.object[name], !value.isNull else { return [] }
            guard let array = value.arrayValue else {
                throw RecordFormatError(reason: "\(path).\(name): expected an array")
            }
            return array
        }

        /// A nested object, or `nil` when it is `null` or absent.
        func object(_ name: String) throws(RecordFormatError) -> Fields? {
            guard let value = fields.object[name], !value.isNull else { return nil }
            guard let nested = value.objectValue else {
                throw RecordFormatError(reason: "\(path).\(name): expected an object")
            }
            return Fields(object: nested, path: "\(path).\(name)")
        }
    }
}

/// A record the store read: what it puts into a ledger, and the record the export writes.
protocol StoredRecord {
    /// Puts the record into its channel of `ledger`.
    func insert(into ledger: inout EntitlementLedger)
    /// The record as `vouch ledger export` writes it.
    var exported: JSONValue { get }
}

/// A channel's codec of stored records: which records it reads, and how. Its writing is
/// `LedgerRecordJSON.object(_:…)` for each of its record types.
protocol LedgerRecordCodec: Sendable {
    /// Whether a record of `kind` and `channel` is this codec's.
    static func reads(kind: String, channel: String) -> Bool
    /// Reads a record of `kind` this codec reads.
    static func read(_ fields: LedgerRecordJSON.Fields, kind: String) throws(RecordFormatError) -> any StoredRecord
}
