import IPCProtocol
import JSONValue
import Runtime

/// The daemon's event stream and status board.
///
/// Every state owner publishes here: the event goes to each subscriber's queue (encoded once,
/// the bytes shared) and into a replay ring, and the owner's section of the status board is
/// updated in the same step. So `events.subscribe` can take the snapshot (what `daemon.status`
/// returns) and the seq it covers together with the subscription, with nothing in between.
/// An event may carry a redacted version of its data (a play ticket's token nulled), and a section
/// of the board a redacted value (the session without who is logged in): observer-role clients
/// get those, live, in replays, in snapshots and in `daemon.status` (IPC.md, Roles).
@LoopActor
final class EventBus {
    struct Subscriber {
        let queue: OutboundQueue
        let prefixes: [String]?
        let role: ClientRole

        func wants(_ type: String) -> Bool {
            guard let prefixes else { return true }
            return prefixes.contains { type.hasPrefix($0) }
        }
    }

    nonisolated let bootId: String
    private(set) var seq = 0
    private var ring: ReplayRing
    /// How many bytes of held events one `since` replays at most; older ones become an
    /// `events.lagged` (a client re-subscribing in a loop cannot queue the whole ring again
    /// and again).
    private let replayByteLimit: Int
    private var subscribers: [Int: Subscriber] = [:]
    /// While `batch` runs: each subscriber's lines so far, pushed together when it ends.
    private var batched: [(queue: OutboundQueue, lines: [UInt8], count: Int, connection: Int)]?
    private var status: [String: StatusSection] = [:]
    /// What observers see of a section instead of `status` (absent: the same).
    private var observerStatus: JSONObject = [:]
    /// Told the service status line (`STATUS=`) whenever a change of the board changes it.
    private var statusLineSink: ((String) -> Void)?
    private var lastStatusLine = ""
    /// A status line is to be composed (at the end of this turn of the loop, or when its interval is over).
    private var statusLinePending = false
    /// When the line was last composed: the next waits `statusLineInterval` after it.
    private var statusLineComposedAt: ContinuousClock.Instant?
    /// The status line is composed and told at most once per interval: overlays that replace one
    /// another many times a second tell the service manager (PID 1 on a box) the last of them.
    private let statusLineInterval: Duration
    private let timers: any TimerScheduler

    /// Defaults: the last 4096 events, or fewer when they exceed 2 MiB; a replay of 512 KiB at
    /// most (docs/ipc.md, "Limits").
    init(bootId: String, ringCapacity: Int = 4096, ringByteCapacity: Int = 2 * 1024 * 1024,
         replayByteLimit: Int = 512 * 1024, statusLineInterval: Duration = .seconds(1),
         timers: any TimerScheduler = EventLoop.shared) {
        self.bootId = bootId
        self.statusLineInterval = statusLineInterval
        self.timers = timers
        ring = ReplayRing(capacity: ringCapacity, byteCapacity: ringByteCapacity)
        self.replayByteLimit = replayByteLimit
    }

    /// Publishes an event; when `section` is given, the status board's section becomes `status`
    /// (`observerStatus` for observers, when given). `observerData`, when given, is what
    /// observer-role subscribers get instead of `data`.
    func publish(_ type: String, _ data: JSONValue, section: String? = nil, status value: JSONValue? = nil,
                 observerData: JSONValue? = nil, observerStatus observerValue: JSONValue? = nil) {
        publish(type, writingData: data.write, section: section, statusSection: .value(value ?? .null),
                observerData: observerData.map { $0.write }, observerStatus: observerValue)
    }

    /// `publish` with the section's value built only when the board is read: for a section that
    /// changes with every overlay and is read far less often. The event's data is written
    /// straight into its line (`EventData.writeData`).
    func publish<Event: EventData>(_ event: Event, section: String, builtStatus build: @escaping @LoopActor () -> JSONValue) {
        publish(Event.type, writingData: event.writeData, section: section, statusSection: .built(build), observerData: nil,
                observerStatus: nil)
    }

    private func publish(_ type: String, writingData writeData: (inout [UInt8]) -> Void, section: String?,
                         statusSection: StatusSection, observerData writeObserverData: ((inout [UInt8]) -> Void)?,
                         observerStatus observerValue: JSONValue?) {
        if let section {
            status[section] = statusSection
            observerStatus[section] = observerValue
        }
        seq += 1
        let time = Timestamp.rfc3339(Timestamp.nowMs())
        let entry = ReplayRing.Entry(
            seq: seq, type: type, line: EventEnvelope.line(bootId: bootId, seq: seq, type: type, time: time, writingData: writeData),
            observerLine: writeObserverData.map {
                EventEnvelope.line(bootId: bootId, seq: seq, type: type, time: time, writingData: $0)
            })
        ring.append(entry)
        for (connection, subscriber) in subscribers where subscriber.wants(type) {
            let line = entry.line(for: subscriber.role)
            guard batched != nil else {
                subscriber.queue.pushEvent(line)
                continue
            }
            if let index = batched?.firstIndex(where: { $0.connection == connection }) {
                batched?[index].lines.append(contentsOf: line)
                batched?[index].count += 1
            } else {
                batched?.append((subscriber.queue, line, 1, connection))
            }
        }
        if let section { statusSectionChanged(section) }
    }

    /// Runs `body`, and gives each subscriber the events it published in one push: a
    /// replacement's `overlay.hide` and `overlay.show` reach a player in one `send`, not two.
    /// Within a batch, `batch` just runs `body`.
    func batch(_ body: () -> Void) {
        guard batched == nil else { return body() }
        batched = []
        body()
        let pending = batched ?? []
        batched = nil
        for entry in pending { entry.queue.pushEvents(entry.lines, count: entry.count) }
    }

    /// Publishes a typed event (docs/ipc.md, Events); `observerEvent`, when given, is what
    /// observer-role subscribers get instead (a play ticket without its token).
    func publish<Event: EventData>(_ event: Event, section: String? = nil, status value: JSONValue? = nil,
                                   observerEvent: Event? = nil, observerStatus observerValue: JSONValue? = nil) {
        publish(Event.type, writingData: event.writeData, section: section, statusSection: .value(value ?? .null),
                observerData: observerEvent.map { $0.writeData }, observerStatus: observerValue)
    }

    /// `setStatus` with the section's value built only when the board is read.
    func setStatus(_ section: String, built build: @escaping @LoopActor () -> JSONValue) {
        status[section] = .built(build)
        statusSectionChanged(section)
    }

    /// Updates one section of the status board without an event (`observerValue`: what
    /// observers see of it instead, when given).
    func setStatus(_ section: String, _ value: JSONValue, observerValue: JSONValue? = nil) {
        status[section] = .value(value)
        observerStatus[section] = observerValue
        statusSectionChanged(section)
    }

    /// Sets one member of an object section of the status board without an event.
    func setStatusMember(_ section: String, _ member: String, _ value: JSONValue) {
        var members = status[section]?.value.objectValue ?? [:]
        members[member] = value
        status[section] = .value(.object(members))
        statusSectionChanged(section)
    }

    /// The service status line of the board as it is now.
    var statusLine: String { ServiceStatusLine.compose { status[$0]?.value } }

    /// Sends the status line to `sink` after every change of it from now on.
    func onStatusLineChange(_ sink: @escaping (String) -> Void) {
        statusLineSink = sink
        lastStatusLine = statusLine
    }

    /// The line is composed at the end of the turn of the event loop that changed it, after the
    /// turn's events were queued for the players, and at most once per `statusLineInterval`:
    /// a burst of changes (overlays replacing one another) tells the last state once.
    private func statusSectionChanged(_ section: String) {
        guard statusLineSink != nil, !statusLinePending, ServiceStatusLine.sections.contains(section) else { return }
        statusLinePending = true
        let now = timers.now
        if let composed = statusLineComposedAt, composed + statusLineInterval > now {
            timers.schedule(at: composed + statusLineInterval) { [weak self] in self?.tellStatusLine() }
        } else {
            EventLoop.shared.execute { [weak self] in self?.tellStatusLine() }
        }
    }

    private func tellStatusLine() {
        statusLinePending = false
        guard let statusLineSink else { return }
        statusLineComposedAt = timers.now
        let line = statusLine
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        statusLineSink(line)
    }

    /// What `daemon.status` returns to a client of `role`.
    func snapshot(for role: ClientRole = .control) -> JSONValue {
        var members = JSONObject(status.mapValues(\.value))
        if role == .observer { members.merge(observerStatus) { $1 } }
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
        queue.pushReply(reply(SubscribeResult(bootId: bootId, seq: seq, snapshot: snapshot(for: role))))
        guard let since else { return }
        if let sinceBootId, sinceBootId != bootId {
            queue.pushReply(OutboundQueue.laggedLine(bootId: bootId, missed: seq))
            return
        }
        // A replay takes half of what the connection may hold at most (an observer's is small).
        let replay = ring.entries(after: since, byteLimit: min(replayByteLimit, queue.replyByteLimit / 2)) { subscriber.wants($0.type) }
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

/// One section of the status board: a value, or a function that builds it when the board is
/// read (`daemon.status`, a subscription's snapshot, the status line).
enum StatusSection {
    case value(JSONValue)
    case built(@LoopActor () -> JSONValue)

    @LoopActor var value: JSONValue {
        switch self {
        case .value(let value): return value
        case .built(let build): return build()
        }
    }
}
