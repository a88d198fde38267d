import JSONValue

/// A Socket.IO client that keeps one connection to one namespace, reconnecting as its policy says.
///
/// Events and state changes come as asynchronous sequences, each meant for a single consumer.
/// A slow consumer never loses an event: while its backlog of events is large, the client stops
/// reading from the server (`EventFlow`), so memory stays bounded. Emits made while disconnected
/// wait in a bounded buffer, or fail at once with `EmitPolicy.fail`.
public actor SocketIOClient {
    /// Events sent by the server, in order (events that arrive before the CONNECT reply included).
    public nonisolated let events: SocketIOEventStream
    /// Connection state changes, starting after `idle`.
    public nonisolated let states: AsyncStream<SocketIOConnectionState>

    private let configuration: SocketIOConfiguration
    private let credentials: @Sendable () async -> SocketIOCredentials
    private let log: @Sendable (SocketIOLogLevel, String) -> Void
    private let eventsContinuation: AsyncStream<(SocketIOEvent, Int)>.Continuation
    private let flow = EventFlow()
    private let statesContinuation: AsyncStream<SocketIOConnectionState>.Continuation

    private struct Outgoing {
        var packet: SocketIOPacket
        var attachments: [[UInt8]]
    }

    private struct PendingAck {
        var continuation: CheckedContinuation<SocketIOPayload, any Error>
        /// The connection the emit went out on; nil while it waits in the buffer.
        var epoch: Int?
        var timeout: AckTimeout?
    }

    private var session: SocketIOSession?
    private var buffer: [Outgoing] = []
    private var pendingAcks: [Int: PendingAck] = [:]
    private var nextAckId = 0
    private var epochCounter = 0
    private var loopTask: Task<Void, Never>?
    private var lastLoop: Task<Void, Never>?
    private var loopCounter = 0
    private var activeLoop = 0

    /// The state last published on `states`.
    public private(set) var state: SocketIOConnectionState = .idle
    /// Emits dropped from the full offline buffer since the client was created.
    public private(set) var droppedEmitCount = 0

    /// - Parameters:
    ///   - credentials: called before every connection attempt, so new headers, auth or query
    ///     (e.g. after a login) apply to the next connection.
    ///   - log: the only callback; called from any thread.
    public init(
        configuration: SocketIOConfiguration,
        credentials: @escaping @Sendable () async -> SocketIOCredentials,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void = { _, _ in }
    ) {
        self.configuration = configuration
        self.credentials = credentials
        self.log = log
        let (eventStream, eventsContinuation) = AsyncStream<(SocketIOEvent, Int)>.makeStream(bufferingPolicy: .unbounded)
        self.eventsContinuation = eventsContinuation
        events = SocketIOEventStream(base: eventStream, flow: flow)
        (states, statesContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    deinit {
        loopTask?.cancel()
        session?.close()
        eventsContinuation.finish()
        statesContinuation.finish()
        for pending in pendingAcks.values {
            pending.timeout?.disarm()
            pending.continuation.resume(throwing: SocketIOError.disconnectedByClient)
        }
    }

    /// The I/O thread, as a task executor. A task that consumes `events` and does little work per
    /// event can prefer it (`Task(executorPreference: client.ioExecutor) { for await e in
    /// client.events { ... } }`) to get each event on the thread that decoded it, without a thread
    /// switch; it then also slows the reader down to its own pace. Anything slow or blocking in such
    /// a task delays all I/O.
    public nonisolated var ioExecutor: any TaskExecutor { Reactor.shared }

    /// The connection's socket id while connected.
    public var socketId: String? { session?.socketId }

    /// Whether the namespace is connected now.
    public var isConnected: Bool { session != nil }

    /// Whether the connection loop runs (connecting, connected or waiting to retry).
    var isRunning: Bool { loopTask != nil }

    /// Acknowledgements still awaited.
    var pendingAckCount: Int { pendingAcks.count }

    // MARK: Lifecycle

    /// Starts connecting, and reconnecting after losses. Does nothing when already started.
    public func connect() {
        guard loopTask == nil else { return }
        startLoop()
    }

    /// Leaves the namespace, closes the connection and stops reconnecting. Acks still awaited
    /// fail with `.disconnectedByClient`; buffered emits stay for the next `connect()`.
    public func disconnect() async {
        await stopLoop()
        failAcks(where: { $0.epoch != nil }, with: .disconnectedByClient)
        publish(.disconnected(.disconnectedByClient))
    }

    /// Drops the current connection (if any) and connects again at once, with fresh credentials
    /// and a fresh backoff. Also restarts a client that was refused or disconnected.
    public func reconnectNow() async {
        await stopLoop()
        startLoop()
    }

    private func startLoop() {
        loopCounter += 1
        let id = loopCounter
        activeLoop = id
        let previous = lastLoop
        let task = Task {
            await previous?.value
            await self.connectionLoop(id: id)
        }
        loopTask = task
        lastLoop = task
    }

    /// Ends the running loop: a connected session is closed with the close handshake, anything
    /// else is cancelled. Returns when the loop has finished, so no two connections overlap.
    private func stopLoop() async {
        guard let task = loopTask else { return }
        loopTask = nil
        activeLoop = 0
        if let session {
            session.close()
        } else {
            task.cancel()
        }
        await task.value
    }

    private func loopEnded(id: Int) {
        if activeLoop == id {
            activeLoop = 0
            loopTask = nil
        }
    }

    private func connectionLoop(id: Int) async {
        var backoff = ReconnectBackoff<ContinuousClock.Instant>(policy: configuration.reconnect)
        var random = SystemRandomNumberGenerator()
        var attempt = 0
        while activeLoop == id && !Task.isCancelled {
            attempt += 1
            publish(.connecting(attempt: attempt))
            let credentials = await self.credentials()
            guard activeLoop == id, !Task.isCancelled else { break }
            epochCounter += 1
            let epoch = epochCounter
            let failure: SocketIOError
            do {
                let configuration = self.configuration
                let log = self.log
                let (session, early) = try await withTimeout(configuration.connectTimeout, "connecting to \(configuration.url)") {
                    try await SocketIOSession.open(configuration: configuration, credentials: credentials, epoch: epoch, log: log)
                }
                guard activeLoop == id, !Task.isCancelled else {
                    session.close()
                    break
                }
                backoff.connected(at: .now)
                attempt = 0
                self.session = session
                // State changes are published; their owner logs them as it sees fit (debug here).
                log(.debug, "connected to \(configuration.url) as \(session.socketId)")
                publish(.connected(socketId: session.socketId))
                for incoming in early { handle(incoming, epoch: epoch) }
                flushBuffer(into: session)
                let events = eventsContinuation
                let flow = self.flow
                flow.attach { [weak session] paused in session?.setReceivingPaused(paused) }
                let reason = await session.run(
                    onEvent: { event, size in
                        events.yield((event, size))
                        flow.produced(size: size)
                    },
                    onAck: { [weak self] id, payload in await self?.resolveAck(id: id, payload: payload, epoch: epoch) })
                self.session = nil
                flow.attach(nil)
                backoff.disconnected(at: .now)
                failAcks(where: { $0.epoch == epoch }, with: .connectionLost("the connection ended before the ack: \(reason)"))
                guard activeLoop == id, !Task.isCancelled else { break }
                if reason == .disconnectedByServer {
                    log(.info, "the server disconnected the client")
                    publish(.disconnected(.disconnectedByServer))
                    loopEnded(id: id)
                    return
                }
                failure = reason
            } catch let error as SocketIOError {
                switch error {
                case .connectionRefused:
                    log(.debug, "\(error)")
                    publish(.refused(error))
                    loopEnded(id: id)
                    return
                case .invalidURL:
                    log(.error, "\(error)")
                    publish(.disconnected(error))
                    loopEnded(id: id)
                    return
                default:
                    failure = error
                }
            } catch {
                guard !(error is CancellationError) else { break }
                failure = .connectionLost("\(error)")
            }
            guard activeLoop == id, !Task.isCancelled else { break }
            guard configuration.reconnect.enabled else {
                log(.warning, "connection ended: \(failure); reconnection is disabled")
                publish(.disconnected(failure))
                loopEnded(id: id)
                return
            }
            let delay = backoff.nextDelay(using: &random)
            log(.debug, "connection failed: \(failure); attempt \(attempt + 1) in \(delay.milliseconds) ms")
            publish(.reconnecting(attempt: attempt + 1, retryIn: delay, error: failure))
            do {
                try await Task.sleep(for: delay)
            } catch {
                break
            }
        }
        loopEnded(id: id)
    }

    private func publish(_ newState: SocketIOConnectionState) {
        state = newState
        statesContinuation.yield(newState)
    }

    private func handle(_ incoming: SocketIOSession.Incoming, epoch: Int) {
        switch incoming {
        case .event(let event):
            // Early events (before the CONNECT reply) are few and small (`EarlyPackets`).
            eventsContinuation.yield((event, 0))
            flow.produced(size: 0)
        case .ack(let id, let payload): resolveAck(id: id, payload: payload, epoch: epoch)
        }
    }

    // MARK: Emitting

    /// Sends an event. While disconnected it is buffered (`.buffer`) or refused with
    /// `.notConnected` (`.fail`). Binary values go in `attachments`, referenced from `args` by
    /// `SocketIOBinary.placeholder(n)`.
    public func emit(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], whenDisconnected policy: EmitPolicy = .buffer
    ) throws {
        try submit(eventPacket(event, args, attachments: attachments, id: nil), policy: policy)
    }

    /// Sends an event and waits for the server's acknowledgement, for at most `timeout` (counted
    /// from this call, time in the offline buffer included). Throws `.timeout`, `.connectionLost`
    /// (the connection ended first), `.emitDropped`, `.notConnected` (with `.fail`), or
    /// `CancellationError` when the calling task is cancelled; in every case the pending ack is removed.
    public func emitWithAck(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], timeout: Duration,
        whenDisconnected policy: EmitPolicy = .buffer
    ) async throws -> SocketIOPayload {
        let id = nextAckId
        nextAckId = nextAckId >= Int(Int32.max) ? 0 : nextAckId + 1
        let outgoing = eventPacket(event, args, attachments: attachments, id: id)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SocketIOPayload, any Error>) in
                pendingAcks[id] = PendingAck(continuation: continuation, epoch: nil, timeout: nil)
                do {
                    try submit(outgoing, policy: policy)
                } catch {
                    pendingAcks.removeValue(forKey: id)?.continuation.resume(throwing: error)
                    return
                }
                guard pendingAcks[id] != nil else { return }
                let timer = AckTimeout()
                pendingAcks[id]?.timeout = timer
                Reactor.shared.schedule(after: timeout) { [weak self] in
                    guard timer.isArmed, let self else { return }
                    Task(executorPreference: Reactor.shared) {
                        await self.failAck(id: id, with: .timeout("no ack for \(event) within \(timeout.milliseconds) ms"))
                    }
                }
            }
        } onCancel: {
            Task { await self.failAck(id: id, with: nil) }
        }
    }

    /// Answers a server event that asked for an acknowledgement. Throws `.notConnected` when the
    /// event's connection is gone (the server forgot the ack id with it).
    public func ack(_ token: SocketIOAckToken, _ args: [JSONValue], attachments: [[UInt8]] = []) throws {
        guard let session, session.epoch == token.epoch else { throw SocketIOError.notConnected }
        var packet = SocketIOPacket(type: attachments.isEmpty ? .ack : .binaryAck, namespace: session.namespace, id: token.id, data: .array(args))
        packet.attachmentCount = attachments.count
        try session.send(packet, attachments: attachments)
    }

    private func eventPacket(_ event: String, _ args: [JSONValue], attachments: [[UInt8]], id: Int?) -> Outgoing {
        var packet = SocketIOPacket(
            type: attachments.isEmpty ? .event : .binaryEvent, namespace: configuration.namespace.isEmpty ? "/" : configuration.namespace,
            id: id, data: .array([.string(event)] + args))
        packet.attachmentCount = attachments.count
        return Outgoing(packet: packet, attachments: attachments)
    }

    private func submit(_ outgoing: Outgoing, policy: EmitPolicy) throws {
        if let session {
            do {
                try session.send(outgoing.packet, attachments: outgoing.attachments)
                if let id = outgoing.packet.id { pendingAcks[id]?.epoch = session.epoch }
                return
            } catch SocketIOError.connectionLost {
                // The connection is going down: treat the emit as made while disconnected.
            }
        }
        guard policy == .buffer else { throw SocketIOError.notConnected }
        buffer.append(outgoing)
        while buffer.count > max(0, configuration.emitBufferLimit) {
            let dropped = buffer.removeFirst()
            droppedEmitCount += 1
            log(.warning, "offline buffer full: dropped an emit (\(droppedEmitCount) so far)")
            if let id = dropped.packet.id { failAck(id: id, with: .emitDropped) }
        }
    }

    private func flushBuffer(into session: SocketIOSession) {
        while !buffer.isEmpty {
            let outgoing = buffer[0]
            do {
                try session.send(outgoing.packet, attachments: outgoing.attachments)
            } catch SocketIOError.connectionLost {
                return
            } catch {
                log(.error, "dropped a buffered emit: \(error)")
                if let id = outgoing.packet.id { failAck(id: id, with: error as? SocketIOError ?? .connectionLost("\(error)")) }
                buffer.removeFirst()
                continue
            }
            buffer.removeFirst()
            if let id = outgoing.packet.id { pendingAcks[id]?.epoch = session.epoch }
        }
    }

    // MARK: Acknowledgements

    private func resolveAck(id: Int, payload: SocketIOPayload, epoch: Int) {
        guard let pending = pendingAcks[id], pending.epoch == epoch else {
            log(.debug, "ignored an ack for unknown id \(id)")
            return
        }
        pendingAcks.removeValue(forKey: id)
        pending.timeout?.disarm()
        pending.continuation.resume(returning: payload)
    }

    /// Removes a pending ack (and its buffered emit); `error` nil means cancelled.
    private func failAck(id: Int, with error: SocketIOError?) {
        guard let pending = pendingAcks.removeValue(forKey: id) else { return }
        pending.timeout?.disarm()
        buffer.removeAll { $0.packet.id == id }
        if let error {
            pending.continuation.resume(throwing: error)
        } else {
            pending.continuation.resume(throwing: CancellationError())
        }
    }

    private func failAcks(where predicate: (PendingAck) -> Bool, with error: SocketIOError) {
        for (id, pending) in pendingAcks where predicate(pending) {
            failAck(id: id, with: error)
        }
    }
}

/// The timeout of one pending ack, run by a reactor timer: settling the ack first disarms it, so
/// an ack that arrives in time wakes nothing and leaves no sleeping task behind.
private final class AckTimeout: Sendable {
    private let disarmed = Locked(false)

    var isArmed: Bool { !disarmed.withLock { $0 } }

    func disarm() { disarmed.withLock { $0 = true } }
}
