/// Decides how a backend outage is logged, so that the journal holds one warning per outage
/// rather than one per reconnection attempt: the first failure begins it (warning), the attempts
/// after it are debug lines, and the connection coming back ends it (one line with how long it
/// lasted). Pure: the caller passes the time.
struct BackendOutage: Sendable, Equatable {
    /// When the current outage began; nil while the connection is up or was never tried.
    private(set) var since: ContinuousClock.Instant?
    /// Connection attempts that failed in the current outage.
    private(set) var failures = 0

    /// How a failure is logged.
    enum FailureLog: Sendable, Equatable {
        /// It begins an outage: warn.
        case outageBegins
        /// An outage is already under way: debug.
        case stillOut(failures: Int)
    }

    /// The connection went down at `now`: an outage begins unless one is under way.
    mutating func lost(at now: ContinuousClock.Instant) -> FailureLog {
        guard since == nil else { return .stillOut(failures: failures) }
        since = now
        return .outageBegins
    }

    /// A connection attempt failed at `now` (it begins an outage when the backend was never reached).
    mutating func attemptFailed(at now: ContinuousClock.Instant) -> FailureLog {
        failures = failures == Int.max ? Int.max : failures + 1
        return lost(at: now) == .outageBegins ? .outageBegins : .stillOut(failures: failures)
    }

    /// The connection is up at `now`: the outage it ends (how long it lasted and how many
    /// attempts failed), or nil when there was none.
    mutating func connected(at now: ContinuousClock.Instant) -> (duration: Duration, failures: Int)? {
        defer { reset() }
        guard let since else { return nil }
        return (now - since, failures)
    }

    /// Whole milliseconds of a duration (negative as 0), saturating.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? Int64.max : whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).partialValue
    }

    /// "12.3 s".
    static func seconds(_ duration: Duration) -> String {
        let tenths = milliseconds(duration) / 100
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// The connection was closed on purpose or given up: no outage is under way.
    mutating func reset() {
        since = nil
        failures = 0
    }
}
