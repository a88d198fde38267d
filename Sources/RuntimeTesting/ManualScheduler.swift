/// Test support for code on the loop's timers (test targets only; no product links it).
import Runtime
import Synchronization

/// A `TimerScheduler` whose time moves only when the test advances it: `advance(by:)` runs the
/// timers that fall due, earliest first (in the order they were set for the same instant),
/// timers they set included, before it returns.
public final class ManualScheduler: TimerScheduler, Sendable {
    private struct Timer {
        let id: TimerID
        let deadline: ContinuousClock.Instant
        let work: @LoopActor @Sendable () -> Void
    }

    private struct State {
        var now: ContinuousClock.Instant
        var timers: [Timer] = []
        var nextId = 0
    }

    /// The instant the clock started at.
    public let start: ContinuousClock.Instant
    private let state: Mutex<State>

    public init(start: ContinuousClock.Instant = .now) {
        self.start = start
        state = Mutex(State(now: start))
    }

    public var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// The deadlines of the timers set now, earliest first.
    public var deadlines: [ContinuousClock.Instant] { state.withLock { $0.timers.map(\.deadline).sorted() } }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @LoopActor @Sendable () -> Void) -> TimerID {
        state.withLock { state in
            state.nextId += 1
            let id = TimerID(value: UInt64(state.nextId))
            state.timers.append(Timer(id: id, deadline: deadline, work: work))
            return id
        }
    }

    public func cancel(_ timer: TimerID) {
        state.withLock { $0.timers.removeAll { $0.id == timer } }
    }

    /// Moves the clock `duration` forward, running each timer due on the way at its deadline.
    @LoopActor
    public func advance(by duration: Duration) {
        let target = now.advanced(by: duration)
        while let due = takeFirstDue(by: target) { due.work() }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Removes the earliest timer due by `target` and moves the clock to its deadline.
    private func takeFirstDue(by target: ContinuousClock.Instant) -> Timer? {
        state.withLock { state in
            guard let first = state.timers.indices.filter({ state.timers[$0].deadline <= target })
                .min(by: { state.timers[$0].deadline < state.timers[$1].deadline }) else { return nil }
            let timer = state.timers.remove(at: first)
            state.now = max(state.now, timer.deadline)
            return timer
        }
    }
}
