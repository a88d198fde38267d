import Synchronization

/// A wait for tracking to reach a point (`TrackingFeed.settled`, a store flush), resumed once:
/// by tracking, or sooner by a time limit. `resume` may come before `wait`.
final class SettleWaiter: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, Never>)
        case resumed
    }

    private let state = Mutex(State.idle)

    /// Suspends until `resume` was called (at once if it was already).
    func wait(isolation: isolated (any Actor)? = #isolation) async {
        await withCheckedContinuation(isolation: isolation) { continuation in
            let resumed = state.withLock { state -> Bool in
                if case .resumed = state { return true }
                state = .waiting(continuation)
                return false
            }
            if resumed { continuation.resume() }
        }
    }

    /// Ends the wait; later calls do nothing.
    func resume() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .resumed }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume()
    }
}
