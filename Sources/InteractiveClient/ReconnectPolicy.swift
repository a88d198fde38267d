/// How an event stream reconnects after its connection dropped: delays that double from
/// `initialDelay` up to `maxDelay`, and, if `maxAttempts` is set, a limit after which the stream
/// throws the last error.
public struct ReconnectPolicy: Sendable, Equatable {
    public var initialDelay: Duration
    public var maxDelay: Duration
    /// nil: try until the client is closed or the consuming task is cancelled.
    public var maxAttempts: Int?

    public init(initialDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(2), maxAttempts: Int? = nil) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
    }

    /// The wait before the next attempt after `failures` failed ones in a row (≥ 1), or nil
    /// when no attempt is left.
    public func delay(afterFailures failures: Int) -> Duration? {
        if let maxAttempts, failures >= maxAttempts { return nil }
        var delay = max(initialDelay, .zero)
        var doublings = max(0, failures - 1)
        while doublings > 0, delay < maxDelay {
            delay *= 2
            doublings -= 1
        }
        return min(delay, maxDelay)
    }
}
