import CRuntimeShims
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// Commands a test runs to completion (openssl, mount, a client executable), and the end of a
/// peer process it killed, waited for without Foundation's `Process`.
///
/// `Process.waitUntilExit()` learns that a child ended when a socket the child holds is closed;
/// that socket is not close-on-exec, so a child another thread starts at the same moment can
/// inherit it, and the wait then lasts as long as that other child (1 short process in 400 with
/// a second thread starting long ones). On the loop's thread, waiting for a peer whose test needs
/// the loop, that was a deadlock: every test on the loop timed out and the run never ended. These
/// calls wait for the process itself (waitpid, a pidfd), start it with `runtime_spawn` (only the
/// descriptors it is given) and read its output through a close-on-exec socket.
public enum TestCommand {
    /// How a command ended and what it wrote to its standard output and error.
    public struct Outcome: Sendable {
        public let termination: ChildProcess.Termination
        public let output: String

        /// Whether it exited with status 0.
        public var succeeded: Bool { termination == .exited(status: 0) }
    }

    /// Runs `executable` (an absolute path) with `arguments` and waits for it, blocking the
    /// calling thread: for quick commands (mount, umount) in a synchronous context. Its process
    /// group is killed once `timeout` passed, and its output is read 5 s longer at most (a process
    /// outside the group may still hold it). Throws when it cannot be started.
    public static func runBlocking(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) throws(ChildProcessError) -> Outcome {
        // A socket pair, as a pipe2 with O_CLOEXEC (which Glibc's module does not export) would be.
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw ChildProcessError(operation: "socketpair", errno: errno)
        }
        let (reading, writing) = (ends[0], ends[1])
        defer { close(reading) }
        let argv = [executable] + arguments
        var pid: pid_t = 0
        let error = withCStrings(argv) { argvPointer in
            runtime_spawn(executable, argvPointer, UnsafePointer(environ), [writing, writing], [1, 2], 2, 1, &pid)
        }
        close(writing)
        guard error == 0 else { throw ChildProcessError(operation: "posix_spawn \(executable)", errno: error) }

        var deadline = ContinuousClock.now + timeout
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var killed = false
        while true {
            var descriptor = pollfd(fd: reading, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds(until: deadline))
            if ready < 0, errno == EINTR { continue }
            if ready == 0 {
                if killed { break }
                // runtime_spawn made it the leader of a process group of its own.
                kill(-pid, SIGKILL)
                killed = true
                deadline = ContinuousClock.now + .seconds(5)
                continue
            }
            let count = chunk.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output.append(contentsOf: chunk[..<count])
        }
        var exited: Int32 = 0
        var code: Int32 = 0
        guard runtime_reap(pid, 1, &exited, &code) == 1 else { throw ChildProcessError(operation: "waitpid", errno: errno) }
        return Outcome(termination: exited == 1 ? .exited(status: code) : .signalled(code),
                       output: String(decoding: output, as: UTF8.self))
    }

    /// `runBlocking` as a `BlockingCall`: neither the loop nor the tasks' threads wait.
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> Outcome {
        try await BlockingCall.run { try runBlocking(executable, arguments, timeout: timeout) }
    }

    /// Waits, blocking the calling thread for `timeout` at most, until process `pid` (a child just
    /// sent SIGKILL) has ended; whoever started it still reaps it. False when it had not.
    @discardableResult
    public static func waitForEnd(of pid: pid_t, timeout: Duration = .seconds(5)) -> Bool {
        let pidfd = runtime_pidfd_open(pid)
        // ESRCH: it was reaped already.
        guard pidfd >= 0 else { return errno == ESRCH }
        defer { close(pidfd) }
        let deadline = ContinuousClock.now + timeout
        while true {
            var descriptor = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds(until: deadline))
            if ready < 0, errno == EINTR { continue }
            return ready > 0
        }
    }

    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        return Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
    }
}
