import JSONValue
import Runtime

/// Everything `SocketIOClient` decides, as a value with no I/O (swift-cluster-membership's
/// `SWIM.Instance` is the model): commands, bytes, transport results and timer firings go in
/// with the current time; actions for the shell come out.
///
/// It runs the connection attempts and the reconnection schedule (`ReconnectBackoff`), one
/// `SocketIOConnectionMachine` at a time, the acknowledgements awaited (with their timeouts),
/// and the bounded offline buffer of emits. Events are handed to the shell as they are decoded;
/// its consumer takes each at once (on the loop), so no backlog of events builds up here.
struct SocketIOClientMachine {
    /// The timers the machine asks the shell to run; scheduling one again replaces it.
    enum Timer: Hashable, Sendable {
        /// The limit of the current connection attempt (`connectTimeout`).
        case attempt
        /// The connection's heartbeat and close handshake (`SocketIOConnectionMachine.nextDeadline`).
        case connection
        /// The next reconnection attempt.
        case retry
        /// The limits of the awaited acknowledgements (one timer for all of them: `acksTimer`).
        case acks
    }

    indirect enum Action: Equatable {
        /// Open a TCP (TLS when `endpoint.secure`) connection to `endpoint` and report it with
        /// `transportOpened` or `transportFailed`, with the credentials read for this attempt.
        case openTransport(epoch: Int, endpoint: Endpoint)
        case write([UInt8])
        /// Write what is queued, then close the connection.
        case closeTransport
        /// Drop the connection (or the attempt to open one) at once.
        case abortTransport(SocketIOError)
        /// Hand an event to the consumer.
        case deliver(SocketIOEvent)
        /// Everything written up to the mark has reached the server.
        case carried(SocketIOWriteMark)
        case resolveAck(id: Int, payload: SocketIOPayload)
        case failAck(id: Int, error: SocketIOError)
        case publish(SocketIOConnectionState)
        case schedule(Timer, at: ContinuousClock.Instant)
        case cancel(Timer)
        case log(SocketIOLogLevel, String)
    }

    private struct Outgoing {
        var packet: SocketIOPacket
        var attachments: [[UInt8]]
    }

    private struct PendingAck {
        var event: String
        var timeout: Duration
        var deadline: ContinuousClock.Instant
        /// The connection the emit went out on; nil while it waits in the buffer.
        var epoch: Int?
    }

    private enum Lifecycle {
        /// Not started, or stopped (refused, disconnected, reconnection disabled).
        case idle
        /// The shell opens the transport for `epoch`.
        case opening(epoch: Int)
        /// The transport is open; the handshakes run.
        case handshaking
        case connected
        /// This side closes the connection; then stops, or starts over (`reconnectNow`).
        case closing(restart: Bool)
        /// The next attempt starts at `at`.
        case waiting(at: ContinuousClock.Instant)
    }

    let configuration: SocketIOConfiguration
    private var lifecycle = Lifecycle.idle
    /// The connection while handshaking, connected or closing (kept apart from `lifecycle` so
    /// that it is mutated in place, its buffers never copied).
    private var connection: SocketIOConnectionMachine?
    private var backoff: ReconnectBackoff<ContinuousClock.Instant>
    private var random: SplitMix64
    /// Attempts since the last connection (1 for the first).
    private var attempt = 0
    private var epochCounter = 0
    private var attemptDeadline: ContinuousClock.Instant?
    /// `connect` was called while `disconnect` closed the connection.
    private var connectAfterStop = false
    /// The deadline the `.connection` timer is set for.
    private var connectionTimer: ContinuousClock.Instant?
    private var buffer: [Outgoing] = []
    private var pendingAcks: [Int: PendingAck] = [:]
    /// When the `.acks` timer fires: no later than the earliest limit of an awaited ack when it was
    /// set, and not moved when acks are answered (an ack answered at once costs no timer). Firing,
    /// it fails the acks past their limit and is set for the earliest left, `ackCheckInterval` on
    /// at least.
    private var acksTimer: ContinuousClock.Instant?
    /// The awaited acks' ids in emit order from `ackOrderStart` on, the oldest first (ids no
    /// longer awaited are skipped, and compacted away once they are the most).
    private var ackOrder: [Int] = []
    private var ackOrderStart = 0
    private var nextAckId = 0

    /// Where the last emit submitted was written; nil when it went to the offline buffer.
    private(set) var lastEmitMark: SocketIOWriteMark?

    /// The least time between two checks of the awaited acks' limits: an ack fails at most this
    /// long after its limit, and a server that answers none costs a check this often at most.
    static let ackCheckInterval: Duration = .milliseconds(100)

    /// The state last published.
    private(set) var state: SocketIOConnectionState = .idle
    /// Emits dropped from the full offline buffer.
    private(set) var droppedEmitCount = 0

    /// - Parameter seed: seeds the backoff's jitter and the WebSocket keys and masks.
    init(configuration: SocketIOConfiguration, seed: UInt64) {
        self.configuration = configuration
        backoff = ReconnectBackoff(policy: configuration.reconnect)
        random = SplitMix64(seed: seed)
    }

    // MARK: Queries

    /// Whether attempts run (connecting, connected, closing or waiting to retry).
    var isRunning: Bool {
        if case .idle = lifecycle { return false }
        return true
    }

    /// Whether this side is closing the connection (`disconnect`, `reconnectNow`).
    var isClosing: Bool {
        if case .closing = lifecycle { return true }
        return false
    }

    var socketId: String? {
        if case .connected = lifecycle { return connection?.socketId }
        return nil
    }

    var isConnected: Bool { socketId != nil }

    var pendingAckCount: Int { pendingAcks.count }

    /// The epoch whose transport the shell should be opening now, nil when none is wanted.
    var openingEpoch: Int? {
        if case .opening(let epoch) = lifecycle { return epoch }
        return nil
    }

    // MARK: Lifecycle commands

    /// Starts connecting (with a fresh backoff); does nothing when already running.
    /// During `disconnect`'s close handshake it starts once the client stopped.
    mutating func connect(now: ContinuousClock.Instant) -> [Action] {
        if case .closing(restart: false) = lifecycle {
            connectAfterStop = true
            return []
        }
        guard !isRunning else { return [] }
        backoff = ReconnectBackoff(policy: configuration.reconnect)
        attempt = 0
        return startAttempt(now: now)
    }

    /// Leaves the namespace, closes the connection and stops. The shell waits while `isClosing`.
    mutating func disconnect(now: ContinuousClock.Instant) -> [Action] {
        connectAfterStop = false
        return leave(restart: false, now: now) ?? stopAttempts() + stopped()
    }

    /// Drops the current connection (after its close handshake) and connects again at once, with
    /// fresh credentials and a fresh backoff.
    mutating func reconnectNow(now: ContinuousClock.Instant) -> [Action] {
        if let actions = leave(restart: true, now: now) { return actions }
        let actions = stopAttempts()
        return actions + connect(now: now)
    }

    /// Closes the connection, then stops or starts over (`restart`); nil when there is none.
    private mutating func leave(restart: Bool, now: ContinuousClock.Instant) -> [Action]? {
        if restart { connectAfterStop = false }
        switch lifecycle {
        case .connected, .handshaking:
            lifecycle = .closing(restart: restart)
            let actions = connection?.close(now: now) ?? []
            return [.cancel(.attempt)] + perform(actions, now: now)
        case .closing:
            lifecycle = .closing(restart: restart)
            return []
        case .opening, .waiting, .idle:
            return nil
        }
    }

    private mutating func stopAttempts() -> [Action] {
        var actions: [Action] = [.cancel(.attempt), .cancel(.retry), .cancel(.connection)]
        attemptDeadline = nil
        connectionTimer = nil
        if case .opening = lifecycle { actions.append(.abortTransport(.disconnectedByClient)) }
        lifecycle = .idle
        return actions
    }

    /// Stopped by `disconnect`: acks sent on a connection fail; buffered emits stay.
    private mutating func stopped() -> [Action] {
        var actions: [Action] = []
        for id in pendingAcks.keys.sorted() where pendingAcks[id]?.epoch != nil {
            actions += failAck(id: id, with: .disconnectedByClient)
        }
        return actions + publish(.disconnected(.disconnectedByClient))
    }

    private mutating func startAttempt(now: ContinuousClock.Instant) -> [Action] {
        attempt += 1
        epochCounter += 1
        var actions = publish(.connecting(attempt: attempt))
        let endpoint: Endpoint
        do throws(SocketIOError) {
            endpoint = try Endpoint(parsing: configuration.url)
            guard endpoint.path == "/" else {
                throw .invalidURL("\(configuration.url): give the server origin only; the path is configured separately")
            }
        } catch {
            lifecycle = .idle
            return actions + [.log(.error, "\(error)")] + publish(.disconnected(error))
        }
        lifecycle = .opening(epoch: epochCounter)
        let deadline = now + configuration.connectTimeout
        attemptDeadline = deadline
        actions += [.schedule(.attempt, at: deadline), .openTransport(epoch: epochCounter, endpoint: endpoint)]
        return actions
    }

    // MARK: Transport results

    /// The shell opened the transport of `epoch` (after reading `credentials`).
    mutating func transportOpened(epoch: Int, credentials: SocketIOCredentials, now: ContinuousClock.Instant) -> [Action] {
        guard case .opening(let current) = lifecycle, current == epoch else { return [.abortTransport(.disconnectedByClient)] }
        let version: EngineIOVersion = configuration.protocolVersion == .v4 ? .v4 : .v3
        let connection = SocketIOConnectionMachine(
            namespace: configuration.namespace, version: version, auth: version == .v4 ? credentials.auth : nil, epoch: epoch,
            maxMessageBytes: configuration.maxMessageBytes, seed: random.next(), now: now)
        let request: [UInt8]
        do throws(SocketIOError) {
            // The endpoint was checked when the attempt started.
            let origin = try Endpoint(parsing: configuration.url)
            request = try connection.upgradeRequest(
                origin: origin, path: configuration.path, query: Self.query(credentials, version: version),
                headers: credentials.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        } catch {
            return [.abortTransport(error)] + attemptFailed(error, now: now)
        }
        lifecycle = .handshaking
        self.connection = connection
        return [.write(request)]
    }

    /// The shell could not open the transport of `epoch`.
    mutating func transportFailed(epoch: Int, error: SocketIOError, now: ContinuousClock.Instant) -> [Action] {
        guard case .opening(let current) = lifecycle, current == epoch else { return [] }
        return attemptFailed(error, now: now)
    }

    /// Bytes from the server.
    mutating func received(_ bytes: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        guard let actions = connection?.receive(bytes, now: now) else { return [] }
        return perform(actions, now: now)
    }

    /// The connection's byte stream ended (`error` nil: the server closed it).
    mutating func transportEnded(_ error: SocketIOError?, now: ContinuousClock.Instant) -> [Action] {
        guard let actions = connection?.connectionEnded(error) else { return [] }
        return perform(actions, now: now)
    }

    /// A timer the machine scheduled fired (possibly after it was cancelled or replaced).
    mutating func timerFired(_ timer: Timer, now: ContinuousClock.Instant) -> [Action] {
        switch timer {
        case .attempt:
            guard let deadline = attemptDeadline, now >= deadline else { return [] }
            switch lifecycle {
            case .opening, .handshaking:
                attemptDeadline = nil
                let error = SocketIOError.timeout("connecting to \(configuration.url)")
                return [.abortTransport(error)] + attemptFailed(error, now: now)
            case .idle, .connected, .closing, .waiting:
                return []
            }
        case .connection:
            connectionTimer = nil
            guard let actions = connection?.tick(now: now) else { return [] }
            return perform(actions, now: now)
        case .retry:
            guard case .waiting(let at) = lifecycle, now >= at else { return [] }
            return startAttempt(now: now)
        case .acks:
            return checkAckLimits(now: now)
        }
    }

    /// Performs what the connection asked for, and keeps its timer.
    private mutating func perform(_ actions: [SocketIOConnectionMachine.Action], now: ContinuousClock.Instant) -> [Action] {
        var out: [Action] = []
        for action in actions {
            switch action {
            case .write(let bytes):
                out.append(.write(bytes))
            case .log(let level, let message):
                out.append(.log(level, message))
            case .connected(let socketId, let early):
                out += connected(socketId: socketId, early: early, now: now)
            case .event(let event):
                out.append(.deliver(event))
            case .ack(let id, let payload):
                out += resolveAck(id: id, payload: payload)
            case .carried(let sequence):
                if let epoch = connection?.epoch { out.append(.carried(SocketIOWriteMark(connection: epoch, sequence: sequence))) }
            case .ended(let reason, let abort):
                out.append(abort ? .abortTransport(reason) : .closeTransport)
                out += connectionEnded(reason, now: now)
            }
        }
        if let deadline = connection?.deadlineInPlace() {
            if connectionTimer.map({ deadline < $0 }) ?? true {
                connectionTimer = deadline
                out.append(.schedule(.connection, at: deadline))
            }
        } else if connectionTimer != nil {
            connectionTimer = nil
            out.append(.cancel(.connection))
        }
        return out
    }

    private mutating func connected(socketId: String, early: [SocketIOConnectionMachine.Incoming], now: ContinuousClock.Instant) -> [Action] {
        guard case .handshaking = lifecycle else { return [] }
        lifecycle = .connected
        attemptDeadline = nil
        backoff.connected(at: now)
        attempt = 0
        // State changes are published; their owner logs them as it sees fit (debug here).
        var actions: [Action] = [.cancel(.attempt), .log(.debug, "connected to \(configuration.url) as \(socketId)")]
        actions += publish(.connected(socketId: socketId))
        for incoming in early {
            switch incoming {
            // Early events (before the CONNECT reply) are few and small (`EarlyPackets`).
            case .event(let event): actions.append(.deliver(event))
            case .ack(let id, let payload): actions += resolveAck(id: id, payload: payload)
            }
        }
        return actions + flushBuffer()
    }

    /// The connection ended for `reason`.
    private mutating func connectionEnded(_ reason: SocketIOError, now: ContinuousClock.Instant) -> [Action] {
        let epoch = connection?.epoch
        let previous = lifecycle
        lifecycle = .idle
        connection = nil
        var actions: [Action] = [.cancel(.connection)]
        connectionTimer = nil
        switch previous {
        case .closing(let restart):
            guard restart else {
                actions += stopped()
                guard connectAfterStop else { return actions }
                connectAfterStop = false
                return actions + connect(now: now)
            }
            actions += failAcks(epoch: epoch, with: .connectionLost("the connection ended before the ack: \(reason)"))
            return actions + connect(now: now)
        case .connected:
            backoff.disconnected(at: now)
            actions += failAcks(epoch: epoch, with: .connectionLost("the connection ended before the ack: \(reason)"))
            if reason == .disconnectedByServer {
                guard let floor = configuration.reconnectAfterServerDisconnect, configuration.reconnect.enabled else {
                    actions.append(.log(.info, "the server disconnected the client"))
                    return actions + publish(.disconnected(.disconnectedByServer))
                }
                actions.append(.log(.info, "the server disconnected the client; connecting again after at least \(floor.milliseconds) ms"))
                return actions + retryOrStop(after: reason, now: now, atLeast: floor)
            }
            return actions + retryOrStop(after: reason, now: now)
        case .handshaking:
            return actions + attemptFailed(reason, now: now)
        case .idle, .opening, .waiting:
            return actions
        }
    }

    private mutating func attemptFailed(_ error: SocketIOError, now: ContinuousClock.Instant) -> [Action] {
        lifecycle = .idle
        attemptDeadline = nil
        var actions: [Action] = [.cancel(.attempt)]
        switch error {
        case .connectionRefused:
            actions.append(.log(.debug, "\(error)"))
            return actions + publish(.refused(error))
        case .invalidURL:
            actions.append(.log(.error, "\(error)"))
            return actions + publish(.disconnected(error))
        default:
            return actions + retryOrStop(after: error, now: now)
        }
    }

    /// Schedules the next attempt after the backoff's delay (or `floor` plus up to as much
    /// again, or up to the backoff's ceiling if larger), or stops when reconnection is disabled.
    private mutating func retryOrStop(after failure: SocketIOError, now: ContinuousClock.Instant, atLeast floor: Duration? = nil) -> [Action] {
        guard configuration.reconnect.enabled else {
            lifecycle = .idle
            return [.log(.warning, "connection ended: \(failure); reconnection is disabled")] + publish(.disconnected(failure))
        }
        let delay = floor.map { backoff.nextDelay(atLeast: $0, using: &random) } ?? backoff.nextDelay(using: &random)
        lifecycle = .waiting(at: now + delay)
        return [.log(.debug, "connection failed: \(failure); attempt \(attempt + 1) in \(delay.milliseconds) ms")]
            + publish(.reconnecting(attempt: attempt + 1, retryIn: delay, error: failure))
            + [.schedule(.retry, at: now + delay)]
    }

    private mutating func publish(_ newState: SocketIOConnectionState) -> [Action] {
        state = newState
        return [.publish(newState)]
    }

    // MARK: Emitting

    /// Sends an event, or buffers it while disconnected (`.buffer`); throws `.notConnected` with
    /// `.fail`, and what the connection refuses (`.payloadTooLarge`).
    mutating func emit(_ event: String, _ args: [JSONValue], attachments: [[UInt8]], policy: EmitPolicy, now: ContinuousClock.Instant) throws(SocketIOError) -> [Action] {
        try submit(eventPacket(event, .values(args), attachments: attachments, id: nil), policy: policy).actions
    }

    /// The id of the next `emitWithAck` (ids wrap at Int32.max, as Socket.IO servers expect).
    mutating func reserveAckId() -> Int {
        let id = nextAckId
        nextAckId = nextAckId >= Int(Int32.max) ? 0 : nextAckId + 1
        return id
    }

    /// Like `emit`, awaiting the acknowledgement `id` (from `reserveAckId`) for at most `timeout`
    /// from `now` (time in the buffer included); `resolveAck` or `failAck` name it later.
    mutating func emitWithAck(
        id: Int, _ event: String, _ args: SocketIOEventArguments, attachments: [[UInt8]], timeout: Duration, policy: EmitPolicy,
        now: ContinuousClock.Instant
    ) throws(SocketIOError) -> [Action] {
        let deadline = now + timeout
        pendingAcks[id] = PendingAck(event: event, timeout: timeout, deadline: deadline, epoch: nil)
        noteAwaited(id)
        do {
            var (actions, sentOn) = try submit(eventPacket(event, args, attachments: attachments, id: id), policy: policy)
            // Gone when the offline buffer dropped it at once (its failure is in `actions`).
            guard pendingAcks[id] != nil else { return actions }
            if let sentOn { pendingAcks[id] = PendingAck(event: event, timeout: timeout, deadline: deadline, epoch: sentOn) }
            if acksTimer.map({ deadline < $0 }) ?? true {
                acksTimer = deadline
                actions.append(.schedule(.acks, at: deadline))
            }
            actions += abandonOldestAcksOverLimit(keeping: id)
            return actions
        } catch {
            pendingAcks.removeValue(forKey: id)
            throw error
        }
    }

    /// Forgets an awaited ack (its caller was cancelled) and its buffered emit.
    mutating func cancelAck(id: Int) {
        guard pendingAcks.removeValue(forKey: id) != nil else { return }
        buffer.removeAll { $0.packet.id == id }
    }

    /// Answers a server event that asked for an acknowledgement. Throws `.notConnected` when the
    /// event's connection is gone (the server forgot the ack id with it).
    mutating func ack(_ token: SocketIOAckToken, _ args: [JSONValue], attachments: [[UInt8]]) throws(SocketIOError) -> [Action] {
        guard case .connected = lifecycle, let namespace = connection?.namespace, connection?.epoch == token.epoch else { throw .notConnected }
        var packet = SocketIOPacket(type: attachments.isEmpty ? .ack : .binaryAck, namespace: namespace, id: token.id, data: .array(args))
        packet.attachmentCount = attachments.count
        guard let bytes = try connection?.send(packet, attachments: attachments) else { throw .notConnected }
        return [.write(bytes)]
    }

    private func eventPacket(_ event: String, _ args: SocketIOEventArguments, attachments: [[UInt8]], id: Int?) -> Outgoing {
        var packet = SocketIOPacket(
            type: attachments.isEmpty ? .event : .binaryEvent, namespace: configuration.namespace.isEmpty ? "/" : configuration.namespace,
            id: id)
        switch args {
        case .values(let values):
            packet.data = .array([.string(event)] + values)
        case .encoded(let argument):
            var text: [UInt8] = [UInt8(ascii: "[")]
            text.reserveCapacity(argument.count + event.utf8.count + 8)
            JSONValue.writeString(event, to: &text)
            text.append(UInt8(ascii: ","))
            text.append(contentsOf: argument)
            text.append(UInt8(ascii: "]"))
            packet.encodedData = text
        }
        packet.attachmentCount = attachments.count
        return Outgoing(packet: packet, attachments: attachments)
    }

    /// Sends `outgoing` on the connection, or buffers it (`policy`); `sentOn` is the connection's
    /// epoch when it went out (the caller records it for an awaited ack: no second lookup here).
    private mutating func submit(_ outgoing: Outgoing, policy: EmitPolicy) throws(SocketIOError) -> (actions: [Action], sentOn: Int?) {
        lastEmitMark = nil
        if case .connected = lifecycle, let epoch = connection?.epoch {
            do {
                if let bytes = try connection?.send(outgoing.packet, attachments: outgoing.attachments), let sent = connection?.sentPackets {
                    lastEmitMark = SocketIOWriteMark(connection: epoch, sequence: sent)
                    return ([.write(bytes)], epoch)
                }
            } catch .connectionLost {
                // The connection is going down: treat the emit as made while disconnected.
            }
        }
        guard policy == .buffer else { throw .notConnected }
        buffer.append(outgoing)
        var actions: [Action] = []
        while buffer.count > max(0, configuration.emitBufferLimit) {
            let dropped = buffer.removeFirst()
            droppedEmitCount += 1
            actions.append(.log(.warning, "offline buffer full: dropped an emit (\(droppedEmitCount) so far)"))
            if let id = dropped.packet.id { actions += failAck(id: id, with: .emitDropped) }
        }
        return (actions, nil)
    }

    private mutating func flushBuffer() -> [Action] {
        guard case .connected = lifecycle, let epoch = connection?.epoch else { return [] }
        var actions: [Action] = []
        while !buffer.isEmpty {
            let outgoing = buffer[0]
            do {
                guard let bytes = try connection?.send(outgoing.packet, attachments: outgoing.attachments) else { break }
                actions.append(.write(bytes))
                buffer.removeFirst()
                if let id = outgoing.packet.id { pendingAcks[id]?.epoch = epoch }
            } catch .connectionLost {
                break
            } catch {
                buffer.removeFirst()
                actions.append(.log(.error, "dropped a buffered emit: \(error)"))
                if let id = outgoing.packet.id { actions += failAck(id: id, with: error) }
            }
        }
        return actions
    }

    // MARK: Acknowledgements

    private mutating func resolveAck(id: Int, payload: SocketIOPayload) -> [Action] {
        guard let pending = pendingAcks[id], pending.epoch == connection?.epoch else {
            return [.log(.debug, "ignored an ack for unknown id \(id)")]
        }
        pendingAcks.removeValue(forKey: id)
        return [.resolveAck(id: id, payload: payload)]
    }

    private mutating func failAck(id: Int, with error: SocketIOError) -> [Action] {
        guard pendingAcks.removeValue(forKey: id) != nil else { return [] }
        buffer.removeAll { $0.packet.id == id }
        return [.failAck(id: id, error: error)]
    }

    /// The `.acks` timer fired: the acks past their limit fail (in id order), and the timer is set
    /// for the earliest limit left, `ackCheckInterval` from now at the soonest.
    private mutating func checkAckLimits(now: ContinuousClock.Instant) -> [Action] {
        acksTimer = nil
        var actions: [Action] = []
        var earliestLeft: ContinuousClock.Instant?
        for id in pendingAcks.keys.sorted() {
            guard let pending = pendingAcks[id] else { continue }
            if now >= pending.deadline {
                actions += failAck(id: id, with: .timeout("no ack for \(pending.event) within \(pending.timeout.milliseconds) ms"))
            } else {
                earliestLeft = earliestLeft.earliest(pending.deadline)
            }
        }
        if let earliestLeft {
            let next = max(earliestLeft, now + Self.ackCheckInterval)
            acksTimer = next
            actions.append(.schedule(.acks, at: next))
        }
        return actions
    }

    private mutating func noteAwaited(_ id: Int) {
        ackOrder.append(id)
        let held = ackOrder.count - ackOrderStart
        guard held > 64, held > 2 * pendingAcks.count else { return }
        ackOrder = ackOrder[ackOrderStart...].filter { pendingAcks[$0] != nil }
        ackOrderStart = 0
    }

    /// Fails the oldest awaited acks (never `id`, just emitted) while more than
    /// `awaitedAckLimit` are awaited: a server that never acknowledges cannot make the client
    /// keep every ack (and its timer) for the whole of its timeout.
    private mutating func abandonOldestAcksOverLimit(keeping id: Int) -> [Action] {
        var actions: [Action] = []
        while pendingAcks.count > configuration.awaitedAckLimit, ackOrderStart < ackOrder.count {
            let oldest = ackOrder[ackOrderStart]
            ackOrderStart += 1
            guard oldest != id, pendingAcks[oldest] != nil else { continue }
            actions += failAck(id: oldest, with: .ackAbandoned(limit: configuration.awaitedAckLimit))
        }
        return actions
    }

    private mutating func failAcks(epoch: Int?, with error: SocketIOError) -> [Action] {
        guard let epoch else { return [] }
        var actions: [Action] = []
        for id in pendingAcks.keys.sorted() where pendingAcks[id]?.epoch == epoch {
            actions += failAck(id: id, with: error)
        }
        return actions
    }

    // MARK: Credentials

    /// The upgrade request's query: the credentials' query, sorted, and in v3 the auth's scalar
    /// members (the v2 protocol has no CONNECT auth).
    static func query(_ credentials: SocketIOCredentials, version: EngineIOVersion) -> [(String, String)] {
        var query = credentials.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        guard version == .v3, let auth = credentials.auth?.objectValue else { return query }
        for key in auth.keys.sorted() where credentials.query[key] == nil {
            switch auth[key] {
            case .string(let text): query.append((key, text))
            case .number: if let text = auth[key]?.idString { query.append((key, text)) }
            case .bool(let flag): query.append((key, flag ? "true" : "false"))
            default: continue
            }
        }
        return query
    }
}
