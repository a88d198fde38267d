import IPCProtocol
import JSONValue

/// The daemon's event stream and status board.
///
/// Every state owner publishes here: the event goes to each subscriber's queue (encoded once,
/// the bytes shared) and into a replay ring, and the owner's section of the status board is
/// updated in the same step. So `events.subscribe` can take the snapshot (what `daemon.status`
/// returns) and the seq it covers together with the subscription, with nothing in between.
actor EventBus {
    struct Subscriber {
        let queue: OutboundQueue
        let prefixes: [String]?

        func wants(_ type: String) -> Bool {
            guard let prefixes else { return true }
            return prefixes.contains { type.hasPrefix($0) }
        }
    }

    private struct RingEntry {
        let seq: Int
        let type: String
        let line: [UInt8]
    }

    /// Up to this many subscribers (a player and a tool or two), the publisher writes an event
    /// to an idle subscriber's socket itself, sparing a thread hand-off; beyond it the writes
    /// are left to the subscribers' writer tasks, which run in parallel and batch.
    static let directSendLimit = 4

    let bootId: String
    private(set) var seq = 0
    private let ringCapacity: Int
    private var ring: [RingEntry] = []
    private var ringStart = 0
    private var subscribers: [Int: Subscriber] = [:]
    private var status: [String: JSONValue] = [:]
    /// Told the service status line (`STATUS=`) whenever a change of the board changes it.
    private var statusLineSink: (@Sendable (String) -> Void)?
    private var lastStatusLine = ""

    init(bootId: String, ringCapacity: Int = 4096) {
        self.bootId = bootId
        self.ringCapacity = ringCapacity
        ring.reserveCapacity(ringCapacity)
    }

    /// Publishes an event; when `section` is given, the status board's section becomes `status`.
    func publish(_ type: String, _ data: JSONValue, section: String? = nil, status value: JSONValue? = nil) {
        if let section { status[section] = value ?? .null }
        seq += 1
        let line = EventEnvelope(bootId: bootId, seq: seq, type: type, time: Timestamp.rfc3339(Timestamp.nowMs()),
                                 data: data).line()
        remember(RingEntry(seq: seq, type: type, line: line))
        let sendDirectly = subscribers.count <= Self.directSendLimit
        for subscriber in subscribers.values where subscriber.wants(type) {
            subscriber.queue.pushEvent(line, sendDirectly: sendDirectly)
        }
        if let section { statusSectionChanged(section) }
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

    private func statusSectionChanged(_ section: String) {
        guard let statusLineSink, ServiceStatusLine.sections.contains(section) else { return }
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
    func subscribe(connection: Int, queue: OutboundQueue, prefixes: [String]?, since: Int?, sinceBootId: String?,
                   reply: (JSONValue) -> [UInt8]) {
        subscribers[connection] = Subscriber(queue: queue, prefixes: prefixes)
        queue.pushReply(reply(["bootId": .string(bootId), "seq": .number(Double(seq)), "snapshot": snapshot()]))
        guard let since else { return }
        if let sinceBootId, sinceBootId != bootId {
            queue.pushReply(OutboundQueue.laggedLine(bootId: bootId, missed: seq))
            return
        }
        let oldest = ring.isEmpty ? seq + 1 : ring[ringStart].seq
        if since + 1 < oldest {
            queue.pushReply(OutboundQueue.laggedLine(bootId: bootId, missed: oldest - since - 1))
        }
        let subscriber = Subscriber(queue: queue, prefixes: prefixes)
        for offset in 0..<ring.count {
            let entry = ring[(ringStart + offset) % ring.count]
            if entry.seq > since, subscriber.wants(entry.type) { queue.pushReply(entry.line) }
        }
    }

    func unsubscribe(connection: Int) {
        subscribers.removeValue(forKey: connection)
    }

    var subscriberCount: Int { subscribers.count }

    private func remember(_ entry: RingEntry) {
        if ring.count < ringCapacity {
            ring.append(entry)
        } else {
            ring[ringStart] = entry
            ringStart = (ringStart + 1) % ringCapacity
        }
    }
}
