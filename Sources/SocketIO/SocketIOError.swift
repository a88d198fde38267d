import JSONValue

/// Everything that can go wrong in the Socket.IO stack, from DNS to acknowledgements.
public enum SocketIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not a usable `ws`, `wss`, `http` or `https` URL.
    case invalidURL(String)
    /// The host name could not be resolved.
    case dnsFailed(host: String, reason: String)
    /// No TCP connection could be made to any address of the host.
    case connectFailed(String)
    /// An operation did not finish in time (connection set-up, an acknowledgement, a handshake).
    case timeout(String)
    /// The server's certificate was refused (unknown CA, expired, wrong host name, ...).
    case tlsVerificationFailed(String)
    /// TLS failed for another reason than certificate verification.
    case tlsFailed(String)
    /// The HTTP upgrade to WebSocket was answered with another status than 101.
    case handshakeFailed(status: Int, message: String)
    /// The server refused the Socket.IO connection (CONNECT_ERROR, or HTTP 401 in the v2 protocol).
    /// `data` holds the server's extra details when it sent any.
    case connectionRefused(message: String, data: JSONValue?)
    /// The client is not connected and the caller asked not to buffer.
    case notConnected
    /// The connection broke (peer closed, reset, read error, WebSocket close).
    case connectionLost(String)
    /// The server closed the WebSocket with a close frame (`code` nil when it sent none).
    case closedByPeer(code: UInt16?, reason: String)
    /// No traffic from the server within pingInterval + pingTimeout.
    case heartbeatTimeout
    /// The peer broke the WebSocket, Engine.IO or Socket.IO protocol.
    case protocolViolation(String)
    /// An outgoing packet is larger than the server's `maxPayload` or `maxMessageBytes`.
    case payloadTooLarge(size: Int, limit: Int)
    /// A buffered emit was dropped because the offline buffer was full.
    case emitDropped
    /// An awaited acknowledgement is no longer awaited: `limit` newer ones are
    /// (`SocketIOConfiguration.awaitedAckLimit`). The emit itself may have reached the server.
    case ackAbandoned(limit: Int)
    /// The server ended the Socket.IO session (DISCONNECT packet); the client does not reconnect.
    case disconnectedByServer
    /// The caller disconnected the client.
    case disconnectedByClient

    var isProtocolViolation: Bool {
        if case .protocolViolation = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .invalidURL(let url): return "invalid Socket.IO URL: \(url)"
        case .dnsFailed(let host, let reason): return "cannot resolve \(host): \(reason)"
        case .connectFailed(let reason): return "cannot connect: \(reason)"
        case .timeout(let what): return "timed out: \(what)"
        case .tlsVerificationFailed(let reason): return "TLS certificate refused: \(reason)"
        case .tlsFailed(let reason): return "TLS error: \(reason)"
        case .handshakeFailed(let status, let message):
            return "WebSocket handshake refused with HTTP \(status)" + (message.isEmpty ? "" : ": \(message)")
        case .connectionRefused(let message, _): return "connection refused by the server: \(message)"
        case .notConnected: return "not connected"
        case .connectionLost(let reason): return "connection lost: \(reason)"
        case .closedByPeer(let code, let reason):
            return "closed by the server" + (code.map { " with code \($0)" } ?? "") + (reason.isEmpty ? "" : ": \(reason)")
        case .heartbeatTimeout: return "no heartbeat from the server within pingInterval + pingTimeout"
        case .protocolViolation(let reason): return "protocol violation: \(reason)"
        case .payloadTooLarge(let size, let limit): return "payload of \(size) bytes exceeds the limit of \(limit) bytes"
        case .emitDropped: return "emit dropped: the offline buffer was full"
        case .ackAbandoned(let limit): return "ack no longer awaited: \(limit) newer acks are awaited"
        case .disconnectedByServer: return "disconnected by the server"
        case .disconnectedByClient: return "disconnected by the client"
        }
    }
}
