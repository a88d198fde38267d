import Testing
@testable import InteractiveDaemon

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

    @Test func repliesAreNeverDroppedButAnUnreadingClientIsCut() async {
        let queue = OutboundQueue(eventLimit: 1, replyLimit: 3)
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
