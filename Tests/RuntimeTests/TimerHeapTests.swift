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
    private func timer(_ id: UInt64, at deadline: UInt64) -> TimerHeap.Timer {
        TimerHeap.Timer(id: TimerID(value: id), deadline: deadline, work: {})
    }

    @Test func popsDueTimersEarliestFirstAndTiesInSchedulingOrder() {
        var heap = TimerHeap()
        for (id, deadline) in [(1, 50), (2, 10), (3, 30), (4, 10), (5, 90)] as [(UInt64, UInt64)] {
            heap.insert(timer(id, at: deadline))
        }
        #expect(heap.popAll(dueAt: 40).map(\.id.value) == [2, 4, 3])
        #expect(heap.earliest == 50)
        #expect(heap.popAll(dueAt: 100).map(\.id.value) == [1, 5])
        #expect(heap.isEmpty)
    }

    @Test func removesAnyTimerAndKeepsTheOrderOfTheRest() {
        var heap = TimerHeap()
        for id in UInt64(1)...200 { heap.insert(timer(id, at: (id * 7919) % 257)) }
        for id in stride(from: UInt64(1), through: 200, by: 3) {
            let removed = heap.remove(TimerID(value: id))
            #expect(removed)
        }
        let removedTwice = heap.remove(TimerID(value: 1))
        #expect(!removedTwice, "a removed timer is not pending any more")
        let popped = heap.popAll(dueAt: .max)
        #expect(popped.count == 200 - 67)
        let keys = popped.map { ($0.deadline, $0.id.value) }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
        #expect(!popped.contains { $0.id.value % 3 == 1 })
    }
}
