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

/// The direct send: a line pushed while the writer is idle goes onto the socket from the pusher.
@Suite struct OutboundQueueDirectSendTests {
    /// A connected non-blocking socket pair: `[0]` is the queue's, `[1]` the peer's.
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
