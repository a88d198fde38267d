/// Deadlines for many keys, served by one sleeping task instead of one per key.
///
/// A task per key must be woken to be cancelled (each replaced overlay woke a thread on the
/// display path) and holds its memory until its deadline. Here removing a key, or adding one
/// that falls due after the earliest, touches no task; the owner (an actor) keeps one timer
/// task, armed for the earliest deadline, and re-arms it when it fires.
struct DeadlineSchedule<Key: Hashable & Sendable> {
    private var deadlines: [Key: ContinuousClock.Instant] = [:]
    private var timer: Task<Void, Never>?
    private var timerTarget: ContinuousClock.Instant?

    /// Sets `key`'s deadline. Returns the instant to arm a timer for (then call `armed`) when the
    /// current timer would fire after it, or there is none.
    mutating func set(_ key: Key, at deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        deadlines[key] = deadline
        if let timerTarget, timerTarget <= deadline { return nil }
        return deadline
    }

    func contains(_ key: Key) -> Bool { deadlines[key] != nil }

    mutating func remove(_ key: Key) {
        deadlines.removeValue(forKey: key)
    }

    /// Takes `timer` as the one armed for `target`; the one it replaces is cancelled.
    mutating func armed(_ timer: Task<Void, Never>, at target: ContinuousClock.Instant) {
        self.timer?.cancel()
        self.timer = timer
        timerTarget = target
    }

    /// For the timer that fired: the keys due at `now` (removed), earliest first, and the
    /// instant to arm the next timer for (nil when no deadline is left).
    mutating func takeDue(now: ContinuousClock.Instant) -> (due: [Key], next: ContinuousClock.Instant?) {
        let due = deadlines.filter { $0.value <= now }.sorted { $0.value < $1.value }.map(\.key)
        for key in due { deadlines.removeValue(forKey: key) }
        timer = nil
        timerTarget = nil
        return (due, deadlines.values.min())
    }
}
