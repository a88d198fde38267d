import Dispatch

/// A serial executor that runs jobs on a Dispatch queue. The client actor runs on it, and so do
/// the Dispatch sources that watch its socket: a source's handler is already isolated to the
/// actor (`assumeIsolated`), so reading needs no task, no lock and no thread of Swift's
/// cooperative pool.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    /// Runs `body` on the queue after `delay`.
    func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        // Clamped to a year: far beyond any call, and no overflow in nanoseconds.
        let (seconds, attoseconds) = delay.components
        let wholeSeconds = Int(min(max(seconds, 0), 365 * 86_400))
        let nanoseconds = wholeSeconds * 1_000_000_000 + Int(max(0, attoseconds) / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: body)
    }
}
