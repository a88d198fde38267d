import CInteractiveShims
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A serial executor on one dedicated thread that runs at a lower CPU priority (nice +10), for
/// the daemon's bookkeeping: emit-ack tracking and the SQLite store. Its work may block (SQLite)
/// and must never hold up the display path, so when the machine is busy the threads that show
/// overlays run first and the bookkeeping catches up after.
///
/// Also a task executor: a task that prefers it runs the default actors it calls (the Socket.IO
/// client, for emit-acks) on this thread too, instead of waking the cooperative pool.
/// (`@unchecked Sendable`: the semaphores are only posted and waited on, which POSIX makes thread-safe.)
final class BackgroundExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    /// The daemon's one bookkeeping thread, shared by the store and tracking.
    static let bookkeeping = BackgroundExecutor(name: "interactived.bk")

    private struct Queue {
        var jobs: [UnownedJob] = []
        var wakeupPending = false
    }

    private let queue = Mutex(Queue())
    private let semaphore: UnsafeMutablePointer<sem_t>
    private let started: UnsafeMutablePointer<sem_t>
    private let lowered = Atomic<Bool>(false)
    /// Where jobs run if the thread could not be created (the process is out of resources).
    private let fallback = DispatchQueue(label: "interactived.bookkeeping")
    private let threadRunning = Atomic<Bool>(false)

    /// False when the thread could not lower its priority (a seccomp filter without
    /// `setpriority`, for one) or could not be created: bookkeeping then competes with the
    /// display path as an equal.
    var priorityLowered: Bool { lowered.load(ordering: .acquiring) }

    /// Starts the thread named `name` at nice `nice` (raising it needs no privilege).
    private init(name: String, nice: Int32 = 10) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        started = .allocate(capacity: 1)
        sem_init(started, 0, 0)
        let running = DedicatedThread.start(name: name) { [self] in
            lowered.store(interactive_set_thread_nice(nice) == 0, ordering: .releasing)
            sem_post(started)
            run()
        }
        guard running else { return }
        while sem_wait(started) != 0 {}  // EINTR
        threadRunning.store(true, ordering: .releasing)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard threadRunning.load(ordering: .acquiring) else {
            fallback.async { job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor()) }
            return
        }
        let wake = queue.withLock { queue -> Bool in
            queue.jobs.append(job)
            defer { queue.wakeupPending = true }
            return !queue.wakeupPending
        }
        if wake { sem_post(semaphore) }
    }

    private func run() {
        while true {
            while sem_wait(semaphore) != 0 {}  // EINTR
            while true {
                let jobs = queue.withLock { queue -> [UnownedJob] in
                    let jobs = queue.jobs
                    queue.jobs = []
                    if jobs.isEmpty { queue.wakeupPending = false }
                    return jobs
                }
                guard !jobs.isEmpty else { break }
                for job in jobs {
                    job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
                }
            }
        }
    }
}
