import Glibc

/// The reconnection schedule: exponential backoff with full jitter, reset after a stable
/// connection. Generic over the instant type so that tests can drive it with their own times.
struct ReconnectBackoff<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    let policy: ReconnectPolicy
    /// Retries since the last stable connection.
    private(set) var failures = 0
    private var connectedAt: Instant?

    init(policy: ReconnectPolicy) {
        self.policy = policy
    }

    /// A connection was established at `now`.
    mutating func connected(at now: Instant) {
        connectedAt = now
    }

    /// The connection established last ended at `now`; a stable one resets the schedule.
    mutating func disconnected(at now: Instant) {
        if let start = connectedAt, start.duration(to: now) >= .milliseconds(policy.stableAfterMs) {
            failures = 0
        }
        connectedAt = nil
    }

    /// The upper bound of the next delay, in milliseconds.
    func ceilingMs(afterFailures count: Int) -> Int {
        let raw = Double(policy.baseMs) * pow(policy.factor, Double(count))
        return raw >= Double(policy.capMs) ? policy.capMs : Int(raw)
    }

    /// The delay before the next attempt: uniform in [0, ceiling].
    mutating func nextDelay<R: RandomNumberGenerator>(using random: inout R) -> Duration {
        let ceiling = ceilingMs(afterFailures: failures)
        failures += 1
        return .milliseconds(Int.random(in: 0...ceiling, using: &random))
    }
}
