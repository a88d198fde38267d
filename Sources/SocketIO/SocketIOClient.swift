import JSONValue
import Network
import Runtime

/// What a Socket.IO client tells its owner, in the order it happened.
public enum SocketIOClientUpdate: Sendable {
    /// The connection's state changed (starting after `idle`).
    case state(SocketIOConnectionState)
    /// An event the server sent (events that arrive before the CONNECT reply included).
    case event(SocketIOEvent)
    /// Everything written up to the mark is proven to have reached the server (by the heartbeat:
    /// `SocketIOConnectionMachine`), whether or not the server acknowledges it.
    case carried(SocketIOWriteMark)
}

/// A Socket.IO client that keeps one connection to one namespace, reconnecting as its policy says.
///
/// A thin shell on the event loop (isolated to `LoopActor`): every decision is
/// `SocketIOClientMachine`'s; this feeds it bytes, timer firings and commands with the current
/// time, and performs what it asks for on a `Network.Connection`.
///
/// State changes and the server's events go to `handler`, on the loop, in order, each as soon as
/// it is decoded: the backend's bytes reach the owner without a task, a queue or a hop. Emits made
/// while disconnected wait in a bounded buffer, or fail at once with `EmitPolicy.fail`.
@LoopActor
public final class SocketIOClient {
    public typealias Handler = @LoopActor (SocketIOClientUpdate) -> Void

    private let loop = EventLoop.shared
    private var machine: SocketIOClientMachine
    private let credentials: @LoopActor () -> SocketIOCredentials
    private let log: @Sendable (SocketIOLogLevel, String) -> Void
    private let handler: Handler
    /// The open connection, and the attempt that opens one.
    private var connection: Connection?
    private var opening: Task<Void, Never>?
    private var timers: [SocketIOClientMachine.Timer: TimerID] = [:]
    /// What to do with each awaited acknowledgement.
    private var acks: [Int: @LoopActor (Result<SocketIOPayload, any Error>) -> Void] = [:]
    /// Callers of `disconnect` and `reconnectNow` waiting for the close handshake.
    private var closingWaiters: [CheckedContinuation<Void, Never>] = []

    /// - Parameters:
    ///   - credentials: called before every connection attempt, so new headers, auth or query
    ///     (e.g. after a login) apply to the next connection.
    ///   - log: called on the event loop.
    ///   - handler: told every state change and server event, on the loop, in order.
    public init(
        configuration: SocketIOConfiguration,
        credentials: @escaping @LoopActor () -> SocketIOCredentials,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void = { _, _ in },
        handler: @escaping Handler
    ) {
        var seed = SystemRandomNumberGenerator()
        machine = SocketIOClientMachine(configuration: configuration, seed: seed.next())
        self.credentials = credentials
        self.log = log
        self.handler = handler
    }

    isolated deinit {
        opening?.cancel()
        for timer in timers.values { loop.cancel(timer) }
        connection?.abort(.cancelled)
        for completion in acks.values { completion(.failure(SocketIOError.disconnectedByClient)) }
        for waiter in closingWaiters { waiter.resume() }
    }

    /// The connection's socket id while connected.
    public var socketId: String? { machine.socketId }

    /// Whether the namespace is connected now.
    public var isConnected: Bool { machine.isConnected }

    /// The state last told.
    public var state: SocketIOConnectionState { machine.state }

    /// Emits dropped from the full offline buffer since the client was created.
    public var droppedEmitCount: Int { machine.droppedEmitCount }

    /// Whether the connection loop runs (connecting, connected or waiting to retry).
    var isRunning: Bool { machine.isRunning }

    /// Acknowledgements still awaited.
    var pendingAckCount: Int { machine.pendingAckCount }

    // MARK: Lifecycle

    /// Starts connecting, and reconnecting after losses. Does nothing when already started.
    public func connect() {
        perform(machine.connect(now: .now))
    }

    /// Leaves the namespace, closes the connection and stops reconnecting. Acks still awaited
    /// fail with `.disconnectedByClient`; buffered emits stay for the next `connect()`.
    public func disconnect() async {
        perform(machine.disconnect(now: .now))
        await closeHandshakeDone()
    }

    /// Drops the current connection (if any, after its close handshake) and connects again at
    /// once, with fresh credentials and a fresh backoff. Also restarts a client that was refused
    /// or disconnected.
    public func reconnectNow() async {
        perform(machine.reconnectNow(now: .now))
        await closeHandshakeDone()
    }

    private func closeHandshakeDone() async {
        // Checked inside the continuation: the handshake may have ended before it runs.
        await withCheckedContinuation { continuation in
            if machine.isClosing {
                closingWaiters.append(continuation)
            } else {
                continuation.resume()
            }
        }
    }

    // MARK: Emitting

    /// Sends an event. While disconnected it is buffered (`.buffer`) or refused with
    /// `.notConnected` (`.fail`). Binary values go in `attachments`, referenced from `args` by
    /// `SocketIOBinary.placeholder(n)`. Returns where it was written (nil: buffered).
    @discardableResult
    public func emit(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], whenDisconnected policy: EmitPolicy = .buffer
    ) throws -> SocketIOWriteMark? {
        perform(try machine.emit(event, args, attachments: attachments, policy: policy, now: .now))
        return machine.lastEmitMark
    }

    /// Sends an event and calls `completion` on the loop with the server's acknowledgement, or
    /// with the failure: `.timeout` after `timeout` (counted from this call, time in the offline
    /// buffer included), `.connectionLost` (the connection ended first), `.emitDropped`. Throws
    /// `.notConnected` (with `.fail`) and what the connection refuses, without calling
    /// `completion`. Returns where it was written (nil: buffered).
    @discardableResult
    public func emitWithAck(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], timeout: Duration,
        whenDisconnected policy: EmitPolicy = .buffer,
        completion: @escaping @LoopActor (Result<SocketIOPayload, SocketIOError>) -> Void
    ) throws(SocketIOError) -> SocketIOWriteMark? {
        try emitWithAck(id: machine.reserveAckId(), event, .values(args), attachments: attachments, timeout: timeout, policy: policy) { result in
            completion(result.mapError { $0 as? SocketIOError ?? .connectionLost("\($0)") })
        }
    }

    /// `emitWithAck(_:_:timeout:whenDisconnected:completion:)` with one argument its caller
    /// encoded as JSON text once (`argument` must be one valid JSON value): it is sent as it is.
    @discardableResult
    public func emitWithAck(
        _ event: String, encodedArgument argument: [UInt8], timeout: Duration, whenDisconnected policy: EmitPolicy = .buffer,
        completion: @escaping @LoopActor (Result<SocketIOPayload, SocketIOError>) -> Void
    ) throws(SocketIOError) -> SocketIOWriteMark? {
        try emitWithAck(id: machine.reserveAckId(), event, .encoded(argument), attachments: [], timeout: timeout, policy: policy) { result in
            completion(result.mapError { $0 as? SocketIOError ?? .connectionLost("\($0)") })
        }
    }

    /// Sends an event and waits for the server's acknowledgement, for at most `timeout` (counted
    /// from this call, time in the offline buffer included). Throws `.timeout`, `.connectionLost`
    /// (the connection ended first), `.emitDropped`, `.notConnected` (with `.fail`), or
    /// `CancellationError` when the calling task is cancelled; in every case the pending ack is removed.
    public func emitWithAck(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], timeout: Duration,
        whenDisconnected policy: EmitPolicy = .buffer
    ) async throws -> SocketIOPayload {
        try Task.checkCancellation()
        let id = machine.reserveAckId()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SocketIOPayload, any Error>) in
                do {
                    try emitWithAck(id: id, event, .values(args), attachments: attachments, timeout: timeout, policy: policy) {
                        continuation.resume(with: $0)
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            // Runs on the cancelling thread; the ack is forgotten on the loop, after the emit.
            EventLoop.shared.execute { [weak self] in self?.cancelAck(id: id) }
        }
    }

    @discardableResult
    private func emitWithAck(
        id: Int, _ event: String, _ args: SocketIOEventArguments, attachments: [[UInt8]], timeout: Duration, policy: EmitPolicy,
        completion: @escaping @LoopActor (Result<SocketIOPayload, any Error>) -> Void
    ) throws(SocketIOError) -> SocketIOWriteMark? {
        let actions = try machine.emitWithAck(id: id, event, args, attachments: attachments, timeout: timeout, policy: policy, now: .now)
        acks[id] = completion
        let mark = machine.lastEmitMark
        perform(actions)
        return mark
    }

    /// Answers a server event that asked for an acknowledgement. Throws `.notConnected` when the
    /// event's connection is gone (the server forgot the ack id with it).
    public func ack(_ token: SocketIOAckToken, _ args: [JSONValue], attachments: [[UInt8]] = []) throws {
        perform(try machine.ack(token, args, attachments: attachments))
    }

    private func cancelAck(id: Int) {
        machine.cancelAck(id: id)
        acks.removeValue(forKey: id)?(.failure(CancellationError()))
    }

    // MARK: Inputs from the loop

    private func handle(_ event: Connection.Event, from source: Connection) {
        guard source === connection else { return }
        switch event {
        case .received(let bytes):
            perform(machine.received(bytes, now: .now))
        case .drained:
            return
        case .closed(let error):
            connection = nil
            perform(machine.transportEnded(error.map(SocketIOError.init), now: .now))
        }
    }

    private func timerFired(_ timer: SocketIOClientMachine.Timer) {
        timers.removeValue(forKey: timer)
        perform(machine.timerFired(timer, now: .now))
    }

    /// An attempt: reads the credentials, opens TCP (and TLS), and reports to the machine.
    private func open(epoch: Int, endpoint: Endpoint) {
        // Unstructured: the attempt runs while the client goes on serving emits, acks and timers;
        // it is the client's one task, kept in `opening` and cancelled by `abortTransport`, and
        // isolated to the loop actor like the client.
        opening = Task { [weak self] in await self?.attempt(epoch: epoch, endpoint: endpoint) }
    }

    private func attempt(epoch: Int, endpoint: Endpoint) async {
        let current = credentials()
        let configuration = machine.configuration
        guard machine.openingEpoch == epoch, !Task.isCancelled else { return }
        do {
            let opened = try await ServerConnection.open(endpoint, tls: configuration.tls, timeout: configuration.connectTimeout, log: log)
            self.opened(opened, epoch: epoch, credentials: current)
        } catch {
            openFailed(epoch: epoch, error: error)
        }
    }

    private func opened(_ opened: Connection, epoch: Int, credentials: SocketIOCredentials) {
        opening = nil
        guard machine.openingEpoch == epoch else {
            opened.abort(.cancelled)
            return
        }
        connection = opened
        let actions = machine.transportOpened(epoch: epoch, credentials: credentials, now: .now)
        // Started after the machine knows the connection (an end reported at once must reach it),
        // before its actions (the connection writes only once started).
        opened.start { [weak self, weak opened] event in
            guard let self, let opened else { return }
            handle(event, from: opened)
        }
        perform(actions)
    }

    private func openFailed(epoch: Int, error: SocketIOError) {
        opening = nil
        perform(machine.transportFailed(epoch: epoch, error: error, now: .now))
    }

    // MARK: Actions

    private func perform(_ actions: [SocketIOClientMachine.Action]) {
        for action in actions {
            switch action {
            case .openTransport(let epoch, let endpoint):
                open(epoch: epoch, endpoint: endpoint)
            case .write(let bytes):
                connection?.write(bytes)
            case .closeTransport:
                // Forgotten first: what the connection still reports is not for the machine.
                let closing = connection
                connection = nil
                closing?.close()
            case .abortTransport:
                opening?.cancel()
                opening = nil
                let aborted = connection
                connection = nil
                aborted?.abort(.cancelled)
            case .deliver(let event):
                handler(.event(event))
            case .carried(let mark):
                handler(.carried(mark))
            case .resolveAck(let id, let payload):
                acks.removeValue(forKey: id)?(.success(payload))
            case .failAck(let id, let error):
                acks.removeValue(forKey: id)?(.failure(error))
            case .publish(let state):
                handler(.state(state))
            case .schedule(let timer, let deadline):
                if let previous = timers[timer] { loop.cancel(previous) }
                timers[timer] = loop.schedule(at: deadline) { [weak self] in self?.timerFired(timer) }
            case .cancel(let timer):
                if let previous = timers.removeValue(forKey: timer) { loop.cancel(previous) }
            case .log(let level, let message):
                log(level, message)
            }
        }
        if !machine.isClosing && !closingWaiters.isEmpty {
            let waiters = closingWaiters
            closingWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }
}
