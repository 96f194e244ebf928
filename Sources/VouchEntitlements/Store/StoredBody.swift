internal import CSQLite
internal import CZlib

/// How the SQLite store keeps a record body on disk, in one of two formats told by its first
/// byte:
///
/// - ``packed``: an App Store transaction or renewal info, its members packed
///   (``PackedRecord``, ``AppStoreRecord/packed(_:)``), read without a parse. These are what
///   every lookup of an account reads.
/// - ``deflated``: any record's JSON compressed as raw DEFLATE (RFC 1951) against a preset
///   dictionary (``dictionary``) of the members every channel's records spell out. A record of
///   some 800 bytes of JSON keeps 150 or so: what is left is its ids and dates. The other
///   channels' records are kept so, and an App Store record whose packing failed at the
///   migration to schema 6 (a damaged one, left for ``LedgerStore/check()`` to name).
///
/// The checksum of a packed body is of its bytes; that of a deflated body of its JSON, not of
/// its packed bytes: a body that does not unpack, or unpacks to other JSON, is damaged alike.
/// Both formats are part of the schema (6): changing a byte of the dictionary or the order of
/// a packed record's members is a new schema, never an edit.
enum StoredBody {
    /// The first byte of a body of JSON: DEFLATE against ``dictionary``.
    static let deflated: UInt8 = 0x01

    /// The first byte of a packed App Store record (``AppStoreRecord/packed(_:)``).
    static let packed: UInt8 = 0x02

    /// Why a stored body does not give its record.
    enum Damage: Error {
        /// A deflated body that does not inflate.
        case doesNotUnpack
        /// The body does not match its checksum.
        case checksum
        /// The body matches its checksum but is not a record this version reads.
        case unreadable(String)

        /// What is wrong, in the words of ``LedgerStore/check()``.
        var reason: String {
            switch self {
            case .doesNotUnpack: "does not unpack"
            case .checksum: "does not match its checksum"
            case .unreadable(let why): "does not read: \(why)"
            }
        }
    }

    /// The record of the body `stored`, once it matches `checksum`.
    static func record(_ stored: UnsafeRawBufferPointer, checksum: Int64?) -> Result<any StoredRecord, Damage> {
        if stored.first == packed {
            guard checksum == LedgerStore.checksum(stored) else { return .failure(.checksum) }
            do throws(RecordFormatError) {
                return .success(try AppStoreRecord(packed: stored))
            } catch {
                return .failure(.unreadable(error.reason))
            }
        }
        guard let json = unpack(stored) else { return .failure(.doesNotUnpack) }
        return record(json: json, checksum: checksum)
    }

    /// The record of the JSON `json` (a deflated body's, or a body of the PostgreSQL store),
    /// once it matches `checksum`.
    static func record(json: [UInt8], checksum: Int64?) -> Result<any StoredRecord, Damage> {
        guard checksum == LedgerStore.checksum(json) else { return .failure(.checksum) }
        do throws(RecordFormatError) {
            return .success(try LedgerRecordJSON.read(json))
        } catch {
            return .failure(.unreadable(error.reason))
        }
    }

    /// The JSON of the record `stored` holds, in either format, as its codec writes it into a
    /// body (``AppStoreRecord/body``); `nil` when it does not read. For the SQL of migrations and
    /// of tests (`vouch_unpack`), which reads records by their members.
    static func json(_ stored: UnsafeRawBufferPointer) -> [UInt8]? {
        guard stored.first == packed else { return unpack(stored) }
        return (try? AppStoreRecord(packed: stored)).map { Array($0.body.utf8) }
    }

    /// The packed body of a deflated App Store record that matches `checksum`: what the
    /// migration to schema 6 keeps instead of it (`vouch_repack`); `nil` for any other body,
    /// which is kept as it is (with its checksum, which the migration recomputes only for the
    /// bodies it packed).
    static func repacked(_ stored: UnsafeRawBufferPointer, checksum: Int64?) -> [UInt8]? {
        guard stored.first == deflated, case .success(let record) = Self.record(stored, checksum: checksum),
            let record = record as? AppStoreRecord
        else { return nil }
        return record.packed
    }

    /// The window of the compression (2^12 bytes): the dictionary (2.1 KB) and a record of some
    /// 2 KB within reach of each other, in a few kilobytes of state per call.
    static let windowBits: Int32 = 12

    /// Templates of every kind of record, the most frequent (an App Store transaction) last,
    /// nearest to the data: DEFLATE codes near matches shortest.
    static let dictionary: [UInt8] = Array(
        ("{\"kind\":\"grant\",\"channel\":\"\",\"environment\":\"Production\",\"id\":\"\",\"appAccountToken\":null,"
            + "\"originalTransactionId\":null,\"productId\":\"\",\"state\":\"active\",\"startDate\":,\"expiresDate\":null,"
            + "\"signedDate\":}"
            + "{\"kind\":\"stripeRefund\",\"channel\":\"stripe\",\"environment\":\"Sandbox\",\"chargeId\":\"ch_\","
            + "\"created\":,\"eventId\":\"evt_\",\"amount\":,\"amountRefunded\":,\"currency\":\"USD\",\"customer\":\"cus_\","
            + "\"invoice\":null,\"account\":null}"
            + "{\"kind\":\"stripeSubscription\",\"channel\":\"stripe\",\"environment\":\"Production\",\"subscriptionId\":\"sub_\","
            + "\"account\":\"\",\"subscription\":{\"created\":,\"eventId\":\"evt_\",\"status\":\"active\",\"items\":[{\"price\":"
            + "\"price_\",\"product\":\"prod_\",\"currentPeriodStart\":,\"currentPeriodEnd\":}],\"currentPeriodEnd\":null,"
            + "\"cancelAt\":null,\"endedAt\":null,\"startDate\":,\"customer\":\"cus_\",\"account\":\"\"},\"payment\":{\"created\":,"
            + "\"eventId\":\"evt_\",\"paid\":true,\"periodEnd\":,\"amountPaid\":,\"account\":\"\"},\"checkout\":{\"created\":,"
            + "\"eventId\":\"evt_\",\"account\":\"\"}}"
            + "{\"kind\":\"renewalInfo\",\"channel\":\"app_store\",\"environment\":\"Production\",\"originalTransactionId\":\"\","
            + "\"signedDate\":,\"isInBillingRetryPeriod\":false,\"gracePeriodExpiresDate\":null,\"productId\":\"\","
            + "\"appAccountToken\":null}"
            + "\"receipt\":{\"receiptCreationDate\":,\"cancellationDate\":null},\"receiptCancellation\":{"
            + "\"revocationType\":\"REFUND_PRORATED\",\"revocationPercentage\":null,\"FAMILY_REVOKE\",\"Non-Consumable\","
            + "\"Consumable\",\"Non-Renewing Subscription\",\"REFUND_FULL\",\"UPGRADE\",\"FAMILY_SHARED\",\"TransactionId\":\"1000000"
            + "{\"kind\":\"transaction\",\"channel\":\"app_store\",\"environment\":\"Production\",\"originalTransactionId\":\"\","
            + "\"transactionId\":\"\",\"ownership\":\"PURCHASED\",\"signed\":{\"signedDate\":,\"productId\":\"\","
            + "\"type\":\"Auto-Renewable Subscription\",\"subscriptionGroupIdentifier\":null,\"purchaseDate\":,"
            + "\"expiresDate\":null,\"isUpgraded\":false,\"appAccountToken\":null,\"revocationDate\":null,"
            + "\"revocationReason\":null,\"revocationType\":null,\"revocationPercentage\":null,\"price\":,\"currency\":\"USD\","
            + "\"quantity\":1,\"isFreeTrial\":false,\"additionalTransactionReason\":\"PURCHASE\","
            + "\"invitationManagement\":null,\"revokedSeatQuantity\":null},\"receipt\":null,\"receiptCancellation\":null,"
            + "\"newestRevocation\":null,\"reversalNotifiedDate\":null,\"newestSeatRefund\":null}").utf8)

    /// A compression with ``dictionary`` set, copied for each body rather than set up anew:
    /// setting the dictionary hashes all of it each time.
    private final class Primed: @unchecked Sendable {
        // Only read once made (deflateCopy reads its source), so shared by every thread; a
        // pointer, so that no Swift access to it is exclusive.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

        init() {
            stream.initialize(to: z_stream())
            // Fixed Huffman codes: a record is one small block, whose own code tables would
            // cost more to build, write and read than they save.
            guard vouch_deflateInit2(stream, 6, -StoredBody.windowBits, 6, Z_FIXED) == Z_OK else {
                preconditionFailure("zlib cannot start a compression (out of memory)")
            }
            let status = StoredBody.dictionary.withUnsafeBufferPointer {
                deflateSetDictionary(stream, $0.baseAddress, UInt32($0.count))
            }
            precondition(status == Z_OK, "zlib refused the preset dictionary")
        }
    }

    private static let primed = Primed()

    /// `json` packed: ``deflated``, then its DEFLATE against ``dictionary``.
    static func pack(_ json: some Collection<UInt8>) -> [UInt8] {
        var input = Array(json)
        // zlib keeps the stream's address and checks it on every call: one that does not move.
        return withUnsafeTemporaryAllocation(of: z_stream.self, capacity: 1) { buffer in
            let stream = buffer.baseAddress!
            stream.initialize(to: z_stream())
            guard deflateCopy(stream, primed.stream) == Z_OK else {
                preconditionFailure("zlib cannot copy a compression (out of memory)")
            }
            defer { deflateEnd(stream) }
            let bound = Int(deflateBound(stream, uLong(input.count)))
            var packed = [UInt8](repeating: 0, count: 1 + bound)
            packed[0] = deflated
            let produced = input.withUnsafeMutableBufferPointer { input in
                packed.withUnsafeMutableBufferPointer { output -> Int in
                    stream.pointee.next_in = input.baseAddress
                    stream.pointee.avail_in = UInt32(input.count)
                    stream.pointee.next_out = output.baseAddress! + 1
                    stream.pointee.avail_out = UInt32(bound)
                    // deflateBound leaves room for the whole stream: one call finishes it.
                    let finished = deflate(stream, Z_FINISH)
                    precondition(finished == Z_STREAM_END, "zlib did not finish within its own bound")
                    return bound - Int(stream.pointee.avail_out)
                }
            }
            packed.removeLast(bound - produced)
            return packed
        }
    }

    /// The JSON of a packed body; `nil` when `stored` is not one whole packed body (a
    /// damaged record).
    static func unpack(_ stored: UnsafeRawBufferPointer) -> [UInt8]? {
        guard stored.count > 1, stored[0] == deflated else { return nil }
        return withUnsafeTemporaryAllocation(of: z_stream.self, capacity: 1) { buffer -> [UInt8]? in
            let stream = buffer.baseAddress!
            stream.initialize(to: z_stream())
            guard vouch_inflateInit2(stream, -windowBits) == Z_OK else { return nil }
            defer { inflateEnd(stream) }
            let status = dictionary.withUnsafeBufferPointer {
                inflateSetDictionary(stream, $0.baseAddress, UInt32($0.count))
            }
            guard status == Z_OK else { return nil }
            var output = [UInt8](repeating: 0, count: max(1024, stored.count * 8))
            var produced = 0
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: stored.baseAddress!.assumingMemoryBound(to: UInt8.self) + 1)
            stream.pointee.avail_in = UInt32(stored.count - 1)
            while true {
                let result = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.pointee.next_out = buffer.baseAddress! + produced
                    stream.pointee.avail_out = UInt32(buffer.count - produced)
                    let result = inflate(stream, Z_NO_FLUSH)
                    produced = buffer.count - Int(stream.pointee.avail_out)
                    return result
                }
                switch result {
                case Z_STREAM_END:
                    // Bytes after the stream's end are damage too.
                    guard stream.pointee.avail_in == 0 else { return nil }
                    output.removeLast(output.count - produced)
                    return output
                case Z_OK, Z_BUF_ERROR:
                    // Room is all that may be missing: input that ends before the stream does is
                    // damage, and records are small (a body that would unpack past 16 MB is not one).
                    guard stream.pointee.avail_out == 0, output.count < 1 << 24 else { return nil }
                    output += [UInt8](repeating: 0, count: output.count)
                default:
                    return nil
                }
            }
        }
    }

    static func unpack(_ stored: [UInt8]) -> [UInt8]? {
        stored.withUnsafeBytes { unpack($0) }
    }

    /// Makes `vouch_checksum(body)` (``LedgerStore/checksum(_:)`` of a text or blob),
    /// `vouch_pack(json)` (``pack(_:)``, a blob), `vouch_unpack(body)` (``json(_:)``, text;
    /// `NULL` when it does not read) and `vouch_repack(body, checksum)` (``repacked(_:checksum:)``,
    /// `NULL` for a body kept as it is) callable from the SQL of the connection `handle`: the
    /// migrations checksum, pack and repack the bodies with them.
    static func defineFunctions(on handle: OpaquePointer?) -> Int32 {
        let checksumming = sqlite3_create_function_v2(
            handle, "vouch_checksum", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let value = values?[0], let bytes = Self.bytes(value) else {
                    sqlite3_result_null(context)
                    return
                }
                sqlite3_result_int64(context, LedgerStore.checksum(bytes))
            }, nil, nil, nil)
        guard checksumming == SQLITE_OK else { return checksumming }
        let packing = sqlite3_create_function_v2(
            handle, "vouch_pack", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let value = values?[0], let text = sqlite3_value_text(value) else {
                    sqlite3_result_null(context)
                    return
                }
                let packed = StoredBody.pack(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))))
                Self.result(packed, blob: true, context)
            }, nil, nil, nil)
        guard packing == SQLITE_OK else { return packing }
        let unpacking = sqlite3_create_function_v2(
            handle, "vouch_unpack", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let value = values?[0], let stored = Self.bytes(value), let json = StoredBody.json(stored) else {
                    sqlite3_result_null(context)
                    return
                }
                Self.result(json, blob: false, context)
            }, nil, nil, nil)
        guard unpacking == SQLITE_OK else { return unpacking }
        return sqlite3_create_function_v2(
            handle, "vouch_repack", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let body = values?[0], let stored = Self.bytes(body), let checksum = values?[1],
                    let packed = StoredBody.repacked(
                        stored,
                        checksum: sqlite3_value_type(checksum) == SQLITE_NULL ? nil : sqlite3_value_int64(checksum))
                else {
                    sqlite3_result_null(context)
                    return
                }
                Self.result(packed, blob: true, context)
            }, nil, nil, nil)
    }

    /// The bytes of an SQL value (text or blob, as SQLite holds them); `nil` for NULL.
    private static func bytes(_ value: OpaquePointer) -> UnsafeRawBufferPointer? {
        guard let start = sqlite3_value_blob(value) else {
            return sqlite3_value_type(value) == SQLITE_NULL ? nil : .init(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_value_bytes(value)))
    }

    /// Sets `bytes` as the result of a function call, a blob or text.
    private static func result(_ bytes: [UInt8], blob: Bool, _ context: OpaquePointer?) {
        bytes.withUnsafeBytes {
            if blob {
                sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), vouch_sqlite_transient())
            } else {
                sqlite3_result_text(
                    context, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count),
                    vouch_sqlite_transient())
            }
        }
    }
}
