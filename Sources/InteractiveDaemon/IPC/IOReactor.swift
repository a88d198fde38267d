import CInteractiveShims
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Readiness notification for non-blocking file descriptors (epoll, edge-triggered) on one
/// dedicated thread, so that no task ever blocks the cooperative pool on a socket.
///
/// Use: `register` a non-blocking fd, read or write until `EAGAIN`, then `await
/// waitReadable`/`waitWritable` and try again; `deregister` before closing the fd.
final class IOReactor: Sendable {
    static let shared = IOReactor()

    enum WaitError: Error { case notRegistered, cancelled }

    private struct Interest {
        var readable = false
        var writable = false
        var readWaiter: CheckedContinuation<Void, any Error>?
        var writeWaiter: CheckedContinuation<Void, any Error>?
    }

    private let epollFD: Int32
    private let interests = Mutex<[Int32: Interest]>([:])

    private init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        DedicatedThread.start(name: "interactived.io") { [self] in self.run() }
    }

    /// Starts watching `fd`. It must be non-blocking.
    func register(_ fd: Int32) {
        interests.withLock { $0[fd] = Interest() }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.fd = fd
        epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    /// Stops watching `fd` and wakes its waiters with an error. Call before `close(fd)`.
    func deregister(_ fd: Int32) {
        epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        let removed = interests.withLock { $0.removeValue(forKey: fd) }
        removed?.readWaiter?.resume(throwing: WaitError.notRegistered)
        removed?.writeWaiter?.resume(throwing: WaitError.notRegistered)
    }

    func waitReadable(_ fd: Int32) async throws { try await wait(fd, forWrite: false) }
    func waitWritable(_ fd: Int32) async throws { try await wait(fd, forWrite: true) }

    private func wait(_ fd: Int32, forWrite: Bool) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = interests.withLock { table in
                    guard var interest = table[fd] else { return .failure(WaitError.notRegistered) }
                    if Task.isCancelled { return .failure(WaitError.cancelled) }
                    if forWrite {
                        if interest.writable {
                            interest.writable = false
                            table[fd] = interest
                            return .success(())
                        }
                        interest.writeWaiter = continuation
                    } else {
                        if interest.readable {
                            interest.readable = false
                            table[fd] = interest
                            return .success(())
                        }
                        interest.readWaiter = continuation
                    }
                    table[fd] = interest
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Void, any Error>? = interests.withLock { table in
                guard var interest = table[fd] else { return nil }
                let taken = forWrite ? interest.writeWaiter : interest.readWaiter
                if forWrite { interest.writeWaiter = nil } else { interest.readWaiter = nil }
                table[fd] = interest
                return taken
            }
            waiter?.resume(throwing: WaitError.cancelled)
        }
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        while true {
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, Int32($0.count), -1) }
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                let flags = events[index].events
                let failed = flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
                let readable = failed || flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0
                let writable = failed || flags & EPOLLOUT.rawValue != 0
                var wake: [CheckedContinuation<Void, any Error>] = []
                interests.withLock { table in
                    guard var interest = table[fd] else { return }
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
                    table[fd] = interest
                }
                wake.forEach { $0.resume() }
            }
        }
    }
}
