internal import CSQLite
internal import CZlib

/// How the SQLite store keeps a record body on disk: packed, one format byte
/// (``deflated``) and the record's JSON compressed as raw DEFLATE (RFC 1951) against a preset
/// dictionary (``dictionary``) of the members every channel's records spell out. A record of
/// some 800 bytes of JSON keeps 150 or so: what is left is its ids and dates.
///
/// The checksum of a record is of its JSON, not of its packed bytes: a packed body that does
/// not unpack, or unpacks to other JSON, is damaged alike. The dictionary is part of the
/// format (schema 5): changing a byte of it is a new schema, never an edit.
enum StoredBody {
    /// The first byte of every packed body: DEFLATE against ``dictionary``.
    static let deflated: UInt8 = 0x01

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

    /// Makes `vouch_pack(json)` (``pack(_:)``, a blob) and `vouch_unpack(body)` (``unpack(_:)``,
    /// text; `NULL` when it does not unpack) callable from the SQL of the connection `handle`:
    /// the migration to schema 5 packs every body with the first.
    static func defineFunctions(on handle: OpaquePointer?) -> Int32 {
        let packing = sqlite3_create_function_v2(
            handle, "vouch_pack", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let value = values?[0], let text = sqlite3_value_text(value) else {
                    sqlite3_result_null(context)
                    return
                }
                let packed = StoredBody.pack(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))))
                packed.withUnsafeBytes {
                    sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), vouch_sqlite_transient())
                }
            }, nil, nil, nil)
        guard packing == SQLITE_OK else { return packing }
        return sqlite3_create_function_v2(
            handle, "vouch_unpack", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let value = values?[0], let blob = sqlite3_value_blob(value),
                    let json = StoredBody.unpack(
                        UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_value_bytes(value))))
                else {
                    sqlite3_result_null(context)
                    return
                }
                json.withUnsafeBytes {
                    sqlite3_result_text(
                        context, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count),
                        vouch_sqlite_transient())
                }
            }, nil, nil, nil)
    }
}
