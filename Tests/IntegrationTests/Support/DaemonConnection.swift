import IPCProtocol
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// One connection of a test to the daemon's local socket. Every call and wait suspends the test's
/// task (no thread of the test runner is held while the daemon works) and ends by a deadline:
/// `call` and `send` throw `IPCClientError.timeout`; `nextLine`, `nextMessage` and `nextEvent`
/// return nil when nothing arrived in time (what `expectNoEvent` and draining loops rely on).
///
/// The design, and why: isolated to the runtime's loop actor (`EventLoop.shared`, the daemon's
/// own loop, here one thread of the test process) that reads its non-blocking socket
/// through `WatchedDescriptor`: it reads until `EAGAIN`, then awaits readiness with a deadline
/// (`ready(until:)`, the runtime's `withTimeout`). The bytes are read, framed and decoded on the
/// loop's thread, and a waiting test is a suspended task. It is the blocking `IPCClient`'s interface made `async` (same names and
/// arguments, same handling of events that arrive while a call waits), so a test reads as it did.
/// The client library `InteractiveClient` does not fit: tests need what a player library must not
/// do: send malformed input, read raw lines (error replies with a null id, ids exactly as sent),
/// see the connection stay closed when the daemon closes it, and read events from the connection
/// that made the calls (the library skips non-JSON-RPC lines, reconnects, and delivers events only
/// through its own re-subscribing stream).
///
/// One operation at a time, as a test uses a connection: an operation started while another one
/// on the same connection is still waiting throws `TestFailure` rather than interleave bytes or
/// steal the other's reply.
@LoopActor
final class DaemonConnection {
    private let socket: WatchedDescriptor
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    /// Lines received and not read yet, oldest first.
    private var unread: [[UInt8]] = []
    /// Events that arrived while a call waited for its reply; `nextEvent` returns them first.
    private var pendingEvents: [EventEnvelope] = []
    /// The daemon closed the connection (or it broke): nothing more will arrive after `unread`.
    private var ended = false
    private var nextID = 1
    private var busy = false

    private init(socket: WatchedDescriptor) {
        self.socket = socket
    }

    /// Connects to the daemon's socket at `path`.
    static func connect(path: String) async throws -> DaemonConnection {
        let fd = try UnixStreamSocket.connect(path: path, nonBlocking: true)
        do {
            return DaemonConnection(socket: try await WatchedDescriptor.watch(fd))
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        // No waiter is left (each holds the actor); the loop lets go of the descriptor, then closes it.
        let (loop, fd) = (EventLoop.shared, socket.fd)
        loop.execute {
            loop.deregister(fd)
            close(fd)
        }
    }

    // MARK: Sending

    /// Sends raw bytes (a line, or deliberately malformed input).
    func send(raw bytes: [UInt8], timeoutMs: Int = 10_000) async throws {
        try claim()
        defer { busy = false }
        try await write(bytes, until: Self.deadline(afterMs: timeoutMs))
    }

    /// Sends a notification (no reply expected).
    func notify(_ method: String, _ params: JSONValue? = nil) async throws {
        try await send(raw: RPCRequest(id: nil, method: method, params: params).line())
    }

    /// Calls `method` and waits for its reply; a daemon error is thrown as `.rpc`. Event
    /// notifications that arrive meanwhile are kept for `nextEvent`; other lines are skipped.
    func call(_ method: String, _ params: JSONValue? = nil, timeoutMs: Int = 10_000) async throws -> JSONValue {
        try claim()
        defer { busy = false }
        let deadline = Self.deadline(afterMs: timeoutMs)
        let id = JSONValue.number(Double(nextID))
        nextID += 1
        try await write(RPCRequest(id: id, method: method, params: params).line(), until: deadline)
        while true {
            guard let message = try await readMessage(until: deadline) else { throw IPCClientError.timeout }
            switch message {
            case .response(let response) where response.id == id:
                switch response.outcome {
                case .success(let result): return result
                case .failure(let error): throw IPCClientError.rpc(error)
                }
            case .notification(let method, let params) where method == eventNotificationMethod:
                if let envelope = EventEnvelope(params: params) { pendingEvents.append(envelope) }
            default:
                continue
            }
        }
    }

    // MARK: Receiving

    /// The next event notification, or nil when none arrives within `timeoutMs`.
    func nextEvent(timeoutMs: Int) async throws -> EventEnvelope? {
        try claim()
        defer { busy = false }
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        let deadline = Self.deadline(afterMs: timeoutMs)
        while let message = try await readMessage(until: deadline) {
            if case .notification(let method, let params) = message, method == eventNotificationMethod,
               let envelope = EventEnvelope(params: params) {
                return envelope
            }
        }
        return nil
    }

    /// The next decoded line from the daemon, or nil when none arrives within `timeoutMs`.
    func nextMessage(timeoutMs: Int) async throws -> RPCIncoming? {
        try claim()
        defer { busy = false }
        return try await readMessage(until: Self.deadline(afterMs: timeoutMs))
    }

    /// The next raw line from the daemon (without its newline), or nil when none arrives within
    /// `timeoutMs`. Throws `.connectionClosed` once the daemon closed and every line was read.
    func nextLine(timeoutMs: Int) async throws -> [UInt8]? {
        try claim()
        defer { busy = false }
        return try await readLine(until: Self.deadline(afterMs: timeoutMs))
    }

    // MARK: The socket

    private func claim() throws {
        guard !busy else { throw TestFailure("a second operation on one DaemonConnection while the first one waits") }
        busy = true
    }

    private func write(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) async throws {
        var offset = 0
        while offset < bytes.count {
            let (written, error) = bytes[offset...].withUnsafeBytes { buffer in
                (Glibc.send(socket.fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)), errno)
            }
            if written >= 0 {
                offset += written
            } else if error == EAGAIN || error == EWOULDBLOCK {
                // Room to write, or a hang-up (a daemon that shut the connection down: the next send fails).
                guard try await socket.ready(toWrite: true, until: deadline) else { throw IPCClientError.timeout }
            } else if error != EINTR {
                throw IPCClientError.connectionClosed
            }
        }
    }

    private func readMessage(until deadline: ContinuousClock.Instant) async throws -> RPCIncoming? {
        guard let line = try await readLine(until: deadline) else { return nil }
        switch RPCIncoming.decode(line: line) {
        case .success(let message): return message
        case .failure(let failure): throw IPCClientError.protocolViolation(failure.error.message)
        }
    }

    private func readLine(until deadline: ContinuousClock.Instant) async throws -> [UInt8]? {
        while unread.isEmpty {
            receiveAvailable()
            guard unread.isEmpty else { break }
            if ended { throw IPCClientError.connectionClosed }
            guard try await socket.ready(until: deadline) else { return nil }
        }
        return unread.removeFirst()
    }

    /// Reads what the kernel holds now into `unread` (never waits); notes the end of the stream.
    private func receiveAvailable() {
        while !ended {
            let (count, error) = EventLoop.shared.withReadBuffer { buffer -> (Int, Int32) in
                let count = recv(socket.fd, buffer.baseAddress, buffer.count, 0)
                let error = errno
                if count > 0 {
                    for case .line(let line) in framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                        unread.append(line)
                    }
                }
                return (count, error)
            }
            if count > 0 || (count < 0 && error == EINTR) { continue }
            if count < 0, error == EAGAIN || error == EWOULDBLOCK { return }
            ended = true
        }
    }

    private static func deadline(afterMs milliseconds: Int) -> ContinuousClock.Instant {
        ContinuousClock.now.advanced(by: .milliseconds(milliseconds))
    }
}
