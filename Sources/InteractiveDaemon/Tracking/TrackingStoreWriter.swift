import Runtime

/// Hands tracking's store writes to the store (on the bookkeeping thread) one transaction at a
/// time, in order: what is submitted while a transaction runs goes in the next one, together
/// (a group commit). No caller on the loop waits for SQLite; each transaction's outcome comes
/// back through `finished`.
@LoopActor
final class TrackingStoreWriter {
    private let store: Store
    /// The transactions run as child tasks of the tracker's `run()`.
    private let work: ChildTasks
    /// Told on the loop what each transaction did: its writes and each one's failure (nil: stored).
    var finished: (([TrackingWrite], [String?]) -> Void)?
    private var queued: [TrackingWrite] = []
    private var inFlight = 0
    private var writing = false
    /// Callers of `idle` waiting for every write to be done.
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []

    init(store: Store, work: ChildTasks) {
        self.store = store
        self.work = work
    }

    /// Writes not in the store yet: queued or being written.
    var unstored: Int { queued.count + inFlight }

    /// Queues `writes` for the next transaction.
    func submit(_ writes: [TrackingWrite]) {
        guard !writes.isEmpty else { return }
        queued += writes
        startNext()
    }

    /// Returns once every write submitted so far is done.
    func idle() async {
        guard writing || !queued.isEmpty else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    private func startNext() {
        guard !writing, !queued.isEmpty else {
            if !writing { resumeIdleWaiters() }
            return
        }
        let batch = queued
        queued = []
        writing = true
        inFlight = batch.count
        let store = self.store
        work.start { [weak self] in
            let failures = await store.apply(batch).map { $0.map { "\($0)" } }
            self?.transactionEnded(batch, failures)
        }
    }

    private func transactionEnded(_ batch: [TrackingWrite], _ failures: [String?]) {
        writing = false
        inFlight = 0
        finished?(batch, failures)
        startNext()
    }

    private func resumeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
