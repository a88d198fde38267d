import Glibc

/// The reconnection schedule: exponential backoff with full jitter, reset after a stable
/// connection. Generic over the instant type so that tests and the fleet simulation
/// (Benchmarks/fleet) can drive it with their own times; public for that simulation, a separate
/// package.
public struct ReconnectBackoff<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    package let policy: ReconnectPolicy
    /// Retries since the last stable connection.
    package private(set) var failures = 0
    private var connectedAt: Instant?

    /// A schedule that has seen no failure yet.
    public init(policy: ReconnectPolicy) {
        self.policy = policy
    }

    /// A connection was established at `now`.
    public mutating func connected(at now: Instant) {
        connectedAt = now
    }

    /// The connection established last ended at `now`; a stable one resets the schedule.
    public mutating func disconnected(at now: Instant) {
        if let start = connectedAt, start.duration(to: now) >= .milliseconds(policy.stableAfterMs) {
            failures = 0
        }
        connectedAt = nil
    }

    /// The upper bound of the next delay, in milliseconds.
    package func ceilingMs(afterFailures count: Int) -> Int {
        let raw = Double(policy.baseMs) * pow(policy.factor, Double(count))
        return raw >= Double(policy.capMs) ? policy.capMs : Int(raw)
    }

    /// The delay before the next attempt: uniform in [0, ceiling].
    public mutating func nextDelay<R: RandomNumberGenerator>(using random: inout R) -> Duration {
        let ceiling = ceilingMs(afterFailures: failures)
        failures += 1
        return .milliseconds(Int.random(in: 0...ceiling, using: &random))
    }

    /// A delay of `floor` at least (at most the policy's cap): `floor` plus one uniform in
    /// [0, max(floor, ceiling)], so that clients sent away together come back spread over as
    /// long again.
    public mutating func nextDelay<R: RandomNumberGenerator>(atLeast floor: Duration, using random: inout R) -> Duration {
        let floorMs = min(max(0, floor.milliseconds), policy.capMs)
        let spread = max(floorMs, ceilingMs(afterFailures: failures))
        failures += 1
        return .milliseconds(floorMs + Int.random(in: 0...spread, using: &random))
    }
}
