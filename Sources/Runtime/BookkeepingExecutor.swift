import CRuntimeShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A serial executor on one thread at a lower CPU priority (nice +10) for the daemon's
/// bookkeeping: the SQLite store and the emit-ack lanes. Its work may block (SQLite) and must
/// never hold up the event loop, so when the machine is busy the loop runs first.
///
/// Actors pin themselves to it; everything else reaches it only by calling them (messages). It is
/// deliberately not a `TaskExecutor`: no caller chooses where other code runs.
///
/// `@unchecked Sendable`: `semaphore` is a POSIX semaphore, which is thread-safe by definition;
/// the job queue is inside a `Mutex`.
public final class BookkeepingExecutor: SerialExecutor, @unchecked Sendable {
    /// The daemon's one bookkeeping thread ("interactived.bk").
    public static let shared = BookkeepingExecutor(name: "interactived.bk")

    private struct Queue {
        var jobs: [UnownedJob] = []
        var wakeupPending = false
    }

    private let queue = Mutex(Queue())
    private let semaphore: UnsafeMutablePointer<sem_t>
    private let lowered = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private var threadRunning: Bool { running.load(ordering: .acquiring) }
    private let thread = Atomic<UInt>(0)
    /// The loop, started before this thread: started by its first use, it must not be started
    /// from this thread, whose nice value a new thread would inherit.
    private let loop: EventLoop

    /// False when the thread could not lower its priority (a seccomp filter without
    /// `setpriority`) or could not be created (its jobs then run on the event loop): bookkeeping
    /// then competes with the display path as an equal.
    public var priorityLowered: Bool { lowered.load(ordering: .acquiring) }

    private init(name: String, nice: Int32 = 10) {
        loop = EventLoop.shared
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        let started = Atomic<Bool>(false)
        let created = DedicatedThread.start(name: name) { [self] in
            thread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
            lowered.store(runtime_set_thread_nice(nice) == 0, ordering: .releasing)
            started.store(true, ordering: .releasing)
            run()
        }
        while created && !started.load(ordering: .acquiring) { sched_yield() }
        running.store(created, ordering: .releasing)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard threadRunning else {
            // Still serial: the loop runs one block at a time, in order.
            loop.execute { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
            return
        }
        let wake = queue.withLock { queue -> Bool in
            queue.jobs.append(job)
            defer { queue.wakeupPending = true }
            return !queue.wakeupPending
        }
        if wake { sem_post(semaphore) }
    }

    /// Lets `assumeIsolated`/`preconditionIsolated` of an actor pinned here work on its thread.
    public func checkIsolated() {
        if threadRunning {
            precondition(thread.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthread_self())),
                         "must run on the bookkeeping thread")
        } else {
            EventLoop.shared.preconditionInLoop()
        }
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
                for job in jobs { job.runSynchronously(on: asUnownedSerialExecutor()) }
            }
        }
    }
}
