import Foundation
import VouchEntitlements

/// Stores the batches of `vouch ledger add` on a thread of its own, one at a time, while the
/// next batch is verified and gathered: verifying and storing overlap, and memory holds the
/// batch being stored and the one filling, never more. A batch that cannot be stored is told
/// at the next ``submit(_:)`` or ``drain()``, and every batch after it is refused with the
/// same error, so the order of what is stored is the order of the input.
final class BatchWriter: @unchecked Sendable {
    private let condition = NSCondition()
    /// Dropped once the thread ends: the writer (kept by its thread's closure until the
    /// thread object goes, which may be after the command returns) never keeps the store open.
    private var store: ((EntitlementLedger) throws -> Void)?
    /// The batch handed over and not yet taken by the thread.
    private var waiting: EntitlementLedger?
    /// Whether a batch is handed over or being stored.
    private var busy = false
    private var failure: (any Error)?
    private var stopping = false
    private var running = true

    /// A writer calling `store` on its own thread for each batch; ``stop()`` ends the thread.
    init(store: @escaping (EntitlementLedger) throws -> Void) {
        self.store = store
        let thread = Thread { [self] in work() }
        thread.name = "vouch-ledger-writer"
        thread.start()
    }

    /// Hands `batch` over once the one before is stored; throws the error of a batch that
    /// could not be stored (this one is then not stored).
    func submit(_ batch: EntitlementLedger) throws {
        condition.lock()
        defer { condition.unlock() }
        while busy { condition.wait() }
        if let failure { throw failure }
        waiting = batch
        busy = true
        condition.broadcast()
    }

    /// Returns once every batch handed over is stored; throws the error of one that could not be.
    func drain() throws {
        condition.lock()
        defer { condition.unlock() }
        while busy { condition.wait() }
        if let failure { throw failure }
    }

    /// Ends the thread once what was handed over is stored (or failed).
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
    }

    private func work() {
        condition.lock()
        while true {
            if let batch = waiting {
                waiting = nil
                let store = failure == nil ? self.store : nil
                condition.unlock()
                var error: (any Error)?
                if let store {
                    do { try store(batch) } catch let thrown { error = thrown }
                }
                condition.lock()
                if let error { failure = error }
                busy = false
                condition.broadcast()
            } else if stopping {
                break
            } else {
                condition.wait()
            }
        }
        running = false
        store = nil
        condition.broadcast()
        condition.unlock()
    }
}
