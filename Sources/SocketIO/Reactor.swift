import CSocketIOShims
import Glibc

/// One thread running epoll for every transport of the process.
///
/// Transports register their sockets (edge-triggered) and run all their state changes as blocks on
/// this thread, so a socket's readiness, its read, the WebSocket/Engine.IO/Socket.IO decoding and
/// the hand-over to the application's stream happen without any further thread hop. Blocks must
/// never block; Swift's cooperative pool is never used for I/O.
final class Reactor: @unchecked Sendable {
    static let shared = Reactor()

    private struct Pending {
        var blocks: [@Sendable () -> Void] = []
        var timers: [TimerHeap.Timer] = []
        var sequence: UInt64 = 0
        var wakeupPending = false
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let pending = Locked(Pending())
    // Reactor thread only.
    private var handlers: [Int32: (UInt32) -> Void] = [:]

    private init() {
        epollFD = sio_epoll_create()
        wakeFD = sio_eventfd()
        _ = sio_epoll_add_level_read(epollFD, wakeFD)
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            sio_set_thread_name("socketio.io")
            sio_mark_reactor_thread()
            Unmanaged<Reactor>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        if status == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Reactor>.fromOpaque(context).release()
        }
    }

    /// Runs `block` on the reactor thread, after the blocks submitted before it. Submitted from
    /// the reactor thread itself it needs no wake-up: the loop takes new blocks before it waits.
    func execute(_ block: @escaping @Sendable () -> Void) {
        let wake = pending.withLock { state -> Bool in
            state.blocks.append(block)
            defer { state.wakeupPending = true }
            return !state.wakeupPending
        }
        if wake && sio_on_reactor_thread() == 0 { signal() }
    }

    /// Runs `block` on the reactor thread after `delay`.
    func schedule(after delay: Duration, _ block: @escaping @Sendable () -> Void) {
        let deadline = Reactor.now() &+ UInt64(delay.nanoseconds)
        let wake = pending.withLock { state -> Bool in
            state.sequence &+= 1
            state.timers.append(TimerHeap.Timer(deadline: deadline, sequence: state.sequence, block: block))
            defer { state.wakeupPending = true }
            return !state.wakeupPending
        }
        if wake { signal() }
    }

    /// Watches `fd` (edge-triggered, read and write); `handler` gets SIO_EV_* bits. Reactor thread only.
    func register(_ fd: Int32, handler: @escaping (UInt32) -> Void) -> Bool {
        guard sio_epoll_add(epollFD, fd) == 0 else { return false }
        handlers[fd] = handler
        return true
    }

    /// Stops watching `fd` and closes it. Reactor thread only.
    func closeDescriptor(_ fd: Int32) {
        if handlers.removeValue(forKey: fd) != nil {
            _ = sio_epoll_remove(epollFD, fd)
        }
        _ = Glibc.close(fd)
    }

    private func signal() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private func run() {
        var fds = [Int32](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        var timers = TimerHeap()
        while true {
            // Take new blocks and timers; then wait for I/O until the nearest timer.
            let (blocks, newTimers) = pending.withLock { state -> ([@Sendable () -> Void], [TimerHeap.Timer]) in
                defer {
                    state.blocks.removeAll(keepingCapacity: true)
                    state.timers.removeAll()
                    state.wakeupPending = false
                }
                return (state.blocks, state.timers)
            }
            for timer in newTimers { timers.insert(timer) }
            for block in blocks { block() }
            // Blocks may have submitted more: then only poll, so that they run soon without
            // starving I/O events and timers.
            var timeout: Int32 = -1
            if pending.withLock({ !$0.blocks.isEmpty }) {
                timeout = 0
            } else if let nearest = timers.earliest {
                let now = Reactor.now()
                timeout = nearest <= now ? 0 : Int32(min(60_000, (nearest - now + 999_999) / 1_000_000))
            }
            let count = sio_epoll_wait(epollFD, &fds, &events, Int32(fds.count), timeout)
            if count > 0 {
                for index in 0..<Int(count) {
                    if fds[index] == wakeFD {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                    } else {
                        handlers[fds[index]]?(events[index])
                    }
                }
            }
            if !timers.isEmpty {
                for timer in timers.popDue(now: Reactor.now()) { timer.block() }
            }
        }
    }
}

/// The reactor thread as a task executor: tasks that prefer it run between I/O events on the
/// thread that decodes them, so values yielded there reach them without a thread hop.
extension Reactor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
