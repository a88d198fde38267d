@testable import Runtime
import Testing

extension TimerHeap {
    mutating func popAll(dueAt now: UInt64) -> [Timer] {
        var due: [Timer] = []
        while let timer = popFirst(dueAt: now) { due.append(timer) }
        return due
    }
}

@Suite struct TimerHeapTests {
    @Test func popsDueTimersEarliestFirstAndTiesInSchedulingOrder() {
        var heap = TimerHeap()
        var ids: [TimerID] = []
        for deadline in [50, 10, 30, 10, 90] as [UInt64] { ids.append(heap.insert(deadline: deadline) {}) }
        #expect(heap.popAll(dueAt: 40).map(\.id) == [ids[1], ids[3], ids[2]])
        #expect(heap.earliest == 50)
        #expect(heap.popAll(dueAt: 100).map(\.id) == [ids[0], ids[4]])
        #expect(heap.isEmpty)
    }

    @Test func removesAnyTimerAndKeepsTheOrderOfTheRest() {
        var heap = TimerHeap()
        let ids = (UInt64(1)...200).map { number in heap.insert(deadline: (number * 7919) % 257) {} }
        let removedIds = Set(stride(from: 0, to: 200, by: 3).map { ids[$0] })
        for id in removedIds {
            let removed = heap.remove(id)
            #expect(removed)
        }
        let removedTwice = heap.remove(ids[0])
        #expect(!removedTwice, "a removed timer is not pending any more")
        let popped = heap.popAll(dueAt: .max)
        #expect(popped.count == 200 - 67)
        let keys = popped.map { ($0.deadline, $0.order) }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
        #expect(!popped.contains { removedIds.contains($0.id) })
    }

    /// A slot is used again once its timer is gone; the old timer's id must not cancel the new one.
    @Test func anOldIdDoesNotNameTheTimerThatTookItsSlot() {
        var heap = TimerHeap()
        let first = heap.insert(deadline: 10) {}
        let popped = heap.popFirst(dueAt: 10)
        #expect(popped?.id == first)
        let second = heap.insert(deadline: 20) {}
        #expect(second != first)
        let removedFirst = heap.remove(first)
        #expect(!removedFirst)
        #expect(heap.count == 1)
        let removedSecond = heap.remove(second)
        #expect(removedSecond)
        let removedUnknown = heap.remove(TimerID(value: 1 << 40 | 7))
        #expect(!removedUnknown, "an id of a slot never used")
        #expect(heap.isEmpty)
    }
}
