internal import Foundation
internal import VouchBatch
internal import VouchEntitlements

/// Stores verified data for many request threads at once, in few transactions (group commit):
/// a thread that finds no commit running takes every addition waiting, itself's included, and
/// stores them in one transaction, while the threads that came meanwhile wait for it and then
/// for the next. Each caller returns once its addition is committed (or refused), so a `200`
/// is never sent for data that is not stored.
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
        /// Set once the addition is settled: `.some(nil)` when it was committed, else why not.
        var result: LedgerError??
        /// What the leader settled, written while it commits without the lock; published
        /// into `result` under the lock, which its owner reads.
        var outcome: LedgerError??

        init(_ input: VerifiedInput, account: String?) {
            self.input = input
            self.account = account
        }
    }

    /// The most additions in one transaction.
    static let groupLimit = 512

    private let store: any LedgerStoring
    private let stripeAccountKey: String
    private let condition = NSCondition()
    private var waiting: [Job] = []
    private var committing = false
    private var transactionCount = 0

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
    }

    /// Stores `input`, bound to `account` when given, and returns once it is committed (`nil`)
    /// or refused (why).
    func add(_ input: VerifiedInput, account: String?) -> LedgerError? {
        let job = Job(input, account: account)
        condition.lock()
        waiting.append(job)
        while job.result == nil {
            if committing {
                condition.wait()
                continue
            }
            committing = true
            let group = Array(waiting.prefix(Self.groupLimit))
            waiting.removeFirst(group.count)
            condition.unlock()
            let transactions = commit(group)
            condition.lock()
            for settled in group { settled.result = settled.outcome }
            committing = false
            transactionCount += transactions
            condition.broadcast()
        }
        condition.unlock()
        return job.result!
    }

    /// Settles every job of `group`; the number of store transactions run.
    private func commit(_ group: [Job]) -> Int {
        var ledger = EntitlementLedger.batch()
        var admitted: [Job] = []
        for job in group {
            do {
                try ledger.add(job.input, account: job.account, stripeAccountKey: stripeAccountKey)
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
