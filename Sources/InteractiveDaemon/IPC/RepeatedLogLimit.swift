import Synchronization

/// At most one log line per `interval` for an event one client can repeat at will (a denied
/// call): the first is logged, the next ones within the interval are only counted, and the
/// count goes with the next line logged. Pure: the caller passes the time.
struct RepeatedLogLimit: Sendable {
    let interval: Duration
    private var lastLogged: ContinuousClock.Instant?
    private var suppressed = 0

    init(interval: Duration = .seconds(10)) { self.interval = interval }

    /// The event happened at `now`: nil when it is not to be logged (it is counted), else how
    /// many were left unlogged since the last line.
    mutating func record(at now: ContinuousClock.Instant) -> Int? {
        if let lastLogged, lastLogged.duration(to: now) < interval {
            suppressed &+= 1
            return nil
        }
        lastLogged = now
        defer { suppressed = 0 }
        return suppressed
    }
}

/// One connection's `RepeatedLogLimit` for denied calls, shared by the copies of its context.
final class DeniedCallLog: Sendable {
    private let limit = Mutex(RepeatedLogLimit())

    func record(at now: ContinuousClock.Instant) -> Int? { limit.withLock { $0.record(at: now) } }
}
