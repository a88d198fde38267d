import FleetSimulation
import Testing

/// The fleet after a 5-minute backend outage, as the daemon's backoff and ack outbox make it
/// behave (docs/fleet.md). 10,000 devices: the shape is that of 100,000, at a tenth of the cost.
@Suite struct FleetSimulationTests {
    static let scenario: FleetScenario = {
        var scenario = FleetScenario()
        scenario.devices = 10_000
        return scenario
    }()

    static let run: FleetRun = {
        var simulation = FleetSimulation(scenario)
        return simulation.run()
    }()

    private var capSeconds: Double { Double(Self.scenario.policy.capMs) / 1000 }

    @Test func theDefaultPolicyIsTheDaemonsDefaultConfiguration() {
        let policy = Self.scenario.policy
        #expect(policy.baseMs == 500)
        #expect(policy.capMs == 30_000)
        #expect(policy.factor == 2)
    }

    /// Full jitter keeps the reconnections after the return at the rate of the retries during
    /// the outage: the backend sees no burst above what its front already took.
    @Test func noBurstAboveTheOutageRetryRate() {
        let run = Self.run
        let outageRate = run.outageAttemptsPerSecond(seconds: 60)
        #expect(outageRate > 0)
        #expect(Double(run.peak(run.timeline.attempts, seconds: 60)) <= 1.15 * outageRate)
    }

    /// The reconnections spread over one cap: peak-to-mean ≈ 2 over the cap (a triangle), so ≈ 4
    /// over a minute, 60 s ÷ the mean retry interval (cap / 2 + the failed attempt).
    @Test func reconnectionsSpreadOverOneCap() {
        let run = Self.run
        let attempts = run.timeline.attempts
        let overCap = run.peakToMean(attempts, seconds: Int(capSeconds))
        let overMinute = run.peakToMean(attempts, seconds: 60)
        #expect(overCap <= 2.25, "peak-to-mean over the first \(capSeconds) s: \(overCap)")
        #expect(overMinute <= 4.5, "peak-to-mean over the first minute: \(overMinute)")
        #expect(run.timeline.rejected.allSatisfy { $0 == 0 })
    }

    /// Once back, a device waits at most one capped delay (after at most one failed attempt):
    /// everyone is back within cap + failed attempt + handshake, 99 % within 0.9 × cap (+ 1 s),
    /// as the wait left of a uniform [0, cap] delay exceeds x with probability (1 − x/cap)².
    @Test func everyDeviceIsBackWithinOneCap() {
        let run = Self.run
        let scenario = Self.scenario
        #expect(run.connectionTimes.count == scenario.devices)
        let handshake = Double(scenario.handshakeMs) / 1000
        let all = run.secondsUntilConnected(fraction: 1)
        #expect(all <= capSeconds + Double(scenario.failedAttemptMs + scenario.handshakeMs) / 1000)
        let ninetyNine = run.secondsUntilConnected(fraction: 0.99)
        #expect(ninetyNine <= 0.9 * capSeconds + handshake + 1, "99 % back after \(ninetyNine) s")
        #expect(ninetyNine >= 0.8 * capSeconds, "99 % back after \(ninetyNine) s: faster than full jitter allows")
    }

    /// Each ack goes out once (the server acks it), at the pace of the reconnections: at most
    /// the acks of one device per reconnection, all sent soon after the last reconnection.
    @Test func acksFollowTheReconnectionsWithoutAStorm() {
        let run = Self.run
        let scenario = Self.scenario
        let acks = run.timeline.acksSent
        #expect(acks.reduce(0, +) == scenario.devices * scenario.acksPerDevice)
        #expect(acks[..<run.returnSecond].allSatisfy { $0 == 0 })
        let peakConnections = run.timeline.connections.max() ?? 0
        #expect((acks.max() ?? 0) <= scenario.acksPerDevice * peakConnections * 11 / 10)
        let lastAck = Double(run.secondsUntilLastAck)
        #expect(lastAck <= run.secondsUntilConnected(fraction: 1) + 1)
    }

    /// A device sends every ack it holds as soon as it is connected (the server acknowledges
    /// each; none goes twice).
    @Test func oneDeviceSendsEveryAckOnConnecting() {
        var scenario = FleetScenario()
        scenario.devices = 1
        scenario.sessionsPerDevice = 16
        scenario.acksPerDevice = 16
        scenario.handshakeMs = 0
        var simulation = FleetSimulation(scenario)
        let run = simulation.run()
        #expect(run.timeline.acksSent.filter { $0 > 0 } == [16])
    }

    @Test func aSeedRepeatsARun() {
        var scenario = FleetScenario()
        scenario.devices = 500
        scenario.seed = 7
        var first = FleetSimulation(scenario)
        var second = FleetSimulation(scenario)
        let (a, b) = (first.run(), second.run())
        #expect(a.connectionTimes == b.connectionTimes)
        #expect(a.timeline.attempts == b.timeline.attempts)
        scenario.seed = 8
        var other = FleetSimulation(scenario)
        #expect(other.run().connectionTimes != a.connectionTimes)
    }

    /// A backend that accepts fewer connections per second than come back refuses the excess;
    /// those devices retry with their capped backoff and all connect in the end.
    @Test func anAcceptLimitDelaysButEveryoneConnects() {
        var scenario = FleetScenario()
        scenario.devices = 2_000
        scenario.acceptPerSecond = 50
        var simulation = FleetSimulation(scenario)
        let run = simulation.run()
        #expect(run.connectionTimes.count == 2_000)
        let accepted = zip(run.timeline.attempts, run.timeline.rejected).map { $0 - $1 }
        #expect(accepted[run.returnSecond...].allSatisfy { $0 <= 50 })
        #expect(run.timeline.rejected.reduce(0, +) > 0)
        #expect(run.secondsUntilConnected(fraction: 1) >= 2_000 / 50)
    }
}
