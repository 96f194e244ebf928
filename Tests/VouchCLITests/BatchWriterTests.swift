import Foundation
import Testing

@testable import VouchCLI
@testable import VouchEntitlements

/// `vouch ledger add`'s writer stores batches in order on its own thread, one at a time; a
/// batch that cannot be stored is told at the next hand-over or drain, and nothing after it
/// is stored.
@Suite struct BatchWriterTests {
    /// What a writer's `store` saw: the batches, by their counts of transactions, and the most that
    /// were being stored at once.
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var stored: [Int] = []
        var storing = 0
        var mostAtOnce = 0
    }

    struct Refused: Error, Equatable {
        let batch: Int
    }

    /// A ledger batch told apart by its count of transactions.
    static func batch(_ number: Int) -> EntitlementLedger {
        var ledger = EntitlementLedger.batch()
        ledger.statistics.transactions = number
        return ledger
    }

    static func writer(_ seen: Seen, refusing refused: Int? = nil) -> BatchWriter {
        BatchWriter { batch in
            let number = batch.statistics.transactions
            seen.lock.withLock {
                seen.storing += 1
                seen.mostAtOnce = max(seen.mostAtOnce, seen.storing)
            }
            Thread.sleep(forTimeInterval: 0.005)
            seen.lock.withLock { seen.storing -= 1 }
            if number == refused { throw Refused(batch: number) }
            seen.lock.withLock { seen.stored.append(number) }
        }
    }

    @Test func batchesAreStoredInOrderOneAtATime() throws {
        let seen = Seen()
        let writer = Self.writer(seen)
        defer { writer.stop() }
        for number in 1...20 { try writer.submit(Self.batch(number)) }
        try writer.drain()
        #expect(seen.stored == Array(1...20))
        #expect(seen.mostAtOnce == 1)
    }

    @Test func aBatchThatCannotBeStoredStopsEveryLaterOne() throws {
        let seen = Seen()
        let writer = Self.writer(seen, refusing: 3)
        defer { writer.stop() }
        try writer.submit(Self.batch(1))
        try writer.submit(Self.batch(2))
        try writer.submit(Self.batch(3))
        // The refusal of batch 3 is told at the next hand-over, which stores nothing.
        let told = #expect(throws: Refused.self) { try writer.submit(Self.batch(4)) }
        #expect(told == Refused(batch: 3))
        #expect(throws: Refused(batch: 3)) { try writer.drain() }
        #expect(throws: Refused(batch: 3)) { try writer.submit(Self.batch(5)) }
        #expect(seen.stored == [1, 2])
    }

    @Test func stoppingWaitsForTheBatchHandedOver() throws {
        let seen = Seen()
        let writer = Self.writer(seen)
        try writer.submit(Self.batch(7))
        writer.stop()
        #expect(seen.stored == [7])
    }
}
