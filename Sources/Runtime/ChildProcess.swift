import CRuntimeShims
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and watched on the event loop through a pidfd:
/// when it ends it is reaped on the loop, and whoever waits for it (`exited()`, `onExit`) is
/// told how. Signals go through the pidfd, so they never reach another process that took a
/// reused pid. The child starts with an empty signal mask and every signal at its default
/// action (whatever the caller blocks or ignores), in a process group of its own (a terminal's
/// Ctrl-C reaches the parent only, which stops its children itself), with standard input from
/// /dev/null and only the descriptors it is given beyond standard output and error.
///
/// An instance keeps itself alive until the child is reaped (its pidfd handler holds it), so a
/// child is never left a zombie because its owner let go of it early.
@LoopActor
public final class ChildProcess {
    /// How the child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(status: Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): return "exit status \(status)"
            case .signalled(let signal): return "signal \(signal)"
            }
        }
    }

    public let pid: pid_t
    /// How it ended, once reaped.
    public private(set) var termination: Termination?
    private var pidfd: Int32
    private var exitHandler: ((Termination) -> Void)?
    private var waiters: [Int: CheckedContinuation<Termination?, Never>] = [:]
    private var nextWaiter = 0

    private init(pid: pid_t, pidfd: Int32) {
        self.pid = pid
        self.pidfd = pidfd
    }

    /// Starts `executable` (an absolute path) with `arguments` (without the program name) and
    /// `environment` (nil: the caller's). `descriptors` maps a descriptor of the child to the
    /// caller's descriptor it gets (e.g. `[3: socket]`); the child numbers must be above 2.
    public static func spawn(_ executable: String, arguments: [String], environment: [String: String]? = nil,
                             descriptors: [Int32: Int32] = [:]) throws(ChildProcessError) -> ChildProcess {
        let targets = descriptors.keys.sorted()
        guard targets.allSatisfy({ $0 > 2 }) else { throw ChildProcessError(operation: "spawn", errno: EBADF) }
        let sources = targets.map { descriptors[$0] ?? -1 }
        // A source that is another mapping's target would be overwritten before it is copied.
        guard Set(sources).isDisjoint(with: targets.filter { descriptors[$0] != $0 }) else {
            throw ChildProcessError(operation: "spawn", errno: EINVAL)
        }
        let argv = [executable] + arguments
        let envp = environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        var pid: pid_t = 0
        let error = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envpPointers in
                runtime_spawn(executable, argvPointers, envpPointers ?? UnsafePointer(environ), sources, targets, Int32(targets.count), 1, &pid)
            }
        }
        guard error == 0 else { throw ChildProcessError(operation: "posix_spawn \(executable)", errno: error) }
        let pidfd = runtime_pidfd_open(pid)
        guard pidfd >= 0 else {
            let failure = ChildProcessError(operation: "pidfd_open", errno: errno)
            // It cannot be watched: it must not run unwatched, nor stay a zombie.
            kill(pid, SIGKILL)
            reapKilled(pid)
            throw failure
        }
        let child = ChildProcess(pid: pid, pidfd: pidfd)
        do {
            // Strongly held by the handler until the child is reaped.
            try EventLoop.shared.register(pidfd) { _ in child.reap() }
        } catch {
            _ = runtime_pidfd_send_signal(pidfd, SIGKILL)
            close(pidfd)
            reapKilled(pid)
            throw ChildProcessError(operation: error.operation, errno: error.errno)
        }
        return child
    }

    /// Waits for a child just sent SIGKILL (it ends at once), so that it is no zombie.
    private static func reapKilled(_ pid: pid_t) {
        var exited: Int32 = 0
        var code: Int32 = 0
        _ = runtime_reap(pid, 1, &exited, &code)
    }

    /// Whether it still runs (not reaped yet).
    public var isRunning: Bool { termination == nil }

    /// Sends `signal`; nothing once it was reaped.
    public func signal(_ signal: Int32) {
        guard termination == nil else { return }
        _ = runtime_pidfd_send_signal(pidfd, signal)
    }

    /// Calls `handler` once, on the loop, when the child was reaped (at once if it already was).
    public func onExit(_ handler: @escaping (Termination) -> Void) {
        if let termination {
            handler(termination)
        } else {
            exitHandler = handler
        }
    }

    /// How the child ended, once it did; nil when the calling task is cancelled first.
    public func exited() async -> Termination? {
        if let termination { return termination }
        let id = nextWaiter
        nextWaiter += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Termination?, Never>) in
                if let termination {
                    continuation.resume(returning: termination)
                } else if Task.isCancelled {
                    continuation.resume(returning: nil)
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            EventLoop.shared.execute { [weak self] in self?.waiters.removeValue(forKey: id)?.resume(returning: nil) }
        }
    }

    /// The pidfd is readable: the child ended (or may have: reaping says).
    private func reap() {
        guard termination == nil else { return }
        var exited: Int32 = 0
        var code: Int32 = 0
        let reaped = runtime_reap(pid, 0, &exited, &code)
        // 0: not yet (a spurious wake-up); -1: someone else reaped it (ECHILD), reported as a kill.
        guard reaped != 0 else { return }
        let ended: Termination = reaped > 0 && exited == 1 ? .exited(status: code) : .signalled(reaped > 0 ? code : SIGKILL)
        termination = ended
        EventLoop.shared.deregister(pidfd)
        close(pidfd)
        pidfd = -1
        let handler = exitHandler
        exitHandler = nil
        let waiting = waiters.values
        waiters.removeAll()
        for waiter in waiting { waiter.resume(returning: ended) }
        handler?(ended)
    }
}

/// A system call of `ChildProcess` failed.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let operation: String
    public let errno: Int32

    package init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}

/// `body` with `strings` as a NULL-terminated array of C strings (nil for nil); the test
/// commands of RuntimeTesting use it too.
package func withCStrings<Result>(_ strings: [String]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> Result) -> Result {
    guard let strings else { return body(nil) }
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}
