import CBenchOpenSSL
import Foundation
import Vouch

// The fixed-key ES256 path measured against OpenSSL's own P-256 verify on the same key and
// signatures: the raw rates (no hashing, no parsing), the table's cost, `openssl speed`. The
// library is reached through its public API only: the fixed-key path through
// `Verifier.verifyChunk` with and without it, the table through the `verify` call that builds it.

/// The minted tokens' signatures, ready for the raw rates: SHA-256 digests of the signing
/// inputs and DER signatures.
struct RawSignatures: @unchecked Sendable {
    var digests: [UInt8] = []
    var der: [[UInt8]] = []
    var count: Int { der.count }
}

/// The public key of a DER certificate, owned by the caller (`EVP_PKEY_free`).
func publicKey(ofCertificate der: [UInt8]) -> OpaquePointer {
    der.withUnsafeBufferPointer { buffer in
        var cursor = buffer.baseAddress
        let certificate = d2i_X509(nil, &cursor, buffer.count)!
        defer { X509_free(certificate) }
        // X509_get_pubkey returns a new reference to the certificate's key: it outlives the certificate.
        return X509_get_pubkey(certificate)!
    }
}

/// Messages signed with one OpenSSL key, and their DER signatures: what a floor verifies.
struct SignedMessages: @unchecked Sendable {
    let key: OpaquePointer
    let messages: [[UInt8]]
    let signatures: [[UInt8]]
    /// The digest the key's context is told, `EVP_sha256()` for RSA (its padding names it).
    var signatureDigest: OpaquePointer? = nil
}

/// The floor any verifier of `floor` stands on: SHA-256 of each message and one
/// `EVP_PKEY_verify`, with one context per thread initialised once, as a verifier that knows
/// its key would.
func floorRate(_ floor: SignedMessages, threads: Int, sample: Int) -> Double {
    let count = min(sample, floor.messages.count)
    let failures = Locked(0)
    let elapsed = timeOnThreads(threads) { thread in
        let context = EVP_PKEY_CTX_new(floor.key, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        EVP_PKEY_verify_init(context)
        if let digest = floor.signatureDigest { EVP_PKEY_CTX_set_signature_md(context, digest) }
        var failed = 0
        var digest = [UInt8](repeating: 0, count: 32)
        for index in stride(from: thread, to: count, by: threads) {
            let message = floor.messages[index]
            let signature = floor.signatures[index]
            _ = SHA256(message, message.count, &digest)
            if EVP_PKEY_verify(context, signature, signature.count, digest, 32) != 1 { failed += 1 }
        }
        failures.add(failed)
    }
    precondition(failures.value == 0, "the floor rejected \(failures.value) genuine signatures")
    return Double(count) / elapsed
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

/// `Verifier.verifyChunk` with the key's table and without it (`fastVerify = false`), and the
/// fixed-key path's own cost, each as a ratio to the raw rate (`EVP_PKEY_verify` on prepared
/// digests, as in ``rawVerifyRate(key:_:threads:sample:)``).
///
/// Each chunk of `chunk` tokens (dealt to the threads in turn) is timed three ways, one after
/// the other on the same thread: the raw verification of its signatures, then `verifyChunk`
/// without the table and with it (in alternating order, so that neither always finds the
/// tokens in cache), so all three see the same load. Without the table the signature is that
/// raw verification; every other step of a token is the same in both `verifyChunk` runs, so
/// the fixed-key path costs a raw verification less what the table saves. Each verifier has
/// seen `warmUp` tokens before the clock starts (the chain validated, the table built).
func chunkRatios(
    _ tokens: [[UInt8]], _ data: RawSignatures, key: OpaquePointer, configuration: Verifier.Configuration,
    warmUp: Int, threads: Int, chunk: Int = 64
) throws -> (withTable: Double, withoutTable: Double, fixedKeyPath: Double) {
    nonisolated(unsafe) let key = key
    var generic = configuration
    generic.fastVerify = false
    let verifiers = (fast: try Verifier(configuration: configuration), generic: try Verifier(configuration: generic))
    for verifier in [verifiers.fast, verifiers.generic] {
        for start in stride(from: 0, to: min(warmUp, tokens.count), by: chunk) {
            let results = verifier.verifyChunk(tokens[start..<min(start + chunk, tokens.count)].map { $0[...] })
            precondition(results.allSatisfy { (try? $0.get()) != nil }, "verifyChunk rejected genuine tokens")
        }
    }
    let count = min(tokens.count, data.count)
    let chunks = (count + chunk - 1) / chunk
    // Seconds spent by all threads: raw, without the table, with it.
    let totals = (raw: Locked(0.0), withoutTable: Locked(0.0), withTable: Locked(0.0))
    let failures = Locked(0)
    _ = timeOnThreads(threads) { thread in
        let context = EVP_PKEY_CTX_new(key, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        EVP_PKEY_verify_init(context)
        var seconds = (raw: 0.0, withoutTable: 0.0, withTable: 0.0)
        var failed = 0
        for index in stride(from: thread, to: chunks, by: threads) {
            let range = index * chunk..<min(index * chunk + chunk, count)
            let slices = tokens[range].map { $0[...] }
            var start = now()
            data.digests.withUnsafeBufferPointer { digests in
                for token in range {
                    let signature = data.der[token]
                    if EVP_PKEY_verify(context, signature, signature.count, digests.baseAddress! + 32 * token, 32) != 1
                    {
                        failed += 1
                    }
                }
            }
            seconds.raw += now() - start
            for fast in index % 2 == 0 ? [false, true] : [true, false] {
                start = now()
                let results = (fast ? verifiers.fast : verifiers.generic).verifyChunk(slices)
                if fast { seconds.withTable += now() - start } else { seconds.withoutTable += now() - start }
                for result in results where (try? result.get()) == nil { failed += 1 }
            }
        }
        totals.raw.add(seconds.raw)
        totals.withoutTable.add(seconds.withoutTable)
        totals.withTable.add(seconds.withTable)
        failures.add(failed)
    }
    precondition(failures.value == 0, "a genuine signature or token was rejected")
    let (raw, withoutTable, withTable) = (totals.raw.value, totals.withoutTable.value, totals.withTable.value)
    return (raw / withTable, raw / withoutTable, raw / (raw - (withoutTable - withTable)))
}

/// A key's table, through the public API: the `verify` call that builds it (the token after
/// `threshold` of one key, whose chain is cached by then) less the call after it, which uses
/// it, median of `samples` verifiers; and the memory one holds: the resident set's growth
/// with `samples` such verifiers alive, less its growth with as many that verified the same
/// tokens without `fastVerify`.
func tableCost(
    _ tokens: [String], configuration: Verifier.Configuration, threshold: Int, samples: Int = 16
) throws -> (seconds: Double, bytes: Int) {
    precondition(tokens.count >= threshold + 2)
    var generic = configuration
    generic.fastVerify = false
    var kept: [Verifier] = []
    var before = residentBytes()
    for _ in 0..<samples {
        let verifier = try Verifier(configuration: generic)
        for token in tokens.prefix(threshold + 2) { _ = try verifier.verify(token) }
        kept.append(verifier)
    }
    let withoutTables = residentBytes() - before
    var building: [Double] = []
    var using: [Double] = []
    before = residentBytes()
    for _ in 0..<samples {
        let verifier = try Verifier(configuration: configuration)
        for token in tokens.prefix(threshold) { _ = try verifier.verify(token) }
        var start = now()
        _ = try verifier.verify(tokens[threshold])
        building.append(now() - start)
        start = now()
        _ = try verifier.verify(tokens[threshold + 1])
        using.append(now() - start)
        kept.append(verifier)
    }
    let withTables = residentBytes() - before
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    precondition(
        median(building) > 10 * median(using),
        "token \(threshold + 1) of one key did not build its table: has fastVerify's threshold changed?")
    return (median(building) - median(using), (withTables - withoutTables) / samples)
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
