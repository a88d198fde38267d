import IPCProtocol
import JSONValue
import Synchronization

/// What one connection has yet to write: replies (never dropped) and events (bounded), both
/// bounded in bytes so that a client that does not read cannot grow the daemon.
///
/// Publishers push without waiting; the connection's writer task takes everything queued at
/// once. When more than `eventLimit` events or `eventByteLimit` bytes of them wait, newer
/// events are dropped and counted, and a single `events.lagged` line takes their place in the
/// stream, so the subscriber learns exactly where the gap is and how large it was. Replies
/// are never dropped: a client that leaves more than `replyByteLimit` bytes of them unread is
/// cut off instead.
final class OutboundQueue: Sendable {
    enum Item: Sendable {
        case line([UInt8])
        case lagged(missed: Int)
    }

    fileprivate struct State {
        var items: [Item] = []
        var queuedEvents = 0
        var eventBytes = 0
        var replyBytes = 0
        /// The most bytes queued at once: a connection that held much asks for memory to be
        /// given back when it ends.
        var peakBytes = 0
        var closed = false
        var overflowed = false
        var waiter: CheckedContinuation<[Item]?, Never>?
    }

    let eventLimit: Int
    /// Bytes of events that may wait; past it events are counted as missed.
    let eventByteLimit: Int
    /// Bytes of replies a client may leave unread; past it the client is not reading and is
    /// disconnected.
    let replyByteLimit: Int
    private let state = Mutex(State())

    /// Defaults: 128 KiB of events and 1 MiB of replies per connection (docs/ipc.md, "Limits").
    init(eventLimit: Int, eventByteLimit: Int = 128 * 1024, replyByteLimit: Int = 1024 * 1024) {
        self.eventLimit = eventLimit
        self.eventByteLimit = eventByteLimit
        self.replyByteLimit = replyByteLimit
    }

    /// Queues a reply or another line that must not be dropped. A client that leaves more than
    /// `replyByteLimit` bytes of them unread is closed instead of growing without bound.
    func pushReply(_ line: [UInt8]) { push(.line(line), isEvent: false) }

    /// The most bytes this queue held at once.
    var peakBytes: Int { state.withLock { $0.peakBytes } }

    /// True when the queue closed itself because the client left `replyByteLimit` bytes of
    /// replies unread.
    var overflowed: Bool { state.withLock { $0.overflowed } }

    /// Queues an event line, or counts it as missed when the queue is full.
    func pushEvent(_ line: [UInt8]) { push(.line(line), isEvent: true) }

    private func push(_ item: Item, isEvent: Bool) {
        let wake: (CheckedContinuation<[Item]?, Never>, [Item])? = state.withLock { state -> (CheckedContinuation<[Item]?, Never>, [Item])? in
            guard !state.closed else { return nil }
            let size: Int
            if case .line(let line) = item { size = line.count } else { size = 0 }
            // A line alone is always taken, however long: the limits bound what waits behind it.
            if !isEvent && state.replyBytes > 0 && state.replyBytes + size > replyByteLimit {
                state.closed = true
                state.overflowed = true
                let waiter = state.waiter
                state.waiter = nil
                return waiter.map { ($0, state.takeAll()) }
            }
            if isEvent {
                if state.queuedEvents >= eventLimit || (state.eventBytes > 0 && state.eventBytes + size > eventByteLimit) {
                    if case .lagged(let missed)? = state.items.last {
                        state.items[state.items.count - 1] = .lagged(missed: missed + 1)
                    } else {
                        state.items.append(.lagged(missed: 1))
                    }
                    return nil
                }
                state.queuedEvents += 1
            }
            if isEvent { state.eventBytes += size } else { state.replyBytes += size }
            state.peakBytes = max(state.peakBytes, state.eventBytes + state.replyBytes)
            state.items.append(item)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.takeAll())
        }
        if let (waiter, items) = wake { waiter.resume(returning: items) }
    }

    /// Everything queued, waiting until something is; nil once closed and drained.
    func next() async -> [Item]? {
        await withCheckedContinuation { continuation in
            let ready: [Item]?? = state.withLock { state in
                if !state.items.isEmpty { return .some(state.takeAll()) }
                if state.closed { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// No more pushes are accepted; the writer drains what is queued, then `next` returns nil.
    func close() {
        let waiter: CheckedContinuation<[Item]?, Never>? = state.withLock { state in
            state.closed = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The line that stands for a gap of `missed` events.
    static func laggedLine(bootId: String, missed: Int) -> [UInt8] {
        EventEnvelope(bootId: bootId, seq: nil, type: EventsLaggedEvent.type, time: Timestamp.rfc3339(Timestamp.nowMs()),
                      data: EventsLaggedEvent(missed: missed).data).line()
    }
}

extension OutboundQueue.State {
    fileprivate mutating func takeAll() -> [OutboundQueue.Item] {
        let taken = items
        items = []
        queuedEvents = 0
        eventBytes = 0
        replyBytes = 0
        return taken
    }
}
