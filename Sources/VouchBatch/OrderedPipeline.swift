internal import Foundation

/// Runs `transform` over a stream of inputs on `jobs` threads and hands the outputs back in
/// input order on the calling thread. At most `window` inputs are read ahead of the output
/// the sink has finished with (the one it is handed counts), so memory stays bounded however
/// long the stream is.
///
/// The threads read the inputs themselves, one at a time in turn, each transforming what it
/// has just read: the bytes of an input are first touched, copied and verified by one core.
/// The calling thread is one of the `jobs`: between inputs of its own it hands the outputs
/// ready to the sink, so `jobs` threads run on `jobs` cores and none of them only waits (a
/// thread that only waits for outputs is woken for each, and takes a core from a worker).
///
/// An output the sink is done with goes back to the thread that made it, to be released there
/// before that thread takes another input (a worker stays until the run ends, so its last
/// outputs go back to it too): memory is freed by the thread that allocated it. Freed on another
/// thread, it makes that thread wait for the lock of the allocating thread's arena in glibc's
/// allocator while the two contend for it.
final class OrderedPipeline<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    private let jobs: Int
    private let window: Int
    private let transform: @Sendable (Input) -> Output

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var finished: [Int: (output: Output, maker: Int)] = [:]
    /// Outputs the sink is done with, by the worker that made them (the calling thread is 0 and
    /// releases its own at once), for that worker to release.
    private var spent: [[Output]]
    /// Inputs read (and numbered) so far, and outputs taken by the sink.
    private var produced = 0
    private var consumed = 0
    /// A worker is calling the source: the others wait for their turn.
    private var reading = false
    private var sourceDone = false
    private var sourceError: (any Error)?
    private var closed = false
    private var running = 0

    init(jobs: Int, window: Int? = nil, transform: @escaping @Sendable (Input) -> Output) {
        self.jobs = max(1, jobs)
        self.window = max(window ?? 4 * max(1, jobs), 1)
        self.transform = transform
        self.spent = Array(repeating: [], count: self.jobs)
    }

    /// The source as the workers call it: only ever by one at a time, each call after the
    /// lock that ended the one before, and only while `run` waits for them, which is what
    /// makes sharing a non-sendable closure sound.
    private struct Source: @unchecked Sendable {
        let next: () throws -> Input?
    }

    /// Pulls inputs from `next` until it returns `nil`, and passes each output to `sink` in
    /// order. `jobs` threads transform: the calling thread and `jobs - 1` others, so that on
    /// `jobs` cores no thread waits for a core. `next` is called on any of them, never two
    /// calls at once, each call seeing what the one before did; `sink` only on the calling
    /// thread, which hands over every output ready before it takes an input of its own. An
    /// error from `next` is thrown after every input read before it has reached `sink`; an
    /// error from `sink` stops the run at once.
    func run(next: @escaping () throws -> Input?, sink: (Output) throws -> Void) throws {
        let source = Source(next: next)
        startWorkers(source, count: jobs - 1)
        defer { stopWorkers() }
        condition.lock()
        while true {
            if let (output, maker) = finished.removeValue(forKey: consumed) {
                // Counted as consumed once the sink has it: the output in the sink's hands is
                // still within the window, so no more than `window` are ever out at once.
                condition.unlock()
                try sink(output)
                condition.lock()
                consumed += 1
                if maker != 0 { spent[maker].append(output) }
                // Room in the window for another read, and an output for its maker to release.
                condition.broadcast()
            } else if sourceDone {
                if consumed == produced { break }
                condition.wait()
            } else if reading || produced - consumed >= window {
                condition.wait()
            } else {
                take(source, maker: 0)
            }
        }
        let error = sourceError
        condition.unlock()
        if let error { throw error }
    }

    private func startWorkers(_ source: Source, count: Int) {
        running = count
        for index in 0..<count {
            let thread = Thread { [self] in work(source, worker: index + 1) }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// Reads the next input and transforms it, its output left in `finished`. Called and
    /// returns with the lock held, when no one else is reading and the window has room.
    /// `maker` numbers the thread: 0 for the calling thread.
    private func take(_ source: Source, maker: Int) {
        reading = true
        let index = produced
        condition.unlock()
        var input: Input? = nil
        var failure: (any Error)? = nil
        do {
            input = try source.next()
        } catch {
            failure = error
        }
        condition.lock()
        reading = false
        if input != nil {
            produced += 1
        } else {
            sourceDone = true
            sourceError = failure
        }
        condition.broadcast()
        guard let input else { return }
        condition.unlock()
        let output = transform(input)
        condition.lock()
        finished[index] = (output, maker)
        condition.broadcast()
    }

    private func work(_ source: Source, worker: Int) {
        condition.lock()
        while true {
            if !spent[worker].isEmpty {
                var released: [Output] = []
                swap(&released, &spent[worker])
                condition.unlock()
                released.removeAll()
                condition.lock()
            } else if closed {
                // Only once `run` is over (every output delivered, or the sink threw), after
                // releasing, above, what the sink was done with of this worker's.
                break
            } else if sourceDone || reading || produced - consumed >= window {
                condition.wait()
            } else {
                take(source, maker: worker)
            }
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func stopWorkers() {
        condition.lock()
        closed = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        finished.removeAll()
        condition.unlock()
    }
}
