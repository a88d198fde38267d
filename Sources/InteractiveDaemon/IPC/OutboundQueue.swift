import IPCProtocol
import JSONValue
import Synchronization

/// What one connection has yet to write: replies (never dropped) and events (bounded), both
/// bounded in bytes so that a client that does not read cannot grow the daemon.
///
/// Publishers push without waiting. A line pushed while nothing waits and the writer is idle is
/// sent at once on the connection's socket (`writeDirectly(to:)`), on the publisher's turn of
/// the loop: the display path takes no task switch while the client keeps up. What the socket
/// does not take waits here, and the connection's writer task takes everything queued at once. When more than `eventLimit` events or `eventByteLimit` bytes of them wait, newer
/// events are dropped and counted, and a single `events.lagged` line takes their place in the
/// stream, so the subscriber learns exactly where the gap is and how large it was. Replies
/// are never dropped: a client that leaves more than `replyByteLimit` bytes of them unread is
/// cut off instead. What the queue holds (queued, and taken by the writer until it says it
/// wrote it) counts against the daemon's `ClientMemoryBudget` for all local clients, which may stop
/// the connection (`stopReason`).
final class OutboundQueue: Sendable {
    enum Item: Sendable {
        case line([UInt8])
        case lagged(missed: Int)
    }

    /// Why a queue stopped taking lines before its connection ended.
    enum StopReason: Sendable, Equatable {
        /// Its client left more than `replyByteLimit` bytes of replies unread.
        case unreadReplies
        /// All local clients together held more than the budget's `limit`, and this one was
        /// among those holding most (`bytes` when it was stopped).
        case overBudget(bytes: Int, limit: Int)
    }

    fileprivate struct State {
        var items: [Item] = []
        var queuedEvents = 0
        var eventBytes = 0
        var replyBytes = 0
        /// Bytes the writer took and has not written yet.
        var inFlight = 0
        /// Bytes of the client's request line not complete yet (`receiving`).
        var inbound = 0
        /// The most bytes queued at once: a connection that held much asks for memory to be
        /// given back when it ends.
        var peakBytes = 0
        var closed = false
        /// The connection ended (`detach`): never stopped or interrupted again.
        var detached = false
        var stopReason: StopReason?
        /// The connection's socket, written at once when nothing waits (`writeDirectly(to:)`).
        var socket: Int32?
        var waiter: CheckedContinuation<[Item]?, Never>?
        /// Wakes a writer parked on a full socket when the queue is stopped; nil once detached.
        var interrupt: (@Sendable () -> Void)?

        var held: Int { eventBytes + replyBytes + inFlight + inbound }
    }

    /// The connection's id (the budget's key).
    let id: Int
    /// Observers get the budget's first cuts.
    let isObserver: Bool
    let eventLimit: Int
    /// Bytes of events that may wait; past it events are counted as missed.
    let eventByteLimit: Int
    /// Bytes of replies a client may leave unread; past it the client is not reading and is
    /// disconnected.
    let replyByteLimit: Int
    private let budget: ClientMemoryBudget?
    private let state = Mutex(State())

    /// Defaults: 128 KiB of events and 1 MiB of replies per connection (docs/ipc.md, "Limits").
    init(id: Int = 0, isObserver: Bool = false, eventLimit: Int, eventByteLimit: Int = 128 * 1024, replyByteLimit: Int = 1024 * 1024,
         budget: ClientMemoryBudget? = nil) {
        self.id = id
        self.isObserver = isObserver
        self.eventLimit = eventLimit
        self.eventByteLimit = eventByteLimit
        self.replyByteLimit = replyByteLimit
        self.budget = budget
        budget?.register(self)
    }

    /// Queues a reply or another line that must not be dropped. A client that leaves more than
    /// `replyByteLimit` bytes of them unread is closed instead of growing without bound.
    func pushReply(_ line: [UInt8]) { push(.line(line), isEvent: false) }

    /// The most bytes this queue held at once.
    var peakBytes: Int { state.withLock { $0.peakBytes } }

    /// True when the queue closed itself because the client left `replyByteLimit` bytes of
    /// replies unread.
    var overflowed: Bool { state.withLock { $0.stopReason == .unreadReplies } }

    /// Why the queue stopped before its connection ended, if it did.
    var stopReason: StopReason? { state.withLock { $0.stopReason } }

    /// What it holds now: queued, and taken by the writer but not written.
    var heldBytes: Int { state.withLock { $0.held } }

    /// Queues an event line, or counts it as missed when the queue is full.
    func pushEvent(_ line: [UInt8]) { push(.line(line), isEvent: true) }

    /// Queues `count` event lines written back to back, sent together (one `send` when nothing
    /// waits), or counts them all as missed when the queue is full.
    func pushEvents(_ lines: [UInt8], count: Int) { push(.line(lines), isEvent: true, events: count) }

    private func push(_ item: Item, isEvent: Bool, events: Int = 1) {
        var victims: [OutboundQueue] = []
        let wake: (CheckedContinuation<[Item]?, Never>, [Item])? = state.withLock { state -> (CheckedContinuation<[Item]?, Never>, [Item])? in
            guard !state.closed else { return nil }
            var item = item
            // Nothing waits and the writer is parked: the socket may take the line now. What it
            // does not take (all of it when full, or on an error the writer then meets) waits.
            if let socket = state.socket, state.waiter != nil, state.items.isEmpty, state.inFlight == 0, case .line(let line) = item {
                let sent = ClientConnection.sendOnce(line[...], to: socket)
                if sent == line.count { return nil }
                if sent > 0 { item = .line(Array(line[sent...])) }
            }
            let size: Int
            if case .line(let line) = item { size = line.count } else { size = 0 }
            // A line alone is always taken, however long: the limits bound what waits behind it.
            if !isEvent && state.replyBytes > 0 && state.replyBytes + size > replyByteLimit {
                state.closed = true
                state.stopReason = .unreadReplies
                let waiter = state.waiter
                state.waiter = nil
                return waiter.map { ($0, state.takeAll()) }
            }
            if isEvent {
                if state.queuedEvents >= eventLimit || (state.queuedEvents > 0 && state.queuedEvents + events > eventLimit)
                    || (state.eventBytes > 0 && state.eventBytes + size > eventByteLimit) {
                    if case .lagged(let missed)? = state.items.last {
                        state.items[state.items.count - 1] = .lagged(missed: missed + events)
                    } else {
                        state.items.append(.lagged(missed: events))
                    }
                    return nil
                }
                state.queuedEvents += events
            }
            if isEvent { state.eventBytes += size } else { state.replyBytes += size }
            state.peakBytes = max(state.peakBytes, state.held)
            state.items.append(item)
            victims = budget?.holds(id, bytes: state.held) ?? []
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.takeAll())
        }
        if let (waiter, items) = wake { waiter.resume(returning: items) }
        for victim in victims { victim.stop(.overBudget(bytes: victim.heldBytes, limit: budget?.limit ?? 0)) }
    }

    /// Lines pushed while nothing waits go straight to `socket` (a non-blocking stream socket the
    /// connection owns until `detach`).
    func writeDirectly(to socket: Int32) {
        state.withLock { $0.socket = socket }
    }

    /// Everything queued, waiting until something is; nil once closed and drained. What it
    /// returns stays counted as held until the writer calls `written()`. It runs on the caller's
    /// executor (the loop): parking the writer takes no hop to the global pool.
    nonisolated(nonsending) func next() async -> [Item]? {
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

    /// The writer wrote what `next` last returned.
    func written() {
        update { $0.inFlight = 0 }
    }

    /// The connection holds `bytes` of a request line not complete yet: they count against
    /// the budget too.
    func receiving(_ bytes: Int) {
        update { $0.inbound = bytes }
    }

    /// Changes what the queue holds and tells the budget, stopping whom it names.
    private func update(_ change: (inout State) -> Void) {
        let victims: [OutboundQueue] = state.withLock { state in
            let before = state.held
            change(&state)
            guard state.held != before, !state.detached, state.stopReason == nil else { return [] }
            return budget?.holds(id, bytes: state.held) ?? []
        }
        for victim in victims { victim.stop(.overBudget(bytes: victim.heldBytes, limit: budget?.limit ?? 0)) }
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

    /// `interrupt` is called (once) when the budget stops the queue: it must wake a writer
    /// parked on the connection's full socket (a `shutdown` of it).
    func onStop(_ interrupt: @escaping @Sendable () -> Void) {
        state.withLock { $0.interrupt = interrupt }
    }

    /// Stops the queue at once: what it holds is dropped (nothing more is written), the writer
    /// wakes and ends, and the connection's socket is interrupted.
    func stop(_ reason: StopReason) {
        let waiter: CheckedContinuation<[Item]?, Never>? = state.withLock { state in
            guard state.stopReason == nil, !state.detached else { return nil }
            state.closed = true
            state.stopReason = reason
            _ = state.takeAll()
            state.inFlight = 0
            state.inbound = 0
            _ = budget?.holds(id, bytes: 0)
            state.interrupt?()
            state.interrupt = nil
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The connection ends: the queue is closed, counts no more against the budget, and is
    /// never interrupted after this returns (its socket may be closed).
    func detach() {
        state.withLock { state in
            state.closed = true
            state.detached = true
            state.interrupt = nil
            state.socket = nil
        }
        budget?.unregister(id)
    }

    /// The line that stands for a gap of `missed` events.
    static func laggedLine(bootId: String, missed: Int) -> [UInt8] {
        EventEnvelope(bootId: bootId, seq: nil, type: EventsLaggedEvent.type, time: Timestamp.rfc3339(Timestamp.nowMs()),
                      data: EventsLaggedEvent(missed: missed).data).line()
    }
}

extension OutboundQueue.State {
    /// Takes every queued item; their bytes stay held (in flight) until the writer wrote them.
    fileprivate mutating func takeAll() -> [OutboundQueue.Item] {
        let taken = items
        items = []
        queuedEvents = 0
        inFlight += eventBytes + replyBytes
        eventBytes = 0
        replyBytes = 0
        return taken
    }
}
