import JSONValue
import Network
import Runtime

/// One Socket.IO connection to one namespace — WebSocket, Engine.IO and Socket.IO stacked — as
/// a value with no I/O: bytes and the time in, actions out.
///
/// It sends the upgrade request, waits for the Engine.IO open packet, joins the namespace
/// (CONNECT with auth in v4; in v3 the server joins "/" by itself and other namespaces are asked
/// for afterwards), keeps what the server sends before its CONNECT reply (`EarlyPackets`), then
/// hands out events and acknowledgements, assembling binary attachments within a byte limit.
///
/// It counts the Engine.IO packets it sends (`sentPackets`) and proves, from the heartbeat,
/// which have reached the server (`carried`): a server closes a session whose heartbeat answer
/// is late (pingTimeout) and sends its next ping only after it took the answer, so a v4 server's
/// ping proves that the client's previous pong, and everything sent before it, arrived; in v3 the
/// server's pong answers the client's ping the same way.
struct SocketIOConnectionMachine {
    /// What the server sent before the CONNECT reply, or an acknowledgement.
    enum Incoming: Sendable, Equatable {
        case event(SocketIOEvent)
        case ack(id: Int, payload: SocketIOPayload)
    }

    indirect enum Action: Equatable {
        /// Bytes to write, in order.
        case write([UInt8])
        /// The namespace is joined. `early` is what the server sent before its reply, in order.
        case connected(socketId: String, early: [Incoming])
        /// An event from the server (`byteCount`: its packet and attachments).
        case event(SocketIOEvent)
        /// An acknowledgement from the server.
        case ack(id: Int, payload: SocketIOPayload)
        /// The server has received every packet sent up to `sentPackets` == `upTo`.
        case carried(upTo: Int)
        case log(SocketIOLogLevel, String)
        /// The connection is over: close it (after the writes before this), or drop it at once
        /// when `abort`. `.disconnectedByServer` means the server sent DISCONNECT.
        case ended(SocketIOError, abort: Bool)
    }

    private enum Phase: Equatable {
        case upgrading
        case awaitingOpen
        /// Waiting for the CONNECT reply for `namespace`.
        case joining(namespace: String)
        case connected(socketId: String)
        /// This side closes: waiting for the WebSocket close handshake.
        case leaving
        case ended
    }

    /// How long the client waits for the server's answer to its close frame.
    static let closeTimeout: Duration = .seconds(2)

    let namespace: String
    let version: EngineIOVersion
    /// Identifies this connection among all connections of the client (for ack tokens).
    let epoch: Int
    private let auth: JSONValue?
    private var webSocket: WebSocketMachine
    private var engine: EngineIOMachine
    private var phase = Phase.upgrading
    private var assembler: SocketIOBinaryAssembler
    /// Bytes of the packet being assembled (its text and attachments so far).
    private var packetBytes = 0
    private var early = EarlyPackets()
    /// The Engine.IO packets sent on this connection.
    private(set) var sentPackets = 0
    /// `sentPackets` once the last heartbeat packet (v4: a pong; v3: a ping) was sent, until the
    /// server's next heartbeat proves it arrived.
    private var heartbeatMark: Int?

    /// - Parameters:
    ///   - seed: for the WebSocket key and masks (see `WebSocketMachine`).
    init(namespace: String, version: EngineIOVersion, auth: JSONValue?, epoch: Int, maxMessageBytes: Int, seed: UInt64, now: ContinuousClock.Instant) {
        self.namespace = namespace.isEmpty ? "/" : namespace
        self.version = version
        self.auth = auth
        self.epoch = epoch
        webSocket = WebSocketMachine(maxMessageBytes: maxMessageBytes, seed: seed)
        engine = EngineIOMachine(version: version, now: now)
        assembler = SocketIOBinaryAssembler(byteLimit: maxMessageBytes)
    }

    /// The socket id once connected.
    var socketId: String? {
        if case .connected(let id) = phase { return id }
        return nil
    }

    var isEnded: Bool { phase == .ended }

    /// When `tick` has something to do next (a heartbeat step or the close handshake's limit).
    /// `nextDeadline` for an owner that keeps this machine in an optional: through `?.` a
    /// property of it is read from a copy of the whole machine (it stores
    /// `ContinuousClock.Instant`s, whose layout the standard library keeps to itself, so the
    /// compiler handles it by address), a mutating call works on it in place.
    mutating func deadlineInPlace() -> ContinuousClock.Instant? { nextDeadline }

    var nextDeadline: ContinuousClock.Instant? {
        switch phase {
        case .ended: return nil
        // Leaving, only the close handshake's limit counts.
        case .leaving: return webSocket.closeDeadline
        default: return engine.nextDeadline.earliest(webSocket.closeDeadline)
        }
    }

    // MARK: Inputs

    /// The upgrade request, to write first: `path` and `query` of the Engine.IO endpoint on the
    /// server at `origin`, with `headers`.
    func upgradeRequest(origin: Endpoint, path: String, query: [(String, String)], headers: [(String, String)]) throws(SocketIOError) -> [UInt8] {
        var target = origin
        target.path = path
        var pairs: [(String, String)] = [("EIO", String(version.rawValue)), ("transport", "websocket")]
        pairs += query.filter { $0.0 != "EIO" && $0.0 != "transport" }
        let extra = origin.query.map { $0.isEmpty ? "" : "&" + $0 } ?? ""
        target.query = PercentEncoding.query(pairs) + extra
        return try webSocket.upgradeRequest(endpoint: target, headers: headers)
    }

    /// Bytes from the server.
    mutating func receive(_ bytes: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        guard phase != .ended else { return [] }
        engine.heard(at: now)
        return handle(webSocket.receive(bytes, now: now), now: now)
    }

    /// The byte stream ended (`error` nil: the server closed it).
    mutating func connectionEnded(_ error: SocketIOError?) -> [Action] {
        guard phase != .ended else { return [] }
        return handle(webSocket.connectionEnded(error), now: nil)
    }

    /// The time is `now`: heartbeat (pings, dead peer) and the close handshake's limit.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard phase != .ended else { return [] }
        var actions = handle(webSocket.tick(now: now), now: now)
        guard phase != .ended, phase != .leaving else { return actions }
        actions += handleEngine(engine.tick(now: now), now: now)
        return actions
    }

    /// The bytes of one packet and its attachments, sent back to back. Throws `.notConnected`
    /// before the namespace is joined, `.connectionLost` once the connection is closing,
    /// `.payloadTooLarge` above the server's maxPayload.
    mutating func send(_ packet: SocketIOPacket, attachments: [[UInt8]]) throws(SocketIOError) -> [UInt8] {
        switch phase {
        case .connected: break
        case .upgrading, .awaitingOpen, .joining: throw .notConnected
        case .leaving, .ended: throw .connectionLost("the connection is closing")
        }
        return try sendPackets([.message(SocketIOCodec.encode(packet))] + attachments.map { EngineIOPacket.binary($0) })
    }

    /// Leaves the namespace (DISCONNECT), closes the Engine.IO session and starts the WebSocket
    /// close handshake; the connection ends when the server answers or after `closeTimeout`.
    mutating func close(now: ContinuousClock.Instant) -> [Action] {
        switch phase {
        case .ended, .leaving:
            return []
        case .upgrading, .awaitingOpen:
            phase = .leaving
            return handle(webSocket.close(timeout: Self.closeTimeout, now: now), now: now)
        case .joining, .connected:
            var actions: [Action] = []
            if case .connected = phase, let bytes = try? sendPackets([.message(SocketIOCodec.encode(SocketIOPacket(type: .disconnect, namespace: namespace))), .close]) {
                actions.append(.write(bytes))
            } else if let bytes = try? sendPackets([.close]) {
                actions.append(.write(bytes))
            }
            phase = .leaving
            return actions + handle(webSocket.close(timeout: Self.closeTimeout, now: now), now: now)
        }
    }

    // MARK: Layers

    private mutating func sendPackets(_ packets: [EngineIOPacket]) throws(SocketIOError) -> [UInt8] {
        let bytes = try webSocket.send(try engine.encode(packets))
        sentPackets &+= packets.count
        return bytes
    }

    private mutating func handle(_ actions: [WebSocketMachine.Action], now: ContinuousClock.Instant?) -> [Action] {
        var out: [Action] = []
        for action in actions {
            switch action {
            case .write(let bytes):
                out.append(.write(bytes))
            case .opened:
                if phase == .upgrading { phase = .awaitingOpen }
            case .message(let opcode, let payload):
                guard let now, phase != .ended else { continue }
                out += handleEngine(engine.receive(opcode: opcode, payload: payload, now: now), now: now)
            case .closed(let reason):
                out += end(reason, abort: false)
            case .abort(let reason):
                out += end(reason, abort: true)
            }
        }
        return out
    }

    private mutating func handleEngine(_ actions: [EngineIOMachine.Action], now: ContinuousClock.Instant) -> [Action] {
        var out: [Action] = []
        for action in actions where phase != .ended {
            switch action {
            case .send(let packet):
                // A v4 ping proves the previous pong arrived (the server waits for it first).
                if case .pong = packet, version == .v4, let mark = heartbeatMark { out.append(.carried(upTo: mark)) }
                if let bytes = try? sendPackets([packet]) {
                    out.append(.write(bytes))
                    switch packet {
                    case .pong where version == .v4, .ping where version == .v3: heartbeatMark = sentPackets
                    default: break
                    }
                }
            case .pongReceived:
                if let mark = heartbeatMark { out.append(.carried(upTo: mark)) }
                heartbeatMark = nil
            case .opened(let handshake):
                out += opened(handshake, now: now)
            case .message(let message):
                out += handleMessage(message, now: now)
            case .failed(let reason):
                out += stop(reason, now: now)
            }
        }
        return out
    }

    private mutating func opened(_ handshake: EngineIOHandshake, now: ContinuousClock.Instant) -> [Action] {
        guard phase == .awaitingOpen else { return [] }
        switch version {
        case .v4:
            phase = .joining(namespace: namespace)
            return sendOrStop([.message(SocketIOCodec.encode(SocketIOPacket(type: .connect, namespace: namespace, data: auth)))], now: now)
        case .v3:
            phase = .joining(namespace: "/")
            return []
        }
    }

    private mutating func sendOrStop(_ packets: [EngineIOPacket], now: ContinuousClock.Instant) -> [Action] {
        do {
            return [.write(try sendPackets(packets))]
        } catch {
            return stop(error, now: now)
        }
    }

    private mutating func handleMessage(_ message: EngineIOMessage, now: ContinuousClock.Instant) -> [Action] {
        let complete: (SocketIOPacket, [[UInt8]])?
        do {
            switch message {
            case .text(let bytes):
                packetBytes = bytes.count
                complete = try assembler.start(try SocketIOCodec.decode(bytes))
            case .binary(let data):
                packetBytes = packetBytes.addingReportingOverflow(data.count).partialValue
                complete = try assembler.add(data)
            }
        } catch {
            return stop(error, now: now)
        }
        guard let (packet, attachments) = complete else { return [] }
        switch phase {
        case .joining(let joining):
            return handleWhileJoining(packet, attachments, joining: joining, now: now)
        case .connected:
            return handleWhileConnected(packet, attachments, now: now)
        case .upgrading, .awaitingOpen, .leaving, .ended:
            return []
        }
    }

    private mutating func handleWhileJoining(_ packet: SocketIOPacket, _ attachments: [[UInt8]], joining: String, now: ContinuousClock.Instant) -> [Action] {
        switch packet.type {
        case .connect, .connectError, .disconnect:
            guard packet.namespace == joining else { return [] }
        case .event, .binaryEvent, .ack, .binaryAck:
            guard packet.namespace == namespace else { return [] }
        }
        switch packet.type {
        case .connect:
            if version == .v3 {
                guard joining == namespace, let sid = engine.handshake?.sid else {
                    phase = .joining(namespace: namespace)
                    return sendOrStop([.message(SocketIOCodec.encode(SocketIOPacket(type: .connect, namespace: namespace)))], now: now)
                }
                return connected(sid)
            }
            guard let sid = packet.data?["sid"]?.stringValue, !sid.isEmpty else {
                return stop(.protocolViolation("CONNECT reply without sid"), now: now)
            }
            return connected(sid)
        case .connectError:
            return stop(Self.refusal(packet.data), now: now)
        case .disconnect:
            return stop(.connectionRefused(message: "the server disconnected during the handshake", data: packet.data), now: now)
        case .event, .binaryEvent, .ack, .binaryAck:
            if let incoming = Self.incoming(packet, attachments, epoch: epoch) {
                early.keep(incoming, size: packetBytes)
            }
            return []
        }
    }

    private mutating func connected(_ socketId: String) -> [Action] {
        phase = .connected(socketId: socketId)
        var actions: [Action] = [.connected(socketId: socketId, early: early.kept)]
        if early.dropped > 0 {
            actions.append(.log(.warning, "dropped \(early.dropped) packets the server sent before its CONNECT reply (kept the first \(early.kept.count))"))
        }
        early = EarlyPackets()
        return actions
    }

    private mutating func handleWhileConnected(_ packet: SocketIOPacket, _ attachments: [[UInt8]], now: ContinuousClock.Instant) -> [Action] {
        guard packet.namespace == namespace else { return [] }
        switch packet.type {
        case .event, .binaryEvent, .ack, .binaryAck:
            switch Self.incoming(packet, attachments, epoch: epoch) {
            case .event(var event)?:
                event.byteCount = packetBytes
                return [.event(event)]
            case .ack(let id, let payload)?: return [.ack(id: id, payload: payload)]
            case nil: return [.log(.warning, "ignored a malformed \(packet.type) packet")]
            }
        case .disconnect:
            return stop(.disconnectedByServer, now: now)
        case .connect:
            return [.log(.debug, "ignored a repeated CONNECT packet")]
        case .connectError:
            return [.log(.warning, "ignored CONNECT_ERROR on a connected namespace: \(packet.data?.jsonText ?? "")")]
        }
    }

    /// Ends the connection for `reason`: a silent server is dropped at once; otherwise the
    /// WebSocket is closed (1002 after a violation) and the connection closed after the close frame.
    private mutating func stop(_ reason: SocketIOError, now: ContinuousClock.Instant) -> [Action] {
        guard reason != .heartbeatTimeout else { return end(reason, abort: true) }
        let closing = webSocket.close(code: reason.isProtocolViolation ? 1002 : 1000, timeout: Self.closeTimeout, now: now)
        var actions: [Action] = []
        for case .write(let bytes) in closing { actions.append(.write(bytes)) }
        return actions + end(reason, abort: false)
    }

    private mutating func end(_ reason: SocketIOError, abort: Bool) -> [Action] {
        guard phase != .ended else { return [] }
        let wasLeaving = phase == .leaving
        phase = .ended
        // The answer to our own close frame ends a connection this side closed.
        if wasLeaving, case .closedByPeer = reason { return [.ended(.disconnectedByClient, abort: abort)] }
        if case .handshakeFailed(let status, let body) = reason, status == 401 {
            let parsed = try? JSONValue.parse(Array(body.utf8))
            let message = parsed?["message"]?.stringValue ?? parsed?.stringValue ?? (body.isEmpty ? "unauthorized" : body)
            return [.ended(.connectionRefused(message: message, data: parsed), abort: abort)]
        }
        return [.ended(wasLeaving ? .disconnectedByClient : reason, abort: abort)]
    }

    // MARK: Packets

    /// CONNECT_ERROR data: `{"message": ..., "data": ...}` or a bare string.
    static func refusal(_ data: JSONValue?) -> SocketIOError {
        switch data {
        case .string(let message)?:
            return .connectionRefused(message: message, data: nil)
        case .object(let object)?:
            let message = object["message"]?.stringValue ?? data?.jsonText ?? "refused"
            return .connectionRefused(message: message, data: object["data"])
        case let other?:
            return .connectionRefused(message: other.jsonText, data: other)
        case nil:
            return .connectionRefused(message: "refused", data: nil)
        }
    }

    static func incoming(_ packet: SocketIOPacket, _ attachments: [[UInt8]], epoch: Int) -> Incoming? {
        guard var array = packet.data?.arrayValue else { return nil }
        switch packet.type {
        case .event, .binaryEvent:
            guard !array.isEmpty, let name = array.removeFirst().stringValue else { return nil }
            let token = packet.id.map { SocketIOAckToken(id: $0, epoch: epoch) }
            var event = SocketIOEvent(name: name, args: array, attachments: attachments, ackToken: token)
            event.dataText = packet.dataText
            return .event(event)
        case .ack, .binaryAck:
            guard let id = packet.id else { return nil }
            return .ack(id: id, payload: SocketIOPayload(args: array, attachments: attachments))
        default:
            return nil
        }
    }
}

/// What the server sent before its CONNECT reply: kept, in order, up to `maxCount` packets and
/// `maxBytes` bytes; the rest is dropped and counted (a server cannot fill the client's memory
/// before the session even starts).
struct EarlyPackets {
    static let maxCount = 256
    static let maxBytes = 1 << 20

    private(set) var kept: [SocketIOConnectionMachine.Incoming] = []
    private(set) var dropped = 0
    private var bytes = 0

    mutating func keep(_ incoming: SocketIOConnectionMachine.Incoming, size: Int) {
        guard kept.count < Self.maxCount, size <= Self.maxBytes - bytes else {
            dropped += 1
            return
        }
        kept.append(incoming)
        bytes += size
    }
}
