/// A token bucket for one connection's requests: `perSecond` on average, bursts of `burst`.
/// Over it, the connection is simply read more slowly (its requests wait; none is refused), so
/// one client cannot keep the daemon busy for the others. Pure: the caller passes the time.
struct RequestRate: Sendable {
    let perSecond: Double
    let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant?

    /// Defaults: 500 requests a second, bursts of 1,000 (docs/ipc.md, "Limits").
    init(perSecond: Double = 500, burst: Double = 1_000) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = burst
    }

    /// Takes one request's token at `now`; returns how long the request must wait first
    /// (`.zero` when it may go at once).
    mutating func take(at now: ContinuousClock.Instant) -> Duration {
        if let last {
            let elapsed = last.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + max(0, seconds) * perSecond)
        }
        last = now
        tokens -= 1
        guard tokens < 0 else { return .zero }
        return .nanoseconds(Int64((-tokens / perSecond * 1e9).rounded(.up)))
    }
}
