/// Deadlines for many keys, served by one timer instead of one per key. Pure.
///
/// The owner (an actor) keeps one timer, armed for the earliest deadline, and re-arms it when it
/// fires. Removing a key, or adding one that falls due after the armed timer, needs no new timer
/// (with a timer per key, each replaced overlay woke a task on the display path). A timer that an
/// earlier one replaced still wakes at its own time: its generation (`armed`) is then no longer
/// current and it does nothing.
struct DeadlineSchedule<Key: Hashable & Sendable>: Sendable {
    private var deadlines: [Key: ContinuousClock.Instant] = [:]
    private var timerTarget: ContinuousClock.Instant?
    private var generation = 0

    /// Sets `key`'s deadline. Returns the instant to arm a timer for (then call `armed`) when the
    /// current timer would fire after it, or there is none.
    mutating func set(_ key: Key, at deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        deadlines[key] = deadline
        if let timerTarget, timerTarget <= deadline { return nil }
        return deadline
    }

    func contains(_ key: Key) -> Bool { deadlines[key] != nil }

    /// `key`'s deadline, if it has one.
    func deadline(of key: Key) -> ContinuousClock.Instant? { deadlines[key] }

    mutating func remove(_ key: Key) {
        deadlines.removeValue(forKey: key)
    }

    /// The owner armed a timer for `target`, replacing any other. Returns the timer's generation,
    /// for `isCurrent` when it wakes.
    mutating func armed(at target: ContinuousClock.Instant) -> Int {
        generation &+= 1
        timerTarget = target
        return generation
    }

    /// Whether the timer of `generation` is the one armed (a replaced one must do nothing).
    func isCurrent(_ generation: Int) -> Bool { timerTarget != nil && generation == self.generation }

    /// For the timer that fired: the keys due at `now` (removed), earliest first, and the
    /// instant to arm the next timer for (nil when no deadline is left).
    mutating func takeDue(now: ContinuousClock.Instant) -> (due: [Key], next: ContinuousClock.Instant?) {
        let due = deadlines.filter { $0.value <= now }.sorted { $0.value < $1.value }.map(\.key)
        for key in due { deadlines.removeValue(forKey: key) }
        timerTarget = nil
        return (due, deadlines.values.min())
    }
}
