import Foundation
import Testing

@testable import VouchBatch

/// The pipeline under every batch: inputs read by the workers in turn, outputs in order.
struct OrderedPipelineTests {
    /// What the source saw, shared between the threads that call it.
    final class SourceLog: @unchecked Sendable {
        private let lock = NSLock()
        private var inside = false
        private(set) var overlapped = false
        private(set) var onCallingThread = false
        private(set) var sinkOffCallingThread = false
        /// The threads that called the source.
        private var readers: Set<ObjectIdentifier> = []
        var readerCount: Int {
            lock.lock()
            defer { lock.unlock() }
            return readers.count
        }
        private(set) var reads = 0
        private(set) var delivered = 0
        private(set) var largestLead = 0

        func enter(callingThread: Thread) {
            lock.lock()
            defer { lock.unlock() }
            if inside { overlapped = true }
            inside = true
            if Thread.current == callingThread { onCallingThread = true }
            readers.insert(ObjectIdentifier(Thread.current))
        }

        func leave(read: Bool) {
            lock.lock()
            defer { lock.unlock() }
            inside = false
            if read { reads += 1 }
            largestLead = max(largestLead, reads - delivered)
        }

        func deliver(callingThread: Thread) {
            lock.lock()
            defer { lock.unlock() }
            delivered += 1
            if Thread.current != callingThread { sinkOffCallingThread = true }
        }
    }

    struct Failure: Error, Equatable {
        let name: String
    }

    /// Runs `count` inputs through `jobs` workers whose transform takes a varying time; the
    /// source throws `failing` after `count` inputs, when given, and the sink after `sinkFailsAt` outputs.
    func run(
        count: Int, jobs: Int, window: Int, failing: Failure? = nil, sinkFailsAt: Int? = nil,
        sinkMicroseconds: UInt32 = 0
    ) -> (outputs: [Int], error: (any Error)?, log: SourceLog) {
        let log = SourceLog()
        let pipeline = OrderedPipeline<Int, Int>(jobs: jobs, window: window) { input in
            usleep(UInt32((input * 7919) % 5) * 200)
            return input * 10
        }
        let caller = Thread.current
        var next = 0
        var outputs: [Int] = []
        var thrown: (any Error)? = nil
        do {
            try pipeline.run(
                next: {
                    log.enter(callingThread: caller)
                    // Long enough for another worker to try to read at the same time.
                    usleep(100)
                    guard next < count else {
                        log.leave(read: false)
                        if let failing { throw failing }
                        return nil
                    }
                    next += 1
                    log.leave(read: true)
                    return next - 1
                },
                sink: { output in
                    if outputs.count == sinkFailsAt { throw Failure(name: "sink") }
                    if sinkMicroseconds > 0 { usleep(sinkMicroseconds) }
                    outputs.append(output)
                    log.deliver(callingThread: caller)
                })
        } catch {
            thrown = error
        }
        return (outputs, thrown, log)
    }

    @Test(arguments: [1, 2, 4])
    func outputsComeInInputOrderFromASourceTheWorkersReadInTurn(jobs: Int) {
        let (outputs, error, log) = run(count: 300, jobs: jobs, window: 6)
        #expect(error == nil)
        #expect(outputs == (0..<300).map { $0 * 10 })
        #expect(log.reads == 300)
        #expect(!log.overlapped, "two workers called the source at once")
        // `jobs` threads take part, the calling thread among them: alone when `jobs` is 1, so
        // no thread only waits for the others' outputs.
        #expect(log.readerCount <= jobs)
        if jobs == 1 {
            #expect(log.onCallingThread, "the calling thread did not read the source")
            #expect(log.readerCount == 1)
        }
        #expect(!log.sinkOffCallingThread, "the sink ran on another thread")
        // The window bounds what is read ahead of the sink.
        #expect(log.largestLead <= 6)
    }

    /// A slow sink: while it holds an output, the other threads read until the window is
    /// full, and the output it holds counts in the window (it used to count as taken as soon
    /// as the sink was handed it, so one more input than the window was read).
    @Test(arguments: [2, 3])
    func theOutputInTheSinkCountsInTheWindow(jobs: Int) {
        let (outputs, error, log) = run(count: 60, jobs: jobs, window: 6, sinkMicroseconds: 3_000)
        #expect(error == nil)
        #expect(outputs == (0..<60).map { $0 * 10 })
        #expect(log.largestLead <= 6)
    }

    @Test(arguments: [1, 3])
    func aSourceErrorComesAfterEveryInputReadBeforeIt(jobs: Int) {
        let (outputs, error, _) = run(count: 57, jobs: jobs, window: 4, failing: Failure(name: "source"))
        #expect(outputs == (0..<57).map { $0 * 10 })
        #expect(error as? Failure == Failure(name: "source"))
    }

    @Test(arguments: [1, 2])
    func aSinkErrorStopsTheRunAtOnce(jobs: Int) {
        let (outputs, error, log) = run(count: 10_000, jobs: jobs, window: 4, sinkFailsAt: 20)
        #expect(outputs == (0..<20).map { $0 * 10 })
        #expect(error as? Failure == Failure(name: "sink"))
        // Nothing is read beyond the window once the sink has stopped taking outputs.
        #expect(log.reads <= 20 + 1 + 4)
    }

    @Test(arguments: [1, 2])
    func anEmptySourceEndsAtOnce(jobs: Int) {
        let (outputs, error, log) = run(count: 0, jobs: jobs, window: 4)
        #expect(outputs.isEmpty)
        #expect(error == nil)
        #expect(log.reads == 0)
    }

    /// An output that notes whether it was released on the thread that made it.
    final class Made: @unchecked Sendable {
        let maker = ObjectIdentifier(Thread.current)
        let releases: Releases
        init(_ releases: Releases) { self.releases = releases }
        deinit { releases.note(onMaker: ObjectIdentifier(Thread.current) == maker) }
    }

    final class Releases: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var onMaker = 0
        private(set) var elsewhere = 0
        func note(onMaker: Bool) {
            lock.lock()
            defer { lock.unlock() }
            if onMaker { self.onMaker += 1 } else { elsewhere += 1 }
        }
    }

    /// The outputs the sink is done with are released by the threads that made them, the last
    /// ones too: memory allocated on a worker is not freed on the calling thread (glibc's
    /// allocator then makes the two contend for the worker's arena).
    @Test(arguments: [2, 3])
    func everyOutputIsReleasedOnTheThreadThatMadeIt(jobs: Int) throws {
        let releases = Releases()
        let pipeline = OrderedPipeline<Int, Made>(jobs: jobs, window: 4) { input in
            usleep(UInt32((input * 7919) % 5) * 100)
            return Made(releases)
        }
        var next = 0
        var delivered = 0
        try pipeline.run(
            next: {
                guard next < 400 else { return nil }
                next += 1
                return next
            },
            sink: { _ in delivered += 1 })
        #expect(delivered == 400)
        #expect(releases.onMaker == 400)
        #expect(releases.elsewhere == 0)
    }
}
