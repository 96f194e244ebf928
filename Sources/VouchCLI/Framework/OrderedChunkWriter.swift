import Dispatch
import Foundation

/// Makes the output of `count` independent items in parallel, a chunk of items per task, and
/// writes the chunks in item order; at most a few chunks per processor are held at once. The
/// first error (of making or of writing) stops the run, with every chunk before it written.
enum OrderedChunkWriter {
    static func write(
        count: Int, chunkSize: Int, to out: OutputFile,
        making bytes: @escaping @Sendable (Range<Int>) throws -> [UInt8]
    ) throws {
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        var start = 0
        while start < count {
            let chunks = min(workers * 4, (count - start + chunkSize - 1) / chunkSize)
            let slots = Slots(count: chunks)
            let first = start
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let lower = first + chunk * chunkSize
                let upper = min(count, lower + chunkSize)
                slots.store(Result { lower < upper ? try bytes(lower..<upper) : [] }, at: chunk)
            }
            for result in slots.take() { try out.write(try result.get()) }
            start = min(count, start + chunks * chunkSize)
        }
    }

    /// One slot per chunk, each written by exactly one worker; read after all workers finish.
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
