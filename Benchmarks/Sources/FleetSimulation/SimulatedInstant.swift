/// A moment on the simulation's clock: time since the backend went away. `ReconnectBackoff`
/// takes it in place of `ContinuousClock.Instant`.
public struct SimulatedInstant: InstantProtocol, Sendable {
    /// Milliseconds since the backend went away (negative before).
    public let milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public func advanced(by duration: Duration) -> SimulatedInstant {
        SimulatedInstant(milliseconds: milliseconds + Self.wholeMilliseconds(duration))
    }

    public func duration(to other: SimulatedInstant) -> Duration {
        .milliseconds(other.milliseconds - milliseconds)
    }

    public static func < (lhs: SimulatedInstant, rhs: SimulatedInstant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// Whole milliseconds of a duration (the backoff's delays are whole milliseconds).
    static func wholeMilliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
