/// Runs `body`, cancelling it and throwing `SocketIOError.timeout(what)` when it takes longer than
/// `timeout`. A value the body produces after the deadline is dropped (its resources are released
/// by their owners' deinitialisers).
func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw SocketIOError.timeout(what)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        return first
    }
}
