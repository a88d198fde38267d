/// What happens next to one device, at a time on the simulated clock.
struct FleetEvent {
    enum Kind: UInt8 {
        /// The device notices that the connection is gone.
        case connectionLost
        /// The device starts a connection attempt.
        case attempt
        /// An attempt made while the backend was away (or over its capacity) failed.
        case attemptFailed
        /// An attempt succeeded: the namespace is connected.
        case connected
    }

    /// Milliseconds since the backend went away.
    let time: Int64
    /// Insertion order: events at the same time run in the order they were scheduled.
    let sequence: UInt64
    let device: Int32
    let kind: Kind
}

/// The simulation's event queue: a binary min-heap on (time, sequence).
struct EventQueue {
    private var heap: [FleetEvent] = []
    private var scheduled: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }

    init(capacity: Int) {
        heap.reserveCapacity(capacity)
    }

    mutating func schedule(_ kind: FleetEvent.Kind, device: Int, at time: Int64) {
        scheduled += 1
        heap.append(FleetEvent(time: time, sequence: scheduled, device: Int32(truncatingIfNeeded: device), kind: kind))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest event, removed from the queue.
    mutating func next() -> FleetEvent? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            var smallest = left
            if left + 1 < heap.count, Self.precedes(heap[left + 1], heap[left]) { smallest = left + 1 }
            guard Self.precedes(heap[smallest], heap[parent]) else { break }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
        return first
    }

    private static func precedes(_ a: FleetEvent, _ b: FleetEvent) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }
}
