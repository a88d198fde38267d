import Synchronization

extension EventLoop {
    /// Suspends the calling task for `duration`, on the loop's timer heap. Throws
    /// `CancellationError` as soon as the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: ContinuousClock.now.advanced(by: duration))
    }

    /// Suspends the calling task until `deadline`, on the loop's timer heap. Throws
    /// `CancellationError` as soon as the task is cancelled.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard sleeper.start(continuation) else { return }
                let timer = schedule(at: deadline) { sleeper.finish(.success(())) }
                if !sleeper.keep(timer) { cancel(timer) }
            }
        } onCancel: {
            if let timer = sleeper.finish(.failure(CancellationError())) { cancel(timer) }
        }
    }
}

/// One sleep's continuation and timer, whichever of the timer and the cancellation comes first
/// resuming it, once.
private final class Sleeper: Sendable {
    private enum Phase {
        case idle
        case waiting(CheckedContinuation<Void, any Error>, TimerID?)
        case finished
    }

    private let phase = Mutex(Phase.idle)

    /// Takes the continuation; false (and it is resumed with cancellation) if cancelled already.
    func start(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        let cancelled = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return true }
            phase = .waiting(continuation, nil)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Records the timer; false if the sleep already finished (the caller cancels the timer).
    func keep(_ timer: TimerID) -> Bool {
        phase.withLock { phase in
            guard case .waiting(let continuation, nil) = phase else { return false }
            phase = .waiting(continuation, timer)
            return true
        }
    }

    /// Resumes the sleeper with `result` if nothing did yet; returns its timer, to cancel.
    @discardableResult
    func finish(_ result: Result<Void, any Error>) -> TimerID? {
        let taken = phase.withLock { phase -> (CheckedContinuation<Void, any Error>, TimerID?)? in
            defer { phase = .finished }
            guard case .waiting(let continuation, let timer) = phase else { return nil }
            return (continuation, timer)
        }
        taken?.0.resume(with: result)
        return taken?.1
    }
}
