import JSONValue

/// Engine.IO protocol revision: 4 (Socket.IO 3/4 servers) or 3 (Socket.IO 2 servers).
enum EngineIOVersion: Int, Sendable {
    case v3 = 3
    case v4 = 4
}

/// One Engine.IO packet as carried by one WebSocket message.
enum EngineIOPacket: Sendable, Equatable {
    case open([UInt8])
    case close
    case ping([UInt8])
    case pong([UInt8])
    /// A text message (UTF-8).
    case message([UInt8])
    /// A binary message.
    case binary([UInt8])
    case upgrade
    case noop
}

/// Engine.IO's WebSocket encoding: a text frame is the type digit plus the payload; a binary frame
/// is a raw binary message in v4 and the type byte (4) plus the data in v3.
enum EngineIOCodec {
    static func decode(opcode: WebSocketOpcode, payload: [UInt8], version: EngineIOVersion) throws(SocketIOError) -> EngineIOPacket {
        if opcode == .binary {
            switch version {
            case .v4:
                return .binary(payload)
            case .v3:
                guard let type = payload.first, type == 4 else {
                    throw .protocolViolation("Engine.IO v3 binary frame of type \(payload.first.map(String.init) ?? "none")")
                }
                return .binary(Array(payload.dropFirst()))
            }
        }
        guard let first = payload.first else { throw .protocolViolation("empty Engine.IO packet") }
        let body = Array(payload.dropFirst())
        switch first {
        case UInt8(ascii: "0"): return .open(body)
        case UInt8(ascii: "1"): return .close
        case UInt8(ascii: "2"): return .ping(body)
        case UInt8(ascii: "3"): return .pong(body)
        case UInt8(ascii: "4"): return .message(body)
        case UInt8(ascii: "5"): return .upgrade
        case UInt8(ascii: "6"): return .noop
        default: throw .protocolViolation("unknown Engine.IO packet type \(first)")
        }
    }

    static func encode(_ packet: EngineIOPacket, version: EngineIOVersion) -> (WebSocketOpcode, [UInt8]) {
        switch packet {
        case .open(let body): return (.text, [UInt8(ascii: "0")] + body)
        case .close: return (.text, [UInt8(ascii: "1")])
        case .ping(let body): return (.text, [UInt8(ascii: "2")] + body)
        case .pong(let body): return (.text, [UInt8(ascii: "3")] + body)
        case .message(let body): return (.text, [UInt8(ascii: "4")] + body)
        case .binary(let data):
            switch version {
            case .v4: return (.binary, data)
            case .v3: return (.binary, [4] + data)
            }
        case .upgrade: return (.text, [UInt8(ascii: "5")])
        case .noop: return (.text, [UInt8(ascii: "6")])
        }
    }
}

/// The server's open packet.
struct EngineIOHandshake: Sendable, Equatable {
    var sid: String
    var pingInterval: Duration
    var pingTimeout: Duration
    /// Largest packet the server accepts (v4 only).
    var maxPayload: Int?

    init(sid: String, pingInterval: Duration, pingTimeout: Duration, maxPayload: Int?) {
        self.sid = sid
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.maxPayload = maxPayload
    }

    init(json bytes: [UInt8]) throws(SocketIOError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw .protocolViolation("Engine.IO open packet: \(error)")
        }
        guard let sid = value["sid"]?.stringValue, !sid.isEmpty else {
            throw .protocolViolation("Engine.IO open packet without sid")
        }
        guard let interval = value["pingInterval"]?.doubleValue, interval >= 1, interval < 1e9,
              let timeout = value["pingTimeout"]?.doubleValue, timeout >= 1, timeout < 1e9 else {
            throw .protocolViolation("Engine.IO open packet without a positive pingInterval and pingTimeout")
        }
        self.sid = sid
        pingInterval = .milliseconds(Int(interval))
        pingTimeout = .milliseconds(Int(timeout))
        maxPayload = value["maxPayload"]?.intValue.flatMap { $0 > 0 ? $0 : nil }
    }
}

/// An incoming Engine.IO data message.
enum EngineIOMessage: Sendable, Equatable {
    case text([UInt8])
    case binary([UInt8])
}

/// One Engine.IO session over a WebSocket (websocket transport only, no polling).
///
/// `receive()` answers the server's pings (v4) and skips noops; `heartbeat()` sends pings (v3) and
/// ends the connection when nothing arrived for pingInterval + pingTimeout.
final class EngineIOConnection: Sendable {
    let webSocket: WebSocket
    let handshake: EngineIOHandshake
    let version: EngineIOVersion

    private init(webSocket: WebSocket, handshake: EngineIOHandshake, version: EngineIOVersion) {
        self.webSocket = webSocket
        self.handshake = handshake
        self.version = version
    }

    /// Connects the WebSocket to `path` with the Engine.IO query and waits for the open packet.
    static func open(
        endpoint: Endpoint, path: String, query: [(String, String)], headers: [(String, String)],
        version: EngineIOVersion, tls: TLSOptions, timeout: Duration, maxMessageBytes: Int,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void
    ) async throws -> EngineIOConnection {
        var target = endpoint
        target.path = path
        var pairs: [(String, String)] = [("EIO", String(version.rawValue)), ("transport", "websocket")]
        pairs += query.filter { $0.0 != "EIO" && $0.0 != "transport" }
        let extra = endpoint.query.map { $0.isEmpty ? "" : "&" + $0 } ?? ""
        target.query = QueryEncoding.encode(pairs) + extra
        let request = target
        return try await withTimeout(timeout, "Engine.IO handshake with \(endpoint.hostHeader)") {
            let webSocket = try await WebSocket.connect(
                endpoint: request, headers: headers, tls: tls, timeout: timeout,
                maxMessageBytes: maxMessageBytes, log: log)
            do {
                let (opcode, payload) = try await webSocket.receiveRaw()
                let packet = try EngineIOCodec.decode(opcode: opcode, payload: payload, version: version)
                guard case .open(let body) = packet else {
                    throw SocketIOError.protocolViolation("expected the Engine.IO open packet, got \(String(decoding: payload.prefix(40), as: UTF8.self))")
                }
                let handshake = try EngineIOHandshake(json: body)
                return EngineIOConnection(webSocket: webSocket, handshake: handshake, version: version)
            } catch {
                webSocket.close(code: 1002, timeout: .milliseconds(200))
                throw error
            }
        }
    }

    /// The next data message from the server.
    func receive() async throws -> EngineIOMessage {
        while true {
            let (opcode, payload) = try await webSocket.receiveRaw()
            switch try EngineIOCodec.decode(opcode: opcode, payload: payload, version: version) {
            case .message(let body): return .text(body)
            case .binary(let data): return .binary(data)
            case .ping(let body): try send([.pong(body)])
            case .pong, .noop, .upgrade: continue
            case .close: throw SocketIOError.connectionLost("the server closed the Engine.IO session")
            case .open: throw SocketIOError.protocolViolation("a second Engine.IO open packet")
            }
        }
    }

    /// Push mode (see `WebSocket.startReceiving`): data messages go to `onMessage` on the
    /// reactor thread; pings are answered there at once.
    func startReceiving(
        onMessage: @escaping @Sendable (EngineIOMessage) -> SocketIOError?,
        onEnd: @escaping @Sendable (SocketIOError) -> Void
    ) {
        webSocket.startReceiving(onMessage: { [self] opcode, payload in
            do {
                switch try EngineIOCodec.decode(opcode: opcode, payload: payload, version: version) {
                case .message(let body): return onMessage(.text(body))
                case .binary(let data): return onMessage(.binary(data))
                case .ping(let body):
                    try send([.pong(body)])
                    return nil
                case .pong, .noop, .upgrade: return nil
                case .close: return .connectionLost("the server closed the Engine.IO session")
                case .open: return .protocolViolation("a second Engine.IO open packet")
                }
            } catch {
                return WebSocket.classify(error)
            }
        }, onEnd: onEnd)
    }

    /// Sends packets back to back. Throws `.payloadTooLarge` when one exceeds the server's maxPayload.
    func send(_ packets: [EngineIOPacket]) throws {
        let frames = packets.map { EngineIOCodec.encode($0, version: version) }
        if let limit = handshake.maxPayload {
            for (_, payload) in frames where payload.count > limit {
                throw SocketIOError.payloadTooLarge(size: payload.count, limit: limit)
            }
        }
        try webSocket.sendMessages(frames)
    }

    /// Runs until the server has been silent for pingInterval + pingTimeout, then aborts the
    /// connection and throws `.heartbeatTimeout`. In v3 it also sends a ping every pingInterval.
    func heartbeat() async throws {
        let allowance = handshake.pingInterval + handshake.pingTimeout
        var nextPing = ContinuousClock.now + handshake.pingInterval
        while true {
            let deadline = webSocket.lastActivity + allowance
            let wake = version == .v3 ? min(deadline, nextPing) : deadline
            try await Task.sleep(until: wake, clock: .continuous)
            let now = ContinuousClock.now
            if version == .v3 && now >= nextPing {
                try send([.ping([])])
                nextPing = now + handshake.pingInterval
            }
            if now >= webSocket.lastActivity + allowance {
                webSocket.abort(.heartbeatTimeout)
                throw SocketIOError.heartbeatTimeout
            }
        }
    }

    /// Closes the session: an Engine.IO close packet, then the WebSocket close handshake.
    func close() {
        try? send([.close])
        webSocket.close(code: 1000)
    }
}
