import JSONValue
import Network
import Runtime

/// A Socket.IO client that keeps one connection to one namespace, reconnecting as its policy says.
///
/// A thin shell on the process's event loop: every decision is `SocketIOClientMachine`'s; this
/// actor feeds it bytes, timer firings and commands with the current time, and performs what it
/// asks for on a `Network.Connection`.
///
/// Events and state changes come as asynchronous sequences, each meant for a single consumer.
/// A slow consumer never loses an event: while its backlog of events is large, the client stops
/// reading from the server, so memory stays bounded. Emits made while disconnected wait in a
/// bounded buffer, or fail at once with `EmitPolicy.fail`.
public actor SocketIOClient {
    /// Events sent by the server, in order (events that arrive before the CONNECT reply included).
    public nonisolated let events: SocketIOEventStream
    /// Connection state changes, starting after `idle`.
    public nonisolated let states: AsyncStream<SocketIOConnectionState>

    public nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    private let loop = EventLoop.shared
    private var machine: SocketIOClientMachine
    private let credentials: @Sendable () async -> SocketIOCredentials
    private let log: @Sendable (SocketIOLogLevel, String) -> Void
    private let eventsMailbox: Mailbox<(SocketIOEvent, Int)>
    private let statesContinuation: AsyncStream<SocketIOConnectionState>.Continuation
    private let consumption = EventConsumption()
    /// The open connection, and the attempt that opens one.
    private var connection: Connection?
    private var opening: Task<Void, Never>?
    private var timers: [SocketIOClientMachine.Timer: TimerID] = [:]
    private var acks: [Int: CheckedContinuation<SocketIOPayload, any Error>] = [:]
    /// Callers of `disconnect` and `reconnectNow` waiting for the close handshake.
    private var closingWaiters: [CheckedContinuation<Void, Never>] = []

    /// - Parameters:
    ///   - credentials: called before every connection attempt, so new headers, auth or query
    ///     (e.g. after a login) apply to the next connection.
    ///   - log: the only callback; called on the event loop.
    public init(
        configuration: SocketIOConfiguration,
        credentials: @escaping @Sendable () async -> SocketIOCredentials,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void = { _, _ in }
    ) {
        var seed = SystemRandomNumberGenerator()
        machine = SocketIOClientMachine(configuration: configuration, seed: seed.next())
        self.credentials = credentials
        self.log = log
        let eventsMailbox = Mailbox<(SocketIOEvent, Int)>()
        self.eventsMailbox = eventsMailbox
        events = SocketIOEventStream(base: eventsMailbox, consumption: consumption)
        (states, statesContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        consumption.attach(self)
    }

    /// From any thread: takes the consumer's tally into the machine, on the loop.
    nonisolated func scheduleConsumptionDrain() {
        loop.execute { [weak self] in self?.assumeIsolated { $0.drainConsumption() } }
    }

    deinit {
        opening?.cancel()
        for timer in timers.values { loop.cancel(timer) }
        if let connection { loop.execute { connection.abort(.cancelled) } }
        eventsMailbox.finish()
        statesContinuation.finish()
        for continuation in acks.values { continuation.resume(throwing: SocketIOError.disconnectedByClient) }
        for waiter in closingWaiters { waiter.resume() }
    }

    /// The event loop, as a task executor: a task that consumes `events` can prefer it to get
    /// each event on the thread that decoded it. Anything slow or blocking there delays all I/O.
    public nonisolated var ioExecutor: any TaskExecutor { EventLoop.shared.taskExecutor }

    /// The connection's socket id while connected.
    public var socketId: String? { machine.socketId }

    /// Whether the namespace is connected now.
    public var isConnected: Bool { machine.isConnected }

    /// The state last published on `states`.
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
    /// `SocketIOBinary.placeholder(n)`.
    public func emit(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], whenDisconnected policy: EmitPolicy = .buffer
    ) throws {
        perform(try machine.emit(event, args, attachments: attachments, policy: policy, now: .now))
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
                    let actions = try machine.emitWithAck(
                        id: id, event, args, attachments: attachments, timeout: timeout, policy: policy, now: .now)
                    acks[id] = continuation
                    perform(actions)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            // Runs on the cancelling thread; the ack is forgotten on the loop, after the emit.
            loop.execute { [weak self] in self?.assumeIsolated { $0.cancelAck(id: id) } }
        }
    }

    /// Answers a server event that asked for an acknowledgement. Throws `.notConnected` when the
    /// event's connection is gone (the server forgot the ack id with it).
    public func ack(_ token: SocketIOAckToken, _ args: [JSONValue], attachments: [[UInt8]] = []) throws {
        perform(try machine.ack(token, args, attachments: attachments))
    }

    private func cancelAck(id: Int) {
        perform(machine.cancelAck(id: id))
        acks.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    // MARK: Inputs from the loop

    private func drainConsumption() {
        let (count, bytes) = consumption.take()
        guard count > 0 else { return }
        perform(machine.consumed(count: count, bytes: bytes))
        if machine.isReadingPaused { consumption.wake(at: machine.consumptionToResume) }
    }

    private func handle(_ event: Connection.Event, from source: Connection) {
        guard source === connection else { return }
        switch event {
        case .received(let bytes):
            drainConsumption()
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
        // Unstructured: the attempt runs while the actor goes on serving emits, acks and timers;
        // it is the client's one task, kept in `opening` and cancelled by `abortTransport`. It
        // prefers the loop, so that its nonisolated steps do not wake the cooperative pool.
        opening = Task(executorPreference: ioExecutor) { await self.attempt(epoch: epoch, endpoint: endpoint) }
    }

    private func attempt(epoch: Int, endpoint: Endpoint) async {
        let current = await credentials()
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
        drainConsumption()  // a backlog consumed while disconnected must not pause the new connection
        let actions = machine.transportOpened(epoch: epoch, credentials: credentials, now: .now)
        // Started after the machine knows the connection (an end reported at once must reach it),
        // before its actions (the connection writes only once started).
        opened.start { [weak self, weak opened] event in
            guard let self, let opened else { return }
            self.assumeIsolated { $0.handle(event, from: opened) }
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
            case .setReading(let on):
                consumption.wake(at: machine.consumptionToResume)
                connection?.setReading(on)
            case .deliver(let event, let size):
                eventsMailbox.send((event, size))
            case .resolveAck(let id, let payload):
                acks.removeValue(forKey: id)?.resume(returning: payload)
            case .failAck(let id, let error):
                acks.removeValue(forKey: id)?.resume(throwing: error)
            case .publish(let state):
                statesContinuation.yield(state)
            case .schedule(let timer, let deadline):
                if let previous = timers[timer] { loop.cancel(previous) }
                timers[timer] = loop.schedule(at: deadline) { [weak self] in
                    self?.assumeIsolated { $0.timerFired(timer) }
                }
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
