import Runtime
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `ChildProcess` against real children (/bin/sh, /bin/cat): exit statuses, signals through the
/// pidfd, the descriptors a child gets and the signal state it starts with.
@Suite struct ChildProcessTests {
    @Test @LoopActor func anExitStatusIsReportedOnceTheChildIsReaped() async throws {
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["-c", "exit 3"])
        var told: [ChildProcess.Termination] = []
        child.onExit { told.append($0) }
        let ended = try await withTimeout(.seconds(10), "the child's exit") { await child.exited() }
        #expect(ended == .exited(status: 3))
        #expect(told == [.exited(status: 3)])
        #expect(!child.isRunning)
        // Reaped: no zombie is left with its pid.
        #expect(kill(child.pid, 0) != 0 && errno == ESRCH)
    }

    @Test @LoopActor func aSignalEndsTheChildAndSignallingItAfterwardsDoesNothing() async throws {
        let child = try ChildProcess.spawn("/bin/sleep", arguments: ["30"])
        child.signal(SIGTERM)
        let ended = try await withTimeout(.seconds(10), "the child's exit") { await child.exited() }
        #expect(ended == .signalled(SIGTERM))
        child.signal(SIGKILL)
        var told: ChildProcess.Termination?
        child.onExit { told = $0 }
        #expect(told == .signalled(SIGTERM))
    }

    /// The child gets standard input from /dev/null, the descriptor it is given at the number
    /// asked for, and no other descriptor of the parent (nothing leaks into it).
    @Test @LoopActor func theChildGetsOnlyTheDescriptorsItIsGiven() async throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        var leaked: [Int32] = [0, 0]
        #expect(pipe(&leaked) == 0)  // without close-on-exec: it must not reach the child anyway
        defer { for fd in pair + leaked { close(fd) } }
        let script = "ls /proc/self/fd >&3; read line; echo \"stdin:$?\" >&3"
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["-c", script], descriptors: [3: pair[1]])
        close(pair[1])
        pair[1] = -1
        let ended = try await withTimeout(.seconds(10), "the child's exit") { await child.exited() }
        #expect(ended == .exited(status: 0))
        let output = readAll(pair[0])
        let lines = output.split(separator: "\n")
        // 0, 1, 2, 3 and the one ls opened to list them.
        let listed = Set(lines.compactMap { Int32($0) })
        #expect(listed.isSuperset(of: [0, 1, 2, 3]))
        #expect(listed.count == 5, "descriptors of the child: \(listed.sorted())")
        #expect(lines.last == "stdin:1")  // end of file at once: /dev/null
    }

    /// Whatever the parent's thread blocks or ignores, the child starts with nothing blocked and
    /// nothing ignored.
    @Test @LoopActor func theChildStartsWithDefaultSignals() async throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR1)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let ignored = signal(SIGUSR2, SIG_IGN)
        defer {
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            signal(SIGUSR2, ignored)
        }
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        // A shell keeps what it was started with ignored, and exec keeps both for cat.
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["-c", "exec /bin/cat /proc/self/status >&3"],
                                           descriptors: [3: pair[1]])
        close(pair[1])
        #expect(try await withTimeout(.seconds(10), "cat's exit") { await child.exited() } == .exited(status: 0))
        let status = readAll(pair[0]).split(separator: "\n")
        let mask = { (name: String) -> UInt64? in
            status.first { $0.hasPrefix(name + ":") }.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingPrefix("\t"), radix: 16) }
        }
        #expect(mask("SigBlk") == 0)
        // Signals 1 to 31 (glibc's posix_spawn leaves its two internal real-time signals ignored).
        #expect(mask("SigIgn").map { $0 & 0x7FFF_FFFF } == 0, "SigIgn of the child: \(mask("SigIgn") ?? 0)")
    }

    @Test @LoopActor func aMissingExecutableIsAnError() throws {
        #expect(throws: ChildProcessError.self) {
            _ = try ChildProcess.spawn("/nonexistent/interactived-voice", arguments: [])
        }
    }
}

/// Everything readable from `fd` until its end.
private func readAll(_ fd: Int32) -> String {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
