import Dispatch
import Synchronization

/// Runs a call that blocks its thread (`getaddrinfo`) on a Dispatch worker, so that it never holds
/// the event loop or a thread of Swift's cooperative pool. The worker thread ends when idle.
public enum BlockingCall {
    private static let queue = DispatchQueue(label: "interactived.blocking", attributes: .concurrent)

    /// The result of `body`, run on a worker. Cancellation returns at once with
    /// `CancellationError`; the call itself still finishes in the background, its result dropped.
    public static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        // The continuation is taken out under the lock and resumed outside it: resuming takes the
        // task's own lock, which cancellation holds while it calls `onCancel`.
        let slot = Mutex<CheckedContinuation<Value, any Error>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                slot.withLock { $0 = continuation }
                if Task.isCancelled {
                    // `onCancel` ran before the continuation was stored.
                    slot.withLock { taken in defer { taken = nil }; return taken }?.resume(throwing: CancellationError())
                    return
                }
                queue.async {
                    let result = Result { try body() }
                    slot.withLock { taken in defer { taken = nil }; return taken }?.resume(with: result)
                }
            }
        } onCancel: {
            slot.withLock { taken in defer { taken = nil }; return taken }?.resume(throwing: CancellationError())
        }
    }
}
