import Synchronization

/// What the consumer of `SocketIOClient.events` has taken out, on its way to the client's
/// machine, which decides flow control (`SocketIOClientMachine.consumed`).
///
/// The consumer runs on any thread: it adds to a tally here, which the client drains before it
/// hands out the next event. While reading is paused (only then is the tally awaited), the first
/// consumption also wakes the client on the loop.
final class EventConsumption: Sendable {
    private struct State {
        var count = 0
        var bytes = 0
        /// Reading is paused: a consumption must wake the client.
        var paused = false
        var wakePending = false
    }

    private let state = Mutex(State())
    /// Wakes the client (set once, by the client).
    private let wake = Mutex<(@Sendable () -> Void)?>(nil)

    /// Sets what wakes the client.
    func setWake(_ wake: @escaping @Sendable () -> Void) {
        self.wake.withLock { $0 = wake }
    }

    /// The consumer took an event of `size` bytes.
    func consumed(size: Int) {
        let wakeNow = state.withLock { state -> Bool in
            state.count += 1
            state.bytes = state.bytes.addingReportingOverflow(max(0, size)).partialValue
            guard state.paused, !state.wakePending else { return false }
            state.wakePending = true
            return true
        }
        if wakeNow { wake.withLock { $0 }?() }
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

    /// Whether consumptions must wake the client (reading is paused).
    func setPaused(_ paused: Bool) {
        state.withLock { $0.paused = paused }
    }
}

/// The server's events, in order, as `SocketIOClient.events` hands them out; taking one out
/// tells the client's flow control that the consumer keeps up.
public struct SocketIOEventStream: AsyncSequence, Sendable {
    public typealias Element = SocketIOEvent
    public typealias Failure = Never

    let base: AsyncStream<(SocketIOEvent, Int)>
    let consumption: EventConsumption

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<(SocketIOEvent, Int)>.Iterator
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
        AsyncIterator(base: base.makeAsyncIterator(), consumption: consumption)
    }
}
