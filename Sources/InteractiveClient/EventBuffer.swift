import IPCProtocol

/// The events received for a subscription and not yet consumed, bounded. When it is full,
/// newer events are dropped and one gap marker (`lagged`) takes their place, exactly where they
/// were lost, as the daemon does with its own `events.lagged`. The daemon's `events.lagged`
/// becomes a marker too (merged with one just before it).
struct EventBuffer: Sendable {
    enum Item: Sendable, Equatable {
        case event(EventEnvelope)
        case lagged(missed: Int)
    }

    /// Events held at most (markers do not count).
    let capacity: Int
    private var items: [Item] = []
    private var head = 0
    private(set) var eventCount = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var isEmpty: Bool { head == items.count }

    mutating func push(_ envelope: EventEnvelope) {
        if envelope.type == EventType.eventsLagged {
            addGap(max(0, envelope.data["missed"]?.intValue ?? 0))
        } else if eventCount >= capacity {
            addGap(1)
        } else {
            items.append(.event(envelope))
            eventCount += 1
        }
    }

    /// The oldest item, or nil when there is none.
    mutating func pop() -> Item? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if case .event = item { eventCount -= 1 }
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    private mutating func addGap(_ missed: Int) {
        if head < items.count, let last = items.last, case .lagged(let already) = last {
            let sum = already.addingReportingOverflow(missed)
            items[items.count - 1] = .lagged(missed: sum.overflow ? Int.max : sum.partialValue)
        } else {
            items.append(.lagged(missed: missed))
        }
    }
}
