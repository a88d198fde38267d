/// Identifies a scheduled timer, to cancel it.
public struct TimerID: Hashable, Sendable {
    let value: UInt64

    /// A timer of a scheduler of its own (a test's) numbered `value`.
    public init(value: UInt64) { self.value = value }
}

/// The loop's timers, earliest first: a binary min-heap on (deadline, order of scheduling) with
/// each timer's position indexed, so that scheduling and cancelling cost O(log n) even with
/// thousands pending (one per unacknowledged emit).
struct TimerHeap {
    struct Timer {
        let id: TimerID
        let deadline: UInt64
        let work: @LoopActor @Sendable () -> Void

        func precedes(_ other: Timer) -> Bool { (deadline, id.value) < (other.deadline, other.id.value) }
    }

    private var timers: [Timer] = []
    private var positions: [TimerID: Int] = [:]

    var isEmpty: Bool { timers.isEmpty }
    var count: Int { timers.count }

    /// The nearest deadline, in nanoseconds of the monotonic clock.
    var earliest: UInt64? { timers.first?.deadline }

    mutating func insert(_ timer: Timer) {
        timers.append(timer)
        positions[timer.id] = timers.count - 1
        siftUp(timers.count - 1)
    }

    /// Removes the timer; false when it is not pending (it ran or was cancelled).
    @discardableResult
    mutating func remove(_ id: TimerID) -> Bool {
        guard let index = positions.removeValue(forKey: id) else { return false }
        let last = timers.removeLast()
        guard index < timers.count else { return true }
        timers[index] = last
        positions[last.id] = index
        siftDown(siftUp(index))
        return true
    }

    /// Removes and returns the earliest timer if it is due at `now`.
    mutating func popFirst(dueAt now: UInt64) -> Timer? {
        guard let first = timers.first, first.deadline <= now else { return nil }
        remove(first.id)
        return first
    }

    /// Moves the timer at `index` up while it precedes its parent; returns where it ended.
    @discardableResult
    private mutating func siftUp(_ index: Int) -> Int {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard timers[child].precedes(timers[parent]) else { break }
            swap(child, parent)
            child = parent
        }
        return child
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < timers.count, timers[left].precedes(timers[smallest]) { smallest = left }
            if right < timers.count, timers[right].precedes(timers[smallest]) { smallest = right }
            guard smallest != parent else { return }
            swap(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swap(_ first: Int, _ second: Int) {
        timers.swapAt(first, second)
        positions[timers[first].id] = first
        positions[timers[second].id] = second
    }
}
