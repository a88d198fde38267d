import Synchronization

/// A queue of messages from any thread to one receiving task, unbounded (the sender bounds what it
/// sends). Unlike `AsyncStream`, whose internals run on the cooperative pool whatever the caller,
/// `next` runs on, and resumes on, the receiver's own actor: an actor on the bookkeeping executor
/// that reads a mailbox filled from the event loop wakes no other thread.
public final class Mailbox<Message: Sendable>: Sendable {
    private struct State {
        /// Queued messages are `messages[head...]`; a taken one is nil at once (it holds nothing
        /// from then on), and the taken prefix is dropped once it is half of the array.
        var messages: [Message?] = []
        var head = 0
        var receiver: CheckedContinuation<Message?, Never>?
        var finished = false

        /// The oldest queued message, taken out.
        mutating func take() -> Message? {
            guard head < messages.count else { return nil }
            let message = messages[head]
            messages[head] = nil
            head += 1
            if head == messages.count {
                // A flood's large buffer goes back to the allocator; a small one is kept for reuse.
                messages.removeAll(keepingCapacity: messages.capacity <= Mailbox.keptCapacity)
                head = 0
            } else if head >= Mailbox.keptCapacity && head * 2 >= messages.count {
                // Under a steady flow the queue may never empty: drop the taken prefix instead.
                messages.removeFirst(head)
                head = 0
            }
            return message
        }
    }

    /// The queue's capacity (in messages) kept after it empties; the taken prefix is dropped
    /// when it reaches this and is half of the queue.
    package static var keptCapacity: Int { 1024 }

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
                    if state.head < state.messages.count { return .some(state.take()) }
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
