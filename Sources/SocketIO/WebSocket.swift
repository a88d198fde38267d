import Network
import Runtime

/// A complete WebSocket message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// A WebSocket client connection (RFC 6455) over TCP or TLS: a shell on the event loop
/// (isolated to `LoopActor`) around `WebSocketMachine`, which decides everything (handshake,
/// frames, pings, close handshake).
///
/// `receive()` is for one task at a time. Every protocol violation by the server is answered with
/// the matching close code (1002, 1007, 1009) and thrown as `SocketIOError.protocolViolation`.
@LoopActor
public final class WebSocket {
    private let loop = EventLoop.shared
    private var machine: WebSocketMachine
    private let connection: Connection
    private var inbox: [WebSocketMessage] = []
    private var inboxHead = 0
    /// The upgrade succeeded.
    private var isOpen = false
    /// Why the session ended, once it did.
    private var ending: SocketIOError?
    /// The connection is closed (after a graceful close: once the close frame is written).
    private var connectionClosed = false
    private var receiver: CheckedContinuation<WebSocketMessage, any Error>?
    private var upgrade: CheckedContinuation<Void, any Error>?
    private var closeTimer: TimerID?

    private init(connection: Connection, machine: WebSocketMachine) {
        self.connection = connection
        self.machine = machine
    }

    isolated deinit {
        if let closeTimer { loop.cancel(closeTimer) }
        connection.abort(.cancelled)
    }

    /// Connects to a `ws://` or `wss://` URL (also `http(s)://`), sending `headers` with the
    /// upgrade request. `timeout` covers DNS, TCP, TLS and the HTTP upgrade.
    public static func connect(
        url: String,
        headers: [String: String] = [:],
        tls: TLSOptions = TLSOptions(),
        timeout: Duration = .seconds(10),
        maxMessageBytes: Int = 16 << 20,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void = { _, _ in }
    ) async throws -> WebSocket {
        let endpoint = try Endpoint(parsing: url)
        var random = SystemRandomNumberGenerator()
        let machine = WebSocketMachine(maxMessageBytes: maxMessageBytes, seed: random.next())
        let request = try machine.upgradeRequest(endpoint: endpoint, headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        return try await withTimeout(timeout, "connecting to \(endpoint.hostHeader)") { @LoopActor in
            let connection = try await ServerConnection.open(endpoint, tls: tls, timeout: timeout, log: log)
            let socket = WebSocket(connection: connection, machine: machine)
            try await socket.upgrade(request)
            return socket
        }
    }

    private func upgrade(_ request: [UInt8]) async throws {
        connection.start { [weak self] event in self?.handle(event) }
        connection.write(request)
        try await withTaskCancellationHandler {
            // The state is checked inside: the answer may have been handled before this runs.
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if isOpen {
                    continuation.resume()
                } else if let ending {
                    continuation.resume(throwing: ending)
                } else {
                    upgrade = continuation
                }
            }
        } onCancel: {
            EventLoop.shared.execute { [weak self] in self?.end(.disconnectedByClient, abort: true) }
        }
    }

    // MARK: Receiving

    /// The next complete message. Throws `SocketIOError.closedByPeer` after a close handshake,
    /// `.protocolViolation` after a violation (both once the close frame sent in answer is written
    /// and the connection closed), `.connectionLost` when the connection broke.
    public func receive() async throws -> WebSocketMessage {
        // Checked inside the continuation: a message may have been handled before it runs.
        return try await withCheckedThrowingContinuation { continuation in
            receiver = continuation
            if inboxHead == inbox.count && ending == nil {
                perform(machine.receive([], now: .now, messageLimit: 1))
            } else {
                wakeReceiver()
            }
        }
    }

    private func takeMessage() -> WebSocketMessage? {
        guard inboxHead < inbox.count else { return nil }
        let message = inbox[inboxHead]
        inboxHead += 1
        if inboxHead == inbox.count {
            inbox.removeAll(keepingCapacity: true)
            inboxHead = 0
        }
        return message
    }

    private func handle(_ event: Connection.Event) {
        switch event {
        case .received(let bytes):
            // Decoded while a receiver waits, one message at a time (as a pull API reads): what
            // follows a message, a violation say, is acted on once the message was consumed.
            perform(machine.receive(bytes, now: .now, messageLimit: receiver != nil && inboxHead == inbox.count ? 1 : 0))
        case .drained:
            return
        case .closed(let error):
            connectionClosed = true
            if ending == nil {
                // What arrived before the end (a close frame, say) is decoded first.
                perform(machine.receive([], now: .now))
            }
            if ending == nil {
                perform(machine.connectionEnded(error.map(SocketIOError.init)))
            }
            wakeReceiver()
        }
    }

    private func perform(_ actions: [WebSocketMachine.Action]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                connection.write(bytes)
            case .opened:
                isOpen = true
                upgrade?.resume()
                upgrade = nil
            case .message(let opcode, let payload):
                inbox.append(opcode == .text ? .text(String(decoding: payload, as: UTF8.self)) : .binary(payload))
            case .closed(let reason):
                end(reason, abort: false)
            case .abort(let reason):
                end(reason, abort: true)
            }
        }
        if let closeDeadline = machine.closeDeadline, closeTimer == nil {
            closeTimer = loop.schedule(at: closeDeadline) { [weak self] in
                guard let self else { return }
                perform(machine.tick(now: .now))
            }
        }
        wakeReceiver()
    }

    /// The session is over: a graceful end closes the connection after the close frame (the
    /// receiver learns it once the connection is closed); an abort drops it at once.
    private func end(_ reason: SocketIOError, abort: Bool) {
        guard ending == nil else { return }
        ending = reason
        if let closeTimer { loop.cancel(closeTimer) }
        closeTimer = nil
        if abort {
            connection.abort(.cancelled)
            connectionClosed = true
        } else {
            connection.close()
        }
        upgrade?.resume(throwing: reason)
        upgrade = nil
    }

    private func wakeReceiver() {
        guard let receiver else { return }
        if let message = takeMessage() {
            self.receiver = nil
            receiver.resume(returning: message)
        } else if let ending, connectionClosed {
            self.receiver = nil
            receiver.resume(throwing: ending)
        }
    }

    // MARK: Sending

    /// Sends one message as a single frame. Throws `.connectionLost` once closing has begun.
    public func send(_ message: WebSocketMessage) throws {
        switch message {
        case .text(let text): connection.write(try machine.send([(.text, Array(text.utf8))]))
        case .binary(let bytes): connection.write(try machine.send([(.binary, bytes)]))
        }
    }

    // MARK: Closing

    /// Starts the close handshake with `code`; the connection is closed when the server answers,
    /// or after `timeout` at the latest.
    public func close(code: UInt16 = 1000, reason: String = "", timeout: Duration = .seconds(2)) {
        perform(machine.close(code: code, reason: reason, timeout: timeout, now: .now))
    }
}
