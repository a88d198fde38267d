import Runtime

/// A service given as a function of its shutdown signal, for the daemon's small services.
struct FunctionService: Service {
    let body: @Sendable (ShutdownSignal) async throws -> Void

    func run(until shutdown: ShutdownSignal) async throws { try await body(shutdown) }
}

extension ShutdownSignal {
    /// Runs `work` until it returns or shutdown is asked for (then `work` is cancelled).
    func cancelling(_ work: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
