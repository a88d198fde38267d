import Dispatch

/// A serial executor on a dedicated dispatch queue, for actors whose work blocks (SQLite,
/// libcurl, getaddrinfo) and so must stay off Swift's small cooperative pool.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
