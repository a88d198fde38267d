import JSONValue
import Network

/// The wire protocol spoken with the server.
public enum SocketIOProtocolVersion: String, Sendable, Equatable {
    /// Engine.IO 4 and Socket.IO protocol 5 (servers of Socket.IO 3 and 4).
    case v4
    /// Engine.IO 3 and Socket.IO protocol 4 (servers of Socket.IO 2): the client sends the pings,
    /// the server connects the default namespace by itself, and auth travels in the query.
    case v2
}

/// Reconnection with exponential backoff and full jitter: before retry n (n ≥ 1 since the last
/// stable connection) the client waits a random time in [0, min(capMs, baseMs × factor^(n-1))].
public struct ReconnectPolicy: Sendable, Equatable {
    /// Reconnect after a transport loss. When false the client ends in `.disconnected`.
    public let enabled: Bool
    public let baseMs: Int
    public let capMs: Int
    public let factor: Double
    /// A connection that lasted at least this long resets the backoff to `baseMs`. (Values are
    /// clamped when made: baseMs ≥ 1, capMs ≥ baseMs, factor ≥ 1; they cannot change after.)
    public let stableAfterMs: Int

    public init(enabled: Bool = true, baseMs: Int = 500, capMs: Int = 30_000, factor: Double = 2, stableAfterMs: Int = 30_000) {
        self.enabled = enabled
        self.baseMs = max(1, baseMs)
        self.capMs = max(self.baseMs, capMs)
        self.factor = max(1, factor)
        self.stableAfterMs = max(0, stableAfterMs)
    }
}

/// What to do with an emit while the client is not connected.
public enum EmitPolicy: Sendable, Equatable {
    /// Keep it in the offline buffer (bounded; the oldest entry is dropped when full).
    case buffer
    /// Throw `SocketIOError.notConnected` at once.
    case fail
}

/// Log levels of the `log` callback.
public enum SocketIOLogLevel: Int, Sendable, Comparable {
    case debug, info, warning, error

    public static func < (lhs: SocketIOLogLevel, rhs: SocketIOLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Static settings of a `SocketIOClient`.
public struct SocketIOConfiguration: Sendable {
    /// Origin of the server: `ws://`, `wss://`, `http://` or `https://` host and port, with an
    /// optional query that is sent on every connection. A path other than "/" is refused: use `path`.
    public var url: String
    /// The Engine.IO endpoint path.
    public var path: String
    /// The Socket.IO namespace.
    public var namespace: String
    public var protocolVersion: SocketIOProtocolVersion
    public var reconnect: ReconnectPolicy
    public var tls: TLSOptions
    /// Limit for one connection attempt: DNS, TCP, TLS, WebSocket, Engine.IO and Socket.IO handshakes.
    public var connectTimeout: Duration
    /// Emits kept while disconnected; the oldest is dropped (and counted) beyond this.
    public var emitBufferLimit: Int
    /// Acknowledgements awaited at once (`emitWithAck`): beyond this the oldest awaited one fails
    /// with `.ackAbandoned`, so a server that never acknowledges cannot grow the client's memory
    /// for the whole of each ack's timeout.
    public var awaitedAckLimit: Int
    /// Largest incoming WebSocket message (a larger one fails the connection with close code 1009).
    public var maxMessageBytes: Int
    /// nil (Socket.IO's own rule): a DISCONNECT from the server stops the client. Otherwise the
    /// client connects again after it, as after a lost connection (when `reconnect` is
    /// enabled), the first attempt waiting this long at least plus up to as much again (or the
    /// backoff's ceiling, if larger): a server that disconnects every client on a graceful
    /// shutdown does not get them all back at once.
    public var reconnectAfterServerDisconnect: Duration?

    public init(
        url: String,
        path: String = "/socket.io/",
        namespace: String = "/",
        protocolVersion: SocketIOProtocolVersion = .v4,
        reconnect: ReconnectPolicy = ReconnectPolicy(),
        tls: TLSOptions = TLSOptions(),
        connectTimeout: Duration = .seconds(10),
        emitBufferLimit: Int = 256,
        awaitedAckLimit: Int = 1024,
        maxMessageBytes: Int = 16 << 20,
        reconnectAfterServerDisconnect: Duration? = nil
    ) {
        self.url = url
        self.path = path
        self.namespace = namespace
        self.protocolVersion = protocolVersion
        self.reconnect = reconnect
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.emitBufferLimit = emitBufferLimit
        self.awaitedAckLimit = max(1, awaitedAckLimit)
        self.maxMessageBytes = maxMessageBytes
        self.reconnectAfterServerDisconnect = reconnectAfterServerDisconnect
    }
}

/// What is sent with each connection attempt; the client asks for it again before every attempt.
public struct SocketIOCredentials: Sendable, Equatable {
    /// Extra HTTP headers of the WebSocket upgrade request (e.g. `Authorization`, `x-tenant-id`).
    public var headers: [String: String]
    /// The CONNECT auth payload (v4 protocol). In the v2 protocol its scalar members go in the query.
    public var auth: JSONValue?
    /// Extra query parameters of the upgrade request.
    public var query: [String: String]

    public init(headers: [String: String] = [:], auth: JSONValue? = nil, query: [String: String] = [:]) {
        self.headers = headers
        self.auth = auth
        self.query = query
    }
}

/// The connection as seen by the application.
public enum SocketIOConnectionState: Sendable, Equatable {
    /// `connect()` was not called yet.
    case idle
    /// Attempt `attempt` (1 for the first since the last connection) is under way.
    case connecting(attempt: Int)
    /// The namespace is connected; `socketId` is the CONNECT reply's sid (v4) or the Engine.IO sid (v2).
    case connected(socketId: String)
    /// The last attempt or connection failed with `error`; attempt `attempt` starts in `retryIn`.
    case reconnecting(attempt: Int, retryIn: Duration, error: SocketIOError)
    /// The server refused the connection (`SocketIOError.connectionRefused`). The client does not
    /// retry by itself; `reconnectNow()` tries again (e.g. after a new login).
    case refused(SocketIOError)
    /// The client stopped: `.disconnectedByClient`, `.disconnectedByServer` (unless
    /// `reconnectAfterServerDisconnect` is set), `.invalidURL`, or the
    /// error that ended the connection when reconnection is disabled.
    case disconnected(SocketIOError)
}
