import Synchronization
import Testing
@testable import InteractiveDaemon

/// The two pieces the domain's shells are built on: `ChildTasks` (background work owned by a
/// service's `run()`) and `EffectTurns` (effects performed in the order decided).
@Suite struct LifetimeTests {
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
        await withDiscardingTaskGroup { group in
            group.addTask { await work.run() }
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
        await withDiscardingTaskGroup { group in
            group.addTask { await work.run() }
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
        await withDiscardingTaskGroup { group in
            group.addTask { await work.run() }
            group.cancelAll()
        }
        let counter = Counter()
        work.start { counter.add() }
        #expect(counter.count == 0)
    }

    @Test func turnsAreServedInTheOrderTaken() {
        var turns = EffectTurns()
        let first = turns.take()
        let second = turns.take()
        let third = turns.take()
        #expect(!turns.mustWait(first))
        #expect(turns.mustWait(second))
        #expect(turns.mustWait(third))
        // The first finishes while nobody waits yet: nothing to resume, and the second may go.
        #expect(turns.finish() == nil)
        #expect(!turns.mustWait(second))
        #expect(turns.mustWait(third))
    }

    /// A turn that must wait may reach `wait` only after the batch before it finished (its task
    /// was suspended on the way, as an executor switch does): it goes at once, not never.
    @Test(.timeLimit(.minutes(1))) func aTurnWhoseWaitComesAfterTheFinishGoesAtOnce() async {
        var turns = EffectTurns()
        let first = turns.take()
        let second = turns.take()
        #expect(!turns.mustWait(first) && turns.mustWait(second))
        #expect(turns.finish() == nil)  // the first finishes before the second registers
        await withCheckedContinuation { turns.wait(second, $0) }  // returns: resumed at once
        #expect(turns.finish() == nil)
    }

    /// A shell that performs batches of effects; a batch may suspend (as a publish to another actor does).
    actor Shell {
        private var turns = EffectTurns()
        private(set) var performed: [String] = []

        func decide() -> Int { turns.take() }

        func perform(_ turn: Int, _ name: String, after gate: AsyncStream<Void>? = nil) async {
            if turns.mustWait(turn) { await withCheckedContinuation { turns.wait(turn, $0) } }
            if let gate {
                var iterator = gate.makeAsyncIterator()
                _ = await iterator.next()
            }
            performed.append(name)
            turns.finish()?.resume()
        }
    }

    @Test func aLaterBatchWaitsForTheEarlierOneThoughItsEffectsSuspend() async {
        let shell = Shell()
        let first = await shell.decide()
        let second = await shell.decide()
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        await withDiscardingTaskGroup { group in
            group.addTask { await shell.perform(second, "second") }
            group.addTask { await shell.perform(first, "first", after: gate) }
            opener.yield()
        }
        #expect(await shell.performed == ["first", "second"])
    }
}
