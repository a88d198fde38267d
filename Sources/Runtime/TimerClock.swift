/// The time a service's timers run on: the current instant, and sleeping until a deadline
/// before doing what the timer is for.
///
/// The daemon's is the event loop (`EventLoop.shared`: `ContinuousClock` and the loop's timer
/// heap). A unit test gives one that moves only when the test advances it and that lets each
/// timer's work finish before it moves on, so that the test knows when that work is done
/// without sleeping.
public protocol TimerClock: Sendable {
    /// The current instant, on the clock of `ContinuousClock` (the one deadlines are taken on).
    var now: ContinuousClock.Instant { get }

    /// Suspends the calling task until `deadline`, then runs `fire` in it and returns true.
    /// Returns false, without running `fire`, as soon as the task is cancelled before the deadline.
    @discardableResult
    func sleep(until deadline: ContinuousClock.Instant, then fire: @Sendable () async -> Void) async -> Bool
}

extension TimerClock {
    /// `sleep(until:then:)` for the deadline `duration` from now.
    @discardableResult
    public func sleep(for duration: Duration, then fire: @Sendable () async -> Void) async -> Bool {
        await sleep(until: now.advanced(by: duration), then: fire)
    }
}

extension EventLoop: TimerClock {
    public var now: ContinuousClock.Instant { .now }

    @discardableResult
    public func sleep(until deadline: ContinuousClock.Instant, then fire: @Sendable () async -> Void) async -> Bool {
        guard (try? await sleep(until: deadline)) != nil else { return false }
        await fire()
        return true
    }
}
