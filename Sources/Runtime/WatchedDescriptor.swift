import Synchronization

/// A non-blocking file descriptor watched by the event loop, for code written as tasks: read or
/// write until `EAGAIN`, then `await readable()`/`writable()` and try again.
///
/// Readiness seen while nobody waits is remembered (epoll is edge-triggered), so a wait after
/// it returns at once. `stopWatching()` (before `close(fd)`) wakes any waiter with an error.
public final class WatchedDescriptor: Sendable {
    /// Why a wait ended without readiness.
    public enum WaitError: Error {
        /// The descriptor is no longer watched.
        case stopped
        case cancelled
    }

    private struct Interest {
        var readable = false
        var writable = false
        var stopped = false
        var readWaiter: CheckedContinuation<Void, any Error>?
        var writeWaiter: CheckedContinuation<Void, any Error>?
    }

    public let fd: Int32
    private let loop: EventLoop
    private let interest = Mutex(Interest())

    private init(fd: Int32, loop: EventLoop) {
        self.fd = fd
        self.loop = loop
    }

    /// Starts watching `fd` (which must be non-blocking) on `loop`.
    public static func watch(_ fd: Int32, on loop: EventLoop = .shared) async throws -> WatchedDescriptor {
        let watched = WatchedDescriptor(fd: fd, loop: loop)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.execute {
                do {
                    try loop.register(fd) { [weak watched] events in watched?.deliver(events) }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        return watched
    }

    /// Returns once the descriptor is readable (or has hung up, or failed).
    public func readable() async throws { try await wait(forWrite: false) }

    /// Returns once the descriptor is writable (or hung up, or failed).
    public func writable() async throws { try await wait(forWrite: true) }

    /// Stops watching; waiters end with `WaitError.stopped`. Call before closing the descriptor.
    /// Returns once the loop no longer watches it, so the number may be reused at once.
    public func stopWatching() async {
        let waiters = interest.withLock { interest -> [CheckedContinuation<Void, any Error>] in
            interest.stopped = true
            defer {
                interest.readWaiter = nil
                interest.writeWaiter = nil
            }
            return [interest.readWaiter, interest.writeWaiter].compactMap { $0 }
        }
        for waiter in waiters { waiter.resume(throwing: WaitError.stopped) }
        let (loop, fd) = (self.loop, self.fd)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                loop.deregister(fd)
                done.resume()
            }
        }
    }

    private func wait(forWrite: Bool) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = interest.withLock { interest in
                    if interest.stopped { return .failure(WaitError.stopped) }
                    if Task.isCancelled { return .failure(WaitError.cancelled) }
                    if forWrite {
                        guard !interest.writable else {
                            interest.writable = false
                            return .success(())
                        }
                        interest.writeWaiter = continuation
                    } else {
                        guard !interest.readable else {
                            interest.readable = false
                            return .success(())
                        }
                        interest.readWaiter = continuation
                    }
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = interest.withLock { interest -> CheckedContinuation<Void, any Error>? in
                defer { if forWrite { interest.writeWaiter = nil } else { interest.readWaiter = nil } }
                return forWrite ? interest.writeWaiter : interest.readWaiter
            }
            waiter?.resume(throwing: WaitError.cancelled)
        }
    }

    /// On the loop: wakes the waiters readiness concerns, or remembers it for the next wait.
    private func deliver(_ events: IOEvents) {
        let readable = !events.isDisjoint(with: [.readable, .hangup, .error])
        // A hang-up wakes a writer too: the peer may have shut the connection down without
        // closing it (its unread bytes keep the socket full, so no EPOLLOUT comes); the next
        // write says what is left (EAGAIN: wait again; EPIPE: gone).
        let writable = !events.isDisjoint(with: [.writable, .hangup, .error])
        let wake = interest.withLock { interest -> [CheckedContinuation<Void, any Error>] in
            var wake: [CheckedContinuation<Void, any Error>] = []
            if readable {
                if let waiter = interest.readWaiter {
                    wake.append(waiter)
                    interest.readWaiter = nil
                } else {
                    interest.readable = true
                }
            }
            if writable {
                if let waiter = interest.writeWaiter {
                    wake.append(waiter)
                    interest.writeWaiter = nil
                } else {
                    interest.writable = true
                }
            }
            return wake
        }
        for waiter in wake { waiter.resume() }
    }
}
