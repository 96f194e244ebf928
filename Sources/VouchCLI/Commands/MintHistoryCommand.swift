import Dispatch
import Foundation
import Vouch
import VouchMint

/// `vouch mint history`: coherent per-account histories, one token per line, account after
/// account (the ledger does not care about order).
enum MintHistoryCommand {
    static let usage = """
        mint history --ca DIR [--count N] [--seed S] [--date DATE] [--set environment=ENV]
                     [--set bundleId=ID] [--set appAppleId=N] [--out FILE]
          Writes N accounts' histories (default 1), one token per line, account after
          account. Each account lives a story of about four months ending at DATE, picked by
          the seed: renewing, upgrade, grace-period, expired, refund-reversed, family-sharing,
          consumables or trial. Purchases, renewals, notifications with their nested
          transaction and renewal info, refunds and their reversal, a family member's shared
          transaction and its revocation: data for vouch entitlements and vouch refunds.
          Tokens verify at their signed date, so the CA must be valid over those months
          (vouch mint ca --not-before).
        """

    static func run(_ options: MintOptions, io: inout MintIO) throws -> Int32 {
        guard let directory = options.ca else { throw MintUsageError("mint history needs --ca DIR") }
        guard !options.xcode, options.payload == nil, options.tampers.isEmpty else {
            throw MintUsageError("mint history takes --ca, --count, --seed, --date, --set environment/bundleId/appAppleId and --out")
        }
        var generator = MintHistoryGenerator(seed: options.seed ?? 1, date: options.date ?? io.now())
        for override in options.overrides {
            switch (override.path, override.value) {
            case (["environment"], .string(let value)?): generator.environment = value
            case (["bundleId"], .string(let value)?): generator.bundleId = value
            case (["appAppleId"], let value?) where value.int64Value != nil: generator.appAppleId = value.int64Value!
            default:
                throw MintUsageError("mint history: --set takes environment=ENV, bundleId=ID or appAppleId=N")
            }
        }
        let histories = generator
        let authority = try MintAuthority.load(from: URL(fileURLWithPath: directory, isDirectory: true))
        let signer = try MintSigner(authority: authority)
        let handle: FileHandle?
        if let out = options.out {
            guard FileManager.default.createFile(atPath: out, contents: nil), let file = FileHandle(forWritingAtPath: out) else {
                throw MintError(.writeFailed, "cannot create \(out)")
            }
            handle = file
        } else {
            handle = nil
        }
        func write(_ bytes: [UInt8]) throws {
            guard let handle else { return io.output(bytes) }
            do {
                try handle.write(contentsOf: bytes)
            } catch {
                throw MintError(.writeFailed, "cannot write \(options.out ?? ""): \(error.localizedDescription)")
            }
        }

        // Accounts are independent: chunks are signed in parallel and written in order.
        let count = options.count ?? 1
        let chunkSize = 64
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        var start = 0
        while start < count {
            let chunks = min(workers * 4, (count - start + chunkSize - 1) / chunkSize)
            let slots = Slots(count: chunks)
            let first = start
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let lower = first + chunk * chunkSize
                let upper = min(count, lower + chunkSize)
                guard lower < upper else { return slots.store(.success([]), at: chunk) }
                do {
                    var bytes: [UInt8] = []
                    for index in lower..<upper {
                        for token in try histories.history(index).tokens(signer: signer) {
                            bytes += Array(token.utf8)
                            bytes.append(0x0A)
                        }
                    }
                    slots.store(.success(bytes), at: chunk)
                } catch {
                    slots.store(.failure(error), at: chunk)
                }
            }
            for result in slots.take() { try write(try result.get()) }
            start = min(count, start + chunks * chunkSize)
        }
        do {
            try handle?.close()
        } catch {
            throw MintError(.writeFailed, "cannot write \(options.out ?? ""): \(error.localizedDescription)")
        }
        return 0
    }

    /// One slot per chunk, each written by exactly one worker.
    private final class Slots: @unchecked Sendable {
        private var slots: [Result<[UInt8], any Error>?]
        private let lock = NSLock()

        init(count: Int) { slots = Array(repeating: nil, count: count) }

        func store(_ result: Result<[UInt8], any Error>, at index: Int) {
            lock.lock()
            defer { lock.unlock() }
            slots[index] = result
        }

        func take() -> [Result<[UInt8], any Error>] {
            lock.lock()
            defer { lock.unlock() }
            return slots.map { $0 ?? .success([]) }
        }
    }
}
