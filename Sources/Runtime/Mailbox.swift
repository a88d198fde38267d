import Synchronization

/// A queue of messages from any thread to one receiving task, unbounded (the sender bounds what it
/// sends). Unlike `AsyncStream`, whose internals run on the cooperative pool whatever the caller,
/// `next` runs on, and resumes on, the receiver's own actor: an actor on the bookkeeping executor
/// that reads a mailbox filled from the event loop wakes no other thread.
public final class Mailbox<Message: Sendable>: Sendable {
    private struct State {
        var messages: [Message] = []
        var head = 0
        var receiver: CheckedContinuation<Message?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Queues `message`; dropped after `finish`.
    public func send(_ message: Message) {
        let receiver = state.withLock { state -> CheckedContinuation<Message?, Never>? in
            guard !state.finished else { return nil }
            if let receiver = state.receiver {
                state.receiver = nil
                return receiver
            }
            state.messages.append(message)
            return nil
        }
        receiver?.resume(returning: message)
    }

    /// No more messages: the receiver gets what is queued, then nil.
    public func finish() {
        let receiver = state.withLock { state -> CheckedContinuation<Message?, Never>? in
            state.finished = true
            defer { state.receiver = nil }
            return state.receiver
        }
        receiver?.resume(returning: nil)
    }

    /// The next message, waiting for one; nil once finished and drained, or when the calling task
    /// is cancelled. One receiver at a time.
    public func next(isolation: isolated (any Actor)? = #isolation) async -> Message? {
        await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: isolation) { (continuation: CheckedContinuation<Message?, Never>) in
                let ready = state.withLock { state -> Message?? in
                    if state.head < state.messages.count {
                        let message = state.messages[state.head]
                        state.head += 1
                        if state.head == state.messages.count {
                            state.messages.removeAll(keepingCapacity: state.messages.count <= 1024)
                            state.head = 0
                        }
                        return .some(message)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.receiver = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let receiver = state.withLock { state -> CheckedContinuation<Message?, Never>? in
                defer { state.receiver = nil }
                return state.receiver
            }
            receiver?.resume(returning: nil)
        }
    }
}
