import CRuntimeShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process's one event loop: a thread waiting in epoll for the sockets registered with it,
/// woken by an eventfd when work arrives, and running the timers of a heap.
///
/// Each turn it runs, in this order: blocks (`execute`) and jobs (as the `SerialExecutor` of
/// `LoopActor`) in the order they were submitted; then the timers that are due (`schedule`); then the handlers of
/// the descriptors epoll reported. A socket's readiness, its read, the protocol decoding and the actor that
/// decides what to do with it therefore all run on this one thread, without a hop.
///
/// Work on the loop must never block. What may block (SQLite) runs on `BookkeepingExecutor`.
///
/// Everything it runs for others is isolated to `LoopActor` (whose executor it is): the I/O
/// handlers, the timers and the blocks. The methods that touch its loop-only state (`register`,
/// `deregister`, `withReadBuffer`) are isolated to it too, so the compiler checks that they are
/// called on the loop.
///
/// `@unchecked Sendable`: `handlers` and `readBuffer` are touched only by `LoopActor`-isolated
/// methods and by the loop's own thread in `run`; everything else is immutable or inside a `Mutex`.
public final class EventLoop: SerialExecutor, @unchecked Sendable {
    /// The loop every part of the daemon shares (its thread is named "interactived.ev").
    public static let shared = EventLoop(name: "interactived.ev")

    private let inbox: LoopInbox
    private let epollFD: Int32
    private var wakeFD: Int32 { inbox.wakeFD }
    private let time = LoopTime()
    private let loopThread = Atomic<UInt>(0)
    // Loop thread only.
    private var handlers: [Int32: @LoopActor @Sendable (IOEvents) -> Void] = [:]
    private var readBuffer = [UInt8](repeating: 0, count: 65_536)

    /// False when the loop's thread or its descriptors could not be created (the process is out
    /// of resources): nothing submitted to it will run. The daemon checks it at start.
    public var isRunning: Bool { running.load(ordering: .acquiring) }
    private let running = Atomic<Bool>(false)

    /// Starts the loop on a new thread named `name`.
    private init(name: String) {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        inbox = LoopInbox(wakeFD: runtime_eventfd())
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        guard epollFD >= 0, wakeFD >= 0, epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0 else { return }
        let started = Atomic<Bool>(false)
        let created = DedicatedThread.start(name: name) { [self] in
            loopThread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
            started.store(true, ordering: .releasing)
            run()
        }
        // The loop's identity must be known before anyone asks `inLoop`.
        while created && !started.load(ordering: .acquiring) { sched_yield() }
        running.store(created, ordering: .releasing)
    }

    // MARK: Confinement

    /// True on the loop's thread.
    public var inLoop: Bool {
        loopThread.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// Stops a debug build when called off the loop's thread.
    @inlinable
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inLoop, "must run on the event loop's thread", file: file, line: line)
    }

    /// Stops the process when called off the loop's thread, in every build. For the few places
    /// where running elsewhere would corrupt state (the handler table).
    public func preconditionInLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inLoop, "must run on the event loop's thread", file: file, line: line)
    }

    /// Lets `assumeIsolated` and `preconditionIsolated` of an actor pinned to this loop succeed
    /// on the loop's thread (in I/O handlers and timers, which are not jobs).
    public func checkIsolated() {
        preconditionInLoop()
    }

    // MARK: Work

    /// Runs `work` on the loop after everything submitted before it. From any thread.
    public func execute(_ work: @escaping @LoopActor @Sendable () -> Void) {
        inbox.submit(.block(work))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        inbox.submit(.actorJob(UnownedJob(job)))
    }

    /// Runs `work` on the loop at `deadline` (at once if it has passed). From any thread.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @LoopActor @Sendable () -> Void) -> TimerID {
        let nanoseconds = time.nanoseconds(at: deadline)
        let (id, wake) = inbox.state.withLock { state -> (TimerID, Bool) in
            let id = state.timers.insert(deadline: nanoseconds, work)
            return (id, state.takeWakeup(before: nanoseconds))
        }
        if wake { inbox.signal() }
        return id
    }

    /// Runs `work` on the loop after `delay`. From any thread.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @LoopActor @Sendable () -> Void) -> TimerID {
        schedule(at: ContinuousClock.now.advanced(by: max(delay, .zero)), work)
    }

    /// Cancels a timer; nothing happens if it already ran. From any thread.
    public func cancel(_ timer: TimerID) {
        inbox.state.withLock { _ = $0.timers.remove(timer) }
    }

    // MARK: I/O

    /// Watches the non-blocking descriptor `fd` (edge-triggered, readable and writable);
    /// `handler` runs on the loop with what epoll reported.
    @LoopActor
    public func register(_ fd: Int32, _ handler: @escaping @LoopActor @Sendable (IOEvents) -> Void) throws(EventLoopError) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.fd = fd
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw EventLoopError(operation: "epoll_ctl(ADD)", errno: errno)
        }
        handlers[fd] = handler
    }

    /// Stops watching `fd`. Call before closing it.
    @LoopActor
    public func deregister(_ fd: Int32) {
        guard handlers.removeValue(forKey: fd) != nil else { return }
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    /// Lends the loop's one 64 KiB read buffer: every socket is read on the loop, one at a
    /// time, so one buffer serves them all (a buffer per connection would cost 64 KiB each).
    /// Copy what `body` needs out of it before returning.
    @LoopActor
    public func withReadBuffer<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try readBuffer.withUnsafeMutableBytes(body)
    }

    // MARK: The loop

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        // Two buffers swapped each turn, so taking the queue allocates nothing.
        var batch: [LoopInbox.Work] = []
        let serial = asUnownedSerialExecutor()
        while true {
            inbox.state.withLock { state in swap(&batch, &state.queue) }
            for item in batch {
                switch item {
                case .block(let block): LoopActor.assumeIsolated { block() }
                // Without a task executor: no task prefers one, and the runtime suspends and
                // queues a task again (a window for other work between a check and the wait
                // that depends on it) on every await when the running job's task executor is
                // not the task's preference.
                case .actorJob(let job): job.runSynchronously(on: serial)
                }
            }
            batch.removeAll(keepingCapacity: true)
            // Timers one at a time, after the batch: a timer cancelled by the work before it
            // (or by the timer before it) does not run.
            let now = time.now
            while let timer = inbox.state.withLock({ $0.timers.popFirst(dueAt: now) }) { LoopActor.assumeIsolated { timer.work() } }

            // Wait for I/O until the nearest timer; only poll when more work arrived meanwhile.
            let timeout = inbox.state.withLock { state -> Int32 in
                if !state.queue.isEmpty { return 0 }
                let earliest = state.timers.earliest
                let now = time.now
                if let earliest, earliest <= now { return 0 }
                state.asleep = true
                state.sleepingUntil = earliest
                guard let earliest else { return -1 }
                return Int32(min(60_000, (earliest - now + 999_999) / 1_000_000))
            }
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, Int32($0.count), timeout) }
            inbox.state.withLock { state in
                state.asleep = false
                state.sleepingUntil = nil
                state.wakeupPending = false
            }
            guard count > 0 else { continue }
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                if fd == wakeFD {
                    // Drained whenever epoll reports it (it is level-triggered): a wake-up written
                    // after the loop had already left epoll_wait must not leave it readable.
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    continue
                }
                let ready = IOEvents(epoll: events[index].events)
                LoopActor.assumeIsolated { handlers[fd]?(ready) }
            }
        }
    }
}

/// A failure of the loop's own system calls.
public struct EventLoopError: Error, CustomStringConvertible {
    public let operation: String
    public let errno: Int32
    public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}

extension IOEvents {
    init(epoll flags: UInt32) {
        var events: IOEvents = []
        if flags & EPOLLIN.rawValue != 0 { events.insert(.readable) }
        if flags & EPOLLOUT.rawValue != 0 { events.insert(.writable) }
        if flags & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { events.insert(.hangup) }
        if flags & EPOLLERR.rawValue != 0 { events.insert(.error) }
        self = events
    }
}

/// What other threads hand the loop: work, timers, and the eventfd that wakes it.
private final class LoopInbox: Sendable {
    enum Work {
        case block(@LoopActor @Sendable () -> Void)
        /// A job isolated to the loop actor.
        case actorJob(UnownedJob)
    }

    struct State {
        var queue: [Work] = []
        var timers = TimerHeap()
        /// The loop is in (or about to enter) `epoll_wait`, until this deadline (nil: no timer).
        var asleep = false
        var sleepingUntil: UInt64?
        var wakeupPending = false

    /// Whether the caller must write the eventfd for work arriving now (due at `deadline`, or
    /// at once when nil): only when the loop sleeps past it and nobody has woken it yet.
    mutating func takeWakeup(before deadline: UInt64?) -> Bool {
        guard asleep, !wakeupPending else { return false }
        if let deadline, let sleepingUntil, sleepingUntil <= deadline { return false }
        wakeupPending = true
        return true
    }
    }

    let state = Mutex(State())
    let wakeFD: Int32

    init(wakeFD: Int32) { self.wakeFD = wakeFD }

    func submit(_ work: Work) {
        let wake = state.withLock { state -> Bool in
            state.queue.append(work)
            return state.takeWakeup(before: nil)
        }
        if wake { signal() }
    }

    func signal() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }
}
