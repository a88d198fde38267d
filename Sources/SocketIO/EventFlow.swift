import Synchronization

/// Flow control between the connection and the consumer of `SocketIOClient.events`: while more
/// than `highCount` events or `highBytes` bytes of them wait unconsumed, the connection stops
/// reading (TCP then slows the server down); it reads again once the backlog is down to
/// `lowCount` and `lowBytes`. So a server that sends faster than the consumer works makes the
/// client hold a bounded backlog instead of everything it sent.
final class EventFlow: Sendable {
    private struct State {
        var count = 0
        var bytes = 0
        var paused = false
        /// Pauses or resumes the current connection's reading.
        var pause: (@Sendable (Bool) -> Void)?
    }

    let highCount: Int
    let highBytes: Int
    let lowCount: Int
    let lowBytes: Int
    private let state = Mutex(State())

    init(highCount: Int = 256, highBytes: Int = 1 << 20, lowCount: Int = 64, lowBytes: Int = 256 << 10) {
        self.highCount = highCount
        self.highBytes = highBytes
        self.lowCount = lowCount
        self.lowBytes = lowBytes
    }

    /// True while reading is paused.
    var isPaused: Bool { state.withLock { $0.paused } }

    /// The connection whose reading this controls from now on (nil: none); paused at once when
    /// the backlog is still high.
    func attach(_ pause: (@Sendable (Bool) -> Void)?) {
        let pauseNow = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            state.pause = pause
            return state.paused ? pause : nil
        }
        pauseNow?(true)
    }

    /// An event of `size` bytes was handed to the consumer's buffer.
    func produced(size: Int) {
        let pause = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            state.count += 1
            state.bytes += size
            guard !state.paused, state.count > highCount || state.bytes > highBytes else { return nil }
            state.paused = true
            return state.pause
        }
        pause?(true)
    }

    /// The consumer took an event of `size` bytes out of its buffer.
    func consumed(size: Int) {
        let resume = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            state.count = max(0, state.count - 1)
            state.bytes = max(0, state.bytes - size)
            guard state.paused, state.count <= lowCount, state.bytes <= lowBytes else { return nil }
            state.paused = false
            return state.pause
        }
        resume?(false)
    }
}

/// The server's events, in order, as `SocketIOClient.events` hands them out; taking one out
/// tells the client's flow control that the consumer keeps up (see `EventFlow`).
public struct SocketIOEventStream: AsyncSequence, Sendable {
    public typealias Element = SocketIOEvent
    public typealias Failure = Never

    let base: AsyncStream<(SocketIOEvent, Int)>
    let flow: EventFlow

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<(SocketIOEvent, Int)>.Iterator
        let flow: EventFlow

        public mutating func next() async -> SocketIOEvent? {
            await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> SocketIOEvent? {
            guard let (event, size) = await base.next(isolation: actor) else { return nil }
            flow.consumed(size: size)
            return event
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), flow: flow)
    }
}
