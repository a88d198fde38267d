import InteractiveDaemon
import SocketIO

/// A fleet of devices losing the backend and getting it back, on a simulated clock, each device
/// deciding with the daemon's own code: `ReconnectBackoff` (the Socket.IO client's schedule, fed
/// a seeded generator) decides when it retries, and `AckOutbox` (the tracker's queue) decides
/// which `emit-ack`s go out after the reconnect.
///
/// The loops around them are restated here, event by event: `SocketIOClientMachine` (`retryOrStop`, `connected`)
/// (a lost connection or a failed attempt → `nextDelay` → the next attempt; a connection →
/// `connected(at:)`), and `TrackingBook.connectionChanged` (a lost connection makes every ack
/// in flight sendable again; a connection sends every sendable ack at once, in order).
public struct FleetSimulation {
    public let scenario: FleetScenario
    private var random: SeededGenerator
    private var queue: EventQueue
    private var backoffs: [ReconnectBackoff<SimulatedInstant>]
    private var outboxes: [AckOutbox]
    private var timeline = FleetTimeline()
    private var connectionTimes: [Int64] = []
    private let trackingIds: [String]

    public init(_ scenario: FleetScenario) {
        self.scenario = scenario
        random = SeededGenerator(seed: scenario.seed)
        queue = EventQueue(capacity: scenario.devices + scenario.devices / 2)
        let trackingIds = (0..<scenario.sessionsPerDevice).map { "session-\($0)" }
        self.trackingIds = trackingIds
        // Every device has been connected for an hour: its backoff starts afresh after the loss.
        var backoff = ReconnectBackoff<SimulatedInstant>(policy: scenario.policy)
        backoff.connected(at: SimulatedInstant(milliseconds: -3_600_000))
        backoffs = Array(repeating: backoff, count: scenario.devices)
        var outbox = AckOutbox()
        _ = outbox.prependStored((0..<scenario.acksPerDevice).map { index in
            let stage = FleetScenario.sessionStages[index / scenario.sessionsPerDevice]
            return PendingAck(trackingId: trackingIds[index % scenario.sessionsPerDevice], stage: stage, payload: .null, created: 0)
        })
        // The connection was lost with them in flight.
        outbox.connectionLost()
        outboxes = Array(repeating: outbox, count: scenario.devices)
        connectionTimes.reserveCapacity(scenario.devices)
    }

    /// Runs until every device is connected again and has delivered its acks.
    public mutating func run() -> FleetRun {
        for device in 0..<scenario.devices {
            queue.schedule(.connectionLost, device: device, at: noticeTime())
        }
        while let event = queue.next() {
            handle(event)
        }
        timeline.equalizeLengths()
        return FleetRun(scenario: scenario, timeline: timeline, connectionTimes: connectionTimes.sorted())
    }

    private var returnTime: Int64 { Int64(scenario.outageSeconds) * 1000 }

    private mutating func noticeTime() -> Int64 {
        switch scenario.notice {
        case .heartbeat(let interval, let timeout):
            return timeout + Int64.random(in: 1...interval, using: &random)
        case .reset:
            return Int64.random(in: 0...scenario.failedAttemptMs, using: &random)
        }
    }

    private mutating func handle(_ event: FleetEvent) {
        let device = Int(event.device)
        let now = event.time
        switch event.kind {
        case .connectionLost:
            backoffs[device].disconnected(at: SimulatedInstant(milliseconds: now))
            scheduleRetry(device, after: now)
        case .attempt:
            timeline.countAttempt(at: now)
            if now >= returnTime {
                if timeline.accept(at: now, limit: scenario.acceptPerSecond) {
                    queue.schedule(.connected, device: device, at: now + scenario.handshakeMs)
                    return
                }
                timeline.countRejected(at: now)
            }
            queue.schedule(.attemptFailed, device: device, at: now + scenario.failedAttemptMs)
        case .attemptFailed:
            scheduleRetry(device, after: now)
        case .connected:
            backoffs[device].connected(at: SimulatedInstant(milliseconds: now))
            connectionTimes.append(now)
            timeline.countConnection(at: now)
            // TrackingBook.connectionChanged(up: true): every sendable ack goes at once. The
            // server acknowledges each one (the outbox then forgets it): none goes twice.
            for _ in outboxes[device].sendable { timeline.countAckSent(at: now) }
            outboxes[device] = AckOutbox()
        }
    }

    /// `SocketIOClientMachine` (`retryOrStop`, `connected`) after a lost connection or a failed attempt.
    private mutating func scheduleRetry(_ device: Int, after now: Int64) {
        let delay = backoffs[device].nextDelay(using: &random)
        queue.schedule(.attempt, device: device, at: now + SimulatedInstant.wholeMilliseconds(delay))
    }
}
