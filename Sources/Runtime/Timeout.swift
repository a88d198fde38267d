/// Thrown by `withTimeout` when the operation overran.
public struct TimeoutError: Error, CustomStringConvertible {
    /// What timed out, e.g. "connecting to example.org:443".
    public let what: String
    public let timeout: Duration

    public init(what: String, timeout: Duration) {
        self.what = what
        self.timeout = timeout
    }

    public var description: String { "\(what) timed out after \(timeout)" }
}

/// Runs `operation`, cancelling it and throwing `TimeoutError` when it takes longer than
/// `timeout`. The one way the code base waits with a deadline.
public func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, loop: EventLoop = .shared,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await loop.sleep(for: timeout)
            throw TimeoutError(what: what, timeout: timeout)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        return first
    }
}
