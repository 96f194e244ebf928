internal import Foundation

/// Runs `transform` over a stream of inputs on `jobs` threads and hands the outputs back in
/// input order on the calling thread. At most `window` inputs are read ahead of the output,
/// so memory stays bounded however long the stream is.
final class OrderedPipeline<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    private let jobs: Int
    private let window: Int
    private let transform: @Sendable (Input) -> Output

    // Guarded by `condition`.
    private let condition = NSCondition()
    /// At most `window` entries: removing from the front is cheap.
    private var queue: [(index: Int, input: Input)] = []
    private var finished: [Int: Output] = [:]
    private var closed = false
    private var running = 0

    init(jobs: Int, window: Int? = nil, transform: @escaping @Sendable (Input) -> Output) {
        self.jobs = max(1, jobs)
        self.window = max(window ?? 4 * max(1, jobs), 1)
        self.transform = transform
    }

    /// Pulls inputs from `next` until it returns `nil`, and passes each output to `sink` in
    /// order. An error from `next` is thrown after every input read before it has reached
    /// `sink`; an error from `sink` stops the run at once.
    func run(next: () throws -> Input?, sink: (Output) throws -> Void) throws {
        startWorkers()
        defer { stopWorkers() }
        var produced = 0
        var consumed = 0
        var sourceDone = false
        var sourceError: (any Error)? = nil
        while true {
            while !sourceDone, produced - consumed < window {
                let input: Input?
                do {
                    input = try next()
                } catch {
                    sourceError = error
                    input = nil
                }
                guard let input else {
                    sourceDone = true
                    break
                }
                condition.lock()
                queue.append((produced, input))
                condition.signal()
                condition.unlock()
                produced += 1
            }
            if sourceDone, consumed == produced { break }
            condition.lock()
            while finished[consumed] == nil { condition.wait() }
            let output = finished.removeValue(forKey: consumed)!
            condition.unlock()
            consumed += 1
            try sink(output)
        }
        if let sourceError { throw sourceError }
    }

    private func startWorkers() {
        running = jobs
        for _ in 0..<jobs {
            let thread = Thread { [self] in work() }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty, !closed { condition.wait() }
            if queue.isEmpty {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let (index, input) = queue.removeFirst()
            condition.unlock()
            let output = transform(input)
            condition.lock()
            finished[index] = output
            condition.broadcast()
            condition.unlock()
        }
    }

    private func stopWorkers() {
        condition.lock()
        closed = true
        queue.removeAll()
        condition.broadcast()
        while running > 0 { condition.wait() }
        finished.removeAll()
        condition.unlock()
    }
}
