import Synchronization

/// A one-way latch that asks a service to finish: once triggered it stays triggered, and every
/// waiter, present or future, goes on.
public final class ShutdownSignal: Sendable {
    private struct State {
        var triggered = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Whether shutdown was asked for.
    public var isTriggered: Bool { state.withLock { $0.triggered } }

    /// Asks for shutdown; wakes every waiter. Later calls do nothing.
    public func trigger() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.triggered else { return [] }
            state.triggered = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once shutdown is asked for, or at once when the calling task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.triggered || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
