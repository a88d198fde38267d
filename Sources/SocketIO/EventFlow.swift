import Runtime
import Synchronization

/// What the consumer of `SocketIOClient.events` has taken out, on its way to the client's
/// machine, which decides flow control (`SocketIOClientMachine.consumed`).
///
/// The consumer runs on any thread: it adds to a tally here, which the client drains before it
/// hands out the next event. While reading is paused, the consumption that brings the backlog
/// down to the machine's low-water mark also wakes the client on the loop (once, not per event).
final class EventConsumption: Sendable {
    private struct State {
        var count = 0
        var bytes = 0
        /// While reading is paused: the tally at which the client must be woken.
        var wakeAt: (count: Int, bytes: Int)?
        var wakePending = false
    }

    /// The client to wake (a weak reference, not a closure: a closure kept in a `Mutex` gains a
    /// layer of reabstraction thunks at every `withLock`).
    private struct Target {
        weak var client: SocketIOClient?
    }

    private let state = Mutex(State())
    private let target = Mutex(Target())

    /// Sets the client to wake.
    func attach(_ client: SocketIOClient) {
        target.withLock { $0.client = client }
    }

    /// The consumer took an event of `size` bytes.
    func consumed(size: Int) {
        let wakeNow = state.withLock { state -> Bool in
            state.count += 1
            state.bytes = state.bytes.addingReportingOverflow(max(0, size)).partialValue
            guard let wakeAt = state.wakeAt, !state.wakePending, state.count >= wakeAt.count, state.bytes >= wakeAt.bytes else { return false }
            state.wakePending = true
            return true
        }
        if wakeNow { target.withLock { $0.client }?.scheduleConsumptionDrain() }
    }

    /// The tally since the last call, emptied.
    func take() -> (count: Int, bytes: Int) {
        state.withLock { state in
            defer {
                state.count = 0
                state.bytes = 0
                state.wakePending = false
            }
            return (state.count, state.bytes)
        }
    }

    /// Wake the client once the tally (from now) reaches `threshold`; nil: never (reading runs).
    func wake(at threshold: (count: Int, bytes: Int)?) {
        state.withLock { $0.wakeAt = threshold }
    }
}

/// The server's events, in order, as `SocketIOClient.events` hands them out; taking one out
/// tells the client's flow control that the consumer keeps up.
public struct SocketIOEventStream: AsyncSequence, Sendable {
    public typealias Element = SocketIOEvent
    public typealias Failure = Never

    /// A mailbox rather than an `AsyncStream`: its consumer (the room, an actor on the event loop)
    /// waits and resumes on its own executor, where AsyncStream's internals would take each event
    /// through a thread of the cooperative pool and back.
    let base: Mailbox<(SocketIOEvent, Int)>
    let consumption: EventConsumption

    public struct AsyncIterator: AsyncIteratorProtocol {
        let base: Mailbox<(SocketIOEvent, Int)>
        let consumption: EventConsumption

        public mutating func next() async -> SocketIOEvent? {
            await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> SocketIOEvent? {
            guard let (event, size) = await base.next(isolation: actor) else { return nil }
            consumption.consumed(size: size)
            return event
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base, consumption: consumption)
    }
}
