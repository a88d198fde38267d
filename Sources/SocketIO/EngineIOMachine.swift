/// One Engine.IO session over a WebSocket (websocket transport only, no polling) as a value with
/// no I/O: WebSocket messages and the time in, packets to send and data messages out.
///
/// It waits for the open packet, answers the server's pings (v4), sends pings every pingInterval
/// (v3), skips noops, and declares the server dead when nothing arrived from it for
/// pingInterval + pingTimeout (`tick`).
struct EngineIOMachine {
    enum Action: Equatable {
        /// A packet to send.
        case send(EngineIOPacket)
        /// The open packet arrived.
        case opened(EngineIOHandshake)
        /// A data message from the server.
        case message(EngineIOMessage)
        /// The server answered the client's ping (v3).
        case pongReceived
        /// The session is over (the server closed it, broke the protocol, or went silent).
        case failed(SocketIOError)
    }

    let version: EngineIOVersion
    /// The server's open packet, once it arrived.
    private(set) var handshake: EngineIOHandshake?
    /// When bytes last arrived from the server.
    private(set) var lastActivity: ContinuousClock.Instant
    /// When the client sends its next ping (v3 only).
    private var nextPing: ContinuousClock.Instant?
    private var failed = false

    init(version: EngineIOVersion, now: ContinuousClock.Instant) {
        self.version = version
        lastActivity = now
    }

    /// Bytes (of any kind) arrived from the server at `now`: it is alive.
    mutating func heard(at now: ContinuousClock.Instant) {
        lastActivity = now
    }

    /// When `tick` has something to do next: the next v3 ping or the dead-peer deadline; nil
    /// before the open packet.
    var nextDeadline: ContinuousClock.Instant? {
        guard let handshake, !failed else { return nil }
        let silence = lastActivity + handshake.pingInterval + handshake.pingTimeout
        guard let nextPing else { return silence }
        return min(silence, nextPing)
    }

    /// One complete WebSocket message.
    mutating func receive(opcode: WebSocketOpcode, payload: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        guard !failed else { return [] }
        let packet: EngineIOPacket
        do {
            packet = try EngineIOCodec.decode(opcode: opcode, payload: payload, version: version)
        } catch {
            return fail(error)
        }
        guard handshake != nil else {
            guard case .open(let body) = packet else {
                return fail(.protocolViolation("expected the Engine.IO open packet, got \(String(decoding: payload.prefix(40), as: UTF8.self))"))
            }
            do {
                let opened = try EngineIOHandshake(json: body)
                handshake = opened
                if version == .v3 { nextPing = now + opened.pingInterval }
                return [.opened(opened)]
            } catch {
                return fail(error)
            }
        }
        switch packet {
        case .message(let body): return [.message(.text(body))]
        case .binary(let data): return [.message(.binary(data))]
        case .ping(let body): return [.send(.pong(body))]
        case .pong: return version == .v3 ? [.pongReceived] : []
        case .noop, .upgrade: return []
        case .close: return fail(.connectionLost("the server closed the Engine.IO session"))
        case .open: return fail(.protocolViolation("a second Engine.IO open packet"))
        }
    }

    /// The time is `now`: sends the v3 ping when due; fails with `.heartbeatTimeout` when the
    /// server has been silent for pingInterval + pingTimeout.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard let handshake, !failed else { return [] }
        if now >= lastActivity + handshake.pingInterval + handshake.pingTimeout {
            return fail(.heartbeatTimeout)
        }
        guard let due = nextPing, now >= due else { return [] }
        nextPing = now + handshake.pingInterval
        return [.send(.ping([]))]
    }

    /// The WebSocket messages carrying `packets`. Throws `.payloadTooLarge` when one exceeds the
    /// server's maxPayload.
    func encode(_ packets: [EngineIOPacket]) throws(SocketIOError) -> [(WebSocketOpcode, [UInt8])] {
        let frames = packets.map { EngineIOCodec.encode($0, version: version) }
        if let limit = handshake?.maxPayload {
            for (_, payload) in frames where payload.count > limit {
                throw .payloadTooLarge(size: payload.count, limit: limit)
            }
        }
        return frames
    }

    private mutating func fail(_ error: SocketIOError) -> [Action] {
        failed = true
        return [.failed(error)]
    }
}
