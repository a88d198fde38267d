import Runtime
import Synchronization

/// A `TimerClock` that moves only when the test advances it.
///
/// `advance(by:)` wakes the sleepers that fall due, earliest deadline first (in the order they
/// began sleeping for the same deadline), one at a time: each runs what its timer does to the
/// end before the next wakes and before `advance` returns. So after `advance` the test knows that
/// the timers due have done their work. A sleeper's task starts sleeping on its own schedule
/// (a service starts its timers as child tasks): `sleeps(count:)` waits until it has.
/// One task advances the clock at a time.
final class TestClock: TimerClock {
    private struct Sleeper {
        let id: Int
        let deadline: ContinuousClock.Instant
        let wake: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var now: ContinuousClock.Instant
        /// In the order they began sleeping.
        var sleepers: [Sleeper] = []
        var nextId = 0
        /// The advancing task, waiting for a woken sleeper's timer work to end.
        var advancer: (id: Int, continuation: CheckedContinuation<Void, Never>)?
    }

    /// The instant the clock started at.
    let start: ContinuousClock.Instant
    private let state: Mutex<State>
    /// How many sleeps began on this clock, for `sleeps(count:)`.
    private let sleepsBegun = CountWaiters()

    init(start: ContinuousClock.Instant = .now) {
        self.start = start
        state = Mutex(State(now: start))
    }

    var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// The deadlines of the tasks sleeping now, earliest first.
    var deadlines: [ContinuousClock.Instant] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    @discardableResult
    func sleep(until deadline: ContinuousClock.Instant, then fire: @Sendable () async -> Void) async -> Bool {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        let woken = await withTaskCancellationHandler {
            await withCheckedContinuation { (wake: CheckedContinuation<Bool, Never>) in
                // Checked under the lock, so that a cancellation either comes before (and is seen
                // here) or finds the sleeper registered.
                let answer = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if deadline <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, wake: wake))
                    return nil
                }
                sleepsBegun.add(1)
                if let answer { wake.resume(returning: answer) }
            }
        } onCancel: {
            let wake = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).wake
            }
            wake?.resume(returning: false)
        }
        guard woken else { return false }
        await fire()
        let advancer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let advancer = state.advancer, advancer.id == id else { return nil }
            state.advancer = nil
            return advancer.continuation
        }
        advancer?.resume()
        return true
    }

    /// Moves the clock `duration` forward, waking each sleeper due on the way at its deadline
    /// and waiting for its timer work, earliest first. Sleeps that this work begins are woken
    /// too when they fall due by the end.
    func advance(by duration: Duration) async {
        let target = now.advanced(by: duration)
        while let due = takeFirstDue(by: target) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLock { $0.advancer = (due.id, continuation) }
                due.wake.resume(returning: true)
            }
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Waits until `count` sleeps in all began on this clock (woken at once by a deadline
    /// already passed, or cancelled, included).
    func sleeps(count: Int) async { await sleepsBegun.wait(until: count) }

    /// Removes the earliest sleeper due by `target` and moves the clock to its deadline.
    private func takeFirstDue(by target: ContinuousClock.Instant) -> Sleeper? {
        state.withLock { state in
            let due = state.sleepers.enumerated().filter { $0.element.deadline <= target }
            guard let first = due.min(by: { $0.element.deadline < $1.element.deadline }) else { return nil }
            state.sleepers.remove(at: first.offset)
            state.now = max(state.now, first.element.deadline)
            return first.element
        }
    }
}
