import Runtime
import Synchronization
import Testing
@testable import InteractiveDaemon

/// `ChildTasks`: background work owned by a service's `run()`, on the loop.
@Suite @LoopActor struct LifetimeTests {
    /// Counts what ran, from any task.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    @Test func workStartedBeforeRunWaitsForItAndRunsThen() async {
        let work = ChildTasks()
        let counter = Counter()
        let (done, finished) = AsyncStream.makeStream(of: Void.self)
        work.start {
            counter.add()
            finished.yield()
        }
        #expect(counter.count == 0)
        let run: @LoopActor @Sendable () async -> Void = { await work.run() }
        await withDiscardingTaskGroup { group in
            group.addTask(operation: run)
            var iterator = done.makeAsyncIterator()
            _ = await iterator.next()
            group.cancelAll()
        }
        #expect(counter.count == 1)
    }

    @Test func stoppingRunCancelsTheWorkStillRunningAndWaitsForIt() async {
        let work = ChildTasks()
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let ended = Counter()
        let cancelled = Counter()
        let run: @LoopActor @Sendable () async -> Void = { await work.run() }
        await withDiscardingTaskGroup { group in
            group.addTask(operation: run)
            work.start {
                startedContinuation.yield()
                // Waits until cancelled: a stream nobody feeds.
                let (never, _) = AsyncStream.makeStream(of: Void.self)
                for await _ in never {}
                if Task.isCancelled { cancelled.add() }
                ended.add()
            }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            group.cancelAll()
        }
        // `run()` returned only after the work ended, cancelled.
        #expect(ended.count == 1)
        #expect(cancelled.count == 1)
    }

    @Test func workStartedAfterRunEndedIsDropped() async {
        let work = ChildTasks()
        let run: @LoopActor @Sendable () async -> Void = { await work.run() }
        await withDiscardingTaskGroup { group in
            group.addTask(operation: run)
            group.cancelAll()
        }
        let counter = Counter()
        work.start { counter.add() }
        #expect(counter.count == 0)
    }
}
