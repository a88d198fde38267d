#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// Why a client call failed.
public enum IPCClientError: Error, Sendable, CustomStringConvertible {
    /// The socket could not be reached (no daemon, wrong path, permissions on the path).
    case unreachable(path: String, reason: String)
    /// The connection broke or the daemon closed it.
    case connectionClosed
    /// No reply within the time allowed.
    case timeout
    /// The daemon replied with an error.
    case rpc(RPCError)
    /// The daemon sent something that is not JSON-RPC.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .unreachable(let path, let reason): return "cannot connect to \(path): \(reason)"
        case .connectionClosed: return "the daemon closed the connection"
        case .timeout: return "no reply from the daemon in time"
        case .rpc(let error): return error.description
        case .protocolViolation(let detail): return "unexpected data from the daemon: \(detail)"
        }
    }
}

/// A blocking client of the local API for command-line tools (interactivectl), which may block.
/// Players use `InteractiveClient`; the integration tests their own asynchronous client.
///
/// Not thread-safe: use one instance from one thread. Event notifications that arrive while
/// waiting for a reply are kept and returned by `nextEvent`.
public final class IPCClient {
    private let fd: Int32
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    private var ready: [[UInt8]] = []
    private var pendingEvents: [EventEnvelope] = []
    private var nextID = 1

    /// Connects to the daemon's socket at `path`.
    public init(path: String) throws(IPCClientError) {
        fd = try UnixStreamSocket.connect(path: path)
    }

    deinit { close(fd) }

    /// Sends raw bytes (a line, or deliberately malformed input in tests).
    public func send(raw bytes: [UInt8]) throws(IPCClientError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .connectionClosed
            }
            offset += written
        }
    }

    /// Sends a notification (no reply expected).
    public func notify(_ method: String, _ params: JSONValue? = nil) throws(IPCClientError) {
        try send(raw: RPCRequest(id: nil, method: method, params: params).line())
    }

    /// Calls `method` and waits for its reply; a daemon error is thrown as `.rpc`.
    public func call(_ method: String, _ params: JSONValue? = nil, timeoutMs: Int = 10_000) throws(IPCClientError) -> JSONValue {
        let id = nextID
        nextID += 1
        try send(raw: RPCRequest(id: .number(Double(id)), method: method, params: params).line())
        let deadline = Self.nowMs() + timeoutMs
        while true {
            let remaining = deadline - Self.nowMs()
            guard remaining > 0 else { throw .timeout }
            guard let message = try nextMessage(timeoutMs: remaining) else { throw .timeout }
            switch message {
            case .response(let response) where response.id == .number(Double(id)):
                switch response.outcome {
                case .success(let result): return result
                case .failure(let error): throw .rpc(error)
                }
            case .notification(let method, let params) where method == eventNotificationMethod:
                if let envelope = EventEnvelope(params: params) { pendingEvents.append(envelope) }
            default:
                continue
            }
        }
    }

    /// The next event notification, or nil when none arrives within `timeoutMs`.
    public func nextEvent(timeoutMs: Int) throws(IPCClientError) -> EventEnvelope? {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        let deadline = Self.nowMs() + timeoutMs
        while true {
            let remaining = deadline - Self.nowMs()
            guard remaining > 0, let message = try nextMessage(timeoutMs: remaining) else { return nil }
            if case .notification(let method, let params) = message, method == eventNotificationMethod,
               let envelope = EventEnvelope(params: params) {
                return envelope
            }
        }
    }

    /// The next decoded line from the daemon, or nil on timeout.
    public func nextMessage(timeoutMs: Int) throws(IPCClientError) -> RPCIncoming? {
        guard let line = try nextLine(timeoutMs: timeoutMs) else { return nil }
        switch RPCIncoming.decode(line: line) {
        case .success(let message): return message
        case .failure(let failure): throw .protocolViolation(failure.error.message)
        }
    }

    /// The next raw line from the daemon (without its newline), or nil on timeout.
    public func nextLine(timeoutMs: Int) throws(IPCClientError) -> [UInt8]? {
        let deadline = Self.nowMs() + timeoutMs
        while ready.isEmpty {
            let remaining = deadline - Self.nowMs()
            guard remaining > 0 else { return nil }
            var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&pollfd, 1, Int32(min(remaining, Int(Int32.max))))
            if polled < 0 {
                if errno == EINTR { continue }
                throw .connectionClosed
            }
            if polled == 0 { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .connectionClosed
            }
            if count == 0 { throw .connectionClosed }
            for frame in buffer[0..<count].withUnsafeBytes({ framer.append($0) }) {
                if case .line(let line) = frame { ready.append(line) }
            }
        }
        return ready.removeFirst()
    }

    /// Closes the writing side (the daemon sees end of input) but keeps reading.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    private static func nowMs() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }
}
