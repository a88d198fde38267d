import IPCProtocol
import JSONValue
import Runtime

/// The daemon's event stream and status board.
///
/// Every state owner publishes here: the event goes to each subscriber's queue (encoded once,
/// the bytes shared) and into a replay ring, and the owner's section of the status board is
/// updated in the same step. So `events.subscribe` can take the snapshot (what `daemon.status`
/// returns) and the seq it covers together with the subscription, with nothing in between.
/// An event may carry a redacted version of its data (a play ticket's token nulled): observer-role
/// subscribers get that one, live and in replays.
actor EventBus {
    /// Pinned to the event loop: publishers on the display path reach it without a hop.
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    struct Subscriber {
        let queue: OutboundQueue
        let prefixes: [String]?
        let role: ClientRole

        func wants(_ type: String) -> Bool {
            guard let prefixes else { return true }
            return prefixes.contains { type.hasPrefix($0) }
        }
    }

    let bootId: String
    private(set) var seq = 0
    private var ring: ReplayRing
    /// How many bytes of held events one `since` replays at most; older ones become an
    /// `events.lagged` (a client re-subscribing in a loop cannot queue the whole ring again
    /// and again).
    private let replayByteLimit: Int
    private var subscribers: [Int: Subscriber] = [:]
    private var status: [String: JSONValue] = [:]
    /// Told the service status line (`STATUS=`) whenever a change of the board changes it.
    private var statusLineSink: (@Sendable (String) -> Void)?
    private var lastStatusLine = ""
    /// A status line is to be composed at the end of this turn of the loop.
    private var statusLinePending = false

    /// Defaults: the last 4096 events, or fewer when they exceed 2 MiB; a replay of 512 KiB at
    /// most (docs/ipc.md, "Limits").
    init(bootId: String, ringCapacity: Int = 4096, ringByteCapacity: Int = 2 * 1024 * 1024,
         replayByteLimit: Int = 512 * 1024) {
        self.bootId = bootId
        ring = ReplayRing(capacity: ringCapacity, byteCapacity: ringByteCapacity)
        self.replayByteLimit = replayByteLimit
    }

    /// Publishes an event; when `section` is given, the status board's section becomes `status`.
    /// `observerData`, when given, is what observer-role subscribers get instead of `data`.
    func publish(_ type: String, _ data: JSONValue, section: String? = nil, status value: JSONValue? = nil,
                 observerData: JSONValue? = nil) {
        if let section { status[section] = value ?? .null }
        seq += 1
        let time = Timestamp.rfc3339(Timestamp.nowMs())
        let entry = ReplayRing.Entry(
            seq: seq, type: type, line: EventEnvelope(bootId: bootId, seq: seq, type: type, time: time, data: data).line(),
            observerLine: observerData.map { EventEnvelope(bootId: bootId, seq: seq, type: type, time: time, data: $0).line() })
        ring.append(entry)
        for subscriber in subscribers.values where subscriber.wants(type) {
            subscriber.queue.pushEvent(entry.line(for: subscriber.role))
        }
        if let section { statusSectionChanged(section) }
    }

    /// Publishes a typed event (docs/ipc.md, Events); `observerEvent`, when given, is what
    /// observer-role subscribers get instead (a play ticket without its token).
    func publish<Event: EventData>(_ event: Event, section: String? = nil, status value: JSONValue? = nil,
                                   observerEvent: Event? = nil) {
        publish(Event.type, event.data, section: section, status: value, observerData: observerEvent?.data)
    }

    /// Updates one section of the status board without an event.
    func setStatus(_ section: String, _ value: JSONValue) {
        status[section] = value
        statusSectionChanged(section)
    }

    /// Sets one member of an object section of the status board without an event.
    func setStatusMember(_ section: String, _ member: String, _ value: JSONValue) {
        var members = status[section]?.objectValue ?? [:]
        members[member] = value
        status[section] = .object(members)
        statusSectionChanged(section)
    }

    /// The service status line of the board as it is now.
    var statusLine: String { ServiceStatusLine.compose(status) }

    /// Sends the status line to `sink` after every change of it from now on.
    func onStatusLineChange(_ sink: @escaping @Sendable (String) -> Void) {
        statusLineSink = sink
        lastStatusLine = statusLine
    }

    /// The line is composed and told once per turn of the event loop, after the turn's events
    /// were queued for the players: a burst of changes (an overlay replacing another) tells one.
    private func statusSectionChanged(_ section: String) {
        guard statusLineSink != nil, !statusLinePending, ServiceStatusLine.sections.contains(section) else { return }
        statusLinePending = true
        EventLoop.shared.execute { [weak self] in self?.assumeIsolated { $0.tellStatusLine() } }
    }

    private func tellStatusLine() {
        statusLinePending = false
        guard let statusLineSink else { return }
        let line = statusLine
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        statusLineSink(line)
    }

    /// What `daemon.status` returns.
    func snapshot() -> JSONValue {
        var members = status
        members["bootId"] = .string(bootId)
        return .object(members)
    }

    /// Subscribes `connection`: queues the reply `{bootId, seq, snapshot}` first, then, for
    /// `since`, an `events.lagged` if events are lost and the held events after `since`.
    /// Later events follow in order. A second call on the same connection replaces the filter.
    func subscribe(connection: Int, queue: OutboundQueue, prefixes: [String]?, role: ClientRole, since: Int?,
                   sinceBootId: String?, reply: (SubscribeResult) -> [UInt8]) {
        let subscriber = Subscriber(queue: queue, prefixes: prefixes, role: role)
        subscribers[connection] = subscriber
        queue.pushReply(reply(SubscribeResult(bootId: bootId, seq: seq, snapshot: snapshot())))
        guard let since else { return }
        if let sinceBootId, sinceBootId != bootId {
            queue.pushReply(OutboundQueue.laggedLine(bootId: bootId, missed: seq))
            return
        }
        let replay = ring.entries(after: since, byteLimit: replayByteLimit) { subscriber.wants($0.type) }
        // Lost: the events no longer held, and those the replay's byte limit leaves out.
        let missed = max(0, (ring.oldestSeq ?? seq + 1) - since - 1) + replay.skipped
        if missed > 0 { queue.pushReply(OutboundQueue.laggedLine(bootId: bootId, missed: missed)) }
        for entry in replay.entries { queue.pushReply(entry.line(for: role)) }
    }

    func unsubscribe(connection: Int) {
        subscribers.removeValue(forKey: connection)
    }

    var subscriberCount: Int { subscribers.count }
}
