import Runtime

/// Keeps the store small: at start and then every day, answered timelines and predict results
/// older than 30 days, or past the newest 10,000 of each, are deleted (`Store.prune`).
enum StoreUpkeep {
    static let interval = Duration.seconds(86_400)

    /// Until cancelled: prunes now, then every `interval`. `sleep` waits (the loop's timers in
    /// the daemon; a test's own, which lets time pass at once) and `nowMs` tells the time.
    static func run(_ store: Store, log: Logger,
                    sleep: @Sendable (Duration) async throws -> Void = { try await EventLoop.shared.sleep(for: $0) },
                    nowMs: @Sendable () -> Int64 = Timestamp.nowMs) async {
        while !Task.isCancelled {
            await prune(store, log: log, nowMs: nowMs())
            do { try await sleep(interval) } catch { return }
        }
    }

    static func prune(_ store: Store, log: Logger, nowMs: Int64) async {
        do {
            let removed = try await store.prune(nowMs: nowMs)
            if removed > 0 {
                log.info("Pruned \(removed) answered timelines and predict results (older than 30 days, or past 10,000 of each)")
            }
        } catch {
            log.warning("Cannot prune the store's answered timelines and predict results: \(error)")
        }
    }
}
