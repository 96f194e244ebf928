internal import Foundation
internal import VouchBatch
internal import VouchEntitlements

/// Stores verified data for many request threads at once, in few transactions (group commit):
/// one thread of its own takes every addition waiting and stores them in one transaction,
/// while the additions that come meanwhile wait for the next. Each caller returns once its
/// addition is committed (or refused), so a `200` is never sent for data that is not stored.
///
/// A request waits for the commit, so the commit is the server's critical path: its thread
/// keeps the process's priority while the request threads lower theirs (``Workers``), so that
/// verifying the next requests never holds the commit up.
///
/// Additions are told apart: one that the rules refuse (an account conflict within the group)
/// fails alone, and when the group's transaction fails, each addition is stored again in a
/// transaction of its own, so that one addition's failure (an account the store holds for
/// another) is its own and never its neighbours'.
final class Committer: @unchecked Sendable {
    /// One addition waiting.
    private final class Job {
        let input: VerifiedInput
        let account: String?
        /// The addition as a ledger of its own, made by the caller's thread while others commit,
        /// when it binds no account: it joins the group's ledger as it is. An addition bound to an
        /// account is added in the group's ledger instead, where a conflict with another
        /// addition of the group is found.
        let part: EntitlementLedger?
        /// What the committing thread settled: `.some(nil)` when the addition was committed,
        /// else why not. Written before ``settled`` is signalled, read by the owner after it.
        var outcome: LedgerError??
        /// Signalled once, when ``outcome`` is set: only the requests a commit settled wake,
        /// never every request waiting (with one condition for all, each commit and each new
        /// addition woke them all to look and sleep again, a context switch each).
        let settled = DispatchSemaphore(value: 0)

        init(_ input: VerifiedInput, account: String?, part: EntitlementLedger?) {
            self.input = input
            self.account = account
            self.part = part
        }
    }

    /// The most additions in one transaction.
    static let groupLimit = 512

    private let store: any LedgerStoring
    private let stripeAccountKey: String
    private let condition = NSCondition()
    private var waiting: [Job] = []
    private var transactionCount = 0
    /// Set by ``stop()``: the committing thread ends once nothing waits.
    private var stopping = false
    private var running = true

    /// Store transactions run so far.
    var transactions: Int {
        condition.lock()
        defer { condition.unlock() }
        return transactionCount
    }

    /// Called after each transaction that stored something, with what it changed and how
    /// many additions it held.
    private let committed: @Sendable (LedgerStore.Change, Int) -> Void

    init(
        store: any LedgerStoring, stripeAccountKey: String,
        committed: @escaping @Sendable (LedgerStore.Change, Int) -> Void
    ) {
        self.store = store
        self.stripeAccountKey = stripeAccountKey
        self.committed = committed
        let thread = Thread { [self] in run() }
        thread.name = "vouch-serve-commit"
        thread.start()
    }

    /// Stores what waits, then ends the committing thread: call it once no addition can come.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    /// Stores `input`, bound to `account` when given, and returns once it is committed (`nil`)
    /// or refused (why).
    func add(_ input: VerifiedInput, account: String?) -> LedgerError? {
        var part: EntitlementLedger?
        if account == nil {
            var ledger = EntitlementLedger.batch()
            do {
                try ledger.add(input, account: nil, stripeAccountKey: stripeAccountKey)
            } catch {
                return error
            }
            part = ledger
        }
        let job = Job(input, account: account, part: part)
        condition.lock()
        // The server stops its request threads before the committing thread.
        precondition(!stopping, "an addition after the committing thread stopped")
        waiting.append(job)
        // Only the committing thread waits on the condition until ``stop()``.
        condition.signal()
        condition.unlock()
        job.settled.wait()
        return job.outcome!
    }

    /// The committing thread: stores every addition waiting in one transaction, settles them,
    /// and waits for more.
    private func run() {
        condition.lock()
        while true {
            if !waiting.isEmpty {
                let group = Array(waiting.prefix(Self.groupLimit))
                waiting.removeFirst(group.count)
                condition.unlock()
                let transactions = commit(group)
                condition.lock()
                // Counted before any request of the group is answered: `/metrics` after a `200`
                // counts its commit.
                transactionCount += transactions
                for job in group { job.settled.signal() }
            } else if stopping {
                break
            } else {
                condition.wait()
            }
        }
        running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Settles every job of `group`; the number of store transactions run.
    private func commit(_ group: [Job]) -> Int {
        var ledger = EntitlementLedger.batch()
        var admitted: [Job] = []
        for job in group {
            do {
                if let part = job.part {
                    ledger.merge(part)
                } else {
                    try ledger.add(job.input, account: job.account, stripeAccountKey: stripeAccountKey)
                }
                admitted.append(job)
            } catch {
                job.outcome = .some(error)
            }
        }
        guard !admitted.isEmpty else { return 0 }
        do {
            let change = try store.add(contentsOf: ledger)
            for job in admitted { job.outcome = .some(nil) }
            committed(change, admitted.count)
            return 1
        } catch {
            guard admitted.count > 1, error.code == .accountConflict else {
                for job in admitted { job.outcome = .some(error) }
                return 1
            }
            // Which addition conflicts with the store is found by storing each alone.
            for job in admitted {
                var alone = EntitlementLedger.batch()
                do {
                    try alone.add(job.input, account: job.account, stripeAccountKey: stripeAccountKey)
                    committed(try store.add(contentsOf: alone), 1)
                    job.outcome = .some(nil)
                } catch {
                    job.outcome = .some(error)
                }
            }
            return 1 + admitted.count
        }
    }
}
