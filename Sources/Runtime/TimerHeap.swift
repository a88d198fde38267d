/// Identifies a scheduled timer, to cancel it.
public struct TimerID: Hashable, Sendable {
    let value: UInt64

    /// A timer of a scheduler of its own (a test's) numbered `value`.
    public init(value: UInt64) { self.value = value }
}

extension TimerID {
    /// The id of a `TimerHeap` timer: the slot that holds its place and that slot's use.
    init(slot: Int, use: UInt32) {
        self.init(value: UInt64(use) << 32 | UInt64(UInt32(truncatingIfNeeded: slot)))
    }

    /// The slot of a `TimerHeap` timer's id.
    var slot: Int { Int(truncatingIfNeeded: value & 0xFFFF_FFFF) }
}

/// The loop's timers, earliest first: a binary min-heap on (deadline, order of scheduling) with
/// each timer's position kept, so that scheduling and cancelling cost O(log n) even with
/// thousands pending.
///
/// A timer's id names a slot of `positions` (its low 32 bits) and that slot's use (its high 32
/// bits): finding a timer to cancel, and keeping positions right as timers move in the heap,
/// index an array instead of hashing into a dictionary at every move.
struct TimerHeap {
    struct Timer {
        let id: TimerID
        /// When it was scheduled, among the heap's timers: it breaks ties of `deadline`.
        let order: UInt64
        let deadline: UInt64
        let work: @LoopActor @Sendable () -> Void

        func precedes(_ other: Timer) -> Bool { (deadline, order) < (other.deadline, other.order) }
    }

    private var timers: [Timer] = []
    /// By slot: where its timer is in `timers`, or nil when the slot is free.
    private var positions: [Int?] = []
    /// By slot: how many timers it held, so that an old id does not name its next timer.
    private var uses: [UInt32] = []
    private var freeSlots: [Int] = []
    private var scheduled: UInt64 = 0

    var isEmpty: Bool { timers.isEmpty }
    var count: Int { timers.count }

    /// The nearest deadline, in nanoseconds of the monotonic clock.
    var earliest: UInt64? { timers.first?.deadline }

    /// Schedules `work` at `deadline`; the id cancels it.
    mutating func insert(deadline: UInt64, _ work: @escaping @LoopActor @Sendable () -> Void) -> TimerID {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = positions.count
            positions.append(nil)
            uses.append(0)
        }
        uses[slot] &+= 1
        scheduled &+= 1
        let id = TimerID(slot: slot, use: uses[slot])
        timers.append(Timer(id: id, order: scheduled, deadline: deadline, work: work))
        positions[slot] = timers.count - 1
        siftUp(timers.count - 1)
        return id
    }

    /// Removes the timer; false when it is not pending (it ran or was cancelled).
    @discardableResult
    mutating func remove(_ id: TimerID) -> Bool {
        let slot = id.slot
        guard slot < positions.count, let index = positions[slot], timers[index].id == id else { return false }
        positions[slot] = nil
        freeSlots.append(slot)
        let last = timers.removeLast()
        guard index < timers.count else { return true }
        timers[index] = last
        positions[last.id.slot] = index
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
        positions[timers[first].id.slot] = first
        positions[timers[second].id.slot] = second
    }
}
