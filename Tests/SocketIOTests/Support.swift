import Runtime
import RuntimeTesting
import Foundation
import Synchronization
@testable import SocketIO

/// Errors of the test harness itself.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A python peer started as a subprocess. Its standard output is read line by line; tests wait
/// for lines with `line(prefix:)`. The process is killed when the test ends.
final class PeerProcess: @unchecked Sendable {
    static let peersDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers")
    static var python: String { ProcessInfo.processInfo.environment["SIO_TEST_PYTHON"] ?? "python3" }

    let process = Process()
    private let output = Recorder<String>()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let stderrText = Locked("")
    private(set) var port = 0

    /// Starts `script` and waits for its "READY <port>" line (10 s at most).
    static func start(_ script: String, _ arguments: [String] = []) async throws -> PeerProcess {
        let peer = PeerProcess()
        try peer.launch(script, arguments)
        do {
            let ready = try await peer.line(prefix: "READY ", timeout: .seconds(15))
            guard let port = Int(ready.dropFirst("READY ".count)) else { throw HarnessError("bad READY line: \(ready)") }
            peer.port = port
        } catch {
            peer.stop()
            throw HarnessError("peer \(script) did not start: \(error); stderr: \(peer.stderrText.withLock { $0 })")
        }
        return peer
    }

    private func launch(_ script: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [PeerProcess.python, "-u", PeerProcess.peersDirectory.appendingPathComponent(script).path] + arguments
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        let output = self.output
        let (lineStream, lineSink) = AsyncStream<String>.makeStream()
        Task { @LoopActor in
            for await line in lineStream { output.append(line) }
        }
        let buffer = Locked([UInt8]())
        stdoutPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                lineSink.finish()
                return
            }
            let lines: [String] = buffer.withLock { bytes in
                bytes.append(contentsOf: data)
                var complete: [String] = []
                while let newline = bytes.firstIndex(of: 10) {
                    complete.append(String(decoding: bytes[..<newline], as: UTF8.self))
                    bytes.removeSubrange(...newline)
                }
                return complete
            }
            for line in lines { lineSink.yield(line) }
        }
        let errors = stderrText
        stderrPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            errors.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// The next unread line starting with `prefix`.
    func line(prefix: String, timeout: Duration = .seconds(10)) async throws -> String {
        try await output.next(timeout: timeout) { $0.hasPrefix(prefix) }
    }

    /// All lines so far.
    func lines() async -> [String] { await output.items }

    var stderr: String { stderrText.withLock { $0 } }

    /// Kills the process (SIGKILL) and waits until it is gone (Foundation reaps it).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        TestCommand.waitForEnd(of: process.processIdentifier)
    }

    deinit { stop() }
}

/// Collects values and lets tests wait (bounded) for the next one matching a predicate. On the
/// loop, so that a client's handler records its updates in the order it is told them.
@LoopActor
final class Recorder<T: Sendable> {
    private(set) var items: [T] = []
    private var cursor = 0
    private var waiters: [Int: (predicate: @Sendable (T) -> Bool, continuation: CheckedContinuation<T, any Error>)] = [:]
    private var nextWaiter = 0

    func append(_ item: T) {
        items.append(item)
        for (id, waiter) in waiters.sorted(by: { $0.key < $1.key }) where waiter.predicate(item) {
            waiters.removeValue(forKey: id)
            cursor = items.count
            waiter.continuation.resume(returning: item)
            return
        }
    }

    /// The first value after the previous match that satisfies `predicate`, waiting at most `timeout`.
    func next(timeout: Duration, where predicate: @escaping @Sendable (T) -> Bool) async throws -> T {
        if let index = items[cursor...].firstIndex(where: predicate) {
            cursor = index + 1
            return items[index]
        }
        cursor = items.count
        let id = nextWaiter
        nextWaiter += 1
        let timer = EventLoop.shared.schedule(after: timeout) { [weak self] in self?.expire(id, timeout) }
        defer { EventLoop.shared.cancel(timer) }
        return try await withCheckedThrowingContinuation { continuation in
            waiters[id] = (predicate, continuation)
        }
    }

    private func expire(_ id: Int, _ timeout: Duration) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.continuation.resume(throwing: HarnessError("nothing matching arrived within \(timeout); got \(items.suffix(8))"))
    }
}

/// A client under test with its states, events and proofs of carriage recorded.
@LoopActor
struct ClientHarness {
    let client: SocketIOClient
    let states = Recorder<SocketIOConnectionState>()
    let events = Recorder<SocketIOEvent>()
    let carried = Recorder<SocketIOWriteMark>()
    /// Log lines with the moment the client logged them.
    let logs = Recorder<LogLine>()

    struct LogLine: Sendable {
        var time: ContinuousClock.Instant
        var text: String
    }

    init(_ configuration: SocketIOConfiguration, credentials: @escaping @LoopActor () -> SocketIOCredentials = { SocketIOCredentials() }) {
        let (logs, states, events, carried) = (self.logs, self.states, self.events, self.carried)
        client = SocketIOClient(configuration: configuration, credentials: credentials, log: { level, message in
            let line = LogLine(time: .now, text: "\(level): \(message)")
            EventLoop.shared.execute { logs.append(line) }
        }, handler: { update in
            switch update {
            case .state(let state): states.append(state)
            case .event(let event): events.append(event)
            case .carried(let mark): carried.append(mark)
            }
        })
    }

    func connected(timeout: Duration = .seconds(10)) async throws -> String {
        let state = try await states.next(timeout: timeout) { if case .connected = $0 { return true } else { return false } }
        guard case .connected(let sid) = state else { throw HarnessError("unexpected \(state)") }
        return sid
    }

    func state(timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (SocketIOConnectionState) -> Bool) async throws -> SocketIOConnectionState {
        try await states.next(timeout: timeout, where: predicate)
    }

    func event(_ name: String, timeout: Duration = .seconds(10)) async throws -> SocketIOEvent {
        try await events.next(timeout: timeout) { $0.name == name }
    }
}

/// A value shared between a test and the closures it hands out.
final class Locked<State: Sendable>: Sendable {
    private let mutex: Mutex<State>

    init(_ state: State) {
        mutex = Mutex(state)
    }

    func withLock<R: Sendable>(_ body: (inout State) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}

/// Runs the `ws-echo` executable (built beside the tests) against `url`; returns its exit status
/// and what it printed.
func runWsEcho(_ url: String, timeout: Duration = .seconds(20)) async throws -> (status: Int32, output: String) {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [directory.appendingPathComponent("ws-echo"), directory.deletingLastPathComponent().appendingPathComponent("ws-echo")]
    guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw HarnessError("ws-echo not found near \(directory.path)")
    }
    let outcome = try await TestCommand.run(path.path, [url], timeout: timeout)
    guard case .exited(let status) = outcome.termination else { throw HarnessError("ws-echo ended by \(outcome.termination): \(outcome.output)") }
    return (status, outcome.output)
}
