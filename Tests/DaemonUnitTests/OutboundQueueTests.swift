import Runtime
import Synchronization
import Testing
@testable import InteractiveDaemon
#if canImport(Glibc)
import Glibc
#endif

@Suite struct OutboundQueueTests {
    private func text(_ items: [OutboundQueue.Item]?) -> [String] {
        (items ?? []).map { item in
            switch item {
            case .line(let line): return String(decoding: line, as: UTF8.self)
            case .lagged(let missed): return "lagged(\(missed))"
            }
        }
    }

    @Test func eventsOverTheLimitBecomeOneLagMarkerWhereTheGapIs() async {
        let queue = OutboundQueue(eventLimit: 2)
        for name in ["e1", "e2", "e3", "e4"] { queue.pushEvent(Array(name.utf8)) }
        queue.pushReply(Array("r1".utf8))
        #expect(text(await queue.next()) == ["e1", "e2", "lagged(2)", "r1"])
        queue.pushEvent(Array("e5".utf8))
        #expect(text(await queue.next()) == ["e5"])
    }

    @Test func eventsOverTheByteLimitAreCountedAsMissed() async {
        let queue = OutboundQueue(eventLimit: 100, eventByteLimit: 10)
        for name in ["e1xxx", "e2xxx", "e3", "e4"] { queue.pushEvent(Array(name.utf8)) }
        #expect(text(await queue.next()) == ["e1xxx", "e2xxx", "lagged(2)"])
        queue.pushEvent(Array("e5-longer-than-the-limit".utf8))
        #expect(text(await queue.next()) == ["e5-longer-than-the-limit"], "a line alone is always taken")
    }

    @Test func repliesAreNeverDroppedButAnUnreadingClientIsCut() async {
        let queue = OutboundQueue(eventLimit: 1, replyByteLimit: 6)
        for index in 0..<3 { queue.pushReply(Array("r\(index)".utf8)) }
        #expect(!queue.overflowed)
        queue.pushReply(Array("r3".utf8))
        #expect(queue.overflowed)
        #expect(text(await queue.next()) == ["r0", "r1", "r2"])
        #expect(await queue.next() == nil)
    }

    @Test func closingDrainsThenEnds() async {
        let queue = OutboundQueue(eventLimit: 4)
        queue.pushReply(Array("last".utf8))
        queue.close()
        queue.pushReply(Array("ignored".utf8))
        #expect(text(await queue.next()) == ["last"])
        #expect(await queue.next() == nil)
    }
}

/// The direct send: a line pushed while the writer is parked goes onto the socket from the
/// pusher's turn of the loop; what the socket does not take waits for the writer.
@Suite @LoopActor struct OutboundQueueDirectSendTests {
    /// A connected non-blocking socket pair: `[0]` is the queue's, `[1]` the peer's.
    private func socketPair() throws -> [Int32] {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw SocketPairFailed(errno: errno)
        }
        return fds
    }

    private struct SocketPairFailed: Error { let errno: Int32 }

    private func readAvailable(_ fd: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[..<count]) : []
    }

    @Test func aLinePushedWhileTheWriterIsParkedIsSentAtOnce() async throws {
        let fds = try socketPair()
        defer { fds.forEach { close($0) } }
        let queue = OutboundQueue(eventLimit: 4)
        queue.writeDirectly(to: fds[0])
        let writer = Task { @LoopActor in await queue.next() }
        await Task.yield()  // the writer parks (the loop runs its jobs in order)
        queue.pushEvent(Array("e1\n".utf8))
        queue.pushReply(Array("r1\n".utf8))
        #expect(String(decoding: readAvailable(fds[1]), as: UTF8.self) == "e1\nr1\n", "sent before the writer ran")
        #expect(queue.heldBytes == 0)
        queue.close()
        #expect(await writer.value == nil, "the writer had nothing to write")
    }

    @Test func whatAFullSocketDoesNotTakeWaitsForTheWriter() async throws {
        let fds = try socketPair()
        defer { fds.forEach { close($0) } }
        let filler = [UInt8](repeating: 0x20, count: 65536)
        while ClientConnection.sendOnce(filler[...], to: fds[0]) > 0 {}
        let queue = OutboundQueue(eventLimit: 4)
        queue.writeDirectly(to: fds[0])
        let writer = Task { @LoopActor in await queue.next() }
        await Task.yield()
        queue.pushEvent(Array("e1\n".utf8))
        queue.pushEvent(Array("e2\n".utf8))
        guard let taken = await writer.value, case .line(let first)? = taken.first else {
            Issue.record("the writer got nothing")
            return
        }
        #expect(taken.count == 1 && first == Array("e1\n".utf8), "the first woke the writer")
        // The writer holds e1 (not written yet): e2 waits behind it, never overtaking it.
        #expect(queue.heldBytes == 6)
        guard case .line(let second)? = await queue.next()?.first else {
            Issue.record("the second line was not queued")
            return
        }
        #expect(second == Array("e2\n".utf8))
    }

    @Test func aDetachedQueueNeverTouchesTheSocket() async throws {
        let fds = try socketPair()
        defer { fds.forEach { close($0) } }
        let queue = OutboundQueue(eventLimit: 4)
        queue.writeDirectly(to: fds[0])
        let writer = Task { @LoopActor in await queue.next() }
        await Task.yield()
        queue.detach()
        queue.pushEvent(Array("late\n".utf8))
        #expect(readAvailable(fds[1]).isEmpty)
        queue.close()
        _ = await writer.value
    }

    @Test func aClosedQueueTakesNothingMore() async {
        let queue = OutboundQueue(eventLimit: 4)
        queue.pushEvent(Array("before\n".utf8))
        queue.close()
        queue.pushEvent(Array("late\n".utf8))
        queue.pushReply(Array("late\n".utf8))
        guard case .line(let line)? = await queue.next()?.first else {
            Issue.record("what was queued before the close was not drained")
            return
        }
        #expect(line == Array("before\n".utf8))
        #expect(await queue.next() == nil)
    }
}

/// The budget for all local clients (issue 20, item 3): whatever the mix of connections, what
/// they hold together is bounded, observers and then the largest holders stopped first.
@Suite struct ClientMemoryBudgetTests {
    private func line(_ bytes: Int) -> [UInt8] { [UInt8](repeating: UInt8(ascii: "x"), count: bytes) }

    @Test func pastTheBudgetTheObserversHoldingMostAreStoppedFirst() async {
        let budget = ClientMemoryBudget(limit: 1000)
        let player = OutboundQueue(id: 1, eventLimit: 100, budget: budget)
        let small = OutboundQueue(id: 2, isObserver: true, eventLimit: 100, budget: budget)
        let large = OutboundQueue(id: 3, isObserver: true, eventLimit: 100, budget: budget)
        player.pushReply(line(500))
        small.pushReply(line(100))
        large.pushReply(line(300))
        #expect(budget.total == 900)
        #expect([player, small, large].allSatisfy { $0.stopReason == nil })
        large.pushReply(line(200))  // 1,100 in all: the largest observer goes
        #expect(large.stopReason == .overBudget(bytes: 500, limit: 1000))
        #expect(small.stopReason == nil && player.stopReason == nil, "the player holds most but is a control client")
        #expect(budget.total == 600)
        #expect(await large.next() == nil, "a stopped queue writes nothing more")
        player.pushReply(line(450))  // 1,050: the remaining observer first, then the player
        #expect(small.stopReason != nil)
        #expect(player.stopReason == nil)
        #expect(budget.total == 950)
        player.pushReply(line(100))
        #expect(player.stopReason == .overBudget(bytes: 1050, limit: 1000))
        #expect(budget.total == 0)
    }

    /// A writer parked on a full socket holds what it took: counted until it wrote it.
    @Test func bytesTakenByTheWriterCountUntilWritten() async {
        let budget = ClientMemoryBudget(limit: 1 << 20)
        let queue = OutboundQueue(id: 7, eventLimit: 100, budget: budget)
        queue.pushEvent(line(300))
        queue.pushReply(line(200))
        #expect(await queue.next()?.count == 2)
        #expect(budget.total == 500 && queue.heldBytes == 500)
        queue.pushReply(line(50))
        #expect(budget.total == 550)
        queue.written()
        #expect(budget.total == 50)
        queue.detach()
        #expect(budget.total == 0)
    }

    /// A request line not complete yet is held for the client too: 128 connections holding
    /// almost 1 MiB of a line each took the daemon to 150 MiB.
    @Test func partialRequestLinesCountAgainstTheBudget() {
        let budget = ClientMemoryBudget(limit: 1000)
        let first = OutboundQueue(id: 1, isObserver: true, eventLimit: 10, budget: budget)
        let second = OutboundQueue(id: 2, isObserver: true, eventLimit: 10, budget: budget)
        first.receiving(600)
        second.receiving(300)
        #expect(budget.total == 900)
        second.receiving(500)
        #expect(first.stopReason == .overBudget(bytes: 600, limit: 1000) && second.stopReason == nil)
        second.receiving(0)
        #expect(budget.total == 0)
    }

    @Test func aStopInterruptsOnceAndNeverAfterTheConnectionEnded() async {
        let budget = ClientMemoryBudget(limit: 100)
        let interrupts = Counter()
        let first = OutboundQueue(id: 1, isObserver: true, eventLimit: 10, budget: budget)
        first.onStop { interrupts.add() }
        first.pushReply(line(90))
        let second = OutboundQueue(id: 2, isObserver: true, eventLimit: 10, budget: budget)
        second.onStop { interrupts.add() }
        second.detach()
        second.stop(.overBudget(bytes: 0, limit: 100))
        #expect(interrupts.value == 0 && second.stopReason == nil)
        first.pushReply(line(20))
        first.stop(.overBudget(bytes: 0, limit: 100))
        #expect(interrupts.value == 1)
    }

    private final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}
