/// Timers as the parts on the loop take them: do this at that instant, on the loop. The daemon's
/// scheduler is the event loop (`EventLoop.shared`: `ContinuousClock` and its timer heap); a unit
/// test gives one whose time moves only when the test advances it, running what falls due then.
/// The one timer idiom of the code base (a wait with a deadline on an `async` operation is
/// `withTimeout`).
public protocol TimerScheduler: Sendable {
    /// The current instant, on the clock of `ContinuousClock` (the one deadlines are taken on).
    var now: ContinuousClock.Instant { get }

    /// Runs `work` on the loop at `deadline` (at once if it has passed).
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @LoopActor @Sendable () -> Void) -> TimerID

    /// Cancels a timer; nothing happens if it already ran.
    func cancel(_ timer: TimerID)
}

extension EventLoop: TimerScheduler {
    public var now: ContinuousClock.Instant { .now }
}
