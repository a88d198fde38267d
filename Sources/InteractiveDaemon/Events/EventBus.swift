import IPCProtocol
import JSONValue

/// The daemon's event stream and status board.
///
/// Every state owner publishes here: the event goes to each subscriber's queue (encoded once,
/// the bytes shared) and into a replay ring, and the owner's section of the status board is
/// updated in the same step. So `events.subscribe` can take the snapshot (what `daemon.status`
/// returns) and the seq it covers together with the subscription, with nothing in between.
/// An event may carry a redacted version of its data (a play ticket's token nulled): observer-role
/// subscribers get that one, live and in replays.
actor EventBus {
    struct Subscriber {
        let queue: OutboundQueue
        let prefixes: [String]?
        let role: ClientRole

        func wants(_ type: String) -> Bool {
            guard let prefixes else { return true }
            return prefixes.contains { type.hasPrefix($0) }
        }
    }

    private struct RingEntry {
        let seq: Int
        let type: String
        let line: [UInt8]
        /// The line observers get, when it differs.
        let observerLine: [UInt8]?

        func line(for role: ClientRole) -> [UInt8] { role == .observer ? observerLine ?? line : line }
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

    init(bootId: String, ringCapacity: Int = 4096) {
        self.bootId = bootId
        self.ringCapacity = ringCapacity
        ring.reserveCapacity(ringCapacity)
    }

    /// Publishes an event; when `section` is given, the status board's section becomes `status`.
    /// `observerData`, when given, is what observer-role subscribers get instead of `data`.
    func publish(_ type: String, _ data: JSONValue, section: String? = nil, status value: JSONValue? = nil,
                 observerData: JSONValue? = nil) {
        if let section { status[section] = value ?? .null }
        seq += 1
        let time = Timestamp.rfc3339(Timestamp.nowMs())
        let entry = RingEntry(
            seq: seq, type: type, line: EventEnvelope(bootId: bootId, seq: seq, type: type, time: time, data: data).line(),
            observerLine: observerData.map { EventEnvelope(bootId: bootId, seq: seq, type: type, time: time, data: $0).line() })
        remember(entry)
        let sendDirectly = subscribers.count <= Self.directSendLimit
        for subscriber in subscribers.values where subscriber.wants(type) {
            subscriber.queue.pushEvent(entry.line(for: subscriber.role), sendDirectly: sendDirectly)
        }
    }

    /// Updates one section of the status board without an event.
    func setStatus(_ section: String, _ value: JSONValue) {
        status[section] = value
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
                   sinceBootId: String?, reply: (JSONValue) -> [UInt8]) {
        let subscriber = Subscriber(queue: queue, prefixes: prefixes, role: role)
        subscribers[connection] = subscriber
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
        for offset in 0..<ring.count {
            let entry = ring[(ringStart + offset) % ring.count]
            if entry.seq > since, subscriber.wants(entry.type) { queue.pushReply(entry.line(for: role)) }
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
