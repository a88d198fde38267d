import InteractiveDaemon
import SocketIO

/// What the simulated fleet and backend do. Every device is connected when the backend goes away
/// (at time 0); it comes back `outageSeconds` later. Times are whole milliseconds.
public struct FleetScenario: Sendable {
    /// How a device learns that the backend went away.
    public enum OutageNotice: Sendable, Equatable {
        /// The backend vanished silently: a device notices when no ping came for pingInterval +
        /// pingTimeout after the last one, which arrived at a uniformly random moment of the last
        /// interval, so within (pingTimeout, pingInterval + pingTimeout].
        case heartbeat(pingIntervalMs: Int64, pingTimeoutMs: Int64)
        /// The backend's connections were closed (FIN or RST): every device notices within one
        /// failed attempt's time.
        case reset
    }

    public var devices = 100_000
    public var outageSeconds = 300
    /// The daemon's backoff policy; by default the one of its default configuration.
    public var policy = ReconnectPolicy.daemonDefault
    /// python-socketio's and Socket.IO's default pingInterval 25 s and pingTimeout 20 s.
    public var notice = OutageNotice.heartbeat(pingIntervalMs: 25_000, pingTimeoutMs: 20_000)
    /// An attempt while the backend is away ends this long after it started (a refused TCP
    /// connection or a load balancer's 502/503 answer).
    public var failedAttemptMs: Int64 = 100
    /// From the start of a successful attempt to the namespace's CONNECT reply (TCP, TLS,
    /// WebSocket upgrade, Engine.IO open, Socket.IO CONNECT).
    public var handshakeMs: Int64 = 250
    /// Connections the backend accepts per second once back; attempts beyond fail like those
    /// made while it was away. nil: no limit.
    public var acceptPerSecond: Int?
    /// `emit-ack`s each device holds when it reconnects (decided during the outage, or in flight
    /// when the connection dropped), spread over `sessionsPerDevice` tracking sessions.
    public var acksPerDevice = 4
    public var sessionsPerDevice = 1
    public var seed: UInt64 = 1

    public init() {}

    /// The stages one session can still owe after an outage, in the order they are decided: the
    /// overlay arrived just before the outage, rendered, was answered, and the answer's POST
    /// failed with the backend away.
    package static let sessionStages: [TrackingStage] = [.received, .rendered, .answer, .answerFailed]

    /// Why the scenario cannot run, or nil.
    public var problem: String? {
        if devices < 1 || devices > 10_000_000 { return "devices must be from 1 to 10000000" }
        if outageSeconds < 1 || outageSeconds > 86_400 { return "the outage must last from 1 to 86400 seconds" }
        if acksPerDevice < 0 { return "acks per device must not be negative" }
        if sessionsPerDevice < 1 || sessionsPerDevice > 1000 { return "sessions per device must be from 1 to 1000" }
        if acksPerDevice > sessionsPerDevice * Self.sessionStages.count {
            return "a session holds at most \(Self.sessionStages.count) acks: use more sessions per device"
        }
        if let limit = acceptPerSecond, limit < 1 { return "the accept capacity must be at least 1 per second" }
        if failedAttemptMs < 0 || handshakeMs < 0 { return "durations must not be negative" }
        if case .heartbeat(let interval, let timeout) = notice, interval < 1 || timeout < 0 {
            return "pingInterval must be positive and pingTimeout not negative"
        }
        return nil
    }
}
