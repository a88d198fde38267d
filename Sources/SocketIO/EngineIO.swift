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
