/// The reactor's timers, earliest first: a binary min-heap on (deadline, order of scheduling),
/// so that thousands of pending timers (one per unacknowledged emit) cost O(log n) each.
struct TimerHeap {
    struct Timer {
        var deadline: UInt64
        var sequence: UInt64
        var block: @Sendable () -> Void

        func precedes(_ other: Timer) -> Bool { (deadline, sequence) < (other.deadline, other.sequence) }
    }

    private var timers: [Timer] = []

    var isEmpty: Bool { timers.isEmpty }
    var count: Int { timers.count }

    /// The nearest deadline.
    var earliest: UInt64? { timers.first?.deadline }

    mutating func insert(_ timer: Timer) {
        timers.append(timer)
        var child = timers.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard timers[child].precedes(timers[parent]) else { break }
            timers.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the timers due at `now`, earliest first.
    mutating func popDue(now: UInt64) -> [Timer] {
        var due: [Timer] = []
        while let first = timers.first, first.deadline <= now {
            due.append(first)
            removeFirst()
        }
        return due
    }

    private mutating func removeFirst() {
        let last = timers.removeLast()
        guard !timers.isEmpty else { return }
        timers[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < timers.count, timers[left].precedes(timers[smallest]) { smallest = left }
            if right < timers.count, timers[right].precedes(timers[smallest]) { smallest = right }
            guard smallest != parent else { return }
            timers.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
