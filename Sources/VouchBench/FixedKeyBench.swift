import COpenSSL
import CVouchECDSA
import Foundation

// The fixed-key ES256 path measured against OpenSSL's own P-256 verify on the same key and
// signatures: the raw rates (no hashing, no parsing), the table's cost, `openssl speed`.

/// The minted tokens' signatures, ready for the raw rates: SHA-256 digests of the signing
/// inputs, raw `r‖s` and DER forms.
struct RawSignatures: @unchecked Sendable {
    var digests: [UInt8] = []
    var raw: [UInt8] = []
    var der: [[UInt8]] = []
    var count: Int { der.count }
}

/// The leaf's public point in X9.62 form.
func encodedPoint(of key: OpaquePointer) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: 160)
    var length = 0
    precondition(EVP_PKEY_get_octet_string_param(key, "pub", &buffer, buffer.count, &length) == 1)
    return Array(buffer.prefix(length))
}

/// `EVP_PKEY_verify` on prepared digests and DER signatures with one kept context per thread:
/// what `openssl speed ecdsap256` times, on this key.
func rawVerifyRate(key: OpaquePointer, _ data: RawSignatures, threads: Int, sample: Int) -> Double {
    nonisolated(unsafe) let key = key
    let count = min(sample, data.count)
    let failures = Locked(0)
    let elapsed = timeOnThreads(threads) { thread in
        let context = EVP_PKEY_CTX_new(key, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        EVP_PKEY_verify_init(context)
        var failed = 0
        data.digests.withUnsafeBufferPointer { digests in
            for index in stride(from: thread, to: count, by: threads) {
                let signature = data.der[index]
                if EVP_PKEY_verify(context, signature, signature.count, digests.baseAddress! + 32 * index, 32) != 1 {
                    failed += 1
                }
            }
        }
        failures.add(failed)
    }
    precondition(failures.value == 0, "OpenSSL rejected genuine signatures")
    return Double(count) / elapsed
}

/// The fixed-key path alone: chunks of `chunk` signatures through one shared table.
func fixedKeyRate(table: OpaquePointer, _ data: RawSignatures, threads: Int, sample: Int, chunk: Int = 64) -> Double {
    nonisolated(unsafe) let table = table
    let count = min(sample, data.count)
    let failures = Locked(0)
    // Contiguous runs of chunks per thread, as the batch driver hands them out.
    let chunks = (count + chunk - 1) / chunk
    let elapsed = timeOnThreads(threads) { thread in
        var verdicts = [UInt8](repeating: 0, count: chunk)
        var failed = 0
        data.digests.withUnsafeBufferPointer { digests in
            data.raw.withUnsafeBufferPointer { raw in
                for index in stride(from: thread, to: chunks, by: threads) {
                    let start = index * chunk
                    let size = min(chunk, count - start)
                    let ok = vouch_p256_verify(
                        table, digests.baseAddress! + 32 * start, raw.baseAddress! + 64 * start, size, &verdicts)
                    failed += ok == 1 ? verdicts[0..<size].filter { $0 != 1 }.count : size
                }
            }
        }
        failures.add(failed)
    }
    precondition(failures.value == 0, "the fixed-key path rejected genuine signatures")
    return Double(count) / elapsed
}

/// A key's table: median build time of `samples` builds, and the memory one holds (the
/// resident set's growth with `samples` tables alive, divided by `samples`).
func tableCost(point: [UInt8], samples: Int = 16) -> (seconds: Double, bytes: Int) {
    var times: [Double] = []
    var tables: [OpaquePointer] = []
    let before = residentBytes()
    for _ in 0..<samples {
        let start = now()
        tables.append(point.withUnsafeBufferPointer { vouch_p256_key_new($0.baseAddress, $0.count) }!)
        times.append(now() - start)
    }
    let bytes = (residentBytes() - before) / samples
    for table in tables { vouch_p256_key_free(table) }
    return (times.sorted()[samples / 2], bytes)
}

/// This process's resident set, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// `openssl speed -elapsed -seconds S [-multi N] ecdsap256`'s verify/s, when the tool is
/// installed (`-elapsed`: per wall-clock second, like every other rate here, not per second of
/// CPU time, its default).
func opensslSpeed(multi: Int, seconds: Int = 2) -> Double? {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("vouch-bench-speed-\(getpid())")
    defer { try? FileManager.default.removeItem(at: output) }
    let multiFlag = multi > 1 ? "-multi \(multi) " : ""
    let status = run(
        "openssl speed -elapsed -seconds \(seconds) \(multiFlag)ecdsap256 > \(shellQuote(output.path)) 2>/dev/null"
    ).status
    guard status == 0, let text = try? String(contentsOf: output, encoding: .utf8) else { return nil }
    // "256 bits ecdsa (nistp256)   0.0000s   0.0001s  35000.0  11300.0": verify/s is last.
    guard let line = text.split(separator: "\n").last(where: { $0.contains("ecdsa (nistp256)") }) else { return nil }
    return line.split(separator: " ").last.flatMap { Double($0) }
}

/// A counter several threads add to.
final class Locked<Value: AdditiveArithmetic & Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var total: Value = .zero

    init(_ value: Value) { total = value }

    func add(_ amount: Value) {
        lock.lock()
        total += amount
        lock.unlock()
    }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return total
    }
}
